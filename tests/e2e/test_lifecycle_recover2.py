"""Issue 32 leftovers the soak still showed (scripts/soak.py): a session looping on
another session's tab after its browser was started again, and a killed Playwright
driver answered as an internal error. Real processes, a real browser, kills by PID.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from .test_mcp_cli import _text

pytestmark = [pytest.mark.browser, pytest.mark.own_browser, pytest.mark.timeout(300)]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


async def test_after_a_browser_restart_no_server_loops_on_a_tab_id_another_session_holds(
        tmp_path: Path, origins, monkeypatch: pytest.MonkeyPatch) -> None:
    """Firefox numbers tabs from 1 again in each browser process, so after its supervisor
    is killed (SIGKILL by PID) and the browser comes back, a new tab gets an id a session
    held in the dead browser. Before the fix the bridge kept those dead ownerships: A's new
    tab was B's by the book, A's every later call answered TAB_CLAIMED (the soak's loop)
    and B's navigate went into A's tab. Now the new browser's tabs belong to nobody from
    before: A's tab is A's, B (whose remembered id is A's tab now) moves to a window of its
    own and says so, and nobody's page gets the other's load."""
    from mcp import Client

    from trustbridge.bridge.mcp import Connection, build_server
    from trustbridge.bridge.mcp.options import McpOptions

    from .conftest import wait_until

    if not Path("/usr/bin/firefox-esr").exists():
        pytest.skip("Firefox ESR is not installed (its tab ids restart at each launch)")
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    page = f"{origins.main}/index.html"
    conn_a = Connection(bridge_port=0, options=McpOptions(browser="firefox"))
    conn_b: Connection | None = None
    try:
        async with Client(build_server(conn_a)) as a:
            first = await a.call_tool("browser_navigate", {"url": page + "?a=1"})
            assert not first.is_error, _text(first)
            emb = conn_a.launched
            conn_b = Connection(url=emb.url, token=emb.token, embedded=False)
            async with Client(build_server(conn_b)) as b:
                joined = await b.call_tool("browser_navigate", {"url": page + "?b=1"})
                assert not joined.is_error, _text(joined)
                held_b = conn_b.tab_id
                old = emb.child.pid
                assert b"supervisor" in _cmdline(old)
                os.kill(old, signal.SIGKILL)
                killed = time.monotonic()
                await wait_until(lambda: emb.child is not None and emb.child.pid != old
                                 and emb.device in emb.server.policy.extensions
                                 and emb.device in emb.server.policy.drivers, 90)
                print(f"supervisor killed -> back: {time.monotonic() - killed:.1f} s")
                told = await a.call_tool("browser_navigate", {"url": page + "?a=2"})
                # The restart is announced (BROWSER_CRASHED) when the server learned of it
                # before this call; a call that races the notice lands in the new
                # browser's tab of that id, which no session owns any more, and says so.
                assert ("BROWSER_CRASHED" in _text(told)) if told.is_error \
                    else ("?a=2" in _text(told)), _text(told)
                # A opens tabs in the new browser until one has the id B held before.
                for n in range(4):
                    opened = await a.call_tool("browser_tabs", {
                        "action": "new", "url": page + f"?a=new{n}"})
                    assert not opened.is_error, _text(opened)
                    if conn_a.tab_id == held_b:
                        break
                reused = conn_a.tab_id == held_b
                print(f"B held tab {held_b}; A's tab now {conn_a.tab_id} (reused: {reused})")
                for k in range(3):
                    shown_a = await a.call_tool("browser_navigate", {"url": page + f"?a=go{k}"})
                    assert not shown_a.is_error, _text(shown_a)
                    assert f"?a=go{k}" in _text(shown_a), _text(shown_a)
                    # The tab A opened is A's: the dead browser's owners are forgotten.
                    assert "now belongs" not in _text(shown_a), _text(shown_a)
                for k in range(3):
                    shown_b = await b.call_tool("browser_navigate", {"url": page + f"?b=go{k}"})
                    assert not shown_b.is_error, _text(shown_b)
                    assert f"?b=go{k}" in _text(shown_b), _text(shown_b)
                    if k == 0 and reused:  # B's old id is A's tab now: B moves, and says so
                        assert f"tab {held_b}, this session's current tab, now belongs " \
                            f'to session "{conn_a.label}"' in _text(shown_b), _text(shown_b)
                # Each server's current tab shows its own last load, not the other's.
                seen_a = await a.call_tool("browser_evaluate",
                                           {"function": "() => location.search"})
                seen_b = await b.call_tool("browser_evaluate",
                                           {"function": "() => location.search"})
                assert "?a=go2" in _text(seen_a), _text(seen_a)
                assert "?b=go2" in _text(seen_b), _text(seen_b)
                assert conn_a.tab_id != conn_b.tab_id
    finally:
        if conn_b is not None:
            await conn_b.close()
        await conn_a.close()


async def test_a_killed_playwright_driver_is_a_browser_gone_and_comes_back(
        tmp_path: Path, origins, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGKILL Playwright's node driver (the supervisor's link to its browser) by PID:
    no answer is INTERNAL_ERROR ("The driver failed: Exception." before the fix, for
    every later action); the supervisor starts the browser again and within a bounded
    time a trusted click reaches the page."""
    from mcp import Client

    from trustbridge.bridge.mcp import Connection, build_server
    from trustbridge.supervisor.parent import descendants

    from .conftest import ref_of

    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    page = f"{origins.main}/index.html"
    conn = Connection(bridge_port=0)
    try:
        async with Client(build_server(conn)) as mcp:
            first = await mcp.call_tool("browser_navigate", {"url": page + "?before=1"})
            assert not first.is_error, _text(first)
            old_ref = ref_of(_text(first), "button", "Main button")
            sup = conn.launched.child.pid
            nodes = [p for p in descendants(sup) if b"run-driver" in _cmdline(p)]
            assert len(nodes) == 1, nodes
            os.kill(nodes[0], signal.SIGKILL)
            killed = time.monotonic()
            # At once, while the browser may still be closing: the trusted click needs
            # Playwright, which is gone.
            gap = await mcp.call_tool("browser_click", {"element": "Main button",
                                                        "target": old_ref})
            answers: list[str] = [_text(gap).split("\n")[1][:300]]
            assert gap.is_error, _text(gap)
            clicked = False
            while time.monotonic() - killed < 90 and not clicked:
                shown = await mcp.call_tool("browser_navigate", {"url": page + "?after=1"})
                text = _text(shown)
                if not shown.is_error:
                    answers.append("ok")
                    click = await mcp.call_tool("browser_click", {
                        "element": "Main button", "target": ref_of(text, "button",
                                                                   "Main button")})
                    ctext = _text(click)
                    answers.append("ok" if not click.is_error else ctext.split("\n")[1][:120])
                    clicked = not click.is_error
                else:
                    answers.append(text.split("\n")[1][:160])
                    await __import__("asyncio").sleep(1)
            print(f"driver killed -> trusted click: {time.monotonic() - killed:.1f} s; "
                  f"answers: {answers}")
            assert not any("INTERNAL_ERROR" in a for a in answers), answers
            assert clicked, answers
            # Brought back by its own supervisor (not by the bridge's owner replacing a
            # supervisor that gave up).
            assert conn.launched.child.pid == sup, "the supervisor was replaced"
            seen = await mcp.call_tool("browser_evaluate", {
                "function": "() => window.__events.filter(e => e.type === 'click' "
                "&& e.trusted).length"})
            assert "returned:\n1" in _text(seen), _text(seen)
    finally:
        await conn.close()
