"""The verified-point fast path (issue 18): a click or hover by ref goes to the point the
extension checked, or, when a check fails, the full Playwright path says why
(extension/src/page/fastpoint.js, supervisor/actions.py fast_pointer)."""

from __future__ import annotations

import pytest

from trustbridge.bridge.protocol import errors as E

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


async def _guard_page(stack: Stack, origins: Origins) -> str:
    await stack.page.mouse.move(1, 1)  # the pointer starts away from every target
    await stack.client.call("page.navigate", {"url": f"{origins.main}/fast/guard.html"})
    return await stack.snapshot()


@pytest.mark.parametrize(("role", "name", "card"), [
    ("button", "Save draft", "Publish now"), ("link", "Leave", "Share")])
async def test_a_card_the_pointer_opens_over_the_target_gets_no_press(
        stack: Stack, origins: Origins, role: str, name: str, card: str) -> None:
    """The point was checked, then the move's mouseover opened a card whose button lies
    over it: the press guard stops the press, so neither the target nor the card's button
    gets a press or a click (the page's own window listeners saw none) and a link does
    not navigate; the answer is ELEMENT_OBSCURED naming the card's button, not a done
    click (before the guard, page.mouse pressed "Publish now": a review's probe)."""
    snap = await _guard_page(stack, origins)
    with pytest.raises(E.ElementObscured, match=f'"{card}" was on top at the target') as info:
        await stack.act(ref_of(snap, role, name), kind="click")
    assert info.value.details["coveredBy"] == "button"
    assert info.value.details["fastPath"] is True
    assert "snapshot" in info.value.to_payload().nextStep
    assert await stack.page.evaluate("window.__seen") == []
    assert await stack.page.evaluate("window.__counts") == {
        "save": 0, "publish": 0, "grow": 0, "link": 0}
    assert stack.page.url.endswith("/fast/guard.html")
    # The guard lapsed with that click: the card's own button takes a click as usual.
    snap = await stack.snapshot()
    res = await stack.act(ref_of(snap, "button", card), kind="click")
    assert res["delivered"] is True, res
    assert [e["target"] for e in await stack.page.evaluate("window.__seen")
            if e["type"] == "click"] == [card.split()[0].lower()]


async def test_a_new_child_under_the_pointer_inside_the_target_is_still_its_press(
        stack: Stack, origins: Origins) -> None:
    """The move's mouseover replaced the button's content with a new child under the
    pointer: the press lands inside the target, the guard lets it through, one trusted
    click on it."""
    snap = await _guard_page(stack, origins)
    res = await stack.act(ref_of(snap, "button", "Grow"), kind="click")
    assert res["fastPath"] is True and res["delivered"] is True, res
    assert (await stack.page.evaluate("window.__counts"))["grow"] == 1
    clicks = [e for e in await stack.page.evaluate("window.__seen") if e["type"] == "click"]
    assert clicks == [{"type": "click", "trusted": True, "target": "grow"}]


@pytest.mark.parametrize(("frame_id", "fast"), [
    ("mirrored", False),  # transform: scaleX(-1) on the iframe: same box size
    ("turned", False),  # scale: -1 1 on an ancestor (Playwright's path refuses it)
    ("moved", True),  # a translation maps by the box, as before
    ("rotated", False),  # rotate: 180deg on an ancestor (Playwright's path refuses it)
])
async def test_a_mirrored_or_turned_frame_is_not_mapped_by_its_box(
        stack: Stack, origins: Origins, frame_id: str, fast: bool) -> None:
    """A frame mirrored or turned by CSS keeps its box's size, so the box cannot map the
    point (a review's probe: "Pay" clicked "Archive"): the fast path refuses
    (frame-transformed) and the full path clicks "Pay" itself; a translated frame stays
    on the fast path. In every case only "Pay" got the click."""
    await stack.client.call("page.navigate", {"url": f"{origins.main}/fast/turned.html"})
    handle = await stack.page.wait_for_selector(f"#{frame_id}")
    frame = await handle.content_frame()
    assert frame is not None
    await frame.wait_for_selector("#pay")
    snap = await stack.snapshot()
    frames = ("mirrored", "turned", "rotated", "moved")  # document order
    refs = [ln for ln in snap.splitlines() if 'button "Pay"' in ln]
    assert len(refs) == len(frames), snap
    ref = refs[frames.index(frame_id)].split("[ref=")[1].split("]")[0]
    want = [["pay", True]]
    try:
        res = await stack.client.call("page.act", {"ref": ref, "action": {"kind": "click"},
                                                   "timeoutMs": 4000})
    except (E.ElementObscured, E.Timeout) as err:
        # Playwright's own path cannot map a point into a frame an ancestor turns or
        # mirrors (nor, over BiDi, into a mirrored frame): it says the point is covered
        # or the target invisible, and presses nothing (an honest refusal).
        assert frame_id in ("turned", "rotated") or (
            stack.browser == "firefox" and frame_id == "mirrored"), err
        want = []
    else:
        assert res["delivered"] is True, res
        if fast:
            assert res["fastPath"] is True, res
        else:
            _slow(res, "frame-transformed")
    for other in frames:
        f = await (await stack.page.query_selector(f"#{other}")).content_frame()
        assert await f.evaluate("window.__clicks") == (want if other == frame_id else []), other


