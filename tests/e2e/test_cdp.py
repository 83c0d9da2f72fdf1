"""The CDP door end to end (supervisor/cdp_proxy.py, ``trustbridge cdp``, docs/cdp.md):
Playwright's ``connect_over_cdp`` through the URL the CLI prints reads and changes the
runtime's page, ``browser.close()`` closes only that connection (the bridge's next
snapshot and trusted click still work, as the page records), a URL without the token
or with a wrong one is refused, ``Browser.crash`` is refused at the root and on a page
session (the runtime's browser stays up), the pages and contexts a killed client created
are closed (the runtime's tab stays), and a Firefox device says why it has no door, in
plain and ``--json`` mode alike."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import async_playwright
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from trustbridge.bridge import cli
from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.protocol import errors as E

from .conftest import Origins, Stack, page_eval, ref_of

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

STEP_S = 30.0
CONNECT_MS = 30_000
STATUS = "document.getElementById('status').textContent"


async def run_cli_cdp(stack: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                      capsys: pytest.CaptureFixture[str], *extra: str,
                      exit_code: int = cli.EXIT_OK) -> tuple[str, str]:
    """``trustbridge cdp [extra]`` against the stack's bridge: (stdout, stderr)."""
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    token_file = tmp_path / "bridge-token"
    token_file.write_text(stack.server.token)
    os.chmod(token_file, 0o600)
    (tmp_path / "operator-token").write_text(stack.server.operator_token)  # cdp is an operator's
    args = cli.build_parser().parse_args(
        ["cdp", "--bridge", stack.server.url, "--token-file", str(token_file), *extra])
    capsys.readouterr()
    assert await asyncio.wait_for(cli._cmd_client(args), STEP_S) == exit_code
    captured = capsys.readouterr()
    return captured.out, captured.err


async def cli_cdp(stack: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                  capsys: pytest.CaptureFixture[str]) -> str:
    """``trustbridge cdp`` against the stack's bridge: its stdout (the URL alone)."""
    out, err = await run_cli_cdp(stack, tmp_path, monkeypatch, capsys)
    assert "bypassing refs and trusted-input routing" in err
    return out.strip()


async def until(check: Any, what: str) -> None:
    """Wait (bounded) until ``await check()`` is true."""
    async with asyncio.timeout(STEP_S):
        while not await check():
            await asyncio.sleep(0.1)
    assert await check(), what


async def endpoint(stack: Stack) -> dict[str, Any]:
    """``cdp.endpoint`` on an operator connection (the door is an operator's)."""
    async with await BridgeClient.connect(stack.server.url, stack.server.token,
                                          operator=stack.server.operator_token) as ops:
        return await ops.call("cdp.endpoint", {})


async def ask(ws: Any, msg: dict[str, Any]) -> dict[str, Any]:
    """Send a raw CDP command; its answer (events before it are skipped)."""
    await ws.send(json.dumps(msg))
    async with asyncio.timeout(STEP_S):
        while True:
            answer = json.loads(await ws.recv())
            if answer.get("id") == msg["id"]:
                return dict(answer)


