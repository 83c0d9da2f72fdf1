"""MCP tools in process against a real loopback bridge with fake peers: what each tool
sends on the wire, how results are labelled (trusted / synthetic), and errors as tool
results. Also the SDK calls the tools stand on."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import json
import signal
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from PIL import Image

from trustbridge.bridge.mcp import Session, build_server
from trustbridge.bridge.mcp.tool import clean_schema
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import PROTOCOL_VERSION, DeviceInfo
from trustbridge.bridge.sdk import Browser
from trustbridge.bridge.server import BridgeServer

from .fakes import FakeDriver, FakeExtension, FakePeer, wait_until

DEVICE = "dev1"
Tools = Callable[[], contextlib.AbstractAsyncContextManager[Client]]


@pytest.fixture
async def session(bridge: BridgeServer) -> AsyncIterator[Session]:
    s = Session(url=bridge.url, token=bridge.token, embedded=False)
    try:
        yield s
    finally:
        await s.close()


@pytest.fixture
def tools(session: Session) -> Tools:
    """``async with tools() as mcp``: an in-process MCP client of the server. Entered in
    the test itself, since the client's task group must be left by the task entering it."""
    return lambda: Client(build_server(session))


def text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


async def test_click_on_a_device_without_driver_is_labelled_synthetic(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools) -> None:
    """No driver ever: the click goes to the extension and the result says SYNTHETIC."""
    async with tools() as mcp:
        ext = await peers(FakeExtension)
        result = await mcp.call_tool("browser_click", {"ref": "e7", "element": "Save"})
        assert not result.is_error, text(result)
        assert "Clicked Save (ref e7) with SYNTHETIC input" in text(result)
        sent = await ext.wait_for_request("page.act")
        assert sent.params["ref"] == "e7"
        assert sent.params["action"] == {"kind": "click", "button": "left", "clickCount": 1,
                                         "modifiers": []}


async def test_double_right_click_with_modifiers_reaches_the_driver_as_trusted(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools) -> None:
    """Driver online: ref resolved on the extension, action performed by the driver with
    the arguments mapped onto the protocol's ClickAction; the result says trusted."""
    async with tools() as mcp:
        ext = await peers(FakeExtension)
        drv = await peers(FakeDriver)
        result = await mcp.call_tool("browser_click", {
            "ref": "f1e3", "doubleClick": True, "button": "right", "modifiers": ["Shift"]})
        assert not result.is_error, text(result)
        assert "Double-clicked ref f1e3 with trusted input" in text(result)
        assert "page.resolveTarget" in ext.methods() and "page.act" not in ext.methods()
        act = await drv.wait_for_request("driver.act")
        assert act.params["action"]["clickCount"] == 2
        assert act.params["action"]["button"] == "right"
        assert act.params["action"]["modifiers"] == ["Shift"]


async def test_driver_offline_is_a_tool_error_and_nothing_reaches_the_extension(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools, bridge: BridgeServer) -> None:
    """The device promised trusted input and its driver left: isError with
    TRUSTED_INPUT_UNAVAILABLE, and the extension receives nothing."""
    async with tools() as mcp:
        ext = await peers(FakeExtension)
        drv = await peers(FakeDriver)
        await drv.close()
        await wait_until(lambda: DEVICE not in bridge.policy.drivers)
        result = await mcp.call_tool("browser_type", {"ref": "e2", "text": "secret"})
        assert result.is_error
        assert "TRUSTED_INPUT_UNAVAILABLE" in text(result)
        assert "Nothing was sent" in text(result)
        assert ext.methods() == []


async def test_type_press_and_wait_map_to_protocol_actions_without_echoing_text(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools) -> None:
    """browser_type replaces the content (fill, then Enter for submit) unless slowly,
    which types after it; the text is never echoed. press_key and wait_for (seconds →
    ms) map onto page.act press and page.wait."""
    async with tools() as mcp:
        ext = await peers(FakeExtension)
        typed = await mcp.call_tool(
            "browser_type", {"ref": "e2", "text": "hunter2", "submit": True})
        assert not typed.is_error, text(typed)
        assert "hunter2" not in text(typed)
        assert ("Typed 7 characters into ref e2 (replacing its content) and pressed Enter "
                "with SYNTHETIC input") in text(typed)
        slow = await mcp.call_tool("browser_type", {"ref": "e2", "text": "abc", "slowly": True})
        assert "Typed 3 characters key by key into ref e2 at its caret" in text(slow)
        assert (await mcp.call_tool("browser_press_key", {"key": "Control+A"})).is_error is False
        assert (await mcp.call_tool("browser_wait_for", {"time": 0.25})).is_error is False
        acts = [(r.params.get("ref"), r.params["action"])
                for r in ext.requests if r.method == "page.act"]
        assert acts == [("e2", {"kind": "fill", "value": "hunter2"}),
                        ("e2", {"kind": "press", "key": "Enter"}),
                        ("e2", {"kind": "type", "text": "abc", "submit": False}),
                        (None, {"kind": "press", "key": "Control+A"})]
        wait = await ext.wait_for_request("page.wait")
        assert wait.params["ms"] == 250


