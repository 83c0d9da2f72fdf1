"""End to end in headless Chromium and Firefox ESR: snapshot refs, trusted clicks and
typing, refusals.

Every test runs once per browser (the ``stack`` / ``browser`` fixtures, tests/e2e/conftest.py)
and checks what the page itself recorded (``event.isTrusted``, values), not only what the
tool answered.
"""

from __future__ import annotations

import asyncio

import pytest

from trustbridge.bridge.protocol import errors as E

from .conftest import Origins, Stack, ref_of, stamped, wait_until

pytestmark = pytest.mark.browser


async def _open(stack: Stack, origins: Origins) -> str:
    await stack.client.call(
        "page.navigate", {"url": f"{origins.main}/index.html?other={origins.other_port}"}
    )
    # The cross-origin frame loads from script; wait until the snapshot shows it.
    for _ in range(100):
        snap = await stack.snapshot()
        if "Frame button" in snap:
            return snap
        await asyncio.sleep(0.05)
    raise AssertionError("cross-origin frame never appeared in the snapshot:\n" + snap)


async def _events(stack: Stack) -> list[dict]:
    return await stack.page.evaluate("window.__events")


async def _frame_events(stack: Stack) -> list[dict]:
    frame = next(f for f in stack.page.frames if f.url.endswith("/frame.html"))
    return await frame.evaluate("window.__events")


async def test_snapshot_shows_all_frames_and_shadow_roots(stack: Stack, origins: Origins) -> None:
    """One snapshot holds the main document, the cross-origin frame (f-prefixed refs),
    the open shadow root and the closed shadow root (marked)."""
    snap = await _open(stack, origins)
    assert ref_of(snap, "button", "Main button").startswith("e")
    assert ref_of(snap, "button", "Frame button").startswith("f")
    assert ref_of(snap, "button", "Shadow button").startswith("e")
    closed_line = next(line for line in snap.splitlines() if '"Closed button"' in line)
    assert "[closed-shadow]" in closed_line
    assert 'iframe "Cross frame"' in snap


async def test_click_in_main_document_is_trusted(stack: Stack, origins: Origins) -> None:
    """A click on a main-document ref reaches the page with isTrusted true."""
    snap = await _open(stack, origins)
    result = await stack.act(ref_of(snap, "button", "Main button"), kind="click")
    assert result["inputPath"] == "trusted"
    clicks = [e for e in await _events(stack) if e["type"] == "click"]
    assert clicks == [{"where": "main", "type": "click", "trusted": True,
                       "target": "main-btn", "key": None}]


async def test_an_action_before_the_stamp_waits_for_it_and_is_trusted(
        stack: Stack, origins: Origins, monkeypatch: pytest.MonkeyPatch) -> None:
    """An action right after a navigation, before the driver stamped the new document (the
    stamp lands milliseconds after the commit): the extension waits for the token (it wakes
    when the token is handed over, extension/src/page/token.js ``wait``) and the
    click is delivered, trusted, to the new document's button. The stamps are held until
    the click was sent, so the wait is exercised on any machine."""
    from trustbridge.supervisor.frames import FrameRegistry

    stamp = FrameRegistry.stamp
    gate = asyncio.Event()

    async def held(self: FrameRegistry, frame: object) -> str | None:
        await gate.wait()
        return await stamp(self, frame)  # type: ignore[arg-type]

    monkeypatch.setattr(FrameRegistry, "stamp", held)
    try:
        await stack.client.call("page.navigate", {"url": f"{origins.main}/index.html?late=1"})
        snap = await stack.snapshot()
        click = asyncio.ensure_future(stack.act(ref_of(snap, "button", "Main button"),
                                                kind="click"))
        await asyncio.sleep(0.1)  # the resolve is waiting for the token now
        assert not click.done(), click.result() if click.done() else None
    finally:
        gate.set()
    result = await click
    assert result["inputPath"] == "trusted" and result["delivered"] is True, result
    clicks = [e for e in await _events(stack) if e["type"] == "click"]
    assert clicks == [{"where": "main", "type": "click", "trusted": True,
                       "target": "main-btn", "key": None}]