@pytest.mark.parametrize("browser", ["chromium"], scope="module")
async def test_playwright_connects_through_trustbridge_cdp_and_leaves_the_browser_up(
        stack: Stack, origins: Origins, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    page_url = f"{origins.main}/cdp/index.html"
    await stack.client.call("page.navigate", {"url": page_url})
    url = await cli_cdp(stack, tmp_path, monkeypatch, capsys)
    assert url.startswith("ws://127.0.0.1:") and "/devtools/browser/" in url

    async with async_playwright() as pw:
        other = await pw.chromium.connect_over_cdp(url, timeout=CONNECT_MS)
        pages = [p for c in other.contexts for p in c.pages if p.url == page_url]
        assert len(pages) == 1, [p.url for c in other.contexts for p in c.pages]
        assert await pages[0].title() == "CDP door page"
        assert await pages[0].evaluate(STATUS) == "no clicks"
        # A write through CDP lands in the runtime's own page.
        await pages[0].evaluate("document.title = 'changed through CDP'")
        assert await page_eval(stack.page, "document.title") == "changed through CDP"
        await other.close()

        # The http:// form (Playwright reads /json/version under the token first), two
        # clients at once: closing one leaves the other working.
        http_url = "http" + url[len("ws"):]
        again = await pw.chromium.connect_over_cdp(http_url, timeout=CONNECT_MS)
        third = await pw.chromium.connect_over_cdp(url, timeout=CONNECT_MS)
        assert [p for c in again.contexts for p in c.pages if p.url == page_url]
        await again.close()
        kept = [p for c in third.contexts for p in c.pages if p.url == page_url]
        assert await kept[0].evaluate("document.title") == "changed through CDP"
        await third.close()

        # A raw client's Browser.close (Puppeteer's browser.close() sends it): the proxy
        # answers and ends that connection; the browser is not closed.
        async with connect(url, proxy=None) as raw:
            await raw.send(json.dumps({"id": 1, "method": "Browser.close"}))
            assert json.loads(await asyncio.wait_for(raw.recv(), STEP_S)) == {
                "id": 1, "result": {}}
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(raw.recv(), STEP_S)

        base = url.rsplit("/", 1)[0]
        for bad in (base, f"{base}/{'x' * 32}"):
            with pytest.raises(PlaywrightError) as info:
                await pw.chromium.connect_over_cdp(bad, timeout=CONNECT_MS)
            assert "403" in str(info.value) or "404" in str(info.value), str(info.value)

    # The runtime's browser is still up and the bridge still acts in it.
    assert stack.supervisor.context is not None
    assert stack.supervisor.context.browser.is_connected()
    button = ref_of(await stack.snapshot(), "button", "Count")
    result = await stack.act(button, kind="click")
    assert result.get("inputPath") != "synthetic"
    assert await page_eval(stack.page, STATUS) == "clicks=1 isTrusted=true"


@pytest.mark.own_browser  # it asks for a crash / a CDP client makes contexts
@pytest.mark.parametrize("browser", ["chromium"], scope="module")
async def test_browser_crash_is_refused_and_the_runtimes_browser_stays_up(
        stack: Stack, origins: Origins) -> None:
    page_url = f"{origins.main}/cdp/index.html"
    await stack.client.call("page.navigate", {"url": page_url})
    url = (await endpoint(stack))["url"]
    async with connect(url, proxy=None) as raw:
        targets = (await ask(raw, {"id": 1, "method": "Target.getTargets"}))["result"]
        target = next(t["targetId"] for t in targets["targetInfos"] if t["url"] == page_url)
        attached = await ask(raw, {"id": 2, "method": "Target.attachToTarget",
                                   "params": {"targetId": target, "flatten": True}})
        session = attached["result"]["sessionId"]
        for n, method in enumerate(("Browser.crash", "Browser.crashGpuProcess")):
            at_root = await ask(raw, {"id": 10 + n, "method": method})
            on_page = await ask(raw, {"id": 20 + n, "method": method, "sessionId": session})
            for answer in (at_root, on_page):
                assert answer["error"]["message"].startswith(f"{method} is refused"), answer
                assert "this connection stays open" in answer["error"]["message"]
        # The connection goes on, and so does the page behind it.
        title = await ask(raw, {"id": 30, "sessionId": session, "method": "Runtime.evaluate",
                                "params": {"expression": "document.title",
                                           "returnByValue": True}})
        assert title["result"]["result"]["value"] == "CDP door page"
    assert stack.supervisor.context is not None
    assert stack.supervisor.context.browser.is_connected()
    assert ref_of(await stack.snapshot(), "button", "Count")


@pytest.mark.own_browser  # it asks for a crash / a CDP client makes contexts
@pytest.mark.parametrize("browser", ["chromium"], scope="module")
async def test_what_a_killed_client_created_is_closed_and_the_runtimes_tab_stays(
        stack: Stack, origins: Origins) -> None:
    page_url = f"{origins.main}/cdp/index.html"
    await stack.client.call("page.navigate", {"url": page_url})
    url = (await endpoint(stack))["url"]
    context = stack.supervisor.context
    assert context is not None
    before = list(context.pages)

    manager = async_playwright()
    pw = await manager.start()
    try:
        other = await pw.chromium.connect_over_cdp(url, timeout=CONNECT_MS)
        made = [await other.contexts[0].new_page() for _ in range(3)]
        own = await other.new_context()  # Target.createBrowserContext
        await own.new_page()
        for page in made:
            await page.evaluate("document.title = 'made through CDP'")

        async def runtime_sees_them() -> bool:
            # Playwright files a page of a context it did not make (the client's own)
            # under its default one: the runtime sees all four.
            return len(context.pages) == len(before) + 4

        await until(runtime_sees_them, "the runtime's context shows the client's pages")
        # SIGKILL of the client's Playwright driver: its socket drops without a close.
        manager._connection._transport._proc.kill()  # type: ignore[attr-defined]
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(manager.__aexit__(None, None, None), STEP_S)

    async def back_to_before() -> bool:
        return [p for p in context.pages if not p.is_closed()] == before

    await until(back_to_before, "the client's pages closed, the runtime's tab kept")
    assert await page_eval(stack.page, "document.title") == "CDP door page"
    async with connect(url, proxy=None) as raw:  # the client's context is disposed too
        contexts = (await ask(raw, {"id": 1, "method": "Target.getBrowserContexts"}))
        assert contexts["result"]["browserContextIds"] == []
        targets = (await ask(raw, {"id": 2, "method": "Target.getTargets"}))["result"]
        assert not [t for t in targets["targetInfos"] if t["type"] == "page"
                    and t["title"] == "made through CDP"]
    assert ref_of(await stack.snapshot(), "button", "Count")


@pytest.mark.parametrize("browser", ["chromium"], scope="module")
async def test_the_same_session_gets_the_same_url(stack: Stack) -> None:
    """An operator session gets the same URL each time; an agent session none (the door
    reaches every session's tabs: docs/security.md "Who may do what")."""
    from trustbridge.bridge.sdk import Browser

    with pytest.raises(E.Unauthorized) as refused:
        await stack.client.call("cdp.endpoint", {})
    assert refused.value.details.get("reason") == "notOperator"
    async with await BridgeClient.connect(stack.server.url, stack.server.token,
                                          operator=stack.server.operator_token) as ops:
        first = await ops.call("cdp.endpoint", {})
        second = await ops.call("cdp.endpoint", {})
        assert first["url"] == second["url"] and first["device"] == stack.device
        assert first["session"] and first["session"].startswith("client-")
        # The SDK's wrapper is the same request on the same connection.
        assert await Browser(ops, stack.device).cdp_endpoint() == first["url"]


@pytest.mark.parametrize("browser", [pytest.param("firefox", marks=pytest.mark.firefox)], scope="module")
async def test_a_firefox_device_says_it_has_no_cdp_door(
        stack: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(E.BadRequest) as info:
        await endpoint(stack)
    assert "Chromium devices only" in info.value.message
    assert str(info.value.details.get("browser", "")).startswith("firefox")
    assert "chromium" in (info.value.next_step or "")
    # The CLI says the next step in plain mode too, as --json does.
    out, err = await run_cli_cdp(stack, tmp_path, monkeypatch, capsys,
                                 exit_code=cli.EXIT_ERROR)
    assert out == "" and "Chromium devices only" in err
    assert f"next step: {info.value.next_step}" in err
    out, _ = await run_cli_cdp(stack, tmp_path, monkeypatch, capsys, "--json",
                               exit_code=cli.EXIT_ERROR)
    payload = json.loads(out)["error"]
    assert payload["nextStep"] == info.value.next_step
    assert "next step" not in payload["message"]


@pytest.mark.parametrize("browser", ["chromium"], scope="module")
async def test_the_door_refuses_the_extension_local_files_and_browser_pages(
        stack: Stack, origins: Origins, monkeypatch: pytest.MonkeyPatch) -> None:
    """The break run, as the holder of the door's URL: it attached to the extension's
    service worker (config.json: the bridge token; chrome.runtime.reload() ended the
    extension) and opened file:///etc/passwd with Target.createTarget. Each is refused in
    the real browser, the page is not navigated, and the bridge still reads the page."""
    monkeypatch.delenv("TRUSTBRIDGE_ALLOW_FILE_URLS", raising=False)
    page_url = f"{origins.main}/cdp/index.html"
    await stack.client.call("page.navigate", {"url": page_url})
    url = (await endpoint(stack))["url"]
    async with connect(url, proxy=None) as raw:
        targets = (await ask(raw, {"id": 1, "method": "Target.getTargets"}))["result"]
        own = [t for t in targets["targetInfos"] if t["url"].startswith("chrome-extension:")]
        assert any(t["type"] == "service_worker" for t in own), targets
        for n, t in enumerate(own):
            refused = await ask(raw, {"id": 10 + n, "method": "Target.attachToTarget",
                                      "params": {"targetId": t["targetId"], "flatten": True}})
            assert "the trustbridge extension's" in refused["error"]["message"], refused
        for n, bad in enumerate(("file:///etc/passwd", "chrome://version/")):
            created = await ask(raw, {"id": 20 + n, "method": "Target.createTarget",
                                      "params": {"url": bad}})
            assert "is refused by the trustbridge CDP door" in created["error"]["message"]
        page = next(t["targetId"] for t in targets["targetInfos"] if t["url"] == page_url)
        session = (await ask(raw, {"id": 30, "method": "Target.attachToTarget",
                                   "params": {"targetId": page, "flatten": True}})
                   )["result"]["sessionId"]
        moved = await ask(raw, {"id": 31, "sessionId": session, "method": "Page.navigate",
                                "params": {"url": "file:///etc/passwd"}})
        assert "is refused by the trustbridge CDP door" in moved["error"]["message"], moved
        storage = await ask(raw, {"id": 32, "method": "Extensions.getStorageItems",
                                  "params": {"id": "x", "storageArea": "local"}})
        assert "Extensions domain" in storage["error"]["message"]
    assert stack.page.url == page_url
    assert all(not p.url.startswith("file:") for p in stack.supervisor.context.pages)
    assert ref_of(await stack.snapshot(), "button", "Count")  # the extension still reads it
