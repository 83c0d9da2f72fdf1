"""Delivery receipts for clicks and the opt-in coordinate route into closed shadow roots."""

from __future__ import annotations

import pytest

from bridge.protocol import errors as E

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


async def test_a_tab_the_page_opens_just_after_the_click_is_in_new_tabs(
    stack: Stack, origins: Origins
) -> None:
    """A button whose click opens a tab a moment later (window.open in a timer) has that
    tab in the click's newTabs, with the acted-on tab as its opener."""
    await _open(stack, origins)
    await stack.page.evaluate("""() => {
        const b = document.createElement('button');
        b.textContent = 'Late opener';
        b.onclick = () => setTimeout(() => window.open('receipts.html'), 10);
        document.body.append(b);
    }""")
    res = await stack.act(ref_of(await stack.snapshot(), "button", "Late opener"), kind="click")
    assert res["delivered"] is True
    assert [t["openerTabId"] for t in res["newTabs"]] == [res["tabId"]]
    tabs = (await stack.client.call("tabs.list", {}))["tabs"]
    assert res["newTabs"][0]["tabId"] in [t["tabId"] for t in tabs]


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
