"""Trusted mouse input at a viewport point, with no ref (MouseAction; the vision tools).

Every op goes through Playwright's ``page.mouse``, the browser's own input (CDP
``Input.dispatchMouseEvent``, Juggler, WebDriver BiDi ``input.performActions``), so the
page sees ``event.isTrusted === true``. Points are CSS px from the top-left corner of the
top-level viewport, the space ``page.mouse`` takes (a viewport screenshot divided by its
scale). The bridge hit-tested the point through the extension before this runs
(extension/src/background/hittest.js) and names the element itself; this module only
sends the input.

Each op first moves the pointer to its point (Playwright MCP's down, up and wheel act
where the pointer is; here the point is explicit, so the element named is the one the
input lands on even when another verb moved the pointer since): ``move`` moves,
``click`` presses and releases ``clickCount`` times (``delay`` ms apart), ``down`` /
``up`` press or release ``button``, ``wheel`` turns the wheel by (``deltaX``, ``deltaY``) CSS px, ``drag`` presses
at (x, y), moves to (toX, toY) along :data:`DRAG_STEPS` points and releases.
``modifiers`` are held for the op.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from playwright.async_api import Page

from bridge.protocol import errors as E
from bridge.protocol.models import MouseAction

from .actions import PointerPath

DRAG_STEPS = 10
"""Pointer moves between a drag's press and release: pages (HTML5 drag and drop, pointer
handlers) see a path, not a jump (Playwright's ``dragTo`` moves in steps too)."""
DRAG_SETTLE_S = 0.03
"""Pause before a drag's release, s: dragover handlers run before the drop (actions.py
``drag`` does the same)."""
WHEEL_SETTLE_S = 0.05
"""Pause after a wheel, s: wheel scrolling is applied asynchronously (actions.py
``scroll``); the page state that follows then shows the scrolled content."""


async def act(page: Page, action: MouseAction, pointer: PointerPath) -> dict[str, Any]:
    """Perform ``action`` at its point with real input.

    Args:
        page: the tab's page.
        action: the op and its point(s), CSS px of the top-level viewport.
        pointer: how a click moves and presses (steps, hold; supervisor/actions.py).

    Returns:
        ``{"at": {x, y}}``: where the input was sent; a drag adds ``"to": {x, y}``.

    Raises:
        BadRequest: a point outside the viewport (nothing was sent), or a drag without
            its end point.
        BrowserOperationUncertain / Timeout: mapped from Playwright by the caller
            (supervisor/errors.py ``map_playwright_errors``).
    """
    a = action
    points = [(a.x, a.y)]
    if a.op == "drag":
        if a.toX is None or a.toY is None:
            raise E.BadRequest("A mouse drag needs its end point (toX, toY).")
        points.append((a.toX, a.toY))
    await _check_in_viewport(page, points)
    mouse = page.mouse
    out: dict[str, Any] = {"at": {"x": a.x, "y": a.y}}
    async with _held(page, a.modifiers):
        if a.op != "click" or pointer.steps > 1:  # a bare click moves there itself
            await mouse.move(a.x, a.y, steps=pointer.steps if a.op == "click" else 1)
        if a.op == "click":
            # The delay asked for (Playwright's mouse.click delay, ms) wins over the
            # configured human-like hold.
            hold = a.delay or pointer.hold()
            await mouse.click(a.x, a.y, button=a.button, click_count=a.clickCount,
                              **({"delay": hold} if hold is not None else {}))
        elif a.op == "down":
            await mouse.down(button=a.button)
        elif a.op == "up":
            await mouse.up(button=a.button)
        elif a.op == "wheel":
            await mouse.wheel(a.deltaX, a.deltaY)
            await asyncio.sleep(WHEEL_SETTLE_S)
        elif a.op == "drag":
            assert a.toX is not None and a.toY is not None
            await mouse.down(button=a.button)
            await mouse.move(a.toX, a.toY, steps=DRAG_STEPS)
            await asyncio.sleep(DRAG_SETTLE_S)
            await mouse.up(button=a.button)
            out["to"] = {"x": a.toX, "y": a.toY}
    return out


async def _check_in_viewport(page: Page, points: list[tuple[float, float]]) -> None:
    """BAD_REQUEST unless every point lies inside the top-level viewport (the extension's
    hit test checks the start point too; this covers a drag's end)."""
    size = page.viewport_size
    if size is None:  # a headed window without a fixed viewport: ask the page
        size = await page.evaluate("() => ({width: innerWidth, height: innerHeight})")
    width, height = size["width"], size["height"]
    for x, y in points:
        if not (0 <= x < width and 0 <= y < height):
            raise E.BadRequest(
                f"The point ({x:g}, {y:g}) is outside the viewport ({width}×{height} CSS px); "
                "nothing was sent. Coordinates are CSS px from the viewport's top-left corner.",
                {"x": x, "y": y, "width": width, "height": height})


@contextlib.asynccontextmanager
async def _held(page: Page, modifiers: list[str]) -> AsyncIterator[None]:
    """Hold ``modifiers`` (Shift, Control, Alt, Meta, ControlOrMeta) during the op."""
    pressed: list[str] = []
    try:
        for key in modifiers:
            await page.keyboard.down(key)
            pressed.append(key)
        yield
    finally:
        for key in reversed(pressed):
            with contextlib.suppress(Exception):  # the page may be gone; the op's error stands
                await page.keyboard.up(key)
