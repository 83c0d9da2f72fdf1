"""Crashes are reported, and recovered from (issue 13 item 3), in a real Chromium: a
crashed renderer (CDP ``Page.crash``, the renderer's real crash path) fails the next
action with BROWSER_CRASHED naming the tab, and the tab works again after a navigation;
a SIGKILLed browser is restarted by its supervisor and the device comes back."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
from pathlib import Path

import pytest

from trustbridge.bridge.protocol import errors as E

from .conftest import Origins, Stack, ref_of, wait_until

# Every test crashes a renderer or kills the browser: each gets a browser of its own.
pytestmark = [pytest.mark.browser, pytest.mark.own_browser, pytest.mark.timeout(120)]


async def crash_renderer(stack: Stack) -> None:
    """Crash the renderer of the driven page (Chromium only: CDP Page.crash)."""
    page = stack.page
    crashed = asyncio.Event()
    page.once("crash", lambda _p: crashed.set())
    cdp = await page.context.new_cdp_session(page)
    with contextlib.suppress(Exception):  # the renderer never answers: it is gone
        await asyncio.wait_for(cdp.send("Page.crash"), 2)
    await asyncio.wait_for(crashed.wait(), 10)


async def trusted_click(stack: Stack, origins: Origins) -> None:
    """Navigate to the test page and click "Main button": the page records one trusted
    click."""
    await stack.tab.goto(f"{origins.main}/index.html")
    result = await stack.act(ref_of(await stack.snapshot(), "button", "Main button"),
                             kind="click")
    assert result["inputPath"] == "trusted"
    clicks = [e for e in await stack.page.evaluate("window.__events") if e["type"] == "click"]
    assert clicks == [{"where": "main", "type": "click", "trusted": True,
                       "target": "main-btn", "key": None}]


def live_page(stack: Stack, suffix: str):
    """The one open Playwright page whose URL ends with ``suffix`` (a crashed page that was
    discarded is another Page object, closed)."""
    pages = [p for p in stack.supervisor.context.pages
             if not p.is_closed() and p.url.endswith(suffix)]
    assert len(pages) == 1, [(p.url, p.is_closed()) for p in stack.supervisor.context.pages]
    return pages[0]


async def test_a_crashed_renderer_is_reported_and_the_tab_recovers_on_navigate(
        stack: Stack, origins: Origins, browser: str) -> None:
    """After Page.crash every page request on the tab (click on an old ref, snapshot, text
    wait) fails BROWSER_CRASHED (what: renderer, with the tab id), never
    BROWSER_DOCUMENT_CHANGED or FRAME_TOKEN_UNKNOWN, and tabs.list marks it crashed;
    navigating the tab recovers it under a new tab id (recoveredFromCrash), tabs.list shows
    it normally, and a trusted click on the new page is recorded by the page."""
    if browser != "chromium":
        pytest.skip("CDP Page.crash is Chromium's; Firefox has no page-crash command here")
    nav = await stack.tab.goto(f"{origins.main}/index.html")
    tab_id = nav["tabId"]
    ref = ref_of(await stack.snapshot(), "button", "Main button")
    await crash_renderer(stack)
    with pytest.raises(E.BrowserCrashed) as caught:
        await stack.act(ref, kind="click")
    assert caught.value.details == {"tabId": tab_id, "what": "renderer"}
    for method, params in (("page.snapshot", {}), ("page.wait", {"text": "Main", "timeoutMs": 2000}),
                           ("page.snapshot", {"tabId": tab_id})):
        with pytest.raises(E.BrowserCrashed) as caught:
            await stack.client.call(method, params)
        assert caught.value.details == {"tabId": tab_id, "what": "renderer"}, method

    crashed = (await stack.client.call("tabs.list", {}))["tabs"]
    assert [(t["tabId"], t.get("crashed")) for t in crashed] == [(tab_id, True)]

    again = await stack.tab.goto(f"{origins.main}/index.html")
    assert again["recoveredFromCrash"] is True and again["crashedTabId"] == tab_id
    assert again["tabId"] != tab_id and again["url"].endswith("/index.html")
    listed = (await stack.client.call("tabs.list", {}))["tabs"]
    assert [(t["tabId"], t["url"].endswith("/index.html"), t["active"], "crashed" in t)
            for t in listed] == [(again["tabId"], True, True, False)]
    with pytest.raises(E.BrowserTabClosed) as gone:  # the old id names its successor
        await stack.client.call("page.snapshot", {"tabId": tab_id})
    assert gone.value.details.get("replacedBy") == again["tabId"]

    result = await stack.act(ref_of(await stack.snapshot(), "button", "Main button"),
                             kind="click")
    assert result["inputPath"] == "trusted"
    clicks = [e for e in await live_page(stack, "/index.html").evaluate("window.__events")
              if e["type"] == "click"]
    assert clicks == [{"where": "main", "type": "click", "trusted": True,
                       "target": "main-btn", "key": None}]


async def test_a_reload_recovers_a_crashed_tab(
        stack: Stack, origins: Origins, browser: str) -> None:
    """page.history reload on a crashed tab loads its URL again in a recovered tab (new id,
    recoveredFromCrash) whose page takes a trusted click; back on a crashed tab is
    refused BROWSER_CRASHED."""
    if browser != "chromium":
        pytest.skip("CDP Page.crash is Chromium's; Firefox has no page-crash command here")
    tab_id = (await stack.tab.goto(f"{origins.main}/index.html"))["tabId"]
    await crash_renderer(stack)
    with pytest.raises(E.BrowserCrashed):
        await stack.client.call("page.history", {"direction": "back"})
    reloaded = await stack.client.call("page.history", {"direction": "reload"})
    assert reloaded["recoveredFromCrash"] is True and reloaded["tabId"] != tab_id
    assert reloaded["url"].endswith("/index.html") and reloaded["transitionPending"] is False
    result = await stack.act(ref_of(await stack.snapshot(), "button", "Main button"),
                             kind="click")
    assert result["inputPath"] == "trusted"
    clicks = [e for e in await live_page(stack, "/index.html").evaluate("window.__events")
              if e["type"] == "click"]
    assert [c["trusted"] for c in clicks] == [True]


def _browser_pid(stack: Stack) -> int:
    """Pid of the browser's main process: the one started on the supervisor's profile
    that is not one of its child processes (Chromium ``--type=``, Firefox
    ``-contentproc``)."""
    from .test_orphans import _descendants

    profile = str(stack.supervisor._profile).encode()
    for pid in _descendants(os.getpid()):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if profile in cmd and b"--type=" not in cmd and b"-contentproc" not in cmd \
                and b"playwright" not in cmd:
            return pid
    raise AssertionError("no browser process found")


async def test_a_killed_browser_is_restarted_and_the_device_comes_back(
        stack: Stack, origins: Origins, browser: str) -> None:
    """kill -9 of the browser: the supervisor starts it again by itself, the extension
    and the driver reconnect for the same device, and a trusted click works."""
    await trusted_click(stack, origins)
    old_ext = stack.server.policy.extensions[stack.device]
    os.kill(_browser_pid(stack), signal.SIGKILL)

    def back() -> bool:
        # The new browser's extension says hello while the supervisor is still opening
        # it (before it counts the restart): wait for the count too.
        current = stack.server.policy.extensions.get(stack.device)
        return current is not None and current != old_ext \
            and stack.device in stack.server.policy.drivers \
            and stack.supervisor.restarts >= 1

    await wait_until(back, 45)
    assert stack.supervisor.restarts == 1
    await trusted_click(stack, origins)


async def test_the_mcp_server_says_its_browser_was_restarted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Embedded MCP: after kill -9 of its Chromium, the supervisor starts it again; the
    next tool result says the browser restarted and its tabs and refs are gone (nothing
    done), and the call after it works on the new browser."""
    from mcp import Client

    from trustbridge.bridge.mcp import Connection, build_server

    from .test_orphans import _descendants

    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    conn = Connection(bridge_port=0)
    try:
        async with Client(build_server(conn)) as mcp:
            first = await mcp.call_tool("browser_snapshot", {})
            assert not first.is_error
            emb = conn.launched
            assert emb is not None and emb.child is not None
            main = [p for p in _descendants(emb.child.pid)
                    if (cmd := Path(f"/proc/{p}/cmdline").read_bytes()).startswith(b"/")
                    and b"chrom" in cmd and b"--type=" not in cmd]
            assert len(main) == 1, main
            os.kill(main[0], signal.SIGKILL)
            await wait_until(lambda: emb.restarts == 1, 45)
            await wait_until(lambda: emb.device in emb.server.policy.extensions
                             and emb.device in emb.server.policy.drivers, 30)
            told = await mcp.call_tool("browser_snapshot", {})
            shown = "\n".join(c.text for c in told.content if c.type == "text")
            assert told.is_error and "BROWSER_CRASHED" in shown, shown
            assert "started again" in shown and "ref" in shown
            again = await mcp.call_tool("browser_snapshot", {})
            assert not again.is_error
            assert emb.child.returncode is None, "the supervisor itself must live on"
    finally:
        await conn.close()


