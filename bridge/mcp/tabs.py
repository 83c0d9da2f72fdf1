"""browser_tabs: list the open tabs, open a new one, close one, or select the one the
other tools act on; claim a tab or release this session's (issue 16).

``select`` brings the tab to the front in the browser too (``tabs.select``), so what the
browser shows and what the tools address stay the same tab. A tab's index is its position
in the list this tool prints (every device's tabs, in a stable order).

Sessions (docs/sessions.md): the list marks another session's tab (``(session "x")``)
and a person's (``(a person's tab: claim it to use it)``); selecting, closing or acting on
another session's tab is TAB_CLAIMED. ``claim`` takes a free tab explicitly, a person's
included (``tabs.claim``: the only way to act in a person's tab), and makes it current;
``release`` gives up one of this session's tabs (``index``) or all of them
(``session.release``): they stay open, free for any session.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ..protocol import errors as E
from ..protocol.models import TabNewParams
from ..sdk import Browser
from .report import TabRow
from .response import Response
from .session import Connection
from .tool import Tool, derive, with_next_step

TabsArgs = derive(
    "TabsArgs", "What to do with tabs.",
    action=(Literal["list", "new", "close", "select", "claim", "release"],
            Field(description="list the tabs, open a new one, close one, select one, claim "
                  "one (e.g. a person's), or release yours.")),
    index=(int | None, Field(default=None, ge=0, le=1000,
                             description="Tab index from the list (if omitted, close: the "
                             "current tab; release: all yours).")),
    take={TabNewParams: ["url"]},
    describe={"url": "For new: URL to load in it."},
    order=["action", "index"],
)


def _pick(tabs: list[TabRow], index: int) -> TabRow:
    if index >= len(tabs):
        raise E.BrowserTabClosed(f"No tab has index {index}; there are {len(tabs)}.",
                                 {"index": index, "tabs": len(tabs)})
    return tabs[index]


async def _answer(conn: Connection, response: Response, line: str) -> None:
    """Result line, the tab list after the change, then the current tab's state (or the
    dialog the list's ``devices.list`` reports)."""
    response.add_action(line)
    response.set_tabs(await conn.tab_list())
    response.include_page_state()


async def _tabs(conn: Connection, args: Any, response: Response) -> None:
    if args.action == "list":
        response.set_tabs(await conn.tab_list())
        return
    client = await conn.client()
    if args.action == "new":
        tab = await Browser(client, conn.device).new_tab(args.url)
        conn.select(conn.device, tab.tab_id, held=True)
        return await _answer(conn, response, f"Opened tab {tab.tab_id}; later tools act on it")
    tabs = (await conn.tab_list()).rows
    if args.action == "select":
        if args.index is None:
            raise E.BadRequest("select needs `index`, the tab's index from browser_tabs list.")
        device, tab_info = _pick(tabs, args.index)
        await Browser(client, device).select_tab(tab_info["tabId"])
        conn.select(device, tab_info["tabId"], held=True)
        return await _answer(conn, response, f"Selected tab {tab_info['tabId']}")
    if args.action == "claim":
        if args.index is None:
            raise E.BadRequest("claim needs `index`, the tab's index from browser_tabs list.")
        device, tab_info = _pick(tabs, args.index)
        claimed = await client.call("tabs.claim", {"device": device, "tabId": tab_info["tabId"]})
        conn.select(device, tab_info["tabId"], held=True)
        # The bridge says ``person`` for any tab no session opened; it is a person's only
        # where the list marked it so (an attended device: a headed or personal browser).
        person = bool(claimed.get("person")) and bool(tab_info.get("person"))
        said = (f"Claimed tab {tab_info['tabId']}, a person's tab: this session acts in it "
                "now and other sessions are refused there; later tools act on it") if person \
            else f"Claimed tab {tab_info['tabId']}; later tools act on it"
        return await _answer(conn, response, said)
    if args.action == "release":
        return await _release(conn, response, tabs, args.index)
    # close
    if args.index is not None:
        device, tab_info = _pick(tabs, args.index)
    else:
        current = [(d, t) for d, t in tabs if conn.is_current(d, t)]
        if not current:
            raise E.BrowserTabClosed("No tab is current; give `index` from browser_tabs list.")
        device, tab_info = current[0]
    if sum(1 for d, _ in tabs if d == device) == 1:
        raise with_next_step(
            E.BadRequest("This is the browser's last tab; closing it would close the browser.",
                         {"tabId": tab_info["tabId"]}),
            "Open another tab first (browser_tabs action new), or navigate this one instead.")
    was_current = conn.is_current(device, tab_info)
    closed = await Browser(client, device).close_tab(tab_info["tabId"])
    if was_current:  # follow whichever tab the browser shows now
        conn.select(conn.device, None)
    said = f"Closed tab {tab_info['tabId']}"
    if closed.get("acceptedBeforeUnload"):  # issue 32 item 5
        said += " (the page asked to confirm leaving; accepted)"
    return await _answer(conn, response, said)


async def _release(conn: Connection, response: Response, tabs: list[TabRow],
                   index: int | None) -> None:
    """``session.release`` of the tab at ``index``, or of all this session's tabs; the
    current tab, when released, is current no more (the next tool call picks again)."""
    client = await conn.client()
    if index is not None:
        device, tab_info = _pick(tabs, index)
        freed = (await client.call("session.release", {"device": device,
                                                        "tabId": tab_info["tabId"]}))["tabs"]
    else:
        freed = (await client.call("session.release", {}))["tabs"]
    if any(conn.is_current(f["device"], {"tabId": f["tabId"]}) and conn.tab_id is not None
           for f in freed):
        conn.select(conn.device, None)
        conn.own_tab_pending = True
    ids = ", ".join(str(f["tabId"]) for f in freed)
    line = (f"Released tab{'s' if len(freed) > 1 else ''} {ids}: open still, free for any "
            "session") if freed else "This session held no tabs; nothing was released"
    # No page state: a snapshot now would make the released tab current again.
    response.add_action(line)
    response.set_tabs(await conn.tab_list())


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
