"""The CDP door end to end (supervisor/cdp_proxy.py, ``trustbridge cdp``, docs/cdp.md):
Playwright's ``connect_over_cdp`` through the URL the CLI prints reads and changes the
runtime's page, ``browser.close()`` closes only that connection (the bridge's next
snapshot and trusted click still work, as the page records), a URL without the token
or with a wrong one is refused, and a Firefox device says why it has no door."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import async_playwright
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from bridge import cli
from bridge.protocol import errors as E

from .conftest import Origins, Stack, page_eval, ref_of

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

STEP_S = 30.0
CONNECT_MS = 30_000
STATUS = "document.getElementById('status').textContent"


async def cli_cdp(stack: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                  capsys: pytest.CaptureFixture[str]) -> str:
    """``trustbridge cdp`` against the stack's bridge: its stdout (the URL alone)."""
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    token_file = tmp_path / "bridge-token"
    token_file.write_text(stack.server.token)
    os.chmod(token_file, 0o600)
    args = cli.build_parser().parse_args(
        ["cdp", "--bridge", stack.server.url, "--token-file", str(token_file)])
    capsys.readouterr()
    assert await asyncio.wait_for(cli._cmd_client(args), STEP_S) == cli.EXIT_OK
    captured = capsys.readouterr()
    assert "bypassing refs and trusted-input routing" in captured.err
    return captured.out.strip()


@pytest.mark.parametrize("browser", ["chromium"])
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


@pytest.mark.parametrize("browser", ["chromium"])
async def test_the_same_session_gets_the_same_url(stack: Stack) -> None:
    first = await stack.client.call("cdp.endpoint", {})
    second = await stack.client.call("cdp.endpoint", {})
    assert first["url"] == second["url"] and first["device"] == stack.device
    assert first["session"] and first["session"].startswith("client-")
    # The SDK's wrapper is the same request on the same connection.
    from bridge.sdk import Browser

    assert await Browser(stack.client, stack.device).cdp_endpoint() == first["url"]


@pytest.mark.parametrize("browser", [pytest.param("firefox", marks=pytest.mark.firefox)])
async def test_a_firefox_device_says_it_has_no_cdp_door(stack: Stack) -> None:
    with pytest.raises(E.BadRequest) as info:
        await stack.client.call("cdp.endpoint", {})
    assert "Chromium devices only" in info.value.message
    assert str(info.value.details.get("browser", "")).startswith("firefox")
    assert "chromium" in (info.value.next_step or "")
