"""MCP devtools tools in process against a real loopback bridge with fake peers: what
browser_console_messages, browser_network_requests / _request, browser_resize,
browser_pdf_save, browser_wait_for {textGone, time}, browser_take_screenshot {type,
filename} and browser_close send on the wire and how they word the answers; file names
that leave the output directory are refused before anything is sent."""

from __future__ import annotations

import base64
import io
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from PIL import Image

from trustbridge.bridge.mcp import Connection, build_server, devtools
from trustbridge.bridge.mcp.options import McpOptions
from trustbridge.bridge.mcp.screenshot import image_type
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.server import BridgeServer

from .fakes import FakeDriver, FakeExtension, FakePeer

Peers = Callable[..., Awaitable[FakePeer]]


@pytest.fixture
def out_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(devtools, "DEFAULT_OUTPUT_DIR", tmp_path / "out")
    return tmp_path / "out"


@pytest.fixture
async def conn(bridge: BridgeServer) -> AsyncIterator[Connection]:
    c = Connection(url=bridge.url, token=bridge.token, embedded=False,
                   options=McpOptions(caps=frozenset({"pdf"})))
    try:
        yield c
    finally:
        await c.close()


def text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


MESSAGES = {"messages": [
    {"type": "log", "text": "hi", "url": "http://a/x.js", "line": 3, "at": 1.0},
    {"type": "error", "text": "boom", "stack": "    at f (http://a/x.js:1)", "pageError": True,
     "at": 2.0}], "total": 3, "errors": 1, "warnings": 1}


async def test_console_sends_level_and_all_and_prints_playwright_mcp_lines(
        peers: Peers, conn: Connection) -> None:
    """level and all reach page.console; lines read [TYPE] text @ url:line, a page error
    its message and stack, under the header with the counts."""
    async with Client(build_server(conn)) as mcp:
        await peers(FakeExtension)
        drv = await peers(FakeDriver)
        drv.results["driver.console"] = MESSAGES
        result = await mcp.call_tool("browser_console_messages", {"level": "error", "all": True})
        assert not result.is_error, text(result)
        sent = await drv.wait_for_request("driver.console")
        assert sent.params["level"] == "error" and sent.params["all"] is True
        assert sent.params["frameToken"] == FakeExtension.FRAME_TOKEN
        shown = text(result)
        assert "Total messages: 3 (Errors: 1, Warnings: 1)" in shown
        assert 'Returning 2 messages for level "error"' in shown
        assert "[LOG] hi @ http://a/x.js:3" in shown
        assert "Error: boom\n    at f (http://a/x.js:1)" in shown


async def test_console_can_be_saved_but_not_outside_the_output_dir(
        peers: Peers, conn: Connection, out_dir: Path) -> None:
    """filename writes the text under the output directory; ../ and absolute names are
    BAD_REQUEST."""
    async with Client(build_server(conn)) as mcp:
        await peers(FakeExtension)
        drv = await peers(FakeDriver)
        drv.results["driver.console"] = MESSAGES
        saved = await mcp.call_tool("browser_console_messages", {"filename": "logs/c.log"})
        assert not saved.is_error, text(saved)
        assert "[LOG] hi" in (out_dir / "logs" / "c.log").read_text()
        for bad in ("../c.log", "/tmp/c.log"):
            refused = await mcp.call_tool("browser_console_messages", {"filename": bad})
            assert refused.is_error and "inside the output directory" in text(refused)


