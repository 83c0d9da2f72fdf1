"""The verified-point fast path (issue 18): a click or hover by ref goes to the point the
extension checked, or, when a check fails, the full Playwright path says why
(extension/src/page/fastpoint.js, supervisor/actions.py fast_pointer)."""

from __future__ import annotations

import pytest

from bridge.protocol import errors as E

from .conftest import Origins, Stack, ref_of

pytestmark = pytest.mark.browser


async def _open(stack: Stack, origins: Origins) -> str:
    await stack.client.call("page.navigate", {"url": f"{origins.main}/fast/index.html"})
    return await stack.snapshot()


async def _clicks(stack: Stack) -> list[dict]:
    events = await stack.page.evaluate("window.__events")
    return [{"trusted": e["trusted"], "target": e["target"]} for e in events
            if e["type"] == "click"]


def _slow(res: dict, check: str) -> None:
    """The full path ran, named the failed check, and the target still got the click."""
    assert res.get("fastPath") is not True and res["fastRefused"] == check, res
    assert res["inputPath"] == "trusted"


async def test_plain_button_takes_the_fast_path(stack: Stack, origins: Origins) -> None:
    """A plain button: fastPath true, delivered, one trusted click on it."""
    snap = await _open(stack, origins)
    res = await stack.act(ref_of(snap, "button", "Plain"), kind="click")
    assert res["fastPath"] is True and res["delivered"] is True, res
    assert res.get("fastRefused") is None
    assert await _clicks(stack) == [{"trusted": True, "target": "plain"}]


async def test_double_click_with_modifier_on_the_fast_path(stack: Stack, origins: Origins) -> None:
    """clickCount 2 with Shift held: a dblclick whose event says shiftKey (Chromium only:
    Firefox refuses double clicks before anything is sent)."""
    if stack.browser != "chromium":
        pytest.skip("Firefox over BiDi cannot deliver a double click (browser_limits.py)")
    snap = await _open(stack, origins)
    await stack.page.evaluate("""() => { window.__dbl = [];
        document.getElementById('plain').addEventListener('dblclick',
          (e) => window.__dbl.push({trusted: e.isTrusted, shift: e.shiftKey})); }""")
    res = await stack.act(ref_of(snap, "button", "Plain"), kind="click", clickCount=2,
                          modifiers=["Shift"])
    assert res["fastPath"] is True
    assert await stack.page.evaluate("window.__dbl") == [{"trusted": True, "shift": True}]


async def test_paint_only_animation_does_not_count_as_moving(stack: Stack, origins: Origins) -> None:
    """A button whose background colour is animated stays on the fast path."""
    snap = await _open(stack, origins)
    res = await stack.act(ref_of(snap, "button", "Pulsing"), kind="click")
    assert res["fastPath"] is True and res["delivered"] is True, res
    assert await _clicks(stack) == [{"trusted": True, "target": "pulsing"}]


async def test_moving_target_falls_back(stack: Stack, origins: Origins) -> None:
    """A button sliding under a transform animation is refused as moving; Playwright's path
    waits for it to stop and the click lands on it."""
    snap = await _open(stack, origins)
    await stack.page.evaluate("document.getElementById('moving').classList.add('go')")
    res = await stack.act(ref_of(snap, "button", "Moving"), kind="click")
    _slow(res, "moving")
    assert res["delivered"] is True
    assert await _clicks(stack) == [{"trusted": True, "target": "moving"}]


@pytest.mark.parametrize("name,overlay", [("Covered", "overlay"),
                                          ("Shadow covered", "shadow-overlay")])
async def test_covered_target_falls_back(stack: Stack, origins: Origins, name: str,
                                         overlay: str) -> None:
    """A button under an overlay (a plain one, or one painted inside a closed shadow root)
    is refused as covered: nothing is sent to the overlay, and Playwright's path clicks the
    button once the overlay goes."""
    snap = await _open(stack, origins)
    await stack.page.evaluate(
        f"setTimeout(() => document.getElementById('{overlay}').remove(), 400)")
    res = await stack.act(ref_of(snap, "button", name), kind="click")
    _slow(res, "covered")
    target = "covered" if overlay == "overlay" else "shadow-covered"
    assert await _clicks(stack) == [{"trusted": True, "target": target}]


async def test_covered_target_that_stays_covered_is_not_clicked(stack: Stack,
                                                                origins: Origins) -> None:
    """An overlay that never goes: the action fails (obscured or timeout) and the page saw
    no click at all, on the overlay or elsewhere."""
    snap = await _open(stack, origins)
    with pytest.raises((E.ElementObscured, E.Timeout)):
        await stack.client.call("page.act", {"ref": ref_of(snap, "button", "Covered"),
                                             "action": {"kind": "click"}, "timeoutMs": 800})
    assert await _clicks(stack) == []


async def test_closed_shadow_host_is_hit_through_its_closed_root(stack: Stack,
                                                                 origins: Origins) -> None:
    """A host whose content is in a closed shadow root: the hit test descends into the
    closed root, finds the host's own content, and the fast path clicks it."""
    snap = await _open(stack, origins)
    res = await stack.act(ref_of(snap, "button", "Closed host"), kind="click")
    assert res["fastPath"] is True and res["delivered"] is True, res
    assert await _clicks(stack) == [{"trusted": True, "target": "card"}]


