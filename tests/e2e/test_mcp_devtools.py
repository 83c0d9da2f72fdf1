"""MCP end to end, real browser: browser_console_messages, browser_network_requests /
browser_network_request, browser_resize, browser_pdf_save (--caps pdf), browser_wait_for
{textGone, time}, browser_take_screenshot {type, filename, target} and browser_close,
through the ``mcp`` client library against pages of tests/e2e/pages/devtools/, checking
what the page itself recorded."""

from __future__ import annotations

import asyncio
import base64
import io
import os
import re
import signal
import sys
import time
import zipfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from PIL import Image

from trustbridge.bridge.mcp import Connection, build_server, devtools
from trustbridge.bridge.mcp.options import McpOptions
from trustbridge.bridge.protocol import errors as E

from .conftest import Origins, Stack, page_eval, ref_of, wait_until
from .test_orphans import _alive, _descendants


@asynccontextmanager
async def tools(stack: Stack, caps: frozenset[str] = frozenset()) -> AsyncIterator[Client]:
    """An MCP client of a server on the stack's bridge (no embedded browser)."""
    conn = Connection(url=stack.server.url, token=stack.server.token, embedded=False,
                      options=McpOptions(caps=caps))
    try:
        async with Client(build_server(conn)) as mcp:
            yield mcp
    finally:
        await conn.close()


def text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


async def call(mcp: Client, name: str, args: dict[str, Any] | None = None) -> str:
    result = await mcp.call_tool(name, args or {})
    assert not result.is_error, text(result)
    return text(result)


