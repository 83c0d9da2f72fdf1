"""Sessions in the MCP server (issue 16; bridge/mcp/session.py, tabs.py, tool.py): two MCP
servers on one bridge with the fake peers, counted on the wire.

Each server's Connection opens a session at its bridge connection (label from the MCP
client's name, or --session-label), renews it while idle, is refused on the other's tab
(the fakes receive nothing), gets a window of its own when the tab the browser has active
is the other's, claims and releases tabs with browser_tabs, and after SESSION_STOPPED
answers that error to every later call.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from trustbridge.bridge.mcp import Connection, build_server
from trustbridge.bridge.mcp.lease import session_label
from trustbridge.bridge.mcp.options import McpOptions, OptionsError, build_options
from trustbridge.bridge.server import BridgeServer

from .fakes import FakeDriver, FakeExtension, wait_until

DEVICE = "dev1"


def text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


@pytest.fixture
async def fakes(bridge: BridgeServer) -> AsyncIterator[tuple[FakeExtension, FakeDriver]]:
    """An extension (its one tab, 1, is about:blank and active) and a driver."""
    async with FakeExtension(bridge.url, bridge.token, DEVICE) as ext, \
            FakeDriver(bridge.url, bridge.token, DEVICE) as drv:
        ext.results["tabs.list"] = {"tabs": [
            {"tabId": 1, "url": "about:blank", "title": "", "active": True}]}
        await wait_until(lambda: DEVICE in bridge.policy.extensions
                         and DEVICE in bridge.policy.drivers)
        yield ext, drv


@contextlib.asynccontextmanager
async def server(bridge: BridgeServer, name: str = "agent",
                 **kwargs: Any) -> AsyncIterator[tuple[Connection, Client]]:
    """An MCP server on the bridge and an in-process client named ``name`` (its
    ``clientInfo.name``); the Connection is closed on leaving."""
    conn = Connection(url=bridge.url, token=bridge.token, embedded=False, **kwargs)
    try:
        async with Client(build_server(conn),
                          client_info=types.Implementation(name=name, version="1")) as mcp:
            yield conn, mcp
    finally:
        await conn.close()


def test_labels_are_the_client_s_name_made_fit_and_a_random_suffix() -> None:
    label = session_label("Claude Code")
    assert label.startswith("Claude-Code-") and len(label) == len("Claude-Code-") + 4
    assert session_label(None).startswith("mcp-")
    assert session_label("   ").startswith("mcp-")
    assert session_label("é" * 3).startswith("mcp-")
    assert len({session_label("x") for _ in range(20)}) > 1


def test_session_label_option_is_checked() -> None:
    assert build_options({"session_label": "research agent"}, {}).session_label \
        == "research agent"
    assert build_options({}, {"TRUSTBRIDGE_SESSION_LABEL": "ci"}).session_label == "ci"
    with pytest.raises(OptionsError, match="--session-label"):
        build_options({"session_label": "bad/label"}, {})


async def test_b_is_refused_on_a_s_tab_and_nothing_reaches_the_page(
        bridge: BridgeServer, fakes: tuple[FakeExtension, FakeDriver]) -> None:
    """A navigates (its session claims the active tab); B, pointed at that tab, is refused
    on select and on click with a tool error naming A's label; the extension and the
    driver receive nothing of B's; B's list marks the tab as A's."""
    ext, drv = fakes
    async with server(bridge, "claude-code") as (conn_a, a), server(bridge, "cursor") as (
            conn_b, b):
        done = await a.call_tool("browser_navigate", {"url": "http://127.0.0.1/"})
        assert not done.is_error, text(done)
        label_a = conn_a.label
        assert label_a is not None and label_a.startswith("claude-code-"), label_a
        assert bridge.executor.sessions.owner(DEVICE, 1).label == label_a

        listed = await b.call_tool("browser_tabs", {"action": "list"})
        assert f'tab 1 (session "{label_a}")' in text(listed), text(listed)
        assert conn_b.label is not None and conn_b.label.startswith("cursor-")

        ext.requests.clear()
        drv.requests.clear()
        select = await b.call_tool("browser_tabs", {"action": "select", "index": 0})
        assert select.is_error, text(select)
        assert text(select).startswith("### Error\nError TAB_CLAIMED in browser_tabs")
        assert label_a in text(select) and "browser_tabs action new" in text(select)

        conn_b.select(DEVICE, 1)
        click = await b.call_tool("browser_click", {"ref": "e7", "element": "Save"})
        assert click.is_error, text(click)
        assert "TAB_CLAIMED" in text(click) and f"Session {label_a!r} holds" in text(click)
        assert "tabs.select" not in ext.methods()
        assert "page.resolveTarget" not in ext.methods() and "page.act" not in ext.methods()
        assert drv.methods() == []

        again = await a.call_tool("browser_click", {"ref": "e7", "element": "Save"})
        assert not again.is_error, text(again)  # A still works
        assert drv.methods() == ["driver.act"]