async def test_click_in_cross_origin_iframe_is_trusted(stack: Stack, origins: Origins) -> None:
    """A click on a ref inside an out-of-process cross-origin iframe is trusted and lands
    on the frame's button, not on the main document."""
    snap = await _open(stack, origins)
    result = await stack.act(ref_of(snap, "button", "Frame button"), kind="click")
    assert result["inputPath"] == "trusted"
    clicks = [e for e in await _frame_events(stack) if e["type"] == "click"]
    assert clicks == [{"type": "click", "trusted": True, "target": "frame-btn", "key": None}]
    assert [e for e in await _events(stack) if e["type"] == "click"] == []


async def test_click_in_open_shadow_root_is_trusted(stack: Stack, origins: Origins) -> None:
    """A click on a ref inside an open shadow root reaches that button, trusted."""
    snap = await _open(stack, origins)
    await stack.act(ref_of(snap, "button", "Shadow button"), kind="click")
    clicks = [e for e in await _events(stack) if e["type"] == "click"]
    assert {"where": "open-shadow", "type": "click", "trusted": True,
            "target": "shadow-btn", "key": None} in clicks
    assert all(e["trusted"] and e["target"] == "shadow-btn" for e in clicks)


async def test_typing_arrives_as_trusted_keys_and_sets_value(stack: Stack, origins: Origins) -> None:
    """Typing sends one trusted keydown per character and the field holds the text."""
    snap = await _open(stack, origins)
    result = await stack.act(ref_of(snap, "textbox", "Name"), kind="type", text="Grace")
    assert result["inputPath"] == "trusted"
    keys = [e for e in await _events(stack) if e["type"] == "keydown"]
    assert [e["key"] for e in keys] == list("Grace")
    assert all(e["trusted"] and e["target"] == "name" for e in keys)
    assert await stack.page.input_value("#name") == "Grace"


async def test_typing_into_cross_origin_frame(stack: Stack, origins: Origins) -> None:
    """Typing into a field of the cross-origin frame sets its value with trusted keys."""
    snap = await _open(stack, origins)
    await stack.act(ref_of(snap, "textbox", "Frame field"), kind="type", text="hi")
    keys = [e for e in await _frame_events(stack) if e["type"] == "keydown"]
    assert [(e["key"], e["trusted"]) for e in keys] == [("h", True), ("i", True)]


async def test_press_key_goes_to_focused_element(stack: Stack, origins: Origins) -> None:
    """press without a ref sends a trusted key to the focused element of the tab."""
    snap = await _open(stack, origins)
    await stack.act(ref_of(snap, "textbox", "Name"), kind="type", text="a")
    await stack.act(None, kind="press", key="Backspace")
    keys = [e for e in await _events(stack) if e["type"] == "keydown"]
    assert keys[-1]["key"] == "Backspace" and keys[-1]["trusted"] is True
    assert await stack.page.input_value("#name") == ""


async def test_closed_shadow_root_is_refused_and_page_sees_nothing(
    stack: Stack, origins: Origins
) -> None:
    """A ref inside a closed shadow root gets CLOSED_SHADOW_ROOT with a diagnostic, and the
    page records no event at all."""
    snap = await _open(stack, origins)
    ref = ref_of(snap, "button", "Closed button")
    before = len(await _events(stack))
    with pytest.raises(E.ClosedShadowRoot) as info:
        await stack.act(ref, kind="click")
    assert info.value.details["hostChain"] == [{"tag": "div", "id": "closed-host", "mode": "closed"}]
    assert "Closed button" in info.value.message
    await asyncio.sleep(0.2)
    assert len(await _events(stack)) == before


