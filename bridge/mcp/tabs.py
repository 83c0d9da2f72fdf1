"""browser_tabs: list the open tabs, open a new one, close one, or select the one the
other tools act on.

``select`` brings the tab to the front in the browser too (``tabs.select``), so what the
browser shows and what the tools address stay the same tab. A tab's index is its position
in the list this tool prints (every device's tabs, in a stable order).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ..protocol import errors as E
from ..protocol.models import TabNewParams
from ..sdk import Browser
from .report import TabRow, modal_section, render_tabs
from .session import Session
from .tool import Tool, derive, with_next_step

TabsArgs = derive(
    "TabsArgs", "What to do with tabs.",
    action=(Literal["list", "new", "close", "select"],
            Field(description="list the tabs, open a new one, close one, or select one.")),
    index=(int | None, Field(default=None, ge=0, le=1000,
                             description="Tab index from the list, for select and close "
                             "(close: the current tab if omitted).")),
    take={TabNewParams: ["url"]},
    describe={"url": "For new: URL to load in it."},
    order=["action", "index"],
)


def _pick(tabs: list[TabRow], index: int) -> TabRow:
    if index >= len(tabs):
        raise E.BrowserTabClosed(f"No tab has index {index}; there are {len(tabs)}.",
                                 {"index": index, "tabs": len(tabs)})
    return tabs[index]


async def _answer(session: Session, line: str) -> str:
    """Result line, the tab list, then the current tab's state (or its open dialog)."""
    text = f"### Result\n{line}.\n\n" + render_tabs(await session.all_tabs(), session.is_current)
    if session.snapshot_after_action:
        return text + "\n\n" + await session.page_state()
    dialog = await session.open_dialog()
    return text + ("\n\n" + modal_section(dialog) if dialog else "")


async def _tabs(session: Session, args: Any) -> str:
    if args.action == "list":
        text = render_tabs(await session.all_tabs(), session.is_current)
        dialog = await session.open_dialog()
        return text + ("\n\n" + modal_section(dialog) if dialog else "")
    client = await session.client()
    if args.action == "new":
        tab = await Browser(client, session.device).new_tab(args.url)
        session.select(session.device, tab.tab_id)
        return await _answer(session, f"Opened tab {tab.tab_id}; later tools act on it")
    tabs = await session.all_tabs()
    if args.action == "select":
        if args.index is None:
            raise E.BadRequest("select needs `index`, the tab's index from browser_tabs list.")
        device, tab_info = _pick(tabs, args.index)
        await Browser(client, device).select_tab(tab_info["tabId"])
        session.select(device, tab_info["tabId"])
        return await _answer(session, f"Selected tab {tab_info['tabId']}")
    # close
    if args.index is not None:
        device, tab_info = _pick(tabs, args.index)
    else:
        current = [(d, t) for d, t in tabs if session.is_current(d, t)]
        if not current:
            raise E.BrowserTabClosed("No tab is current; give `index` from browser_tabs list.")
        device, tab_info = current[0]
    if sum(1 for d, _ in tabs if d == device) == 1:
        raise with_next_step(
            E.BadRequest("This is the browser's last tab; closing it would close the browser.",
                         {"tabId": tab_info["tabId"]}),
            "Open another tab first (browser_tabs action new), or navigate this one instead.")
    was_current = session.is_current(device, tab_info)
    await Browser(client, device).close_tab(tab_info["tabId"])
    if was_current:  # follow whichever tab the browser shows now
        session.select(session.device, None)
    return await _answer(session, f"Closed tab {tab_info['tabId']}")


TOOLS = [
    Tool(
        name="browser_tabs",
        title="Manage tabs",
        description="List the browser's tabs, open a new one, close one, or select one "
        "(brought to the front; later tools act on it).",
        args=TabsArgs,
        run=_tabs,
    ),
]
