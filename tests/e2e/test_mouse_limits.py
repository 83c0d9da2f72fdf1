"""The driver's browser limits hold for mouse input at a point (MouseAction, the vision
tools) as for the verbs with a ref (supervisor/browser_limits.py): on pages/browsers.html,
a drag from the draggable element drops on Chromium and is refused on Firefox with nothing
pressed; a pointer drag from a plain element goes through on both."""

from __future__ import annotations

import asyncio

import pytest

from trustbridge.bridge.protocol import errors as E
from trustbridge.supervisor.browser_limits import driver_capabilities

from .conftest import Origins, Stack


async def _centre(stack: Stack, css: str) -> tuple[float, float]:
    box = await stack.page.locator(css).bounding_box()
    assert box is not None
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


async def _events(stack: Stack) -> list[dict]:
    return await stack.page.evaluate("window.__events")


async def test_mouse_drag_from_a_draggable_element_drops_or_is_refused(
        stack: Stack, origins: Origins) -> None:
    """A mouse drag from the draggable source to the drop zone: a trusted drop on
    Chromium; TRUSTED_INPUT_UNAVAILABLE on Firefox, the page saw no event at all."""
    await stack.client.call("page.navigate", {"url": f"{origins.main}/browsers.html"})
    await stack.snapshot()
    (sx, sy), (dx, dy) = await _centre(stack, "#drag-src"), await _centre(stack, "#drop-zone")
    if driver_capabilities(stack.browser)["html5DragDrop"]:
        await stack.tab.mouse("drag", sx, sy, to_x=dx, to_y=dy)
        assert await stack.page.text_content("#drop-zone") == "dropped payload"
        return
    with pytest.raises(E.TrustedInputUnavailable) as info:
        await stack.tab.mouse("drag", sx, sy, to_x=dx, to_y=dy)
    assert info.value.details["capability"] == "html5DragDrop"
    await asyncio.sleep(0.2)
    assert await _events(stack) == []
    assert await stack.page.text_content("#drop-zone") == "Drop here"


async def test_mouse_drag_from_a_plain_element_goes_through(stack: Stack,
                                                            origins: Origins) -> None:
    """A pointer-event drag (the knob, not draggable) onto the track: delivered with
    trusted events on every browser."""
    await stack.client.call("page.navigate", {"url": f"{origins.main}/browsers.html"})
    await stack.snapshot()
    (kx, ky), (tx, ty) = await _centre(stack, "#knob"), await _centre(stack, "#track")
    await stack.tab.mouse("drag", kx, ky, to_x=tx, to_y=ty)
    assert await stack.page.text_content("#knob") == "on track"