async def test_b_s_first_navigate_opens_its_own_window_when_a_holds_the_blank_tab(
        bridge: BridgeServer, fakes: tuple[FakeExtension, FakeDriver]) -> None:
    """A's first navigate uses the launch's blank tab and says nothing about tabs; B's
    first navigate is refused there before anything is sent, so B gets a window of its
    own (tabs.new with window true) and navigates that tab."""
    ext, _ = fakes
    async with server(bridge, "a") as (conn_a, a), server(bridge, "b") as (conn_b, b):
        first = await a.call_tool("browser_navigate", {"url": "http://127.0.0.1/"})
        assert not first.is_error, text(first)
        assert "window" not in text(first) and "tabs.new" not in ext.methods()
        assert conn_a.tab_id == 1

        ext.results["tabs.new"] = {"tabId": 2, "url": "about:blank", "title": ""}
        ext.results["page.navigate"] = {"url": "http://127.0.0.1/b", "tabId": 2, "title": ""}
        ext.results["page.snapshot"] = {**ext.results["page.snapshot"], "tabId": 2}
        before = len(ext.requests)
        result = await b.call_tool("browser_navigate", {"url": "http://127.0.0.1/b"})
        shown = text(result)
        assert not result.is_error, shown
        assert shown.startswith(
            "### Result\nOpened a new window for this session (tab 2): the tab the browser "
            f'had active (tab 1) belongs to session "{conn_a.label}".\n'), shown
        sent = [(r.method, r.params) for r in ext.requests[before:]]
        [new] = [p for m, p in sent if m == "tabs.new"]
        assert new["window"] is True
        [nav] = [p for m, p in sent if m == "page.navigate"]
        assert nav["tabId"] == 2 and nav["url"] == "http://127.0.0.1/b"
        assert conn_b.tab_id == 2
        assert bridge.executor.sessions.owner(DEVICE, 2).label == conn_b.label
        assert bridge.executor.sessions.owner(DEVICE, 1).label == conn_a.label

        # Once B has a tab, a refusal is the call's answer: no second window.
        conn_b.select(DEVICE, 1)
        refused = await b.call_tool("browser_navigate", {"url": "http://127.0.0.1/c"})
        assert refused.is_error and "TAB_CLAIMED" in text(refused)
        assert [r.method for r in ext.requests].count("tabs.new") == 1


