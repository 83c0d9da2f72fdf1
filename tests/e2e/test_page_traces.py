"""What a page can see of us (issue 13 item 12): each fact docs/security.md states in "What
a page can see of us" is asserted here from the page's own side, so the document cannot
drift from the code. When a trace is removed, its test here changes with the row.

Page: tests/e2e/pages/traces.html (its first script hooks setAttribute, a MutationObserver,
pointer, key, input and message listeners) and traces_frame.html (a child frame); the fill
chord test: tests/e2e/pages/keys/keys.html (key events with their modifier state).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from trustbridge.bridge.protocol.models import FRAME_TOKEN_ATTRIBUTE
from trustbridge.supervisor.actions import PointerPath

from .conftest import Origins, Stack, ref_of, stamped

pytestmark = pytest.mark.browser

MANIFEST = Path(__file__).resolve().parents[2] / "extension" / "manifest.json"
FRAME_KEY_FIELD = "__trustbridgeFrameKey"  # extension/src/page/frames.js FRAME_KEY_FIELD
TARGET_CENTRE = (160, 140)  # traces.html #target: left 100 + 120/2, top 120 + 40/2 (CSS px)


async def _open(stack: Stack, origins: Origins) -> str:
    await stack.client.call("page.navigate", {"url": f"{origins.main}/traces.html"})
    for _ in range(200):
        snap = (await stack.client.call("page.snapshot", {}))["snapshot"]
        if "Child button" in snap:
            await stamped(stack)
            return snap
        await asyncio.sleep(0.05)
    raise AssertionError("the child frame never appeared:\n" + snap)


async def _traces(stack: Stack) -> dict:
    return await stack.page.evaluate("JSON.parse(JSON.stringify(window.__traces))")


async def _reset(stack: Stack, *lists: str) -> None:
    await stack.page.evaluate(f"for (const k of {json.dumps(list(lists))}) window.__traces[k] = []")


async def _child(stack: Stack):
    """The child frame's Playwright Frame (its URL may be reported a moment after the
    extension already shows the frame's content)."""
    for _ in range(100):
        for f in stack.page.frames:
            if "traces_frame.html" in f.url:
                return f
        await asyncio.sleep(0.05)
    raise AssertionError(f"no child frame among {[f.url for f in stack.page.frames]}")


async def test_frame_token_is_never_on_a_frame_root_nor_through_the_page_s_call(
        stack: Stack, origins: Origins) -> None:
    """Every frame holds a token (the registry maps it back), yet no frame's root carries
    data-mcjug, and a re-stamp (a pushState) makes no call to the page's own, patched
    Element.prototype.setAttribute. Chromium: no mutation at all; Firefox: the attribute
    is set and removed in one script (docs/security.md row 1; tests/e2e/test_stealth.py
    follows a whole flow)."""
    await _open(stack, origins)
    registry = stack.supervisor.frames
    tokens = [registry.token_of(f) for f in stack.page.frames]
    assert all(tokens) and len(set(tokens)) == len(tokens) >= 2
    for frame in stack.page.frames:
        assert await frame.evaluate(
            f"document.documentElement.getAttribute('{FRAME_TOKEN_ATTRIBUTE}')") is None
    await _reset(stack, "setAttributeCalls", "mutations")
    await stack.page.evaluate("history.pushState({}, '', '?again=1')")
    await asyncio.sleep(0.2)
    await registry.settle()
    t = await _traces(stack)
    assert [c for c in t["setAttributeCalls"] if c["name"] == FRAME_TOKEN_ATTRIBUTE] == []
    assert await stack.page.evaluate(
        f"document.documentElement.getAttribute('{FRAME_TOKEN_ATTRIBUTE}')") is None
    ours = [m for m in t["mutations"] if m["attr"] == FRAME_TOKEN_ATTRIBUTE]
    if stack.browser == "chromium":
        assert ours == []
    else:  # the announcement: set then removed, always in pairs
        assert ours and len(ours) % 2 == 0, ours
    assert registry.token_of(stack.page.main_frame) == tokens[0], "same document: token kept"


async def test_child_frames_receive_the_frame_key_message(stack: Stack, origins: Origins) -> None:
    """A snapshot that lists a child frame posts {__trustbridgeFrameKey: <string>} from the
    parent into it; the child page's own message listener receives it."""
    await _open(stack, origins)
    child = await _child(stack)
    await child.evaluate("window.__traces.messages = []")
    await stack.client.call("page.snapshot", {})
    expected = {"keys": [FRAME_KEY_FIELD], "fromParent": True, "values": ["string"]}
    for _ in range(40):  # a posted message is delivered asynchronously
        messages = await child.evaluate("window.__traces.messages")
        if expected in messages:
            break
        await asyncio.sleep(0.05)
    assert expected in messages


