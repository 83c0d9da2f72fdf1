"""browser_evaluate: run JavaScript in the page, explicitly.

The script runs through the input driver's Playwright frame (``page.evaluate``): in the
frame of ``ref`` with its element as the argument, or in the main frame. By default it runs
in the page's own (main) world, as Playwright MCP's and Playwright's ``evaluate`` do, so a
client written for them reads page state (``window.app.state``, a store, a test harness's
globals). ``world: "isolated"`` runs it where page script can neither see it nor forge its
result (the page's DOM, none of its JavaScript: supervisor/isolated_eval.py); our own
checks always use that world. No other tool uses it: every other tool acts through real
input and the extension's snapshot, never through a script.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field

from ..protocol.models import EvaluateParams
from .response import Response
from .session import Connection
from .tool import ElementArgs, Tool, derive

MAX_RESULT_CHARS = 20_000
"""Characters of the JSON result returned to the model; more is cut with a note."""

EvaluateArgs = derive(
    "EvaluateArgs", "What to run, and where.", base=ElementArgs,
    take={EvaluateParams: ["expression", "ref", "world"]},
    rename={"expression": "function", "ref": "target"},
    describe={"expression": "() => { /* code */ }, or (element) => { /* code */ } with ref.",
              "ref": "Element passed to the function; it runs in that element's frame.",
              "world": "main (default): the page's own world, with its globals; isolated: "
              "the DOM without the page's JavaScript, which cannot see or forge the result."},
    element=(str | None, Field(default=None, max_length=300,
                               description="Description of that element.")),
    filename=(str | None, Field(
        default=None, min_length=1, max_length=255,
        description="Save the result to this file (relative to the output directory) "
        "instead of returning it as text; the file holds it whole, uncut.")),
    order=["function", "element"],
)


async def _evaluate(conn: Connection, args: Any, response: Response) -> None:
    tab = await conn.tab()
    value = await tab.evaluate(args.function, args.target, world=args.world)
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str) \
        if value is not None else "null (or undefined)"
    where = f" on {args.element or 'ref'} {args.target}" if args.target else ""
    world = "the page's isolated world" if args.world == "isolated" else \
        "the page's main world"
    if args.filename:  # Playwright MCP's: the file holds the result, the answer names it
        from .devtools import save_file

        path = save_file(conn, args.filename, text + "\n")
        response.add_result(f"Evaluated in {world}{where}; saved its result "
                            f"({len(text)} characters of JSON) to {path}.")
        return
    if len(text) > MAX_RESULT_CHARS:
        text = text[:MAX_RESULT_CHARS] + f"\n… (cut: {len(text)} characters in all)"
    response.add_result(f"Evaluated in {world}{where}; it returned:\n{text}")


TOOLS = [
    Tool(
        name="browser_evaluate",
        title="Evaluate JavaScript",
        description="Run a JavaScript function in the page, or on an element, and return its "
        "JSON result. Runs in the page's own world (its globals) unless world is isolated; "
        "prefer the other tools for acting.",
        args=EvaluateArgs,
        run=_evaluate,
    ),
]
