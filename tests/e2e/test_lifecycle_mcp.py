"""Issue 32 item 1: a ``trustbridge mcp`` whose bridge or browser goes away recovers on
its next call, as MCP clients run it (``python -m bridge.cli mcp`` over stdio, two
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
