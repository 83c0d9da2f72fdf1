"""Issue 32 item 1: a ``trustbridge mcp`` whose bridge or browser goes away recovers on
its next call, as MCP clients run it (``python -m trustbridge mcp`` over stdio, two
servers sharing one state directory, processes stopped for real).

Each test checks the next call's true answer (the page it loaded, or the refusal and
its next step) and how long the recovery took (printed; bounded by the client's read
timeout, never asserted as a speed).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from .test_mcp_cli import _text, mcp_server

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]


async def _navigate(client, url: str):
    return await client.call_tool("browser_navigate", {"url": url})


async def test_a_second_server_keeps_working_after_the_first_one_exits(
        tmp_path: Path, origins) -> None:
    """A's server starts the embedded bridge; B's joins it; A exits (its bridge and
    browser go with it). B's next browser_navigate loads the page (B starts its own
    bridge and browser) and says that its old tab is gone; the call after works too.
    Before issue 32 it answered BROWSER_TAB_CLOSED for every later call."""
    home = tmp_path / "home"
    url = f"{origins.main}/index.html"
    a_up, a_exit = asyncio.Event(), asyncio.Event()

    async def client_a() -> None:
        async with mcp_server(home, "--browser", "chromium") as a:
            first = await _navigate(a, url)
            assert not first.is_error, _text(first)
            a_up.set()
            await a_exit.wait()

    task_a = asyncio.create_task(client_a())
    await asyncio.wait_for(a_up.wait(), 120)
    async with mcp_server(home) as b:
        joined = await _navigate(b, url + "?b=1")
        assert not joined.is_error, _text(joined)
        a_exit.set()
        await asyncio.wait_for(task_a, 60)
        started = time.monotonic()
        after = await _navigate(b, url + "?b=2")
        took = time.monotonic() - started
        shown = _text(after)
        assert not after.is_error, shown
        assert "?b=2" in shown, shown
        assert "bridge" in shown.lower() and "gone" in shown.lower(), shown
        print(f"B's navigate after A exited took {took:.1f} s")
        again = await _navigate(b, url + "?b=3")
        assert not again.is_error and "?b=3" in _text(again), _text(again)


async def test_browser_firefox_on_a_running_chromium_bridge_is_refused_with_the_next_step(
        tmp_path: Path, origins) -> None:
    """``--browser firefox`` while another server's Chromium bridge runs in the same state
    directory: the tool result refuses (nothing runs in Chromium) and says what to do;
    before issue 32 the call ran in Chromium, with a warning on stderr only."""
    home = tmp_path / "home"
    url = f"{origins.main}/index.html"
    async with mcp_server(home, "--browser", "chromium") as a:
        first = await _navigate(a, url)
        assert not first.is_error, _text(first)
        async with mcp_server(home, "--browser", "firefox") as b:
            refused = await _navigate(b, url + "?ff=1")
            shown = _text(refused)
            assert refused.is_error, shown
            assert "DEVICE_NOT_CONNECTED" in shown and "--browser firefox" in shown, shown
            assert "TRUSTBRIDGE_HOME" in shown, shown
        pages = await a.call_tool("browser_tabs", {"action": "list"})
        assert "?ff=1" not in _text(pages), _text(pages)


async def test_a_server_never_attaches_to_a_bridge_that_is_shutting_down(
        tmp_path: Path, origins, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge whose stop has begun (its supervisor being terminated) is not joined: an
    MCP server connecting then starts its own bridge and browser, and its navigate loads
    the page. Before issue 32 it joined the dying bridge and answered
    DEVICE_NOT_CONNECTED ("run `trustbridge up`")."""
    from mcp import Client

    from trustbridge.bridge.embedded import Embedded
    from trustbridge.bridge.mcp import Connection, build_server

    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    dying = Embedded(port=0)
    await dying.start()
    stopping = asyncio.create_task(dying.stop())
    await asyncio.sleep(0)  # its stop has begun: the supervisor is being terminated
    conn = Connection(bridge_port=0)
    try:
        async with Client(build_server(conn)) as mcp:
            started = time.monotonic()
            result = await mcp.call_tool("browser_navigate",
                                         {"url": f"{origins.main}/index.html"})
            shown = _text(result)
            assert not result.is_error, shown
            assert "index.html" in shown
            assert conn.launched is not None, "it used the dying bridge"
            print(f"navigate while the other bridge stopped: {time.monotonic() - started:.1f} s")
    finally:
        await conn.close()
        await stopping