async def test_tabs_select_addresses_later_calls_to_that_tab(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools) -> None:
    """select by index brings the tab to the front (tabs.select) and makes later tools
    send that tabId; an index past the end is a tool error that names browser_tabs."""
    async with tools() as mcp:
        ext = await peers(FakeExtension)
        ext.results["tabs.list"] = {"tabs": [
            {"tabId": 11, "url": "http://127.0.0.1/a", "title": "A", "active": True},
            {"tabId": 12, "url": "http://127.0.0.1/b", "title": "B", "active": False}]}
        ext.results["tabs.select"] = {"tabId": 12, "url": "http://127.0.0.1/b", "title": "B"}
        listed = text(await mcp.call_tool("browser_tabs", {"action": "list"}))
        assert "- 0: (current) [A](http://127.0.0.1/a) tab 11" in listed
        assert "- 1: [B](http://127.0.0.1/b) tab 12" in listed
        selected = await mcp.call_tool("browser_tabs", {"action": "select", "index": 1})
        assert not selected.is_error and "- 1: (current) [B]" in text(selected)
        assert (await ext.wait_for_request("tabs.select")).params["tabId"] == 12
        ext.requests.clear()
        await mcp.call_tool("browser_snapshot", {})
        assert (await ext.wait_for_request("page.snapshot")).params.get("tabId") == 12
        missing = await mcp.call_tool("browser_tabs", {"action": "select", "index": 5})
        assert missing.is_error and "browser_tabs" in text(missing)


async def test_bridge_errors_become_tool_errors_with_a_next_step(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools) -> None:
    """A protocol error from the extension comes back as isError with its code, the
    bridge's message, safe details and the next tool to call."""
    async with tools() as mcp:
        ext = await peers(FakeExtension)
        ext.errors["page.act"] = E.ElementObscured("A cookie banner covers the button.",
                                                   {"coveredBy": "dialog"})
        result = await mcp.call_tool("browser_hover", {"ref": "e4"})
        assert result.is_error
        lines = text(result).splitlines()
        assert lines[0] == "### Error"  # Playwright MCP's heading
        assert lines[1] == ("Error ELEMENT_OBSCURED in browser_hover: "
                            "A cookie banner covers the button.")
        assert lines[2] == 'Details: {"coveredBy":"dialog"}'
        assert lines[3].startswith("Next step: ") and "browser_snapshot" in lines[3]


async def test_session_reconnects_after_the_bridge_connection_drops(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools, session: Session) -> None:
    """A closed bridge connection is replaced at the next call, not reported forever."""
    async with tools() as mcp:
        await peers(FakeExtension)
        first = await session.client()
        await first.close()
        assert first.closed
        result = await mcp.call_tool("browser_snapshot", {})
        assert not result.is_error, text(result)
        assert (await session.client()) is not first


async def test_sdk_devices_are_typed_and_a_tab_by_id_is_checked(
        peers: Callable[..., Awaitable[FakePeer]], bridge: BridgeServer) -> None:
    """Browser.devices() returns DeviceInfo models; tab(id) of a tab that is not open
    raises BrowserTabClosed, of an open one returns a Tab addressing it."""
    await peers(FakeExtension)
    async with await Browser.connect(bridge.url, bridge.token) as browser:
        devices = await browser.devices()
        assert [type(d) for d in devices] == [DeviceInfo]
        assert devices[0].device == DEVICE and devices[0].extension
        assert browser.protocol_version == PROTOCOL_VERSION
        with pytest.raises(E.BrowserTabClosed) as err:
            await browser.tab(99)
        assert err.value.code == E.ErrorCode.BROWSER_TAB_CLOSED
        tab = await browser.tab(1)
        assert tab.tab_id == 1


class FailSecondAct(FakeExtension):
    """A fake extension whose second ``page.act`` fails with ELEMENT_NOT_EDITABLE."""

    acts = 0

    async def _answer(self, ws: Any, req: Any) -> None:
        if req.method == "page.act":
            self.acts += 1
            if self.acts == 2:
                self.errors["page.act"] = E.ElementNotEditable("The field is readonly.")
            else:
                self.errors.pop("page.act", None)
        await super()._answer(ws, req)