async def test_a_crashed_tab_discarded_then_navigated_is_driven_again(
        stack: Stack, origins: Origins, browser: str) -> None:
    """The supervisor's half of a renderer-crash recovery: once the crashed tab is
    discarded (chrome.tabs.discard, done here from the extension's own worker, as the
    extension would) and navigated, its new page is stamped and a trusted click works."""
    if browser != "chromium":
        pytest.skip("CDP Page.crash and chrome.tabs.discard are Chromium's")
    await stack.tab.goto(f"{origins.main}/index.html")
    await crash_renderer(stack)
    worker = stack.supervisor.context.service_workers[0]
    crashed = await worker.evaluate(
        "chrome.tabs.query({}).then((tabs) => tabs.filter("
        "(t) => t.status === 'unloaded' && !t.discarded).map((t) => t.id))")
    assert len(crashed) == 1, crashed
    replaced = await worker.evaluate(f"chrome.tabs.discard({crashed[0]}).then((t) => t.id)")
    assert replaced != crashed[0], "a discarded tab gets a new id (a new WebContents)"
    await stack.client.call("page.navigate", {"tabId": replaced,
                                              "url": f"{origins.main}/index.html"})
    await wait_until(lambda: any(not p.is_closed() and p.url.endswith("/index.html")
                                 for p in stack.supervisor.context.pages), 10)
    result = await stack.act(ref_of(await stack.snapshot(), "button", "Main button"),
                             kind="click")
    assert result["inputPath"] == "trusted"
    page = next(p for p in stack.supervisor.context.pages if p.url.endswith("/index.html"))
    clicks = [e for e in await page.evaluate("window.__events") if e["type"] == "click"]
    assert clicks == [{"where": "main", "type": "click", "trusted": True,
                       "target": "main-btn", "key": None}]


