"""Delivery receipts for clicks and the opt-in coordinate route into closed shadow roots."""

from __future__ import annotations

import asyncio

import pytest

from trustbridge.bridge.protocol import errors as E

from .conftest import Origins, Stack, ref_of

pytestmark = pytest.mark.browser


async def _open(stack: Stack, origins: Origins) -> str:
    await stack.client.call("page.navigate", {"url": f"{origins.main}/receipts.html"})
    return await stack.snapshot()


async def _clicks(stack: Stack) -> list[dict]:
    return await stack.page.evaluate("window.__events")


async def test_click_receipt_says_delivered(stack: Stack, origins: Origins) -> None:
    """A click that reaches its target carries delivered: true with the events seen."""
    snap = await _open(stack, origins)
    res = await stack.act(ref_of(snap, "button", "Plain button"), kind="click")
    assert res["delivered"] is True and "click" in res["deliveredEvents"]
    assert "newTabs" not in res  # it opened none
    assert await _clicks(stack) == [{"trusted": True, "target": "plain"}]


async def test_a_tab_the_page_opens_after_the_click_is_reported_by_the_next_snapshot(
    stack: Stack, origins: Origins
) -> None:
    """A button whose click opens a tab 300 ms later (window.open in a timer): the click's
    result cannot know it; the next snapshot of the clicked tab reports it in newTabs, with
    the clicked tab as opener, and the snapshot after that does not report it again."""
    await _open(stack, origins)
    await stack.page.evaluate("""() => {
        const b = document.createElement('button');
        b.textContent = 'Late opener';
        b.onclick = () => setTimeout(() => window.open('receipts.html'), 300);
        document.body.append(b);
    }""")
    before = {t["tabId"] for t in (await stack.client.call("tabs.list", {}))["tabs"]}
    res = await stack.act(ref_of(await stack.snapshot(), "button", "Late opener"), kind="click")
    assert res["delivered"] is True and "newTabs" not in res
    deadline = asyncio.get_running_loop().time() + 10
    while len((await stack.client.call("tabs.list", {}))["tabs"]) == len(before):
        assert asyncio.get_running_loop().time() < deadline, "the page never opened its tab"
        await asyncio.sleep(0.05)
    snap = await stack.client.call("page.snapshot", {"tabId": res["tabId"]})
    assert [t["openerTabId"] for t in snap["newTabs"]] == [res["tabId"]]
    assert snap["newTabs"][0]["tabId"] not in before
    again = await stack.client.call("page.snapshot", {"tabId": res["tabId"]})
    assert "newTabs" not in again


async def test_click_that_misses_its_target_is_reported(stack: Stack, origins: Origins) -> None:
    """A target that moves away on pointerdown never gets the click: the result says
    delivered: false instead of calling it a success (the page saw the click elsewhere)."""
    snap = await _open(stack, origins)
    res = await stack.act(ref_of(snap, "button", "Runaway button"), kind="click")
    assert res["delivered"] is False
    clicks = await _clicks(stack)
    assert clicks and all(c["trusted"] and c["target"] != "runaway" for c in clicks)


async def test_closed_shadow_click_by_coordinates_when_allowed(stack: Stack, origins: Origins) -> None:
    """With allowCoordinates, a button in a closed shadow root is clicked at its hit-tested
    centre: inputPath trusted-coordinates, delivered, and the page saw a trusted click."""
    snap = await _open(stack, origins)
    ref = ref_of(snap, "button", "Closed target")
    with pytest.raises(E.ClosedShadowRoot):
        await stack.act(ref, kind="click")
    assert await _clicks(stack) == []
    res = await stack.client.call("page.act", {"ref": ref, "action": {"kind": "click"},
                                               "allowCoordinates": True})
    assert res["inputPath"] == "trusted-coordinates" and res["delivered"] is True
    assert {"trusted": True, "target": "closed-host-btn", "closed": True} in await _clicks(stack)


async def test_coordinates_refused_when_something_covers_the_point(
    stack: Stack, origins: Origins
) -> None:
    """The coordinate route proves the target is topmost; covered → ELEMENT_OBSCURED and
    no click is sent."""
    snap = await _open(stack, origins)
    ref = ref_of(snap, "button", "Covered closed target")
    with pytest.raises(E.ElementObscured):
        await stack.client.call("page.act", {"ref": ref, "action": {"kind": "click"},
                                             "allowCoordinates": True})
    assert await _clicks(stack) == []


async def _open_scope(stack: Stack, origins: Origins) -> str:
    await stack.client.call("page.navigate", {"url": f"{origins.main}/refscope/main.html"})
    return await stack.snapshot()


async def _aux_events(stack: Stack) -> list[dict]:
    return await stack.page.evaluate("window.__events")


async def test_right_click_receipt_counts_contextmenu(stack: Stack, origins: Origins) -> None:
    """A right-click on a table cell whose contextmenu handler calls preventDefault is
    delivered: true, and the page saw a trusted contextmenu (button 2) on that cell."""
    snap = await _open_scope(stack, origins)
    res = await stack.act(ref_of(snap, "cell", "Alice"), kind="click", button="right")
    assert res["delivered"] is True, res
    assert "contextmenu" in res["deliveredEvents"]
    seen = [e for e in await _aux_events(stack) if e["type"] == "contextmenu"]
    assert seen == [{"type": "contextmenu", "trusted": True, "button": 2, "target": "cell"}]


async def test_middle_click_receipt_counts_auxclick(stack: Stack, origins: Origins) -> None:
    """A middle click on a button is delivered: true, the page saw a trusted auxclick
    (button 1) on it and no click."""
    snap = await _open_scope(stack, origins)
    res = await stack.act(ref_of(snap, "button", "Main other"), kind="click", button="middle")
    assert res["delivered"] is True, res
    assert "auxclick" in res["deliveredEvents"]
    events = await _aux_events(stack)
    assert [e for e in events if e["type"] == "auxclick"] == [
        {"type": "auxclick", "trusted": True, "button": 1, "target": "other"}]
    assert not [e for e in events if e["type"] == "click"]


async def test_right_click_on_a_covered_target_is_not_delivered(
        stack: Stack, origins: Origins) -> None:
    """A right-click whose target an overlay covers the moment it is pressed: the overlay
    takes the contextmenu, the result says delivered: false."""
    snap = await _open_scope(stack, origins)
    res = await stack.act(ref_of(snap, "button", "Covered target"), kind="click", button="right")
    assert res["delivered"] is False, res
    seen = [e for e in await _aux_events(stack) if e["type"] == "contextmenu"]
    assert seen and all(e["trusted"] and e["target"] == "overlay" for e in seen)
