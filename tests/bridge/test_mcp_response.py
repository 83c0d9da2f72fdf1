"""What one MCP tool call asks the bridge for after its action (bridge/mcp/response.py):
only what its result shows, counted on the wire with the fake peers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from mcp import Client

from bridge.mcp import TOOLS, Connection, build_server
from bridge.protocol import errors as E
from bridge.server import BridgeServer

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
    """browser_click on a device with a driver: the bridge gets page.act then one
    page.snapshot, the extension only the resolve and that snapshot, the driver only the
    act; no devices.list, no tabs.list."""
    ext = await peers(FakeExtension)
    drv = await peers(FakeDriver)
    shown, calls = await click(bridge, monkeypatch)
    assert calls == ["page.act", "page.snapshot"]
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
    assert calls == ["page.act", "page.snapshot"]
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
    assert calls == ["page.act", "page.snapshot", "devices.list", "tabs.list"]
    assert "### New tabs\n- 1: [Late](http://127.0.0.1/late) tab 3" in shown


def test_browser_type_says_it_replaces_unless_slowly_which_types_key_by_key() -> None:
    """browser_type's description keeps Playwright MCP's contract: it replaces the
    content, and only slowly types key by key."""
    tool = next(t for t in TOOLS if t.name == "browser_type")
    assert "Replaces its content unless slowly is true, which types key by key" \
        in tool.description
    assert tool.description.count("key by key") == 1
