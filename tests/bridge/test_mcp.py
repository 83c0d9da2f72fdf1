"""The MCP server as an MCP client sees it: ``python -m trustbridge mcp`` spawned over stdio
and driven through the ``mcp`` client library.

The browser test checks what the page itself recorded (``event.isTrusted``, the typed
value, trusted key counts), read back through the tools' own snapshots.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import re
import struct
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client

from trustbridge.bridge import embedded
from trustbridge.bridge.mcp import Session, build_server

REPO = Path(__file__).resolve().parents[2]
PAGES = REPO / "tests" / "e2e" / "pages"
# Written out, not derived from bridge/mcp/server.py TOOLS: a tool added, renamed or
# dropped there must be added here on purpose (and to docs/mcp.md).
TOOL_NAMES = {
    "browser_snapshot", "browser_navigate", "browser_navigate_back", "browser_click",
    "browser_type", "browser_hover", "browser_press_key", "browser_select_option",
    "browser_drag", "browser_fill_form", "browser_file_upload", "browser_handle_dialog",
    "browser_actions", "browser_tabs", "browser_wait_for", "browser_take_screenshot",
    "browser_evaluate", "browser_console_messages", "browser_network_requests",
    "browser_network_request", "browser_resize", "browser_close", "browser_find",
    "browser_emulate_media",
    "browser_request_human",
}
"""What ``trustbridge mcp`` lists with no ``--caps``."""
CAPS_TOOL_NAMES = {
    "vision": {"browser_mouse_move_xy", "browser_mouse_click_xy", "browser_mouse_drag_xy",
               "browser_mouse_down", "browser_mouse_up", "browser_mouse_wheel"},
    "pdf": {"browser_pdf_save"},
}
"""What ``--caps vision,pdf`` adds, per capability (Playwright MCP's names)."""


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def page_origin() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(PAGES)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@asynccontextmanager
async def mcp_server(home: Path, *args: str) -> AsyncIterator[Client]:
    """``trustbridge mcp`` in a subprocess with its own state directory (so it finds no
    running bridge), stderr to ``home/stderr.log``."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "trustbridge", "mcp", *args],
        env=dict(os.environ, TRUSTBRIDGE_HOME=str(home)), cwd=str(REPO))
    errlog = await asyncio.to_thread(open, home / "stderr.log", "w")
    try:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=90) as client:
            yield client
    finally:
        errlog.close()


def _text(result) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


def _ref(text: str, role: str, name: str) -> str:
    pattern = rf'- {re.escape(role)} "{re.escape(name)}"[^\n]*?\[ref=((?:f\d+)?e\d+)\]'
    found = re.findall(pattern, text)
    assert len(found) == 1, f"expected one {role} {name!r} in:\n{text}"
    return found[0]


def _no_junk_on_stdout(caplog: pytest.LogCaptureFixture) -> None:
    bad = [r.getMessage() for r in caplog.records if "Failed to parse JSONRPC" in r.getMessage()]
    assert not bad, "the server wrote non-MCP output to stdout"


async def test_tools_list_and_errors_without_a_bridge(tmp_path: Path,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    """With no bridge and --no-embedded: the tools are listed with closed input schemas,
    and calls fail as tool errors (isError) that say what to do next; bad arguments and
    unknown tools are refused without ending the session."""
    caplog.set_level(logging.ERROR)
    async with mcp_server(tmp_path, "--no-embedded") as client:
        tools = (await client.list_tools()).tools
        assert {t.name for t in tools} == TOOL_NAMES
        for tool in tools:
            assert tool.input_schema["type"] == "object"
            assert tool.input_schema.get("additionalProperties") is False, tool.name
            assert tool.description and len(tool.description) > 30, tool.name
        click = next(t for t in tools if t.name == "browser_click")
        # Playwright MCP 0.0.83's name; ``ref`` is still taken as its alias.
        assert click.input_schema["required"] == ["target"]
        assert "ref" in click.input_schema["properties"]["target"]["description"]

        snap = await client.call_tool("browser_snapshot", {})
        assert snap.is_error
        assert "DEVICE_NOT_CONNECTED" in _text(snap)
        assert "trustbridge up" in _text(snap)

        bad = await client.call_tool("browser_click", {"ref": "not-a-ref"})
        assert bad.is_error
        assert "BAD_REQUEST" in _text(bad) and "target" in _text(bad)  # ref's canonical name

        extra = await client.call_tool("browser_navigate", {"url": "http://x/", "bogus": 1})
        assert extra.is_error and "bogus" in _text(extra)

        with pytest.raises(MCPError, match="Unknown tool"):
            await client.call_tool("browser_fly", {})

        again = await client.call_tool("browser_tabs", {"action": "list"})
        assert again.is_error and "DEVICE_NOT_CONNECTED" in _text(again)
    _no_junk_on_stdout(caplog)


@pytest.mark.parametrize("child,said", [
    # The supervisor's own words when its browser cannot be launched, then its exit.
    (("import sys; sys.stderr.write('supervisor: could not start chromium: no binary\\n');"
      " sys.exit(3)"), "chromium could not be started"),
    # A supervisor that never connects: the ready wait runs out.
    ("import time; time.sleep(30)", "chromium did not start in time"),
])
async def test_an_embedded_browser_that_fails_to_start_shows_its_own_next_step(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, child: str, said: str) -> None:
    """When the browser this server starts does not come up, the tool result's next step
    is the embedded launch's own (the cause, the next call retries), not the generic
    "run `trustbridge up`" of DEVICE_NOT_CONNECTED."""
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    monkeypatch.setattr(embedded, "READY_TIMEOUT_S", 1.0)
    monkeypatch.setattr(embedded.Embedded, "supervisor_args",
                        lambda self: [sys.executable, "-c", child])
    session = Session(bridge_port=0, snapshot_after_action=False)
    try:
        async with Client(build_server(session)) as client:
            result = await client.call_tool("browser_snapshot", {})
    finally:
        await session.close()
    text = _text(result)
    assert result.is_error and "DEVICE_NOT_CONNECTED" in text, text
    step = text.split("Next step: ", 1)[1]
    assert said in step and "trustbridge up" not in step, text


async def test_caps_vision_and_pdf_add_exactly_their_tools(tmp_path: Path) -> None:
    """``--caps vision,pdf`` lists the default tools and the six mouse tools and
    browser_pdf_save besides, each with a closed input schema."""
    async with mcp_server(tmp_path, "--no-embedded", "--caps", "vision,pdf") as client:
        tools = (await client.list_tools()).tools
    assert {t.name for t in tools} == TOOL_NAMES | CAPS_TOOL_NAMES["vision"] \
        | CAPS_TOOL_NAMES["pdf"]
    assert all(t.input_schema.get("additionalProperties") is False for t in tools)


@pytest.mark.browser
async def test_stdio_server_starts_a_browser_and_acts_with_trusted_input(
        tmp_path: Path, page_origin: str, caplog: pytest.LogCaptureFixture) -> None:
    """No bridge running: the server starts the embedded default; snapshot, typing and a
    click reach the page as trusted input (the page's own record says so); a stale ref
    comes back as a tool error naming browser_snapshot as the next step."""
    caplog.set_level(logging.ERROR)
    async with mcp_server(tmp_path, "--bridge-port", "0") as client:
        nav = await client.call_tool("browser_navigate", {"url": f"{page_origin}/mcp.html"})
        assert not nav.is_error, _text(nav)
        assert "trustbridge mcp page" in _text(nav)

        snap = await client.call_tool("browser_snapshot", {})
        assert not snap.is_error, _text(snap)
        note = _ref(_text(snap), "textbox", "Note")
        record = _ref(_text(snap), "button", "Record")
        assert "nothing recorded" in _text(snap)

        slow = await client.call_tool(
            "browser_type", {"ref": note, "text": "abc", "slowly": True})
        assert not slow.is_error, _text(slow)
        typed = await client.call_tool(
            "browser_type", {"element": "Note field", "ref": note, "text": "hello"})
        assert not typed.is_error, _text(typed)
        assert "with trusted input" in _text(typed)
        assert "hello" not in _text(typed).split("### Page state")[0]  # text not echoed

        clicked = await client.call_tool("browser_click", {"element": "Record", "ref": record})
        assert not clicked.is_error, _text(clicked)
        assert "with trusted input" in _text(clicked)

        seen = await client.call_tool("browser_wait_for", {"text": "click isTrusted"})
        assert not seen.is_error, _text(seen)
        after = _text(await client.call_tool("browser_snapshot", {}))
        # slowly typed after the content (3 keys); the default (fill) replaced it: Control+A
        # (2 keydowns), the value but its last character as one trusted insertText edit,
        # then that character's key (1 keydown). Every key trusted.
        assert "click isTrusted=true; note=hello; trusted keys 6/6" in after

        stale = await client.call_tool("browser_click", {"ref": "e999"})
        assert stale.is_error
        assert "REF_NOT_FOUND" in _text(stale)
        assert "browser_snapshot" in _text(stale)

        tabs = await client.call_tool("browser_tabs", {"action": "list"})
        assert not tabs.is_error and f"{page_origin}/mcp.html" in _text(tabs)
    log = (tmp_path / "stderr.log").read_text()
    assert "input driver online" in log  # progress went to stderr
    _no_junk_on_stdout(caplog)


@pytest.mark.browser
async def test_stdio_fill_form_dialog_and_screenshot_in_a_real_browser(
        tmp_path: Path, page_origin: str, caplog: pytest.LogCaptureFixture) -> None:
    """fill_form sets a textbox, a checkbox and a select with trusted events (the page
    says so); a click that opens confirm() returns the dialog as modal state and
    handle_dialog answers it (the page sees the answer); take_screenshot returns a PNG
    image of the stated size, for the viewport and for one element; a link that opens a
    tab lists it under New tabs, and browser_tabs closes it by that index."""
    caplog.set_level(logging.ERROR)
    async with mcp_server(tmp_path, "--bridge-port", "0") as client:
        nav = await client.call_tool("browser_navigate", {"url": f"{page_origin}/mcp_form.html"})
        assert not nav.is_error, _text(nav)
        snap = _text(nav)
        name, subscribe = _ref(snap, "textbox", "Name"), _ref(snap, "checkbox", "Subscribe")
        country, save = _ref(snap, "combobox", "Country"), _ref(snap, "button", "Save")
        delete = _ref(snap, "button", "Delete")

        filled = await client.call_tool("browser_fill_form", {"fields": [
            {"name": "Name", "type": "textbox", "ref": name, "value": "Ada Lovelace"},
            {"name": "Subscribe", "type": "checkbox", "ref": subscribe, "value": "true"},
            {"name": "Country", "type": "combobox", "ref": country, "value": "France"}]})
        assert not filled.is_error, _text(filled)
        assert "Filled 3 fields" in _text(filled) and "with trusted input" in _text(filled)
        assert "['fr']" in _text(filled)  # the select's value after the keyboard chose it

        saved = await client.call_tool("browser_click", {"element": "Save", "ref": save})
        assert not saved.is_error, _text(saved)
        await client.call_tool("browser_wait_for", {"text": "saved name="})
        page = _text(await client.call_tool("browser_snapshot", {}))
        # fill: one trusted insertText input event with the value but its last character,
        # then that character typed as a key (its own input event)
        assert ("saved name=Ada Lovelace (input 2/2 trusted); subscribe=true (change "
                "trusted=true); country=fr (change trusted=true); click isTrusted=true") in page

        clicked = await client.call_tool("browser_click", {"element": "Delete", "ref": delete})
        assert not clicked.is_error, _text(clicked)
        assert "with trusted input" in _text(clicked)
        assert '["confirm" dialog with message "Delete the record?"]' in _text(clicked)
        assert "### Page state" not in _text(clicked)
        for blocked in (await client.call_tool("browser_snapshot", {}),
                        await client.call_tool("browser_take_screenshot", {})):
            assert blocked.is_error and "DIALOG_OPEN" in _text(blocked)
        answered = await client.call_tool("browser_handle_dialog", {"accept": False})
        assert not answered.is_error, _text(answered)
        assert 'Dismissed the confirm dialog "Delete the record?"' in _text(answered)
        await client.call_tool("browser_wait_for", {"text": "confirm returned"})
        page = _text(await client.call_tool("browser_snapshot", {}))
        assert "confirm returned false; click isTrusted=true" in page

        for args in ({}, {"element": "Save", "ref": save}):
            shot = await client.call_tool("browser_take_screenshot", args)
            assert not shot.is_error, _text(shot)
            (image,) = [c for c in shot.content if c.type == "image"]
            assert image.mime_type == "image/png"
            data = base64.b64decode(image.data)
            assert data[:8] == b"\x89PNG\r\n\x1a\n"
            width, height = struct.unpack(">II", data[16:24])
            assert f"{width}x{height} image px" in _text(shot)
            if args:
                assert 0 < width < 300 and 0 < height < 100  # the button, not the page
            else:
                assert width >= 600 and height >= 400

        popup = await client.call_tool("browser_click", {"ref": _ref(page, "link", "Open helper")})
        assert not popup.is_error, _text(popup)
        opened = _text(popup).split("### New tabs\n")[1].split("\n\n")[0]
        index = re.search(r"^- (\d+):.*\]\(http://[^)]*/mcp\.html\) tab \d+$", opened,
                          re.MULTILINE)
        assert index, _text(popup)
        closed = await client.call_tool("browser_tabs",
                                        {"action": "close", "index": int(index[1])})
        assert not closed.is_error, _text(closed)
        listed = _text(await client.call_tool("browser_tabs", {"action": "list"}))
        assert "mcp.html" not in listed and "mcp_form.html" in listed
    _no_junk_on_stdout(caplog)