async def test_target_inside_closed_shadow_root_is_refused(stack: Stack, origins: Origins) -> None:
    """A button inside a closed shadow root has no locator: refused before any input (no
    fast point is sent either), and the page saw no click."""
    snap = await _open(stack, origins)
    with pytest.raises(E.ClosedShadowRoot):
        await stack.act(ref_of(snap, "button", "Closed inner"), kind="click")
    assert await _clicks(stack) == []


async def _frame_target(stack: Stack, origins: Origins):
    await _open(stack, origins)
    handle = await stack.page.wait_for_selector("#frame")
    frame = await handle.content_frame()
    assert frame is not None
    await frame.wait_for_selector("#in-frame")
    await frame.evaluate("window.scrollTo(0, 250)")
    return frame, ref_of(await stack.snapshot(), "button", "In frame")


async def test_target_in_scrolled_iframe_is_clicked_fast_at_the_mapped_point(
        stack: Stack, origins: Origins) -> None:
    """A button in an iframe whose document is scrolled, the iframe with a border and
    padding: the driver maps the frame's point through its frame element and the click
    lands on the button (fast path, delivered, the frame saw it trusted)."""
    frame, ref = await _frame_target(stack, origins)
    res = await stack.act(ref, kind="click")
    assert res["fastPath"] is True and res["delivered"] is True, res
    assert await frame.evaluate("window.__events") == [
        {"type": "click", "trusted": True, "target": "in-frame"}]
    assert await _clicks(stack) == []


async def test_target_in_covered_iframe_falls_back(stack: Stack, origins: Origins) -> None:
    """Something in the parent document over the iframe: the child frame's own hit test
    passes, the parent's does not (fastRefused frame-covered), and the full path clicks
    the button once the cover goes; the cover never got a click."""
    frame, ref = await _frame_target(stack, origins)
    await stack.page.evaluate("""() => { const c = document.getElementById('frame-cover');
        c.style.display = 'block'; setTimeout(() => c.remove(), 400); }""")
    res = await stack.act(ref, kind="click")
    _slow(res, "frame-covered")
    assert res["delivered"] is True
    assert await frame.evaluate("window.__events") == [
        {"type": "click", "trusted": True, "target": "in-frame"}]
    assert await _clicks(stack) == []


async def test_target_below_the_fold_is_scrolled_and_clicked_fast(stack: Stack,
                                                                  origins: Origins) -> None:
    """A button 1,600 px down: the extension scrolls it into view (one frame waited) and
    the fast path clicks it."""
    snap = await _open(stack, origins)
    res = await stack.act(ref_of(snap, "button", "Far below"), kind="click")
    assert res["fastPath"] is True and res["delivered"] is True, res
    assert await stack.page.evaluate("scrollY") > 0
    assert await _clicks(stack) == [{"trusted": True, "target": "far"}]


async def test_hover_takes_the_fast_path(stack: Stack, origins: Origins) -> None:
    """A hover by ref moves the pointer to the verified point: a trusted mouseover there."""
    snap = await _open(stack, origins)
    res = await stack.act(ref_of(snap, "button", "Hover me"), kind="hover")
    assert res["fastPath"] is True, res
    events = await stack.page.evaluate("window.__events")
    assert {"type": "mouseover", "trusted": True, "target": "hover-me"} in events
    assert await _clicks(stack) == []


async def test_hover_on_covered_target_falls_back(stack: Stack, origins: Origins) -> None:
    """A hover on a covered element is refused as covered and Playwright's path hovers it
    once the overlay goes."""
    snap = await _open(stack, origins)
    await stack.page.evaluate("setTimeout(() => document.getElementById('overlay').remove(), 400)")
    res = await stack.act(ref_of(snap, "button", "Covered"), kind="hover")
    assert res.get("fastPath") is not True and res["fastRefused"] == "covered", res
    events = await stack.page.evaluate("window.__events")
    assert {"type": "mouseover", "trusted": True, "target": "covered"} in events


async def test_target_needing_a_frame_in_a_background_tab_does_not_hang(
        stack: Stack, origins: Origins) -> None:
    """A tab behind another one gets no animation frames: a target that needs its scroll
    checked over a frame is refused (no-frame) at once instead of waiting for one, and the
    full path still clicks it."""
    snap = await _open(stack, origins)
    ref = ref_of(snap, "button", "Far below")
    tab_id = (await stack.client.call("tabs.list", {}))["tabs"][0]["tabId"]
    await stack.client.call("tabs.new", {"url": "about:blank"})
    # Firefox hides the tab behind; headless Chromium keeps it visible (frames still come).
    hidden = await stack.page.evaluate("document.hidden")
    res = await stack.client.call("page.act", {"tabId": tab_id, "ref": ref,
                                               "action": {"kind": "click"}})
    assert res["inputPath"] == "trusted" and res["delivered"] is True, res
    if hidden:
        assert res.get("fastPath") is not True and res["fastRefused"] == "no-frame", res
    assert await _clicks(stack) == [{"trusted": True, "target": "far"}]
