"""browser_snapshot: the page as the model sees it, with refs to act on."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..protocol import errors as E
from .response import Response
from .session import Connection
from .tool import Tool, ToolArgs, derive, with_next_step

SnapshotArgs = derive(
    "SnapshotArgs", "Snapshot of the current tab (outline, visible text or changes).",
    mode=(Literal["snapshot", "read", "diff"], Field(
        default="snapshot",
        description="snapshot: elements with refs; read: visible text only; diff: only what "
        "changed since your last snapshot of this tab.")),
    cursor=(str | None, Field(
        default=None, min_length=1, max_length=64,
        description="From a truncated snapshot's last line: returns the next part.")),
)


async def _snapshot(conn: Connection, args: ToolArgs, response: Response) -> None:
    tab = await conn.tab()
    mode = getattr(args, "mode", "snapshot")
    cursor = getattr(args, "cursor", None)
    try:
        result = await tab.snapshot_result(mode=mode, cursor=cursor)
    except (E.BadRequest, E.BrowserDocumentChanged) as err:
        if cursor is None:
            raise
        raise with_next_step(err, "Call browser_snapshot without a cursor for a fresh "
                             "snapshot (a cursor is used once, lives 10 minutes and ends "
                             "with its page).") from err
    response.set_snapshot(result)


TOOLS = [
    Tool(
        name="browser_snapshot",
        title="Page snapshot",
        description=(
            "Capture an accessibility snapshot of the current page: one line per element, "
            "e.g. `- button \"Save\" [ref=e7]`, across all frames (refs like f1e3 are in "
            "iframes). Use it before acting and whenever refs may be stale; act with the "
            "refs of the latest snapshot. Better than a screenshot for deciding what to do."
        ),
        args=SnapshotArgs,
        run=_snapshot,
        read_only=True,
    ),
]