async def test_navigator_webdriver_and_user_agent(stack: Stack, origins: Origins) -> None:
    """Chromium: navigator.webdriver is false and neither the user agent nor its client
    hints say Headless. Firefox (WebDriver BiDi): navigator.webdriver is true (kept: no
    pref turns it off while the remote agent runs), and no `window.TestUtils` from the
    first script (removed: dom.testing.testutils.enabled, issue 35 item 3)."""
    await _open(stack, origins)
    nav = (await _traces(stack))["navigator"]
    assert "Headless" not in nav["userAgent"]
    assert nav["testUtils"] == "undefined"
    if stack.browser == "chromium":
        assert nav["webdriver"] is False
        assert nav["brands"] and not [b for b in nav["brands"] if "Headless" in b]
    else:
        assert nav["webdriver"] is True


async def test_screen_and_pointer_are_a_desktop_s(stack: Stack, origins: Origins) -> None:
    """The screen is larger than the viewport (supervisor/launcher.py screen_for) and the
    pointer is fine and hovers (headless Firefox reported neither: FIREFOX_HEADLESS_PREFS);
    issue 35 item 4. availHeight still equals height (Playwright's screen emulation)."""
    await _open(stack, origins)
    scr = (await _traces(stack))["screen"]
    assert scr["width"] > scr["innerWidth"] and scr["height"] > scr["innerHeight"], scr
    assert scr["pointerFine"] is True and scr["hover"] is True, scr


async def test_console_serialisation_probe(stack: Stack, origins: Origins) -> None:
    """A console.debug argument whose `stack` getter a protocol client would run while
    reporting the call is not read, at the page's first script nor at load. A plain
    object's enumerable getter: not read on Chromium; read on Firefox, whose WebDriver
    BiDi serialises every console argument for Playwright's log.entryAdded subscription
    (kept: docs/security.md row 11)."""
    await _open(stack, origins)
    read = stack.browser == "firefox"
    assert (await _traces(stack))["console"] == [
        {"when": "first-script", "serialised": False, "objectRead": read},
        {"when": "load", "serialised": False, "objectRead": read}]


async def test_default_click_is_one_move_then_press_at_the_exact_centre(
        stack: Stack, origins: Origins) -> None:
    """A default trusted click reaches the page as one pointermove to the target's exact
    centre, then pointerdown/mousedown and pointerup/mouseup/click at that same point."""
    snap = await _open(stack, origins)
    await _reset(stack, "pointer")
    await stack.act(ref_of(snap, "button", "Target"), kind="click")
    events = (await _traces(stack))["pointer"]
    down = next(i for i, e in enumerate(events) if e["type"] == "pointerdown")
    assert [e["type"] for e in events[:down]] == ["pointermove", "mousemove"]
    assert {(e["x"], e["y"]) for e in events} == {TARGET_CENTRE}
    assert all(e["trusted"] for e in events)
    assert [e["type"] for e in events[down:]] == ["pointerdown", "mousedown", "pointerup", "mouseup", "click"]