@pytest.fixture
def out_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The MCP output directory of these tests (no --output-dir given)."""
    monkeypatch.setattr(devtools, "DEFAULT_OUTPUT_DIR", tmp_path / "out")
    return tmp_path / "out"


async def open_page(mcp: Client, origins: Origins, name: str, shown: str) -> None:
    await call(mcp, "browser_navigate", {"url": f"{origins.main}/devtools/{name}"})
    await call(mcp, "browser_wait_for", {"text": shown})


async def test_console_lists_the_pages_messages_by_level_and_its_uncaught_error(
        stack: Stack, origins: Origins) -> None:
    """Every console call of the page and its thrown error are listed with their level;
    a level filters out less severe ones; a navigation starts a new list unless all."""
    async with tools(stack) as mcp:
        await open_page(mcp, origins, "console.html", "logged")
        shown = await call(mcp, "browser_console_messages")
        url = f"{origins.main}/devtools/console.html"
        logged = rf"^\[LOG\] hello from log @ {re.escape(url)}:\d+$"
        assert re.search(logged, shown, re.MULTILINE), shown
        assert "[INFO] an info line" in shown
        assert "[WARNING] careful, a warning" in shown
        assert "[ERROR] bad thing happened" in shown
        assert "boom uncaught" in shown  # the page error, with its stack
        assert "debug detail" not in shown  # info is the default level
        total = re.search(r"Total messages: (\d+) \(Errors: (\d+), Warnings: (\d+)\)", shown)
        assert total and int(total[2]) >= 2 and int(total[3]) >= 1, shown

        errors = await call(mcp, "browser_console_messages", {"level": "error"})
        assert "bad thing happened" in errors and "boom uncaught" in errors
        assert "hello from log" not in errors and "careful" not in errors
        assert 'for level "error"' in errors
        assert "debug detail" in await call(mcp, "browser_console_messages", {"level": "debug"})

        await open_page(mcp, origins, "console.html", "logged")
        again = await call(mcp, "browser_console_messages")
        assert again.count("hello from log") == 1, again
        everything = await call(mcp, "browser_console_messages", {"all": True})
        assert everything.count("hello from log") == 2, everything


async def test_network_lists_the_pages_fetches_with_status_and_one_in_detail(
        stack: Stack, origins: Origins, out_dir: Path, browser: str) -> None:
    """The page's three fetches are listed with the statuses the page itself got; static
    requests are hidden unless asked; one request shows its headers, bodies on demand."""
    async with tools(stack) as mcp:
        await open_page(mcp, origins, "fetch.html", "fetched")
        seen = await page_eval(stack.page, "window.seen")
        listed = await call(mcp, "browser_network_requests")
        base = f"{origins.main}/devtools"
        probe = re.search(rf"^(\d+)\. \[GET\] {re.escape(base)}/data\.json\?probe=1 => "
                          rf"\[{seen['ok']['status']}\] OK$", listed, re.MULTILINE)
        assert probe, listed
        assert re.search(rf"^\d+\. \[GET\] {re.escape(base)}/missing\.json => "
                         rf"\[{seen['missing']['status']}\]", listed, re.MULTILINE), listed
        posted = re.search(rf"^(\d+)\. \[POST\] {re.escape(base)}/data\.json => "
                           rf"\[{seen['posted']['status']}\]", listed, re.MULTILINE)
        assert posted, listed
        assert "fetch.html" not in listed and "static request" in listed
        assert "fetch.html" in await call(mcp, "browser_network_requests", {"static": True})
        only = await call(mcp, "browser_network_requests", {"filter": r"missing\.json"})
        assert "missing.json" in only and "probe=1" not in only

        detail = await call(mcp, "browser_network_request", {"index": int(probe[1])})
        assert f"\n#{probe[1]} [GET] {base}/data.json?probe=1\n" in detail, detail
        assert "status:    [200] OK" in detail and "type:      fetch" in detail
        assert "mimeType:  application/json" in detail
        assert re.search(r"^    x-probe: yes$", detail, re.MULTILINE), detail
        body = await call(mcp, "browser_network_request",
                          {"index": int(probe[1]), "part": "response-body"})
        assert seen["ok"]["body"].strip() in body
        sent = await call(mcp, "browser_network_request",
                          {"index": int(posted[1]), "part": "request-body"})
        if browser == "firefox":  # Playwright over WebDriver BiDi gets no request bodies
            assert "the browser reported no request body" in sent
        else:
            assert "name=trust" in sent
        saved = await call(mcp, "browser_network_requests", {"filename": "net/list.txt"})
        assert "missing.json" in (out_dir / "net" / "list.txt").read_text() and "Saved" in saved

        missing = await mcp.call_tool("browser_network_request", {"index": 9999})
        assert missing.is_error and "not found" in text(missing)

        # A navigation starts a new list; all (Playwright MCP 0.0.86) keeps the earlier ones.
        await open_page(mcp, origins, "fetch.html", "fetched")
        again = await call(mcp, "browser_network_requests")
        assert again.count("probe=1") == 1, again
        everything = await call(mcp, "browser_network_requests", {"all": True})
        assert everything.count("probe=1") == 2, everything


async def test_resize_changes_the_pages_inner_size(stack: Stack, origins: Origins) -> None:
    """browser_resize sets the viewport: the page's innerWidth/innerHeight and its resize
    event say the new size."""
    async with tools(stack) as mcp:
        await open_page(mcp, origins, "shot.html", "Red")
        said = await call(mcp, "browser_resize", {"width": 700, "height": 500})
        assert "700x500 CSS px" in said
        assert await stack.page.evaluate("[innerWidth, innerHeight]") == [700, 500]
        for _ in range(50):  # the resize event is dispatched with the next frame
            if [700, 500] in await stack.page.evaluate("window.sizes"):
                break
            await asyncio.sleep(0.05)
        assert [700, 500] in await stack.page.evaluate("window.sizes")
        small = await mcp.call_tool("browser_resize", {"width": 10, "height": 500})
        assert small.is_error and "width" in text(small)


async def test_pdf_is_listed_only_with_caps_pdf_and_is_a_real_pdf(
        stack: Stack, origins: Origins, out_dir: Path) -> None:
    """browser_pdf_save is absent without --caps pdf; with it, the page is saved as a real
    PDF in the output directory (Chromium, and Firefox over WebDriver BiDi); names leaving
    the output directory are refused."""
    async with tools(stack) as mcp:
        names = {t.name for t in (await mcp.list_tools()).tools}
        assert "browser_pdf_save" not in names and "browser_console_messages" in names
    async with tools(stack, frozenset({"pdf"})) as mcp:
        assert "browser_pdf_save" in {t.name for t in (await mcp.list_tools()).tools}
        await open_page(mcp, origins, "shot.html", "Red")
        said = await call(mcp, "browser_pdf_save", {"filename": "docs/page.pdf"})
        saved = out_dir / "docs" / "page.pdf"
        assert str(saved) in said
        assert saved.read_bytes().startswith(b"%PDF-")
        default = await call(mcp, "browser_pdf_save")
        (named,) = re.findall(r"to (\S+\.pdf)$", default)
        assert Path(named).parent == out_dir.resolve() and Path(named).name.startswith("page-")
        escape = await mcp.call_tool("browser_pdf_save", {"filename": "../x.pdf"})
        assert escape.is_error and "inside the output directory" in text(escape)


async def test_tracing_through_mcp_records_a_trace_playwrights_viewer_opens(
        stack: Stack, origins: Origins, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        browser: str) -> None:
    """--caps devtools lists browser_start/stop_tracing; a trace started, a trusted click
    the page counted, then stopped, is saved as trace-*.zip in the driver's output folder,
    and Playwright's own trace viewer (``playwright show-trace``) loads it and lists the
    click. A second start, or a stop with none running, is refused and changes nothing."""
    monkeypatch.setenv("TRUSTBRIDGE_DOWNLOADS_DIR", str(tmp_path / "traces"))
    async with tools(stack) as mcp:
        assert "browser_start_tracing" not in {t.name for t in (await mcp.list_tools()).tools}
    async with tools(stack, frozenset({"devtools"})) as mcp:
        names = {t.name for t in (await mcp.list_tools()).tools}
        assert {"browser_start_tracing", "browser_stop_tracing"} <= names
        await open_page(mcp, origins, "trace.html", "clicks=0")
        await call(mcp, "browser_start_tracing")
        again = await mcp.call_tool("browser_start_tracing", {})
        assert again.is_error and "already being recorded" in text(again), text(again)
        snap = await call(mcp, "browser_snapshot")
        await call(mcp, "browser_click", {"element": "Count", "target": ref_of(snap, "button", "Count")})
        assert await page_eval(stack.page, "document.getElementById('seen').textContent") \
            == "clicks=1"
        said = await call(mcp, "browser_stop_tracing")
        (saved,) = re.findall(r"Trace saved: (\S+\.zip) \((\d+) bytes\)", said)
        trace = Path(saved[0])
        assert trace.parent == tmp_path / "traces" and trace.name.startswith("trace-")
        assert trace.stat().st_size == int(saved[1]) > 0
        with zipfile.ZipFile(trace) as archive:  # Playwright's trace format, with the page
            events = archive.read("trace.trace").decode()
        assert f"{origins.main}/devtools/trace.html" in events
        none = await mcp.call_tool("browser_stop_tracing", {})
        assert none.is_error and "not being recorded" in text(none), text(none)
    if browser != "chromium":
        return  # the viewer is browser-independent: one check of the file format suffices
    from playwright.async_api import async_playwright

    from trustbridge.supervisor.launcher import find_chromium
    viewer = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "playwright", "show-trace", "-h", "127.0.0.1", "-p", "0",
        str(trace), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        start_new_session=True)  # its own group: the CLI runs the viewer in a node child
    try:
        line = b""
        while b"http://" not in line:
            line = await asyncio.wait_for(viewer.stdout.readline(), 60)
            assert line, "show-trace ended without serving the trace"
        url = re.search(rb"http://\S+", line)[0].decode()
        async with async_playwright() as pw:
            chromium = await pw.chromium.launch(executable_path=find_chromium())
            try:
                page = await chromium.new_page()
                await page.goto(url)
                # The viewer lists the trace's actions by title, the driver's click too.
                shown = ""
                for _ in range(300):
                    shown = await page.inner_text("body")
                    if "Actions" in shown and "Click" in shown.splitlines():
                        break
                    await asyncio.sleep(0.1)
                assert "Click" in shown.splitlines(), shown[:2000]
            finally:
                await chromium.close()
    finally:
        os.killpg(viewer.pid, signal.SIGTERM)
        await asyncio.wait_for(viewer.wait(), 30)


async def test_wait_for_text_gone_returns_once_the_page_removed_it(
        stack: Stack, origins: Origins) -> None:
    """textGone returns only after the page removed the text (in the top document, and in
    a child frame); a text that never goes is TIMEOUT; time waits that long."""
    async with tools(stack) as mcp:
        await open_page(mcp, origins, "gone.html", "Frame spinner")
        said = await call(mcp, "browser_wait_for", {"textGone": "Loading data"})
        assert "Text 'Loading data' was gone after" in said
        assert await stack.page.evaluate("window.removed.loading") is not None
        said = await call(mcp, "browser_wait_for", {"textGone": "Frame spinner"})
        (child,) = [f for f in stack.page.frames if f.url.endswith("gone_frame.html")]
        assert await child.evaluate("window.removedAt") is not None, said
        started = time.monotonic()
        assert "Waited 0.6 s" in await call(mcp, "browser_wait_for", {"time": 0.6})
        assert time.monotonic() - started >= 0.6
    # A wait for text on another session's tab is the owner's only (docs/sessions.md);
    # once the MCP session has left, its tab is free for the SDK's wait.
    with pytest.raises(E.Timeout):
        await stack.tab.wait_for_text_gone("Sticky text", timeout_ms=1_500)


async def test_screenshot_jpeg_file_and_element(
        stack: Stack, origins: Origins, out_dir: Path) -> None:
    """type jpeg gives a JPEG; filename saves the capture in the output directory (type
    from its extension); target captures just the element, as the page painted it."""
    async with tools(stack) as mcp:
        await open_page(mcp, origins, "shot.html", "Red")
        jpeg = await mcp.call_tool("browser_take_screenshot", {"type": "jpeg"})
        (image,) = [c for c in jpeg.content if c.type == "image"]
        assert image.mime_type == "image/jpeg"
        assert base64.b64decode(image.data)[:3] == b"\xff\xd8\xff"

        said = await call(mcp, "browser_take_screenshot", {"filename": "shots/view.png"})
        width, height = await stack.page.evaluate("[innerWidth, innerHeight]")
        with Image.open(out_dir / "shots" / "view.png") as saved:
            assert saved.format == "PNG" and saved.size == (width, height), said
        await call(mcp, "browser_take_screenshot", {"filename": "shots/view.jpg"})
        with Image.open(out_dir / "shots" / "view.jpg") as saved:
            assert saved.format == "JPEG"

        ref = ref_of(await stack.snapshot(), "button", "Red box")
        el = await mcp.call_tool("browser_take_screenshot",
                                 {"target": ref, "element": "Red box"})
        (image,) = [c for c in el.content if c.type == "image"]
        box = await stack.page.evaluate(
            "(() => { const r = document.getElementById('box').getBoundingClientRect();"
            " return [r.width, r.height]; })()")
        picture = Image.open(io.BytesIO(base64.b64decode(image.data))).convert("RGB")
        assert picture.size == (round(box[0]), round(box[1])), text(el)
        red, green, blue = picture.getpixel((5, 5))
        assert red > 150 and green < 80 and blue < 80, (red, green, blue)
        clash = await mcp.call_tool("browser_take_screenshot", {"target": ref, "ref": "e999"})
        assert clash.is_error


async def test_close_on_a_shared_bridge_closes_only_the_current_tab(
        stack: Stack, origins: Origins) -> None:
    """On a running bridge browser_close closes the current tab; the last tab is replaced
    by a blank one, so the user's browser stays open and the next call works."""
    async with tools(stack) as mcp:
        await open_page(mcp, origins, "shot.html", "Red")
        await call(mcp, "browser_tabs", {"action": "new", "url": f"{origins.main}/devtools/"
                                         "console.html"})
        context = stack.supervisor.context
        before = len(context.pages)
        said = await call(mcp, "browser_close")
        assert "Closed the current tab" in said
        await wait_until(lambda: len(context.pages) == before - 1, 10)
        assert not any(p.url.endswith("console.html") for p in context.pages)
        while len(context.pages) > 1:
            await call(mcp, "browser_close")
            await asyncio.sleep(0.1)
        await call(mcp, "browser_close")  # the last one: a blank tab takes its place
        await wait_until(lambda: len(context.pages) == 1
                         and context.pages[0].url == "about:blank", 10)
        await open_page(mcp, origins, "shot.html", "Red")


async def test_close_of_the_embedded_browser_leaves_no_process_and_the_next_call_relaunches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, origins: Origins) -> None:
    """Embedded default: browser_close stops the browser, supervisor and bridge this
    server started (no process left); the next tool call starts a new browser."""
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    conn = Connection(bridge_port=0)
    try:
        async with Client(build_server(conn)) as mcp:
            await open_page(mcp, origins, "shot.html", "Red")
            first = conn.launched
            assert first is not None and first.child is not None
            family = [first.child.pid, *_descendants(first.child.pid)]
            assert len(family) > 2, family
            said = await call(mcp, "browser_close")
            assert "next tool call starts a new browser" in said
            assert conn.launched is None
            await wait_until(lambda: not any(_alive(p) for p in family), 15)
            await open_page(mcp, origins, "shot.html", "Red")
            assert conn.launched is not None and conn.launched is not first
    finally:
        await conn.close()
