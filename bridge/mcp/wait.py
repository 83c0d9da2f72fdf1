"""browser_wait_for: wait for a time to pass, for a text to leave the page, for a text to
appear (Playwright MCP's ``time``, ``textGone``, ``text``; given together they run in that
order, as there). Not input: it runs in the extension for every device (design.md §2
rule 6), on every frame's rendered text, open and closed shadow roots included
(extension/src/page/wait.js).

Differences from Playwright MCP: a text wait gives up after :data:`TEXT_TIMEOUT_MS` with
TIMEOUT (Playwright MCP: its action timeout, 5 s by default); ``time`` is waited in full up
to the protocol's bound (Playwright MCP cuts it at 30 s and says it waited the time asked).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..protocol import errors as E
from ..protocol.models import WaitParams
from .response import Response
from .session import Connection
from .tool import Tool, derive

MAX_WAIT_S = next(m.le for m in WaitParams.model_fields["ms"].metadata if hasattr(m, "le")) / 1000
"""The protocol's bound on a fixed wait, in seconds."""
TEXT_TIMEOUT_MS = 10_000
"""How long ``text`` may take to appear, and ``textGone`` to go, ms (each)."""

WaitArgs = derive(
    "WaitArgs", "What to wait for: a time, a text to disappear, a text to appear.",
    take={WaitParams: ["text", "textGone"]},
    describe={"text": "The text to wait for", "textGone": "The text to wait for to disappear"},
    time=(float | None, Field(default=None, ge=0, le=MAX_WAIT_S,
                              description="The time to wait in seconds.")),
    order=["time"],
)


async def _wait(conn: Connection, args: Any, response: Response) -> None:
    if args.time is None and not args.text and not args.textGone:
        raise E.BadRequest("Either time, text or textGone must be provided.")
    # The last step's request also brings the page state back (Connection.tab page_state).
    last = "text" if args.text else "textGone" if args.textGone else "time"
    tab, plain = await conn.tab(page_state=True), await conn.tab()
    lines = []
    # One call per step: each has its own timeout (the bridge waits timeoutMs and a
    # margin for one answer, so a long time and a text wait in one call could not fit).
    if args.time is not None:
        await (tab if last == "time" else plain).wait(ms=round(args.time * 1000))
        lines.append(f"Waited {args.time:g} s")
    if args.textGone:
        result = await (tab if last == "textGone" else plain).wait_for_text_gone(
            args.textGone, timeout_ms=TEXT_TIMEOUT_MS)
        lines.append(f"Text {args.textGone!r} was gone after {result['waitedMs']} ms")
    if args.text:
        result = await tab.wait_for_text(args.text, timeout_ms=TEXT_TIMEOUT_MS)
        lines.append(f"Text {args.text!r} appeared after {result['waitedMs']} ms")
    response.add_action("; ".join(lines))
    response.include_page_state(tab)


TOOLS = [
    Tool(
        name="browser_wait_for",
        title="Wait for",
        description="Wait for text to appear or disappear (10 s at most) or a specified time "
        "to pass",
        args=WaitArgs,
        run=_wait,
        read_only=True,
    ),
]
