"""Per-client state of the MCP server's Connection (bridge/mcp/session.py): two MCP
servers on one bridge keep their own diff baselines, counted on the wire with the fakes."""

from __future__ import annotations

import contextlib

from mcp import Client

from trustbridge.bridge.mcp import Connection, build_server
from trustbridge.bridge.server import BridgeServer

from .fakes import FakeDriver, FakeExtension, wait_until

DEVICE = "dev1"


async def test_two_mcp_servers_on_one_bridge_keep_their_own_diff_baselines(
        bridge: BridgeServer) -> None:
    """Each Connection's snapshots (browser_snapshot and page state) name its own session."""
    async with contextlib.AsyncExitStack() as stack:
        ext = await stack.enter_async_context(FakeExtension(bridge.url, bridge.token, DEVICE))
        await stack.enter_async_context(FakeDriver(bridge.url, bridge.token, DEVICE))
        await wait_until(lambda: DEVICE in bridge.policy.extensions
                         and DEVICE in bridge.policy.drivers)
        sessions: list[set[str | None]] = []
        for _ in range(2):
            conn = Connection(url=bridge.url, token=bridge.token, embedded=False)
            before = len(ext.requests)
            async with Client(build_server(conn)) as mcp:
                await mcp.call_tool("browser_snapshot", {"mode": "diff"})
                await mcp.call_tool("browser_click", {"ref": "e7", "element": "Save"})
                await mcp.call_tool("browser_snapshot", {})
            # Closing frees the tab its session claimed for the next server (issue 16).
            await conn.close()
            seen = {r.params.get("session") for r in ext.requests[before:]
                    if r.method == "page.snapshot"}
            sessions.append(seen)
    first, second = sessions
    assert len(first) == 1 and len(second) == 1, sessions
    assert first != second, "two MCP servers share one diff baseline"
    assert None not in first | second, "an MCP snapshot used the bridge's shared default"


def test_each_connection_names_a_fresh_snapshot_session() -> None:
    """The session name is random per Connection, not one constant for every server."""
    names = {Connection(embedded=False).snapshot_session for _ in range(5)}
    assert len(names) == 5
    assert all(n.startswith("mcp-") for n in names)


async def test_navigating_a_crashed_tab_follows_the_tab_that_replaced_it(
        bridge: BridgeServer) -> None:
    """The extension recovers a crashed tab as a new tab id: browser_navigate says so, the
    Connection's current tab becomes the new id, and the page state is that tab's."""
    async with contextlib.AsyncExitStack() as stack:
        ext = await stack.enter_async_context(FakeExtension(bridge.url, bridge.token, DEVICE))
        await stack.enter_async_context(FakeDriver(bridge.url, bridge.token, DEVICE))
        await wait_until(lambda: DEVICE in bridge.policy.extensions
                         and DEVICE in bridge.policy.drivers)
        ext.results["page.navigate"] = {"url": "http://127.0.0.1/", "tabId": 7, "title": "back",
                                        "recoveredFromCrash": True, "crashedTabId": 3}
        ext.results["page.snapshot"] = {**ext.results["page.snapshot"], "tabId": 7}
        conn = Connection(url=bridge.url, token=bridge.token, embedded=False)
        stack.push_async_callback(conn.close)
        conn.select(DEVICE, 3)
        async with Client(build_server(conn)) as mcp:
            result = await mcp.call_tool("browser_navigate", {"url": "http://127.0.0.1/"})
        text = result.content[0].text
        assert "renderer had crashed: it was reloaded as tab 7" in text, text
        assert conn.tab_id == 7
        [snap] = [r for r in ext.requests if r.method == "page.snapshot"]
        assert snap.params["tabId"] == 7


def test_the_modal_state_is_the_current_tab_s_dialog_not_another_tab_s() -> None:
    """Dialogs on tabs 1 and 2: the Connection shows the one on its current tab (chosen,
    or the active one), none for a third tab, and an unplaced dialog for any tab."""
    from trustbridge.bridge.protocol.models import DeviceInfo

    def device(*dialogs: dict) -> DeviceInfo:
        return DeviceInfo(device=DEVICE, extension=True, driver=True, requiresTrustedInput=True,
                          dialog=dialogs[0] if dialogs else None, dialogs=list(dialogs))

    one = {"type": "alert", "message": "on one", "tabId": 1}
    two = {"type": "alert", "message": "on two", "tabId": 2}
    conn = Connection(embedded=False)
    conn.select(DEVICE, 2)
    assert conn._dialog([device(one, two)])["message"] == "on two"
    conn.select(DEVICE, 3)
    assert conn._dialog([device(one, two)]) is None
    conn.select(None, None)
    assert conn._dialog([device(one, two)], active={DEVICE: 1})["message"] == "on one"
    assert conn._dialog([device(one, two)], active={DEVICE: 7}) is None
    unplaced = {"type": "confirm", "message": "somewhere"}
    assert conn._dialog([device(unplaced)], active={DEVICE: 7})["message"] == "somewhere"


async def test_the_first_tab_that_answers_becomes_the_current_tab(
        bridge: BridgeServer) -> None:
    """With no tab chosen, the tab a page result names is pinned as current, so a tab
    the page later brings to the front is followed and said, never switched to silently."""
    async with contextlib.AsyncExitStack() as stack:
        ext = await stack.enter_async_context(FakeExtension(bridge.url, bridge.token, DEVICE))
        await wait_until(lambda: DEVICE in bridge.policy.extensions)
        ext.results["page.snapshot"] = {**ext.results["page.snapshot"], "tabId": 4}
        conn = Connection(url=bridge.url, token=bridge.token, embedded=False)
        stack.push_async_callback(conn.close)
        assert conn.tab_id is None
        await (await conn.tab()).snapshot_result()
        assert (conn.device, conn.tab_id) == (DEVICE, 4)
        assert conn.take_opened() == []


async def test_every_result_s_new_tabs_reach_take_opened_once(bridge: BridgeServer) -> None:
    """newTabs of a snapshot (late) and of an action reach take_opened, marked late or
    not, with the result's device; a second take is empty."""
    async with contextlib.AsyncExitStack() as stack:
        ext = await stack.enter_async_context(FakeExtension(bridge.url, bridge.token, DEVICE))
        await wait_until(lambda: DEVICE in bridge.policy.extensions)
        tab = {"tabId": 5, "url": "http://127.0.0.1/", "title": "x", "active": True}
        ext.results["page.snapshot"] = {**ext.results["page.snapshot"], "newTabs": [tab]}
        conn = Connection(url=bridge.url, token=bridge.token, embedded=False)
        stack.push_async_callback(conn.close)
        await (await conn.tab()).snapshot_result()
        [opened] = conn.take_opened()
        assert (opened.device, opened.tab["tabId"], opened.late) == (DEVICE, 5, True)
        assert conn.take_opened() == []
