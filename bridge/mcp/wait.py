"""browser_wait_for: wait for text to appear, or for a time to pass. Not input: it runs in
the extension for every device (design.md §2 rule 6)."""

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

WaitArgs = derive(
    "WaitArgs", "What to wait for: text, or a time.",
    take={WaitParams: ["text"]},
    describe={"text": "Text to wait for (up to 10 s)."},
    time=(float | None, Field(default=None, ge=0, le=MAX_WAIT_S,
                              description="Seconds to wait.")),
)


async def _wait(conn: Connection, args: Any, response: Response) -> None:
    if args.time is None and not args.text:
        raise E.BadRequest("Give `text` to wait for, or `time` in seconds.")
    tab = await conn.tab()
    if args.text:
        result = await tab.wait_for_text(args.text)
        line = f"Text {args.text!r} appeared after {result['waitedMs']} ms"
    else:
        await tab.wait(ms=round(args.time * 1000))
        line = f"Waited {args.time:g} s"
    response.add_action(line)
    response.include_page_state(tab)


TOOLS = [
    Tool(
        name="browser_wait_for",
        title="Wait for",
        description="Wait until a text appears on the page (any frame), or for a number of "
        "seconds. Returns the snapshot after.",
        args=WaitArgs,
        run=_wait,
        read_only=True,
    ),
]