async def test_network_list_filter_and_detail(peers: Peers, conn: Connection) -> None:
    """The list numbers requests by their id with status or failure and notes hidden
    static ones; filter is a regex (a bad one is BAD_REQUEST, nothing sent); index asks
    for one request, with body only for part response-body."""
    async with Client(build_server(conn)) as mcp:
        await peers(FakeExtension)
        drv = await peers(FakeDriver)
        drv.results["driver.network"] = {"requests": [
            {"id": 2, "method": "GET", "url": "http://a/api/user", "resourceType": "fetch",
             "status": 200, "statusText": "OK"},
            {"id": 5, "method": "post", "url": "http://a/save", "resourceType": "xhr",
             "failure": "net::ERR_FAILED"}], "hiddenStatic": 1}
        listed = text(await mcp.call_tool("browser_network_requests", {"static": True}))
        assert (await drv.wait_for_request("driver.network")).params["includeStatic"] is True
        assert "2. [GET] http://a/api/user => [200] OK" in listed
        assert "5. [POST] http://a/save => [FAILED] net::ERR_FAILED" in listed
        assert "1 static request not shown" in listed
        only = text(await mcp.call_tool("browser_network_requests", {"filter": "/api/.*user"}))
        assert "api/user" in only and "save" not in only
        drv.requests.clear()
        bad = await mcp.call_tool("browser_network_requests", {"filter": "("})
        assert bad.is_error and "BAD_REQUEST" in text(bad) and drv.methods() == []

        drv.results["driver.network"] = {"request": {
            "id": 2, "method": "GET", "url": "http://a/api/user", "resourceType": "fetch",
            "status": 200, "statusText": "OK", "durationMs": 12,
            "requestHeaders": {"accept": "*/*"},
            "responseHeaders": {"content-type": "application/json; charset=utf-8"},
            "responseBody": '{"a":1}'}}
        detail = text(await mcp.call_tool("browser_network_request", {"index": 2}))
        sent = await drv.wait_for_request("driver.network")
        assert sent.params["requestId"] == 2 and sent.params["body"] is False
        assert "#2 [GET] http://a/api/user" in detail and "duration:  12ms" in detail
        assert "mimeType:  application/json" in detail and "accept: */*" in detail
        assert 'part="response-body"' in detail
        drv.requests.clear()
        body = text(await mcp.call_tool("browser_network_request",
                                        {"index": 2, "part": "response-body"}))
        assert (await drv.wait_for_request("driver.network")).params["body"] is True
        assert '{"a":1}' in body


async def test_network_request_not_found_says_how_to_find_numbers(
        peers: Peers, conn: Connection) -> None:
    """An index the driver does not know is an error naming browser_network_requests."""
    async with Client(build_server(conn)) as mcp:
        await peers(FakeExtension)
        await peers(FakeDriver)  # no driver.network answer: BAD_REQUEST from the fake
        missing = await mcp.call_tool("browser_network_request", {"index": 7})
        assert missing.is_error and "browser_network_requests" in text(missing)


async def test_resize_and_pdf_reach_the_driver(
        peers: Peers, conn: Connection, out_dir: Path) -> None:
    """browser_resize sends the size and says what the page reports; browser_pdf_save
    writes the driver's PDF bytes to the output directory."""
    async with Client(build_server(conn)) as mcp:
        await peers(FakeExtension)
        drv = await peers(FakeDriver)
        drv.results["driver.resize"] = {"width": 640, "height": 480}
        said = text(await mcp.call_tool("browser_resize", {"width": 640, "height": 480}))
        sent = await drv.wait_for_request("driver.resize")
        assert (sent.params["width"], sent.params["height"]) == (640, 480)
        assert "640x480 CSS px" in said
        pdf = b"%PDF-1.4 fake"
        drv.results["driver.pdf"] = {"pdf": base64.b64encode(pdf).decode(), "bytes": len(pdf)}
        said = text(await mcp.call_tool("browser_pdf_save", {"filename": "p.pdf"}))
        assert (out_dir / "p.pdf").read_bytes() == pdf and f"({len(pdf)} bytes)" in said


async def test_pdf_needs_caps_pdf(bridge: BridgeServer) -> None:
    """Without --caps pdf, browser_pdf_save is not listed and calling it is an error."""
    plain = Connection(url=bridge.url, token=bridge.token, embedded=False)
    try:
        async with Client(build_server(plain)) as mcp:
            assert "browser_pdf_save" not in {t.name for t in (await mcp.list_tools()).tools}
            with pytest.raises(MCPError):
                await mcp.call_tool("browser_pdf_save", {})
    finally:
        await plain.close()