def _firefox_web_content_pid(profile: str) -> int:
    """Pid of the Firefox content process that took the latest page (``fission.autostart``
    is off: one web content process; the newest ``-isForBrowser`` child of the browser
    started on ``profile``, found by its ``-parentPid``: content processes come from
    Firefox's fork server, not from the browser process itself)."""
    found, seen = [], []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            # Forked content processes rewrite their argv into one space-separated string.
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            parent = re.search(r" -parentPid (\d+)", cmd)
            if "-contentproc" not in cmd or " -isForBrowser" not in cmd or not parent:
                continue
            parent_cmd = Path(f"/proc/{parent.group(1)}/cmdline").read_bytes()
        except OSError:
            continue
        seen.append((proc.name, parent.group(1)))
        if profile.encode() in parent_cmd:
            found.append(int(proc.name))
    assert found, f"no Firefox content process of {profile} among {seen}"
    return max(found)


async def test_a_firefox_content_crash_says_refs_are_gone(
        stack: Stack, origins: Origins, browser: str) -> None:
    """Firefox ESR: SIGSEGV of the web content process restarts the extension (a new
    connection for the device) and leaves the tab blank; a ref from before fails
    REF_NOT_FOUND saying refs from before a restart are gone (not that it was never
    given), and a navigation makes a trusted click work and the page record it."""
    if browser == "chromium":
        pytest.skip("Firefox's content process; Chromium's renderer crash is tested above")
    await stack.tab.goto(f"{origins.main}/index.html")
    ref = ref_of(await stack.snapshot(), "button", "Main button")
    old_ext = stack.server.policy.extensions[stack.device]
    os.kill(_firefox_web_content_pid(str(stack.supervisor._profile)), signal.SIGSEGV)
    await wait_until(lambda: stack.server.policy.extensions.get(stack.device)
                     not in (None, old_ext), 30)
    with pytest.raises(E.RefNotFound) as caught:
        await stack.act(ref, kind="click")
    assert "since the extension started" in caught.value.message
    await trusted_click(stack, origins)