async def test_a_configured_pointer_path_moves_in_steps_and_holds_the_button(
        stack: Stack, origins: Origins,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With PointerPath(steps=6, hold 150 ms) (TRUSTBRIDGE_CLICK_STEPS / _HOLD_MS), the page
    sees several moves on the way to the target and the button held ≥ 150 ms."""
    snap = await _open(stack, origins)
    monkeypatch.setattr(stack.supervisor.driver, "pointer", PointerPath(steps=6, hold_ms=(150.0, 150.0)))
    await _reset(stack, "pointer")
    await stack.act(ref_of(snap, "button", "Target"), kind="click")
    events = (await _traces(stack))["pointer"]
    down = next(e for e in events if e["type"] == "pointerdown")
    up = next(e for e in events if e["type"] == "pointerup")
    moves = [e for e in events if e["type"] == "pointermove" and e["t"] <= down["t"]]
    assert len({(e["x"], e["y"]) for e in moves}) >= 3, events
    assert up["t"] - down["t"] >= 150 - 1, events  # timeStamp resolution (Firefox: 1 ms)


async def test_typing_is_one_trusted_key_sequence_per_character(stack: Stack, origins: Origins) -> None:
    """`type` focuses the field by script (a focus with no pointer event before it), then
    sends a trusted keydown/keyup per character; Chromium's `fill` inserts the value but
    its last character as one insertText input event, then that character's key."""
    snap = await _open(stack, origins)
    field = ref_of(snap, "textbox", "Field")
    await _reset(stack, "keys", "inputs", "focus", "pointer")
    await stack.act(field, kind="type", text="abcdef")
    t = await _traces(stack)
    assert [k["key"] for k in t["keys"] if k["type"] == "keydown"] == list("abcdef")
    assert all(k["trusted"] for k in t["keys"])
    assert t["focus"] == [{"type": "focusin", "target": "field"}] and t["pointer"] == []
    await _reset(stack, "keys", "inputs")
    await stack.act(field, kind="fill", value="hello world")
    t = await _traces(stack)
    if stack.browser == "chromium":
        # The select-all chord (ControlOrMeta+A), then the last character's key only.
        keydowns = [k["key"].lower() for k in t["keys"] if k["type"] == "keydown"]
        assert keydowns in (["control", "a", "d"], ["meta", "a", "d"]), keydowns
        assert [i for i in t["inputs"] if i["data"]] == [
            {"inputType": "insertText", "data": "hello worl", "trusted": True},
            {"inputType": "insertText", "data": "d", "trusted": True}]
    assert await stack.page.locator("#field").input_value() == "hello world"


async def test_the_extension_writes_nothing_else_into_the_page(stack: Stack, origins: Origins) -> None:
    """Snapshots (outline and read), a click and typing cause no DOM mutation, no
    setAttribute call and no new window global the page can see (Firefox: at most
    Playwright's `__pw_bidiInsertText`), and the
    page's own prototypes are untouched (the content script's `labels` getter lives in
    its world)."""
    snap = await _open(stack, origins)
    await _reset(stack, "setAttributeCalls", "mutations")
    await stack.client.call("page.snapshot", {})
    await stack.client.call("page.snapshot", {"mode": "read"})
    await stack.act(ref_of(snap, "button", "Target"), kind="click")
    await stack.act(ref_of(snap, "textbox", "Field"), kind="type", text="xyz")
    t = await _traces(stack)
    assert t["mutations"] == [] and t["setAttributeCalls"] == []
    new_globals = await stack.page.evaluate(
        "Object.getOwnPropertyNames(window).filter(k => !window.__traces.globalsAtLoad.includes(k))")
    # Firefox over WebDriver BiDi: Playwright's main-world injected script, once a driver
    # step creates it in the document, defines one global of its own (docs/security.md).
    allowed = set() if stack.browser == "chromium" else {"__pw_bidiInsertText"}
    assert set(new_globals) <= allowed, new_globals
    getter = await stack.page.evaluate(
        "Function.prototype.toString.call(Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'labels').get)")
    assert "[native code]" in getter


def test_manifest_exposes_nothing_to_pages() -> None:
    """The extension declares no web_accessible_resources and no externally_connectable:
    a page can neither load the extension's files by URL nor message it."""
    manifest = json.loads(MANIFEST.read_text())
    assert "web_accessible_resources" not in manifest
    assert "externally_connectable" not in manifest
    assert [cs["run_at"] for cs in manifest["content_scripts"]] == ["document_start"]
    assert manifest["content_scripts"][0]["all_frames"] is True


async def _fill_log(stack: Stack, field: str, value: str) -> list[dict]:
    """The keys page's event log of one fill of ``field`` (its value reset to "old text" by
    script first, the log emptied)."""
    await stack.page.evaluate("document.getElementById('field').value = 'old text'; "
                              "window.__log = []")
    await stack.act(field, kind="fill", value=value)
    return await stack.page.evaluate("window.__log")


async def test_fill_select_all_chord_is_the_pressed_chord(
        stack: Stack, origins: Origins, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fill's ControlOrMeta+A, its four events sent at once (supervisor/keys.py), reaches
    the page exactly as one keyboard.press of it: Control down, A down with ctrlKey, A up
    with ctrlKey, Control up, all trusted, then (Chromium, Camoufox) one insertText edit
    with the value but its last character and that character's key, or (Firefox over
    BiDi) the value's keys. The same fill with every press sent the former way gives the
    same log, event for event."""
    await stack.client.call("page.navigate", {"url": f"{origins.main}/keys/keys.html"})
    field = ref_of(await stack.snapshot(), "textbox", "Chord field")
    pipelined = await _fill_log(stack, field, "hello world")
    monkeypatch.setattr("trustbridge.supervisor.keys.PIPELINE", False)
    pressed = await _fill_log(stack, field, "hello world")
    assert pipelined == pressed
    mod = "Meta" if sys.platform == "darwin" else "Control"  # as Playwright resolves it
    flags = {"ctrl": mod == "Control", "meta": mod == "Meta", "shift": False, "alt": False,
             "repeat": False, "trusted": True, "target": "field"}
    up_flags = {**flags, "ctrl": False, "meta": False}
    assert pipelined[:4] == [
        {"type": "keydown", "key": mod, "code": f"{mod}Left", **flags},
        {"type": "keydown", "key": "A", "code": "KeyA", **flags},
        {"type": "keyup", "key": "A", "code": "KeyA", **flags},
        {"type": "keyup", "key": mod, "code": f"{mod}Left", **up_flags},
    ], pipelined
    rest = pipelined[4:]
    if stack.browser == "firefox":  # typed: trusted keys, one edit per character
        typed = [e["key"] for e in rest if e["type"] == "keydown"]
        assert typed == list("hello world") and all(e["trusted"] for e in rest), rest
    else:
        assert [(e["type"], e["key"]) for e in rest if e["type"] in ("keydown", "keyup")] \
            == [("keydown", "d"), ("keyup", "d")], rest
        assert [e for e in rest if e["type"] == "input"] == [
            {"type": "input", "inputType": "insertText", "data": "hello worl",
             "trusted": True, "target": "field", "value": "hello worl"},
            {"type": "input", "inputType": "insertText", "data": "d",
             "trusted": True, "target": "field", "value": "hello world"}], rest
    assert await stack.page.locator("#field").input_value() == "hello world"