@pytest.mark.parametrize("kind", ["hover", "click"])
async def test_a_target_script_moves_every_frame_is_never_answered_done_unseen(
        stack: Stack, origins: Origins, kind: str) -> None:
    """A button moved by script each animation frame, measured for the first time: a hover
    waits one frame, sees it move and takes the full path, which times out (Playwright's
    stable check); a click's press is stopped by the guard when the button moved away
    from the point. Whatever the answer, "done" only if the page saw it: before, a hover
    was answered done while the button never saw the pointer (a review's probe)."""
    snap = await _guard_page(stack, origins)
    ref = ref_of(snap, "button", "Runner")
    try:
        res = await stack.client.call("page.act", {"ref": ref, "action": {"kind": kind},
                                                   "timeoutMs": 1500})
    except (E.Timeout, E.ElementObscured) as err:
        if kind == "hover":
            assert isinstance(err, E.Timeout), err
        assert await stack.page.evaluate("window.__seen") == []  # no press, no click
        return
    if kind == "hover":
        assert res.get("fastPath") is not True, res
        assert await stack.page.evaluate("window.__over") == [True], res
    else:
        assert res["delivered"] is True, res
        assert [e["target"] for e in await stack.page.evaluate("window.__seen")
                if e["type"] == "click"] == ["runner"]


async def test_a_target_the_page_re_renders_under_the_pointer_is_named_gone(
        stack: Stack, origins: Origins) -> None:
    """The move's mouseover replaced the button with a new one of the same look: the
    press is the newcomer's, not the ref's, so it is stopped and the answer says the
    target left the page; a new snapshot's ref clicks the newcomer."""
    snap = await _guard_page(stack, origins)
    with pytest.raises(E.ElementObscured, match="target left the page"):
        await stack.act(ref_of(snap, "button", "Rerender"), kind="click")
    assert await stack.page.evaluate("window.__seen") == []
    res = await stack.act(ref_of(await stack.snapshot(), "button", "Rerender"), kind="click")
    assert res["delivered"] is True, res
    assert [e["target"] for e in await stack.page.evaluate("window.__seen")
            if e["type"] == "click"] == ["rerendered"]


async def test_a_double_click_whose_first_click_covers_the_target_is_not_done(
        stack: Stack, origins: Origins) -> None:
    """The first click opens an overlay over the button: the second press would be the
    overlay's. The guard stops it, so the overlay gets no press, click or dblclick, and
    the answer is ELEMENT_OBSCURED saying the first press went through (its effect, the
    overlay, is on the page), not "Double-clicked" (a review's probe). A plain button's
    double click is still delivered, with its dblclick."""
    if stack.browser != "chromium":
        pytest.skip("Firefox over BiDi cannot deliver a double click (browser_limits.py)")
    await stack.page.mouse.move(1, 1)
    await stack.client.call("page.navigate", {"url": f"{origins.main}/fast/dblguard.html"})
    snap = await stack.snapshot()
    with pytest.raises(E.ElementObscured, match="first 1 press") as info:
        await stack.act(ref_of(snap, "button", "Open"), kind="click", clickCount=2)
    assert info.value.details["pressesDelivered"] == 1
    log = await stack.page.evaluate("window.__log")
    assert [e for e in log if e["id"] == "overlay"] == [], log
    assert [(e["id"], e["type"]) for e in log] == [("open", "pointerdown"), ("open", "click")]
    res = await stack.act(ref_of(await stack.snapshot(), "button", "Twice"), kind="click",
                          clickCount=2)
    assert res["delivered"] is True and res["fastPath"] is True, res
    twice = [e["type"] for e in await stack.page.evaluate("window.__log") if e["id"] == "twice"]
    assert twice.count("dblclick") == 1 and twice.count("click") == 2, twice


async def test_a_control_inside_the_target_that_took_the_press_is_named(
        stack: Stack, origins: Origins) -> None:
    """The hover opens a menu inside the target, its link under the point: the click
    reaches the target by bubbling (as Playwright's hit-target check allows), and the
    result names the link the press hit (``pressedOn``) instead of a bare "clicked". A
    plain button's click names nothing."""
    await stack.page.mouse.move(1, 1)
    await stack.client.call("page.navigate", {"url": f"{origins.main}/fast/dblguard.html"})
    snap = await stack.snapshot()
    res = await stack.act(ref_of(snap, "button", "Settings"), kind="click")
    assert res["delivered"] is True, res
    assert res["pressedOn"] == {"tag": "a", "text": "Delete all"}, res
    log = await stack.page.evaluate("window.__log")
    assert ("danger", "click") in [(e["id"], e["type"]) for e in log], log
    res = await stack.act(ref_of(await stack.snapshot(), "button", "Twice"), kind="click")
    assert res["delivered"] is True and "pressedOn" not in res, res
