"""browser_snapshot: the page as the model sees it, with refs to act on."""

from __future__ import annotations

from .session import Session, format_page_state
from .tool import Tool, ToolArgs, derive

SnapshotArgs = derive("SnapshotArgs", "No arguments: the current tab is snapshotted.")


async def _snapshot(session: Session, _args: ToolArgs) -> str:
    tab = await session.tab()
    return format_page_state(await tab.snapshot_result())


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