async def test_a_bridge_that_is_shutting_down_refuses_hellos_and_closes_its_clients(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """begin_shutdown: a connected client is closed, a new hello is refused with
    DEVICE_NOT_CONNECTED and ``shuttingDown``, and the server's process lives on."""
    from trustbridge.bridge.client import BridgeClient
    from trustbridge.bridge.protocol import errors as E
    from trustbridge.bridge.server import BridgeServer

    server = BridgeServer("t" * 32, port=0)
    await server.start()
    try:
        client = await BridgeClient.connect(server.url, "t" * 32)
        await server.begin_shutdown()
        for _ in range(100):
            if client.closed:
                break
            await asyncio.sleep(0.02)
        assert client.closed
        with pytest.raises(E.DeviceNotConnected) as refused:
            await BridgeClient.connect(server.url, "t" * 32)
        assert refused.value.details.get("shuttingDown") is True
    finally:
        await server.stop()


async def test_navigate_on_a_tab_closed_by_someone_else_opens_a_new_one_and_says_so(
        stack, origins) -> None:
    """The session's tab is closed behind its back (here through Playwright, as a
    person's Ctrl-W would): the next browser_navigate loads the page in a new tab and says
    the old one is gone; before issue 32 it answered BROWSER_TAB_CLOSED, and so did every
    later navigate. Runs on each browser of the shared ``stack``."""
    from mcp import Client

    from trustbridge.bridge.mcp import Connection, build_server

    await stack.release()
    conn = Connection(url=stack.server.url, token=stack.server.token, embedded=False)
    try:
        async with Client(build_server(conn)) as mcp:
            first = await mcp.call_tool("browser_tabs", {
                "action": "new", "url": f"{origins.main}/index.html?lifecycle=gone"})
            assert not first.is_error, _text(first)
            gone = conn.tab_id
            assert gone is not None
            page = next(p for p in stack.supervisor.context.pages
                        if "lifecycle=gone" in p.url)
            await page.close()

            async def listed() -> list[int]:
                tabs = (await stack.client.call("tabs.list", {}))["tabs"]
                return [t["tabId"] for t in tabs]

            for _ in range(100):
                if gone not in await listed():
                    break
                await asyncio.sleep(0.1)
            assert gone not in await listed(), "the tab did not close"
            result = await mcp.call_tool("browser_navigate",
                                         {"url": f"{origins.main}/index.html?again=1"})
            shown = _text(result)
            assert not result.is_error, shown
            assert f"Tab {gone} is gone" in shown and "?again=1" in shown, shown
            assert conn.tab_id not in (None, gone)
            seen = await mcp.call_tool("browser_evaluate", {"function": "() => location.search"})
            assert "?again=1" in _text(seen), _text(seen)
            await mcp.call_tool("browser_tabs", {"action": "close"})
    finally:
        await conn.close()


async def test_the_owners_killed_supervisor_comes_back_on_the_same_bridge(
        tmp_path: Path, origins, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGKILL the supervisor of the MCP server that owns the bridge: it is started again
    by itself on the same bridge (a client joined there keeps its bridge), the owner's
    next call says the browser was started again (tabs and refs gone, nothing done), and
    the call after works. Before issue 32 the whole bridge was replaced, and only on the
    owner's next call."""
    import os
    import signal

    from mcp import Client

    from trustbridge.bridge.mcp import Connection, build_server

    from .conftest import wait_until

    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    conn = Connection(bridge_port=0)
    try:
        async with Client(build_server(conn)) as mcp:
            first = await mcp.call_tool("browser_navigate", {"url": f"{origins.main}/index.html"})
            assert not first.is_error, _text(first)
            emb = conn.launched
            url, old = emb.url, emb.child.pid
            os.kill(old, signal.SIGKILL)
            killed = time.monotonic()
            await wait_until(lambda: emb.child is not None and emb.child.pid != old
                             and emb.device in emb.server.policy.extensions
                             and emb.device in emb.server.policy.drivers, 60)
            print(f"owner's supervisor killed -> back by itself: "
                  f"{time.monotonic() - killed:.1f} s")
            assert conn.launched is emb and emb.url == url, "the bridge was replaced"
            told = await mcp.call_tool("browser_navigate",
                                       {"url": f"{origins.main}/index.html?after=1"})
            assert told.is_error and "BROWSER_CRASHED" in _text(told), _text(told)
            again = await mcp.call_tool("browser_navigate",
                                        {"url": f"{origins.main}/index.html?after=2"})
            assert not again.is_error and "?after=2" in _text(again), _text(again)
    finally:
        await conn.close()
