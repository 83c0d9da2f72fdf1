"""What one MCP tool call asks the bridge for after its action (bridge/mcp/response.py):
only what its result shows, counted on the wire with the fake peers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from mcp import Client

from trustbridge.bridge.mcp import TOOLS, Connection, build_server, report
from trustbridge.bridge.mcp.options import McpOptions
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.server import BridgeServer

from .fakes import FakeDriver, FakeExtension, FakePeer

DEVICE = "dev1"
SETTLE_S = 0.3
"""Time given to any request sent after the tool returned to reach the fakes, s."""


async def spy(conn: Connection, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The methods ``conn``'s bridge client sends from now on, in order."""
    calls: list[str] = []
    client = await conn.client()
    original = client.call

    async def call(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        calls.append(method)
        return await original(method, params)

    monkeypatch.setattr(client, "call", call)
    return calls


def text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


async def click(bridge: BridgeServer, monkeypatch: pytest.MonkeyPatch,
                **options: Any) -> tuple[str, list[str]]:
    """One browser_click on ref e7 through an in-process MCP client; (text, client calls)."""
    conn = Connection(url=bridge.url, token=bridge.token, embedded=False, **options)
    try:
        calls = await spy(conn, monkeypatch)
        async with Client(build_server(conn)) as mcp:
            result = await mcp.call_tool("browser_click", {"ref": "e7", "element": "Buy"})
        await asyncio.sleep(SETTLE_S)
        assert not result.is_error, text(result)
        return text(result), calls
    finally:
        await conn.close()


async def test_a_trusted_click_costs_the_resolve_the_act_and_one_snapshot(
        bridge: BridgeServer, peers: Callable[..., Awaitable[FakePeer]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """browser_click on a device with a driver: the bridge gets one page.act, which
    carries the page state back (snapshotAfter, issue 18); the extension gets only the
    resolve and that snapshot, the driver only the act; no devices.list, no tabs.list."""
    ext = await peers(FakeExtension)
    drv = await peers(FakeDriver)
    shown, calls = await click(bridge, monkeypatch)
    assert calls == ["page.act"]
    assert ext.methods() == ["page.resolveTarget", "page.snapshot"]
    assert drv.methods() == ["driver.act"]
    assert shown.startswith("### Result\nClicked Buy (ref e7) with trusted input.\n\n"
                            "### Page state\n")
    assert '- Page Snapshot:\n```yaml\n- button "Save" [ref=e7]\n```' in shown


async def test_without_page_state_a_click_costs_only_the_act(
        bridge: BridgeServer, peers: Callable[..., Awaitable[FakePeer]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """snapshot_after_action off: nothing is asked after page.act, not even whether a
    dialog is open (the act's result says so when the click opened one)."""
    ext = await peers(FakeExtension)
    await peers(FakeDriver)
    shown, calls = await click(bridge, monkeypatch, snapshot_after_action=False)
    assert calls == ["page.act"]
    assert ext.methods() == ["page.resolveTarget"]
    assert shown == "### Result\nClicked Buy (ref e7) with trusted input."


async def test_a_dialog_in_the_result_skips_the_snapshot(
        bridge: BridgeServer, peers: Callable[..., Awaitable[FakePeer]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver's result names the dialog the click opened: Modal state from it, and
    no further request at all."""
    await peers(FakeExtension)
    drv = await peers(FakeDriver)
    drv.results["driver.act"] = {"done": True,
                                 "dialog": {"type": "alert", "message": "Hi", "url": "x"}}
    shown, calls = await click(bridge, monkeypatch)
    assert calls == ["page.act"]
    assert shown.split("\n\n")[1].startswith('### Modal state\n- ["alert" dialog with '
                                             'message "Hi"]')


async def test_a_snapshot_refused_for_a_dialog_asks_devices_list_once(
        bridge: BridgeServer, peers: Callable[..., Awaitable[FakePeer]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Only when the snapshot fails with DIALOG_OPEN is devices.list asked (once); a
    bridge that knows no dialog leaves the page state saying the snapshot is unavailable."""
    ext = await peers(FakeExtension)
    await peers(FakeDriver)
    ext.errors["page.snapshot"] = E.DialogOpen("A dialog blocks the page.")
    shown, calls = await click(bridge, monkeypatch)
    assert calls == ["page.act", "page.snapshot", "devices.list"]
    assert "### Page state\n(snapshot unavailable: a dialog blocks the page)" in shown


async def test_new_tabs_come_only_from_the_result(
        bridge: BridgeServer, peers: Callable[..., Awaitable[FakePeer]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A tab the click's result does not report is not listed, however recent its
    openedAt and whoever its opener; no tab list is asked for."""
    ext = await peers(FakeExtension)
    await peers(FakeDriver)
    ext.results["tabs.list"] = {"tabs": [
        {"tabId": 1, "url": "http://127.0.0.1/", "title": "Main", "active": True},
        {"tabId": 2, "url": "http://127.0.0.1/pop", "title": "Pop", "active": False,
         "openerTabId": 1, "openedAt": (time.time() + 60) * 1000}]}
    shown, calls = await click(bridge, monkeypatch)
    assert "### New tabs" not in shown
    assert calls == ["page.act"]
    assert "tabs.list" not in ext.methods()


async def test_reported_new_tabs_are_listed_with_their_index(
        bridge: BridgeServer, peers: Callable[..., Awaitable[FakePeer]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A result's newTabs cost one devices.list and one tabs.list, for the index
    browser_tabs takes; the section comes before the page state."""
    ext = await peers(FakeExtension)
    drv = await peers(FakeDriver)
    ext.results["tabs.list"] = {"tabs": [
        {"tabId": 1, "url": "http://127.0.0.1/", "title": "Main", "active": True},
        {"tabId": 9, "url": "http://127.0.0.1/other", "title": "Other", "active": False},
        {"tabId": 2, "url": "http://127.0.0.1/pop", "title": "Pop", "active": False,
         "openerTabId": 1, "openedAt": (time.time() + 60) * 1000}]}
    drv.results["driver.act"] = {"done": True, "popups": [{"url": "http://127.0.0.1/pop"}]}
    shown, calls = await click(bridge, monkeypatch)
    assert calls == ["page.act", "page.snapshot", "devices.list", "tabs.list"]
    sections = shown.split("\n\n")
    assert sections[1] == ("### New tabs\n- 2: [Pop](http://127.0.0.1/pop) tab 2\n"
                           "(select one with browser_tabs action select and its index)")
    assert sections[2].startswith("### Page state")


async def test_a_tab_the_snapshot_reports_opened_late_is_in_new_tabs(
        bridge: BridgeServer, peers: Callable[..., Awaitable[FakePeer]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The page-state snapshot reports a tab opened after the click's result (the bridge's
    newTabs on page.snapshot): it is shown under ### New tabs like a reported one."""
    ext = await peers(FakeExtension)
    await peers(FakeDriver)
    ext.results["tabs.list"] = {"tabs": [
        {"tabId": 1, "url": "http://127.0.0.1/", "title": "Main", "active": True},
        {"tabId": 3, "url": "http://127.0.0.1/late", "title": "Late", "active": False,
         "openerTabId": 1}]}
    ext.results["page.snapshot"] = {**ext.results["page.snapshot"], "newTabs": [
        {"tabId": 3, "url": "http://127.0.0.1/late", "title": "Late", "active": False,
         "openerTabId": 1}]}
    shown, calls = await click(bridge, monkeypatch)
    # The page state came back with the act (snapshotAfter) and reported the late tab.
    assert calls == ["page.act", "devices.list", "tabs.list"]
    assert "### New tabs\n- 1: [Late](http://127.0.0.1/late) tab 3" in shown


POPUP_TABS = [
    {"tabId": 1, "url": "http://127.0.0.1/", "title": "Main", "active": False},
    {"tabId": 2, "url": "http://127.0.0.1/inv", "title": "Invoice", "active": True,
     "openerTabId": 1, "status": "complete"}]


async def test_a_foreground_tab_the_click_opened_becomes_current(
        bridge: BridgeServer, peers: Callable[..., Awaitable[FakePeer]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The result says "now current", the page state is the new tab's (after one
    tabs.list for its load status) and the next tool call addresses it."""
    ext = await peers(FakeExtension)
    drv = await peers(FakeDriver)
    # openedAt after the click started: the bridge counts it as the popup the driver saw
    ext.results["tabs.list"] = {"tabs": [POPUP_TABS[0], {**POPUP_TABS[1],
                                                         "openedAt": time.time() * 1000 + 1000}]}
    drv.results["driver.act"] = {"done": True, "popups": [{"url": "http://127.0.0.1/inv"}]}
    conn = Connection(url=bridge.url, token=bridge.token, embedded=False)
    try:
        calls = await spy(conn, monkeypatch)
        async with Client(build_server(conn)) as mcp:
            shown = text(await mcp.call_tool("browser_click", {"ref": "e7"}))
            assert calls == ["page.act", "tabs.list", "page.snapshot", "devices.list",
                             "tabs.list"]
            assert (await ext.wait_for_request("page.snapshot")).params["tabId"] == 2
            assert 'Opened tab 1 "Invoice" — now current: later tools act on it.' in shown
            assert "### New tabs\n- 1: (current) [Invoice](http://127.0.0.1/inv) tab 2" \
                in shown and "select one with" not in shown
            await mcp.call_tool("browser_snapshot", {})
        assert [r.params.get("tabId") for r in ext.requests
                if r.method == "page.snapshot"] == [2, 2]
    finally:
        await conn.close()


@pytest.mark.parametrize(("after_s", "followed"), [(1.0, True), (30.0, False)])
async def test_a_late_foreground_tab_is_followed_only_within_two_seconds(
        bridge: BridgeServer, peers: Callable[..., Awaitable[FakePeer]],
        monkeypatch: pytest.MonkeyPatch, after_s: float, followed: bool) -> None:
    """A tab the page-state snapshot reports opened late is followed when it opened
    within 2 s of the click's answer (the page state is then taken again, of it), else
    only listed."""
    ext = await peers(FakeExtension)
    await peers(FakeDriver)
    late = {**POPUP_TABS[1], "openedAt": (time.time() + after_s) * 1000}
    ext.results["tabs.list"] = {"tabs": [POPUP_TABS[0], late]}
    ext.results["page.snapshot"] = {**ext.results["page.snapshot"], "newTabs": [late]}
    shown, calls = await click(bridge, monkeypatch)
    if followed:  # the act's own snapshot reported it: only the followed tab's is asked
        assert calls == ["page.act", "tabs.list", "page.snapshot",
                         "devices.list", "tabs.list"]
        assert 'Tab 1 "Invoice" opened after an action had returned — now current' in shown
    else:
        assert calls == ["page.act", "devices.list", "tabs.list"]
        assert ('Tab 1 "Invoice" opened after an action had returned in the background; '
                'not current') in shown


async def test_a_file_chooser_in_the_result_is_a_modal_state_beside_the_page_state(
        bridge: BridgeServer, peers: Callable[..., Awaitable[FakePeer]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """fileChooser in the click's result: an effect line, a Modal state naming
    browser_file_upload, and the page state still (the page is not blocked)."""
    await peers(FakeExtension)
    drv = await peers(FakeDriver)
    drv.results["driver.act"] = {"done": True, "fileChooser": {"multiple": False}}
    shown, calls = await click(bridge, monkeypatch)
    assert calls == ["page.act"]  # the page state came back with it (snapshotAfter)
    sections = shown.split("\n\n")
    assert sections[0].endswith("Opened a file chooser (see Modal state).")
    assert sections[1].startswith("### Modal state\n- [File chooser]: give it one file "
                                  "with browser_file_upload {paths} and no ref.")
    assert sections[2].startswith("### Page state")


async def test_upload_with_no_ref_sends_an_upload_without_a_target(
        bridge: BridgeServer, peers: Callable[..., Awaitable[FakePeer]]) -> None:
    """browser_file_upload {paths}: one page.act with an upload action and no ref; the
    driver gets css null (it answers the chooser it holds)."""
    ext = await peers(FakeExtension)
    drv = await peers(FakeDriver)
    ext.results["page.resolveTarget"] = {"frameToken": "tok", "css": None, "tabId": 1}
    drv.results["driver.act"] = {"done": True, "via": "file-chooser", "files": 1}
    conn = Connection(url=bridge.url, token=bridge.token, embedded=False,
                      snapshot_after_action=False,
                      options=McpOptions(unrestricted_file_access=True))
    try:
        async with Client(build_server(conn)) as mcp:
            result = await mcp.call_tool("browser_file_upload", {"paths": ["/tmp/a.txt"]})
        assert text(result) == ("### Result\nGave 1 file(s) to the open file chooser with "
                                "trusted input.")
        sent = (await drv.wait_for_request("driver.act")).params
        assert sent["css"] is None and sent["action"]["kind"] == "upload"
    finally:
        await conn.close()


def test_browser_type_says_it_replaces_unless_slowly_which_types_key_by_key() -> None:
    """browser_type's description keeps Playwright MCP's contract: it replaces the
    content, and only slowly types key by key."""
    tool = next(t for t in TOOLS if t.name == "browser_type")
    assert "Replaces its content unless slowly is true, which types key by key" \
        in tool.description
    assert tool.description.count("key by key") == 1


def test_effects_name_downloads_a_chooser_and_a_dialog() -> None:
    """Each effect a result carries is one short line; a navigation that only became a
    download is not called a new document; a missed click says it did not reach its target."""
    results = [{"downloads": [{"suggestedFilename": "a.csv", "path": "/d/a.csv", "bytes": 12},
                              {"suggestedFilename": "b.zip", "path": None, "bytes": None,
                               "failure": "canceled"}],
                "postActionDocumentChanged": True, "navigationWasDownload": True},
               {"fileChooser": {"multiple": True}, "dialog": {"type": "confirm"}}]
    assert report.effects(results) == [
        'Downloaded "a.csv": 12 bytes, saved as /d/a.csv',
        'The download of "b.zip" failed: canceled.',
        "Opened a confirm dialog (see Modal state).",
        "Opened a file chooser (see Modal state)."]
    assert report.effects([{"dialog": {"type": "alert"}}]) == [
        "Opened an alert dialog (see Modal state)."]
    assert report.warnings(results, ["x", "y"]) == []
    missed = report.warnings([{"delivered": False, "deliveredEvents": []}], ["the click"])
    assert missed[0].startswith("WARNING delivered: false: the click did not reach its target")


def test_a_late_tab_is_said_to_have_opened_after_the_previous_action() -> None:
    """tab_effects: a tab reported late is not phrased as opened by the reporting call."""
    tabs = [{"tabId": 7, "title": "Second tab"}, {"tabId": 8, "title": "Own"}]
    assert report.tab_effects(tabs, {7: 1, 8: 2}, 7, late={7}) == [
        'Tab 1 "Second tab" opened after an action had returned — now current: later tools '
        "act on it.",
        'Opened tab 2 "Own" in the background; not current (browser_tabs select 2 to act '
        "on it)."]
    assert report.tab_effects(tabs[:1], {}, None, late={7}) == [
        'Tab 7 "Second tab" opened after an action had returned; it is closed already.']


def test_only_an_active_tab_is_followed_and_a_late_one_only_near_an_input() -> None:
    """tab_to_follow: the last active reported tab; a background one never; a late one
    when it opened during an input call or up to 2 s after its answer."""
    def opened(tab_id: int, active: bool, late: bool = False, at: float | None = None):
        return report.OpenedTab("d", {"tabId": tab_id, "active": active, "openedAt": at},
                                late)
    inputs = [(10_000.0, 10_100.0)]
    assert report.tab_to_follow([opened(1, False)], inputs) is None
    assert report.tab_to_follow([opened(1, True), opened(2, False)], inputs).tab["tabId"] == 1
    assert report.tab_to_follow([opened(3, True, True, 12_000)], inputs) is not None
    assert report.tab_to_follow([opened(3, True, True, 10_050)], inputs) is not None
    assert report.tab_to_follow([opened(3, True, True, 13_000)], inputs) is None
    assert report.tab_to_follow([opened(3, True, True, 9_000)], inputs) is None
    assert report.tab_to_follow([opened(3, True, True, None)], inputs) is None


async def test_each_tool_call_s_tab_keeps_its_own_snapshot_after() -> None:
    """Two tool calls at once, each with its own ConnectionTab: a result through one tab
    sets that tab's snapshot_after only, and a later result without one clears it (the
    page state shown is always the latest of that call's own requests)."""
    from trustbridge.bridge.mcp.session import ConnectionTab

    class Client:
        def __init__(self) -> None:
            self.next: dict[str, Any] = {}

        async def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
            return self.next

    client = Client()
    seen: list[str] = []
    a = ConnectionTab(client, "dev1", 1, "s", lambda m, r, t: seen.append(m))  # type: ignore[arg-type]
    b = ConnectionTab(client, "dev1", 1, "s", lambda m, r, t: seen.append(m))  # type: ignore[arg-type]
    client.next = {"done": True, "tabId": 1, "snapshotAfter": {"snapshot": "- a", "tabId": 1}}
    await a._client.call("page.act", {})
    assert a.snapshot_after == {"snapshot": "- a", "tabId": 1} and b.snapshot_after is None
    client.next = {"tabId": 1, "waitedMs": 0}
    await a._client.call("page.wait", {})
    assert a.snapshot_after is None and seen == ["page.act", "page.wait"]


def test_a_control_inside_the_target_that_took_the_press_is_a_note() -> None:
    """A delivered click whose press hit a link inside the target says so (the link may
    have acted); a click with no such control says nothing."""
    said = report.warnings([{"delivered": True, "pressedOn": {"tag": "a", "text": "Delete all"}}],
                           ["the click on Settings (ref e3)"])
    assert said == ['Note: the click on Settings (ref e3) reached its target through <a> '
                    '"Delete all" inside it, which the press hit first and which may have '
                    'acted on it (a link, a menu item): check with browser_snapshot.']
    assert report.warnings([{"delivered": True}], ["the click"]) == []