async def test_wait_for_runs_time_then_text_gone_then_text_as_separate_waits(
        peers: Peers, conn: Connection) -> None:
    """time (seconds → ms), textGone and text each become their own page.wait, in
    Playwright MCP's order; none of them is BAD_REQUEST with nothing sent."""
    async with Client(build_server(conn)) as mcp:
        ext = await peers(FakeExtension)
        result = await mcp.call_tool("browser_wait_for",
                                     {"time": 1.5, "textGone": "Loading", "text": "Done"})
        assert not result.is_error, text(result)
        waits = [r.params for r in ext.requests if r.method == "page.wait"]
        assert waits[0]["ms"] == 1500 and "text" not in waits[0]
        assert waits[0]["timeoutMs"] >= 2500  # covers the fixed wait
        assert waits[1]["textGone"] == "Loading" and "ms" not in waits[1]
        assert waits[2]["text"] == "Done"
        assert "Waited 1.5 s; Text 'Loading' was gone after" in text(result)
        ext.requests.clear()
        none = await mcp.call_tool("browser_wait_for", {})
        assert none.is_error and "textGone" in text(none)
        assert "page.wait" not in ext.methods()


def png(width: int, height: int) -> str:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (10, 200, 10)).save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode()


async def test_screenshot_type_from_filename_is_sent_and_the_capture_saved(
        peers: Peers, conn: Connection, out_dir: Path) -> None:
    """A .jpg filename asks the driver for jpeg; the capture is saved as sent; scale css
    brings a 2x capture to CSS px; target is the element; webp is refused."""
    async with Client(build_server(conn)) as mcp:
        await peers(FakeExtension)
        drv = await peers(FakeDriver)
        out = io.BytesIO()
        Image.new("RGB", (400, 200), (200, 10, 10)).save(out, format="JPEG")
        drv.results["driver.screenshot"] = {
            "png": base64.b64encode(out.getvalue()).decode(), "type": "jpeg", "width": 400,
            "height": 200, "scale": 2, "clip": {"x": 0, "y": 0, "width": 200, "height": 100}}
        shot = await mcp.call_tool("browser_take_screenshot",
                                   {"filename": "a/b.jpg", "target": "e7"})
        assert not shot.is_error, text(shot)
        sent = await drv.wait_for_request("driver.screenshot")
        assert sent.params["type"] == "jpeg" and sent.params["css"] == FakeExtension.CSS
        (image,) = [c for c in shot.content if c.type == "image"]
        assert image.mime_type == "image/jpeg"
        with Image.open(io.BytesIO(base64.b64decode(image.data))) as img:
            assert img.size == (200, 100)  # scale css: one image px per CSS px
        with Image.open(out_dir / "a" / "b.jpg") as saved:
            assert saved.format == "JPEG"
        assert "Saved to" in text(shot)
        webp = await mcp.call_tool("browser_take_screenshot", {"filename": "x.webp"})
        assert webp.is_error


def test_image_type_rules() -> None:
    """type wins; else the extension; a clash or webp is BAD_REQUEST."""
    assert image_type(None, None) == "png"
    assert image_type(None, "x.JPG") == "jpeg"
    assert image_type("jpeg", "x") == "jpeg"
    with pytest.raises(E.BadRequest):
        image_type("png", "x.jpeg")


async def test_close_on_a_shared_bridge_opens_a_blank_tab_before_closing_the_last(
        peers: Peers, conn: Connection) -> None:
    """No embedded browser: browser_close closes the current tab, after opening a blank
    one when it is the device's only tab."""
    async with Client(build_server(conn)) as mcp:
        ext = await peers(FakeExtension)
        ext.results["tabs.new"] = {"tabId": 2, "url": "about:blank", "title": ""}
        ext.results["tabs.close"] = {"tabId": 1, "closed": True}
        result = await mcp.call_tool("browser_close", {})
        assert not result.is_error, text(result)
        methods = ext.methods()
        assert methods.index("tabs.new") < methods.index("tabs.close")
        closed = await ext.wait_for_request("tabs.close")
        assert closed.params["tabId"] == 1
        assert "stays open" in text(result)