def spy_calls(session: Session,
              monkeypatch: pytest.MonkeyPatch) -> Callable[[], Awaitable[list[str]]]:
    """Record the methods the session's bridge client sends (awaitable setup)."""
    calls: list[str] = []

    async def install() -> list[str]:
        client = await session.client()
        original = client.call

        async def call(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
            calls.append(method)
            return await original(method, params)

        monkeypatch.setattr(client, "call", call)
        return calls

    return install


def png(width: int, height: int) -> str:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode()


async def test_fill_form_sends_one_batch_mapping_each_field_type(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools, session: Session,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """textbox → fill, checkbox/radio → check, combobox → select by the option's text, all
    in ONE page.batch request, each performed by the driver; text values are not echoed."""
    async with tools() as mcp:
        await peers(FakeExtension)
        drv = await peers(FakeDriver)
        calls = await spy_calls(session, monkeypatch)()
        result = await mcp.call_tool("browser_fill_form", {"fields": [
            {"name": "Name", "type": "textbox", "ref": "e3", "value": "s3cret"},
            {"name": "Subscribe", "type": "checkbox", "ref": "e4", "value": "true"},
            {"name": "Plan B", "type": "radio", "ref": "f1e5", "value": "false"},
            {"name": "Country", "type": "combobox", "ref": "e6", "value": "France"}]})
        assert not result.is_error, text(result)
        assert calls.count("page.batch") == 1 and "page.act" not in calls
        acts = [r.params["action"] for r in drv.requests if r.method == "driver.act"]
        assert acts == [{"kind": "fill", "value": "s3cret"},
                        {"kind": "check", "checked": True},
                        {"kind": "check", "checked": False},
                        {"kind": "select", "values": ["France"]}]
        assert "Filled 4 fields" in text(result) and "with trusted input" in text(result)
        assert "s3cret" not in text(result)


async def test_fill_form_refuses_bad_values_before_sending_anything_and_fills_sliders(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools) -> None:
    """A checkbox value other than true/false is a BAD_REQUEST tool error; nothing reaches
    the extension, not even the fields before it. A slider is filled by value (the driver
    sets a range input with trusted keys)."""
    async with tools() as mcp:
        ext = await peers(FakeExtension)
        bad = await mcp.call_tool("browser_fill_form", {"fields": [
            {"name": "Name", "type": "textbox", "ref": "e3", "value": "x"},
            {"name": "Subscribe", "type": "checkbox", "ref": "e4", "value": "yes"}]})
        assert bad.is_error and "BAD_REQUEST" in text(bad) and "true or false" in text(bad)
        empty = await mcp.call_tool("browser_fill_form", {"fields": []})
        assert empty.is_error and "fields" in text(empty)
        assert ext.methods() == []
        slider = await mcp.call_tool("browser_fill_form", {"fields": [
            {"name": "Volume", "type": "slider", "ref": "e9", "value": "40"}]})
        assert not slider.is_error, text(slider)
        [act] = [r for r in ext.requests if r.method == "page.act"]
        assert act.params["action"] == {"kind": "fill", "value": "40"}


async def test_fill_form_keeps_the_next_step_the_failing_action_gave(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools) -> None:
    """A batch item refused with its own next step (a colour input: use allowScript) keeps
    that step in the tool error, not the generic "driver offline" text of its code."""
    async with tools() as mcp:
        ext = await peers(FakeExtension)
        ext.errors["page.act"] = E.TrustedInputUnavailable(
            "A colour input has no trusted route.", {"capability": "colorPicker"},
            next_step="Repeat with allowScript: true to set it by script.")
        result = await mcp.call_tool("browser_fill_form", {"fields": [
            {"name": "Colour", "type": "textbox", "ref": "e3", "value": "#0000ff"}]})
        assert result.is_error
        step = text(result).split("Next step: ")[1]
        assert step.startswith("Repeat with allowScript") and "offline" not in step


async def test_fill_form_stopped_midway_names_the_field_and_what_was_done(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools) -> None:
    """The batch stops at the failing field: the tool error keeps that field's code, names
    it, and says which fields were filled before it; the fields after it are not sent."""
    async with tools() as mcp:
        ext = await peers(FailSecondAct)
        result = await mcp.call_tool("browser_fill_form", {"fields": [
            {"name": "Name", "type": "textbox", "ref": "e3", "value": "Ada"},
            {"name": "City", "type": "textbox", "ref": "e4", "value": "Paris"},
            {"name": "Zip", "type": "textbox", "ref": "e5", "value": "75001"}]})
        assert result.is_error
        first = text(result).splitlines()[1]
        assert first.startswith("Error ELEMENT_NOT_EDITABLE in browser_fill_form: "
                                "Stopped at action 1 (textbox City (e4))")
        assert "Done before it, not undone: textbox Name (e3)" in first
        assert [r.params["ref"] for r in ext.requests if r.method == "page.act"] == ["e3", "e4"]


async def test_select_drag_and_upload_map_onto_their_protocol_actions(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """select_option → select values; drag (Playwright's startRef/endRef) → drag with the
    drop target resolved too; file_upload paths (in the output directory: an allowed
    root, tests/bridge/test_files.py) → upload files; all trusted."""
    from trustbridge.bridge.mcp import devtools

    monkeypatch.setattr(devtools, "DEFAULT_OUTPUT_DIR", tmp_path)
    upload = str(tmp_path / "a.txt")
    async with tools() as mcp:
        ext = await peers(FakeExtension)
        drv = await peers(FakeDriver)
        sel = await mcp.call_tool("browser_select_option", {"ref": "e2", "values": ["a", "b"]})
        drag = await mcp.call_tool("browser_drag", {
            "startElement": "Card", "startRef": "e3", "endElement": "Done column",
            "endRef": "f1e4"})
        up = await mcp.call_tool("browser_file_upload", {"ref": "e5", "paths": [upload]})
        for result in (sel, drag, up):
            assert not result.is_error, text(result)
            assert "with trusted input" in text(result)
        assert "Dragged Card (ref e3) onto Done column (ref f1e4)" in text(drag)
        acts = [r.params for r in drv.requests if r.method == "driver.act"]
        assert [a["action"] for a in acts] == [
            {"kind": "select", "values": ["a", "b"]},
            {"kind": "drag", "to": "f1e4", "steps": 12},
            {"kind": "upload", "files": [upload]}]
        assert acts[1]["toFrameToken"] == FakeExtension.FRAME_TOKEN
        resolved = [r.params.get("ref") for r in ext.requests if r.method == "page.resolveTarget"]
        assert resolved == ["e2", "e3", "f1e4", "e5"]
        no_paths = await mcp.call_tool("browser_file_upload", {"ref": "e5"})
        assert no_paths.is_error and "paths" in text(no_paths)


async def test_a_click_that_opens_a_dialog_reports_it_and_handle_dialog_answers(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools, bridge: BridgeServer) -> None:
    """The click's result shows the dialog as modal state (no snapshot is attempted);
    while it is open snapshot and screenshot fail with DIALOG_OPEN naming
    browser_handle_dialog; browser_handle_dialog sends page.dialog to the driver."""
    dialog = {"type": "confirm", "message": "Delete it?", "defaultValue": "", "url": "x"}
    async with tools() as mcp:
        ext = await peers(FakeExtension)
        drv = await peers(FakeDriver)
        drv.results["driver.act"] = {"done": True, "dialog": dialog}
        drv.results["driver.dialog"] = {"type": "confirm", "message": "Delete it?",
                                        "accepted": True}
        clicked = await mcp.call_tool("browser_click", {"ref": "e7"})
        assert not clicked.is_error, text(clicked)
        assert ('### Modal state\n- ["confirm" dialog with message "Delete it?"]: answer it '
                "with browser_handle_dialog") in text(clicked)
        assert "page.snapshot" not in ext.methods()
        await drv.send_event("dialog.opened", dialog)  # as the real driver does
        await wait_until(lambda: DEVICE in bridge.policy.open_dialogs)
        blocked = await mcp.call_tool("browser_snapshot", {})
        assert blocked.is_error and "DIALOG_OPEN" in text(blocked)
        assert "browser_handle_dialog" in text(blocked).split("Next step:")[1]
        shot = await mcp.call_tool("browser_take_screenshot", {})
        assert shot.is_error and "DIALOG_OPEN" in text(shot)
        assert "driver.screenshot" not in drv.methods()
        # The real driver sends dialog.closed just after its answer; the tool waits for
        # the bridge to drop the dialog before it takes the page state.
        closed = asyncio.get_running_loop().call_later(
            0.2, lambda: asyncio.ensure_future(drv.send_event("dialog.closed", {})))
        answered = await mcp.call_tool("browser_handle_dialog", {"accept": True})
        closed.cancel()
        assert 'Accepted the confirm dialog "Delete it?"' in text(answered)
        assert "### Page state" in text(answered) and "Modal state" not in text(answered)
        assert (await drv.wait_for_request("driver.dialog")).params == {"accept": True}


async def test_handle_dialog_without_a_dialog_is_a_tool_error_with_a_next_step(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools) -> None:
    """The driver's "no dialog" answer comes back as BAD_REQUEST saying there is nothing
    to answer (not "check the arguments")."""
    async with tools() as mcp:
        await peers(FakeExtension)
        drv = await peers(FakeDriver)
        drv.errors["driver.dialog"] = E.BadRequest("No JavaScript dialog is open.")
        result = await mcp.call_tool("browser_handle_dialog", {"accept": False})
        assert result.is_error
        assert "No JavaScript dialog is open" in text(result)
        assert "nothing to answer" in text(result).split("Next step:")[1]


async def test_undelivered_click_and_new_tabs_are_reported(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools) -> None:
    """A trusted click whose receipt says the target never got it is flagged
    ``delivered: false`` on the result's second line; a tab it opened is listed with its
    index for browser_tabs."""
    async with tools() as mcp:
        ext = await peers(FakeExtension)
        drv = await peers(FakeDriver)
        ext.results["page.resolveTarget"] = {"frameToken": "tok", "css": "#a", "tabId": 1,
                                             "receiptId": "r1"}
        ext.results["page.receipt"] = {"delivered": False, "events": ["pointerdown"]}
        ext.results["tabs.list"] = {"tabs": [
            {"tabId": 1, "url": "http://127.0.0.1/", "title": "Main", "active": True},
            {"tabId": 2, "url": "http://127.0.0.1/pop", "title": "Pop", "active": False,
             "openerTabId": 1, "openedAt": (time.time() + 60) * 1000}]}
        drv.results["driver.act"] = {"done": True, "popups": [{"url": "http://127.0.0.1/pop"}]}
        result = await mcp.call_tool("browser_click", {"ref": "e7", "element": "Buy"})
        assert not result.is_error, text(result)
        lines = text(result).splitlines()
        assert lines[1] == "Sent a click at Buy (ref e7) with trusted input."  # not "Clicked"
        assert lines[2].startswith("WARNING delivered: false: the click on Buy (ref e7) did not "
                                   "reach its target")
        assert "### New tabs\n- 1: [Pop](http://127.0.0.1/pop) tab 2" in text(result)


async def test_take_screenshot_returns_an_image_scaled_to_fit(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools) -> None:
    """The driver's PNG comes back as image content; one too large for a model is scaled
    to at most 1568 px per edge and 1.15 MP, and the text gives the px mapping; fullPage
    with a ref is refused before anything is sent."""
    async with tools() as mcp:
        await peers(FakeExtension)
        drv = await peers(FakeDriver)
        drv.results["driver.screenshot"] = {
            "png": png(3200, 2000), "width": 3200, "height": 2000, "scale": 2,
            "clip": {"x": 0, "y": 300, "width": 1600, "height": 1000}}
        shot = await mcp.call_tool("browser_take_screenshot", {"fullPage": True})
        assert not shot.is_error, text(shot)
        (image,) = [c for c in shot.content if c.type == "image"]
        assert image.mime_type == "image/png"
        width, height = Image.open(io.BytesIO(base64.b64decode(image.data))).size
        assert width <= 1568 and height <= 1568 and width * height <= 1.15 * 1024 * 1024
        assert f"{width}x{height} image px" in text(shot)
        assert "Scaled down from 3200x2000" in text(shot)
        assert (await drv.wait_for_request("driver.screenshot")).params["fullPage"] is True
        drv.requests.clear()
        both = await mcp.call_tool("browser_take_screenshot", {"ref": "e2", "fullPage": True})
        assert both.is_error and "fullPage" in text(both)
        assert drv.methods() == []


async def test_evaluate_runs_through_the_driver_and_needs_one(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools, bridge: BridgeServer) -> None:
    """browser_evaluate sends the function to driver.evaluate in the ref's frame and
    prints the JSON value; without a driver it is DEVICE_NOT_CONNECTED."""
    async with tools() as mcp:
        await peers(FakeExtension)
        none = await mcp.call_tool("browser_evaluate", {"function": "() => 1"})
        assert none.is_error and "DEVICE_NOT_CONNECTED" in text(none)
        drv = await peers(FakeDriver)
        drv.results["driver.evaluate"] = {"value": {"n": 2, "ok": True}}
        result = await mcp.call_tool("browser_evaluate", {
            "function": "(el) => ({n: 2, ok: el.checked})", "ref": "e4"})
        assert not result.is_error, text(result)
        assert '"n": 2' in text(result) and '"ok": true' in text(result)
        sent = await drv.wait_for_request("driver.evaluate")
        assert sent.params["expression"] == "(el) => ({n: 2, ok: el.checked})"
        assert sent.params["css"] == FakeExtension.CSS


async def test_navigate_back_and_tabs_new_and_close(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools) -> None:
    """navigate_back → page.history back; tabs new → tabs.new and the new tab becomes
    current; close without index closes the current tab; the last tab is not closed."""
    async with tools() as mcp:
        ext = await peers(FakeExtension)
        ext.results["page.history"] = {"tabId": 1, "url": "http://127.0.0.1/prev",
                                       "title": "Prev", "transitionPending": False}
        back = await mcp.call_tool("browser_navigate_back", {})
        assert "Went back to http://127.0.0.1/prev (tab 1)" in text(back)
        assert (await ext.wait_for_request("page.history")).params["direction"] == "back"

        ext.results["tabs.new"] = {"tabId": 5, "url": "http://127.0.0.1/n", "title": "N"}
        ext.results["tabs.list"] = {"tabs": [
            {"tabId": 1, "url": "http://127.0.0.1/prev", "title": "Prev", "active": False},
            {"tabId": 5, "url": "http://127.0.0.1/n", "title": "N", "active": True}]}
        ext.results["tabs.close"] = {"tabId": 5, "closed": True}
        new = await mcp.call_tool("browser_tabs", {"action": "new", "url": "http://127.0.0.1/n"})
        assert not new.is_error, text(new)
        assert (await ext.wait_for_request("tabs.new")).params["url"] == "http://127.0.0.1/n"
        assert "- 1: (current) [N](http://127.0.0.1/n) tab 5" in text(new)
        closed = await mcp.call_tool("browser_tabs", {"action": "close"})
        assert not closed.is_error, text(closed)
        assert (await ext.wait_for_request("tabs.close")).params["tabId"] == 5

        ext.results["tabs.list"] = {"tabs": [
            {"tabId": 1, "url": "http://127.0.0.1/prev", "title": "Prev", "active": True}]}
        ext.requests.clear()
        last = await mcp.call_tool("browser_tabs", {"action": "close", "index": 0})
        assert last.is_error and "last tab" in text(last)
        assert "tabs.close" not in ext.methods()


async def test_actions_batch_maps_flat_steps_and_refuses_foreign_fields(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools) -> None:
    """browser_actions turns {ref, kind, fields} steps into the protocol's batch items,
    run in order; a field the kind does not take is BAD_REQUEST and nothing is sent."""
    async with tools() as mcp:
        ext = await peers(FakeExtension)
        drv = await peers(FakeDriver)
        result = await mcp.call_tool("browser_actions", {"actions": [
            {"kind": "click", "ref": "e1", "clickCount": 2},
            {"kind": "fill", "ref": "e2", "value": "x"},
            {"kind": "press", "key": "Tab"},
            {"kind": "scroll", "ref": "e3", "dy": 400}]})
        assert not result.is_error, text(result)
        assert "Ran 4 actions (click e1, fill e2, press, scroll e3) with trusted input." \
            in text(result)
        acts = [r.params["action"] for r in drv.requests if r.method == "driver.act"]
        assert acts == [{"kind": "click", "button": "left", "clickCount": 2, "modifiers": [],
                         "position": None},
                        {"kind": "fill", "value": "x"},
                        {"kind": "press", "key": "Tab"},
                        {"kind": "scroll", "dx": 0, "dy": 400}]
        ext.requests.clear()
        drv.requests.clear()
        bad = await mcp.call_tool("browser_actions", {"actions": [
            {"kind": "hover", "ref": "e1"}, {"kind": "click", "ref": "e2", "text": "hi"}]})
        assert bad.is_error and "BAD_REQUEST" in text(bad) and "actions.1.text" in text(bad)
        assert ext.methods() == [] and drv.methods() == []


async def test_click_allow_coordinates_reaches_the_resolver_and_is_labelled(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools) -> None:
    """allowCoordinates is passed to page.resolveTarget; a hit-tested point comes back
    labelled as trusted input at a point, not as a plain trusted click."""
    async with tools() as mcp:
        ext = await peers(FakeExtension)
        await peers(FakeDriver)
        ext.results["page.resolveTarget"] = {"frameToken": "tok", "css": "css:light=html",
                                             "tabId": 1, "point": {"x": 10, "y": 20}}
        result = await mcp.call_tool("browser_click", {"ref": "e7", "allowCoordinates": True})
        assert not result.is_error, text(result)
        assert "hit-tested point" in text(result)
        assert (await ext.wait_for_request("page.resolveTarget")).params["allowCoordinates"]


def test_clean_schema_drops_titles_bounds_and_null_unions_only() -> None:
    """Titles and bounds go, ``anyOf [X, null]`` with default null becomes X; a property
    that is itself called ``title`` or ``pattern`` stays, and so do enums and defaults."""
    schema = {"title": "M", "type": "object", "properties": {
        "title": {"title": "Title", "type": "string", "maxLength": 9},
        "pattern": {"type": "string", "pattern": "^a$", "minLength": 1},
        "n": {"anyOf": [{"type": "integer", "minimum": 0, "exclusiveMaximum": 5},
                        {"type": "null"}], "default": None, "title": "N", "description": "d"},
        "l": {"type": "array", "items": {"type": "number", "maximum": 1.5},
              "minItems": 1, "maxItems": 3, "default": [0]},
        "k": {"enum": ["a", "b"], "exclusiveMinimum": 0},
        "m": {"anyOf": [{"type": "integer"}, {"type": "string"}], "title": "M"}}}
    assert clean_schema(schema) == {"type": "object", "properties": {
        "title": {"type": "string"},
        "pattern": {"type": "string"},
        "n": {"type": "integer", "description": "d"},
        "l": {"type": "array", "items": {"type": "number"}, "default": [0]},
        "k": {"enum": ["a", "b"]},
        "m": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}}


async def test_bounds_left_out_of_the_schema_are_still_enforced(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools) -> None:
    """No tool lists a bound, yet a bad ref, an over-long element, a negative coordinate
    and an empty batch are BAD_REQUEST naming the field, with nothing sent."""
    async with tools() as mcp:
        ext = await peers(FakeExtension)
        drv = await peers(FakeDriver)
        listed = (await mcp.list_tools()).tools
        for tool in listed:
            dumped = json.dumps(tool.input_schema)
            for key in ("minLength", "maxLength", "minimum", "maximum", "pattern",
                        "minItems", "maxItems", "exclusiveMinimum", "exclusiveMaximum"):
                assert f'"{key}":' not in dumped, (tool.name, key)
        for name, args, field in (
                ("browser_click", {"target": "not a ref"}, "target"),
                ("browser_hover", {"target": "e1", "element": "x" * 301}, "element"),
                ("browser_actions", {"actions": []}, "actions"),
                ("browser_wait_for", {"time": -1}, "time")):
            result = await mcp.call_tool(name, args)
            assert result.is_error and "BAD_REQUEST" in text(result), (name, text(result))
            assert field in text(result), (name, text(result))
        assert ext.methods() == [] and drv.methods() == []


async def test_arguments_of_the_wrong_json_type_are_refused_not_coerced(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools) -> None:
    """Strict types, as Playwright MCP's zod schemas: "yes" is no boolean and "10" no
    number; each is BAD_REQUEST naming the field, and nothing is sent."""
    async with tools() as mcp:
        ext = await peers(FakeExtension)
        drv = await peers(FakeDriver)
        for name, args, field in (
                ("browser_click", {"target": "e1", "doubleClick": "yes"}, "doubleClick"),
                ("browser_wait_for", {"time": "3"}, "time"),
                ("browser_type", {"target": "e1", "text": 42}, "text")):
            result = await mcp.call_tool(name, args)
            assert result.is_error and "BAD_REQUEST" in text(result), (name, text(result))
            assert field in text(result), (name, text(result))
        assert ext.methods() == [] and drv.methods() == []


@pytest.mark.browser
async def test_session_starts_the_embedded_default_on_a_free_port_and_restarts_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No bridge running and the default port taken: the session starts bridge + Chromium
    on a free port; when that browser's supervisor exits, it is started again on the same
    bridge and the next call says so (BROWSER_CRASHED, what: browser: the agent's tabs and
    refs are gone); the one after works."""
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        lines: list[str] = []
        session = Session(bridge_port=port, progress=lines.append)
        try:
            async with Client(build_server(session)) as mcp:
                first = await mcp.call_tool("browser_snapshot", {})
                assert not first.is_error, text(first)
                assert f"port {port} is taken" in "\n".join(lines)
                emb = session.launched
                assert emb is not None and emb.server.port != port
                assert emb.child is not None
                first_pid = emb.child.pid
                emb.child.send_signal(signal.SIGTERM)
                await asyncio.wait_for(emb.child.wait(), 30)
                told = await mcp.call_tool("browser_snapshot", {})
                assert told.is_error and "BROWSER_CRASHED" in text(told), text(told)
                assert "started again" in text(told) and "tab" in text(told)
                again = await mcp.call_tool("browser_snapshot", {})
                assert not again.is_error, text(again)
                # The supervisor is started again on the same bridge (issue 32 item 2),
                # so other clients joined there keep their sessions.
                assert session.launched is emb and emb.child is not None
                assert emb.child.pid != first_pid and emb.child.returncode is None
                assert any("starting it again" in line for line in lines)
        finally:
            await session.close()


async def test_snapshot_passes_mode_and_cursor_and_names_itself_in_the_trailer(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools) -> None:
    """browser_snapshot forwards mode and cursor in the MCP session's diff baseline, and a
    truncated snapshot's trailer tells the model to call browser_snapshot (not the wire
    method) with the cursor."""
    async with tools() as mcp:
        ext = await peers(FakeExtension)
        ext.results["page.snapshot"] = {
            "snapshot": '- button "A" [ref=e1]\n# truncated at 1000 characters (page 1); '
                        'call page.snapshot with cursor "c42" for the rest',
            "url": "http://127.0.0.1/", "title": "T", "tabId": 1, "mode": "snapshot",
            "frames": 1, "refs": 1, "chars": 90, "truncated": True, "cursor": "c42"}
        first = text(await mcp.call_tool("browser_snapshot", {}))
        assert 'call browser_snapshot with cursor "c42"' in first
        assert "page.snapshot" not in first
        ext.requests.clear()
        await mcp.call_tool("browser_snapshot", {"cursor": "c42"})
        params = (await ext.wait_for_request("page.snapshot")).params
        assert params.get("cursor") == "c42"
        assert str(params.get("session")).startswith("mcp-")  # this server's own baseline
        ext.requests.clear()
        await mcp.call_tool("browser_snapshot", {"mode": "diff"})
        assert (await ext.wait_for_request("page.snapshot")).params.get("mode") == "diff"
        bad = await mcp.call_tool("browser_snapshot", {"mode": "everything"})
        assert bad.is_error
        ext.errors["page.snapshot"] = E.BadRequest("Cursor \"c42\" is unknown or expired.")
        expired = text(await mcp.call_tool("browser_snapshot", {"cursor": "c42"}))
        assert "Next step: Call browser_snapshot without a cursor" in expired


async def test_select_option_names_what_was_asked_and_the_values_it_became(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools) -> None:
    """Asked for the label "Large", the select holds value "l": the line names "Large" and
    then the option value; asked for the value itself, only that value is named."""
    async with tools() as mcp:
        await peers(FakeExtension)
        drv = await peers(FakeDriver)
        drv.results["driver.act"] = {"done": True, "action": "select", "selected": ["l"]}
        by_label = text(await mcp.call_tool("browser_select_option",
                                            {"target": "e2", "values": ["Large"]}))
        assert "Selected 'Large' (option value 'l') in" in by_label, by_label
        assert "['l']" not in by_label
        by_value = text(await mcp.call_tool("browser_select_option",
                                            {"target": "e2", "values": ["l"]}))
        assert "Selected 'l' in" in by_value and "option value" not in by_value, by_value


ELEMENT_TOOLS = {  # tool → (arguments naming e2 the 0.0.83 way, the older name of each)
    "browser_click": ({"target": "e2"}, {"target": "ref"}),
    "browser_type": ({"target": "e2", "text": "x"}, {"target": "ref"}),
    "browser_hover": ({"target": "e2"}, {"target": "ref"}),
    "browser_select_option": ({"target": "e2", "values": ["a"]}, {"target": "ref"}),
    "browser_drag": ({"startTarget": "e2", "endTarget": "e3"},
                     {"startTarget": "startRef", "endTarget": "endRef"}),
}


async def test_element_tools_list_target_and_take_ref_as_its_alias(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools) -> None:
    """The schema names target/startTarget/endTarget only (Playwright MCP 0.0.83); the
    old names reach the same element; both, different, is BAD_REQUEST with nothing sent."""
    async with tools() as mcp:
        ext = await peers(FakeExtension)
        drv = await peers(FakeDriver)
        listed = {t.name: t.input_schema for t in (await mcp.list_tools()).tools}
        for name, (args, old) in ELEMENT_TOOLS.items():
            props = listed[name]["properties"]
            assert set(old) <= set(props) and not set(old.values()) & set(props), name
            assert set(old) <= set(listed[name]["required"]), name
        for name, model in (("browser_fill_form", "FormField"), ("browser_actions", "Step")):
            item = listed[name]["$defs"][model]
            assert "target" in item["properties"] and "ref" not in item["properties"], name
        assert "target" in listed["browser_evaluate"]["properties"]
        assert "ref" not in listed["browser_evaluate"]["properties"]
        for name, (args, old) in ELEMENT_TOOLS.items():
            for new_args in (args, {old.get(k, k): v for k, v in args.items()}):
                ext.requests.clear()
                result = await mcp.call_tool(name, new_args)
                assert not result.is_error, (name, new_args, text(result))
                resolved = [r.params.get("ref") for r in ext.requests
                            if r.method == "page.resolveTarget"]
                assert resolved[0] == "e2", (name, new_args, resolved)
            ext.requests.clear()
            drv.requests.clear()
            clash = {**args, **{old[k]: "e9" for k in old}}
            refused = await mcp.call_tool(name, clash)
            assert refused.is_error and "BAD_REQUEST" in text(refused), (name, text(refused))
            assert "name different elements" in text(refused), text(refused)
            assert ext.methods() == [] and drv.methods() == [], name
        same = await mcp.call_tool("browser_click", {"target": "e2", "ref": "e2"})
        assert not same.is_error, text(same)
        for key in ("target", "ref"):
            drv.requests.clear()
            form = await mcp.call_tool("browser_fill_form", {"fields": [
                {"name": "N", "type": "textbox", key: "e4", "value": "v"}]})
            batch = await mcp.call_tool("browser_actions", {"actions": [
                {"kind": "click", key: "e5"}]})
            assert not form.is_error and not batch.is_error, (text(form), text(batch))
            assert "(textbox e4" in text(form) and "click e5" in text(batch)
        bad = await mcp.call_tool("browser_actions", {"actions": [
            {"kind": "click", "target": "e5", "ref": "e6"}]})
        assert bad.is_error and "name different elements" in text(bad)


async def test_file_upload_without_paths_cancels_the_open_chooser(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools) -> None:
    """No paths and no target: an upload of no files to the open chooser (the driver
    cancels it) and the result says so; paths left out with a target is BAD_REQUEST."""
    async with tools() as mcp:
        ext = await peers(FakeExtension)
        drv = await peers(FakeDriver)
        cancel = await mcp.call_tool("browser_file_upload", {})
        assert not cancel.is_error, text(cancel)
        assert "Cancelled the open file chooser" in text(cancel)
        act = (await drv.wait_for_request("driver.act")).params
        assert act["action"] == {"kind": "upload", "files": []}, act
        drv.requests.clear()
        ext.requests.clear()
        refused = await mcp.call_tool("browser_file_upload", {"target": "e5"})
        assert refused.is_error and "BAD_REQUEST" in text(refused), text(refused)
        assert "paths is required with a target" in text(refused)
        assert ext.methods() == [] and drv.methods() == []