@pytest.mark.own_browser  # it stops the input driver
async def test_driver_offline_refuses_and_extension_gets_nothing(
    stack: Stack, origins: Origins
) -> None:
    """With the driver stopped, a click on a device whose driver had connected fails with
    TRUSTED_INPUT_UNAVAILABLE; the page records nothing and the extension is never asked."""
    snap = await _open(stack, origins)
    ref = ref_of(snap, "button", "Main button")
    ext_peer = stack.server.peers[stack.server.policy.extensions[stack.device]]
    asked: list[str] = []
    original = ext_peer.call

    async def recording_call(method, params, timeout_s):
        asked.append(method)
        return await original(method, params, timeout_s)

    ext_peer.call = recording_call  # type: ignore[method-assign]
    await stack.supervisor.stop_driver()
    await wait_until(lambda: stack.device not in stack.server.policy.drivers, 10)
    before = await _events(stack)
    with pytest.raises(E.TrustedInputUnavailable):
        await stack.act(ref, kind="click")
    await asyncio.sleep(0.2)
    assert await _events(stack) == before
    assert asked == []
    # Observation still works: only input is refused.
    assert "Main button" in await stack.snapshot()
    assert asked == ["page.snapshot"]


async def test_ref_from_previous_document_is_refused(stack: Stack, origins: Origins) -> None:
    """After a reload, a ref from the old document fails with BROWSER_DOCUMENT_CHANGED."""
    snap = await _open(stack, origins)
    ref = ref_of(snap, "button", "Main button")
    await stack.client.call("page.navigate", {"url": f"{origins.main}/index.html"})
    with pytest.raises(E.BrowserDocumentChanged):
        await stack.act(ref, kind="click")
    assert [e for e in await _events(stack) if e["type"] == "click"] == []


async def test_every_frame_is_stamped_with_a_known_token(stack: Stack, origins: Origins) -> None:
    """Each frame's document holds a token and the driver's registry maps it back (within
    stamped()'s bound: stamping runs on load events, asynchronously); tokens differ."""
    await _open(stack, origins)
    await stamped(stack)
    tokens = [stack.supervisor.frames.token_of(f) for f in stack.page.frames]
    assert len(set(tokens)) == len(tokens) >= 2
    for token, frame in zip(tokens, stack.page.frames):
        assert token and stack.supervisor.frames.frame_for(token) is frame


async def test_hover_is_trusted(stack: Stack, origins: Origins) -> None:
    """hover moves the real pointer: the page sees a trusted mouseover on the target."""
    snap = await _open(stack, origins)
    await stack.act(ref_of(snap, "button", "Main button"), kind="hover")
    overs = [e for e in await _events(stack) if e["type"] == "mouseover"]
    assert overs and overs[-1]["target"] == "main-btn" and overs[-1]["trusted"] is True


async def test_device_without_driver_uses_labelled_synthetic_path(
    origins: Origins, browser: str
) -> None:
    """A device that never had a driver keeps the extension's synthetic path: the result
    says inputPath "synthetic" and the page sees isTrusted false (nothing pretends)."""
    import secrets

    from trustbridge.bridge.client import BridgeClient
    from trustbridge.bridge.server import BridgeServer
    from trustbridge.supervisor.runner import Supervisor

    token = secrets.token_hex(16)
    async with BridgeServer(token, port=0) as server:
        async with Supervisor(server.url, token, "plain", browser=browser,
                              trusted_input=False) as sup:
            await wait_until(lambda: "plain" in server.policy.extensions)
            async with await BridgeClient.connect(server.url, token) as client:
                await client.call("page.navigate", {"url": f"{origins.main}/index.html"})
                snap = (await client.call("page.snapshot", {}))["snapshot"]
                result = await client.call("page.act", {
                    "ref": ref_of(snap, "button", "Main button"), "action": {"kind": "click"}})
                assert result["inputPath"] == "synthetic"
                assert "plain" not in server.policy.required_trusted_input
                clicks = [e for e in await sup.context.pages[0].evaluate("window.__events")
                          if e["type"] == "click"]
                assert clicks and all(e["trusted"] is False for e in clicks)