async def test_the_session_is_renewed_while_idle(
        bridge: BridgeServer, fakes: tuple[FakeExtension, FakeDriver],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With a 5 s lease (heartbeat 1.67 s), an idle server sends session.renew; the
    session was opened with onDisconnect stop and is gone once the server closes."""
    async with server(bridge, lease_ms=5_000) as (conn, _mcp):
        client = await conn.client()
        assert conn.session is not None and conn.session["heartbeatMs"] == 1_666
        assert "secret" not in conn.session
        sent: list[str] = []
        original = client.call

        async def call(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
            sent.append(method)
            return await original(method, params)

        monkeypatch.setattr(client, "call", call)
        await wait_until(lambda: "session.renew" in sent, timeout_s=10)
        [row] = [r for r in bridge.executor.sessions.listing(None) if r["label"] == conn.label]
        assert row["onDisconnect"] == "stop" and row["leaseMs"] == 5_000
        label = conn.label
    await wait_until(lambda: bridge.executor.sessions.find(label) is None)


async def test_claim_a_person_s_tab_says_so_and_release_frees_it(
        bridge: BridgeServer, fakes: tuple[FakeExtension, FakeDriver],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On an attended device the list marks the tab a person's; claim takes it (the
    result says it was a person's) and later tools act in it; release frees it."""
    ext, _ = fakes
    attended(bridge, monkeypatch)
    async with server(bridge) as (conn, mcp):
        listed = text(await mcp.call_tool("browser_tabs", {"action": "list"}))
        assert "tab 1 (a person's tab: claim it to use it)" in listed, listed

        claimed = await mcp.call_tool("browser_tabs", {"action": "claim", "index": 0})
        assert not claimed.is_error, text(claimed)
        assert "Claimed tab 1, a person's tab" in text(claimed)
        assert bridge.executor.sessions.owner(DEVICE, 1).label == conn.label
        assert conn.tab_id == 1
        click = await mcp.call_tool("browser_click", {"ref": "e7", "element": "Save"})
        assert not click.is_error, text(click)
        assert (await ext.wait_for_request("page.resolveTarget")).params["tabId"] == 1

        released = await mcp.call_tool("browser_tabs", {"action": "release", "index": 0})
        assert not released.is_error, text(released)
        assert "Released tab 1: open still, free for any session" in text(released)
        assert bridge.executor.sessions.owner(DEVICE, 1) is None
        assert conn.tab_id is None
        none = await mcp.call_tool("browser_tabs", {"action": "release"})
        assert "This session held no tabs" in text(none)


def attended(bridge: BridgeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The device's extension says a person may be using the browser (hello capability
    ``attended``), as in a person's own Chrome."""
    monkeypatch.setattr(bridge.policy, "_capabilities", lambda _device: {"attended": True})


async def test_on_an_attended_device_the_first_tab_is_a_window_of_its_own(
        bridge: BridgeServer, fakes: tuple[FakeExtension, FakeDriver],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Even a read (browser_snapshot) first opens the session's window: the person's
    active tab is never read unasked."""
    ext, _ = fakes
    attended(bridge, monkeypatch)
    ext.results["tabs.new"] = {"tabId": 2, "url": "about:blank", "title": ""}
    ext.results["page.snapshot"] = {**ext.results["page.snapshot"], "tabId": 2}
    async with server(bridge) as (conn, mcp):
        result = await mcp.call_tool("browser_snapshot", {})
        assert not result.is_error, text(result)
        assert text(result).startswith(
            "### Result\nOpened a new window for this session (tab 2): a person may be using "
            "this browser's other tabs.\n"), text(result)
        assert (await ext.wait_for_request("tabs.new")).params["window"] is True
        [snap] = [r for r in ext.requests if r.method == "page.snapshot"]
        assert snap.params["tabId"] == 2
        assert conn.tab_id == 2
        again = await mcp.call_tool("browser_snapshot", {})
        assert "window" not in text(again)
        assert ext.methods().count("tabs.new") == 1


async def test_claim_on_an_unattended_device_is_no_person_s_tab(
        bridge: BridgeServer, fakes: tuple[FakeExtension, FakeDriver]) -> None:
    async with server(bridge) as (_conn, mcp):
        claimed = text(await mcp.call_tool("browser_tabs", {"action": "claim", "index": 0}))
        assert "Claimed tab 1; later tools act on it." in claimed, claimed
        assert "person" not in claimed


async def test_after_session_stopped_every_call_answers_it_and_no_new_session_opens(
        bridge: BridgeServer, fakes: tuple[FakeExtension, FakeDriver]) -> None:
    """A person stops the session: the next call is SESSION_STOPPED with the next step;
    after the bridge connection is gone, calls still answer it and nothing is sent."""
    ext, _ = fakes
    async with server(bridge) as (conn, mcp):
        await mcp.call_tool("browser_navigate", {"url": "http://127.0.0.1/"})
        session = bridge.executor.sessions.find(conn.label)
        bridge.executor.gate.stop(session, "a person (the browser's Stop button)")
        first = await mcp.call_tool("browser_snapshot", {})
        assert first.is_error
        assert "SESSION_STOPPED" in text(first) and "Stop and tell the user" in text(first)
        assert "a person (the browser's Stop button)" in text(first)
        await conn._close_client()  # the bridge connection goes away
        opened = len(bridge.executor.sessions.listing(None))
        before = len(ext.requests)
        for tool, args in (("browser_navigate", {"url": "http://127.0.0.1/"}),
                           ("browser_tabs", {"action": "list"})):
            again = await mcp.call_tool(tool, args)
            assert again.is_error and "SESSION_STOPPED" in text(again), text(again)
        assert len(ext.requests) == before
        assert len(bridge.executor.sessions.listing(None)) == opened


async def test_a_session_label_in_use_is_a_tool_error(
        bridge: BridgeServer, fakes: tuple[FakeExtension, FakeDriver]) -> None:
    named = McpOptions(session_label="research")
    async with server(bridge, options=named) as (conn_a, a), \
            server(bridge, options=named) as (_conn_b, b):
        assert not (await a.call_tool("browser_snapshot", {})).is_error
        assert conn_a.label == "research"
        taken = await b.call_tool("browser_snapshot", {})
        assert taken.is_error and "BAD_REQUEST" in text(taken) and "research" in text(taken)
        assert "input schema" not in text(taken), text(taken)
        assert "with another --session-label" in text(taken), text(taken)


def on_tab(ext: FakeExtension, tab_id: int, tabs: list[dict[str, Any]]) -> None:
    """Script the fake extension's page answers for ``tab_id``, its ``tabs.new`` (the
    window it opens is ``tab_id``) and its tab list."""
    ext.results["tabs.new"] = {"tabId": tab_id, "url": "about:blank", "title": ""}
    ext.results["page.resolveTarget"] = {**ext.results["page.resolveTarget"], "tabId": tab_id}
    ext.results["page.snapshot"] = {**ext.results["page.snapshot"], "tabId": tab_id}
    ext.results["tabs.list"] = {"tabs": tabs}


async def test_a_snapshot_of_a_s_tab_first_still_lets_c_open_its_own_window(
        bridge: BridgeServer, fakes: tuple[FakeExtension, FakeDriver]) -> None:
    """C's first call reads A's tab (allowed; it shows A's page); C's first action is
    refused there before anything is sent, so C gets a window of its own and the click
    lands in it. After C closes that tab (browser_close: "the next tool call acts on its
    active tab"), its next action, refused on A's tab again, opens another window."""
    ext, drv = fakes
    async with server(bridge, "a") as (conn_a, a), server(bridge, "c") as (conn_c, c):
        assert not (await a.call_tool("browser_navigate", {"url": "http://127.0.0.1/"})).is_error
        assert bridge.executor.sessions.owner(DEVICE, 1).label == conn_a.label

        seen = await c.call_tool("browser_snapshot", {})
        assert not seen.is_error, text(seen)
        assert 'button "Save" [ref=e7]' in text(seen) and "window" not in text(seen)
        assert [r.params["tabId"] for r in ext.requests if r.method == "page.snapshot"][-1] == 1
        assert bridge.executor.sessions.owner(DEVICE, 1).label == conn_a.label

        on_tab(ext, 2, [{"tabId": 1, "url": "http://127.0.0.1/", "title": "", "active": False},
                        {"tabId": 2, "url": "about:blank", "title": "", "active": True}])
        drv.requests.clear()
        click = await c.call_tool("browser_click", {"ref": "e7", "element": "Save"})
        assert not click.is_error, text(click)
        assert text(click).startswith(
            "### Result\nOpened a new window for this session (tab 2): the tab the browser "
            f'had active (tab 1) belongs to session "{conn_a.label}".\n'), text(click)
        resolved = [r.params["tabId"] for r in ext.requests if r.method == "page.resolveTarget"]
        assert resolved[-1] == 2 and 1 not in resolved[-1:]
        assert drv.methods() == ["driver.act"]
        assert conn_c.tab_id == 2
        assert bridge.executor.sessions.owner(DEVICE, 2).label == conn_c.label
        again = await c.call_tool("browser_click", {"ref": "e7", "element": "Save"})
        assert not again.is_error and "window" not in text(again), text(again)

        ext.results["tabs.close"] = {"tabId": 2, "closed": True}
        closed = await c.call_tool("browser_close", {})
        assert not closed.is_error, text(closed)
        assert "the next tool call acts on its active tab" in text(closed)
        assert [r.params["tabId"] for r in ext.requests if r.method == "tabs.close"] == [2]

        on_tab(ext, 3, [{"tabId": 1, "url": "http://127.0.0.1/", "title": "", "active": True},
                        {"tabId": 3, "url": "about:blank", "title": "", "active": False}])
        pressed = await c.call_tool("browser_press_key", {"key": "Enter"})
        assert not pressed.is_error, text(pressed)
        assert "Opened a new window for this session (tab 3)" in text(pressed), text(pressed)
        assert conn_c.tab_id == 3
        assert bridge.executor.sessions.owner(DEVICE, 1).label == conn_a.label
        assert [r.method for r in ext.requests].count("tabs.new") == 2


async def test_a_read_of_a_free_tab_then_an_action_there_makes_it_the_session_s(
        bridge: BridgeServer, fakes: tuple[FakeExtension, FakeDriver]) -> None:
    """The free blank tab: a read pins it (no window), the first action claims it; from
    then on a refusal there is the call's answer (no window)."""
    ext, _ = fakes
    async with server(bridge, "c") as (conn, c):
        assert not (await c.call_tool("browser_snapshot", {})).is_error
        assert conn.tab_id == 1 and conn.own_tab_pending
        assert bridge.executor.sessions.owner(DEVICE, 1) is None
        click = await c.call_tool("browser_click", {"ref": "e7", "element": "Save"})
        assert not click.is_error and "window" not in text(click), text(click)
        assert bridge.executor.sessions.owner(DEVICE, 1).label == conn.label
        assert not conn.own_tab_pending
        assert "tabs.new" not in ext.methods()


async def test_a_window_that_failed_to_open_is_opened_at_the_next_refusal(
        bridge: BridgeServer, fakes: tuple[FakeExtension, FakeDriver]) -> None:
    """B's first navigate is refused on A's tab and its window cannot be opened (tabs.new
    fails: the browser is being recovered). B still has no tab of its own, so its next
    navigate opens the window; before the fix B's every later call answered TAB_CLAIMED on
    A's tab (the issue 32 soak's loop: 59 answers in 4 minutes)."""
    from trustbridge.bridge.protocol import errors as E

    ext, _ = fakes
    async with server(bridge, "a") as (conn_a, a), server(bridge, "b") as (conn_b, b):
        first = await a.call_tool("browser_navigate", {"url": "http://127.0.0.1/"})
        assert not first.is_error, text(first)
        ext.errors["tabs.new"] = E.DeviceNotConnected("The browser is being recovered.")
        gap = await b.call_tool("browser_navigate", {"url": "http://127.0.0.1/b"})
        assert gap.is_error and "DEVICE_NOT_CONNECTED" in text(gap), text(gap)
        del ext.errors["tabs.new"]
        ext.results["tabs.new"] = {"tabId": 2, "url": "about:blank", "title": ""}
        ext.results["page.navigate"] = {"url": "http://127.0.0.1/b", "tabId": 2, "title": ""}
        ext.results["page.snapshot"] = {**ext.results["page.snapshot"], "tabId": 2}
        again = await b.call_tool("browser_navigate", {"url": "http://127.0.0.1/b"})
        shown = text(again)
        assert not again.is_error, shown
        assert "Opened a new window for this session (tab 2)" in shown, shown
        assert conn_b.tab_id == 2 and conn_a.tab_id == 1
