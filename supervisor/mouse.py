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

The pointer's last position per page (:func:`moved`, :func:`moved_over`, :func:`last`):
Playwright keeps where its mouse is but does not tell, so the driver records it itself
from every trusted pointer action it sends (these ops, a ref's click, hover, check, drag
and scroll, the fast path's point), in CSS px of the top-level viewport. A down, up or
wheel without a point acts there (``driver.pointer``; Playwright MCP's down, up and wheel
act where the pointer is).
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page

from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import MouseAction

if TYPE_CHECKING:
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


MEASURE_TIMEOUT_MS = 1000
"""How long the box of the element a ref action pointed at may take to read, ms (read
right after the action; an element gone by then leaves the position unknown)."""

_points: weakref.WeakKeyDictionary[Page, tuple[float, float] | asyncio.Future[Any] | None] = \
    weakref.WeakKeyDictionary()
"""Page → where the pointer is: a point, the pending read of one (:func:`moved_over`), or
None: unknown (the element it was sent to left before its box was read)."""
_moves: weakref.WeakKeyDictionary[Page, int] = weakref.WeakKeyDictionary()


def moves(page: Page) -> int:
    """How many times the position of ``page``'s pointer was recorded: a verb that
    recorded its own point leaves a different count behind (supervisor/driver.py)."""
    return _moves.get(page, 0)


def _record(page: Page, where: tuple[float, float] | asyncio.Future[Any] | None) -> None:
    old = _points.get(page)
    if isinstance(old, asyncio.Future):
        old.cancel()
    _points[page] = where
    _moves[page] = _moves.get(page, 0) + 1


def moved(page: Page, x: float, y: float) -> None:
    """The pointer was sent to (x, y), CSS px of the top-level viewport."""
    _record(page, (x, y))


def moved_over(page: Page, locator: Locator, offset: tuple[float, float] | None = None) -> None:
    """The pointer was sent to ``locator``'s element by Playwright (its actionability
    path), at ``offset`` from its box's top-left corner or at the centre of its part in
    the viewport (Playwright's clickable point: the middle of its first box, clipped to
    the viewport). The box is read in the background, at once; :func:`last` waits for it."""
    _record(page, asyncio.ensure_future(_centre(page, locator, offset)))


async def _centre(page: Page, locator: Locator,
                  offset: tuple[float, float] | None) -> tuple[float, float] | None:
    try:
        box = await locator.bounding_box(timeout=MEASURE_TIMEOUT_MS)
        if box is None:
            return None
        if offset is not None:
            return box["x"] + offset[0], box["y"] + offset[1]
        size = page.viewport_size or await page.evaluate(
            "() => ({width: innerWidth, height: innerHeight})")
    except PlaywrightError:
        return None
    left, top = max(box["x"], 0), max(box["y"], 0)
    right = min(box["x"] + box["width"], size["width"])
    bottom = min(box["y"] + box["height"], size["height"])
    if right <= left or bottom <= top:
        return None
    return (left + right) / 2, (top + bottom) / 2


async def last(page: Page) -> tuple[float, float] | None:
    """Where the driver last sent ``page``'s pointer, CSS px of the top-level viewport:
    (0, 0) when it never did (Playwright's starting position); None when unknown (the
    element a ref action pointed at left the page before its box was read)."""
    where = _points.get(page, (0.0, 0.0))
    if isinstance(where, asyncio.Future):
        try:
            where = await asyncio.shield(where)
        except asyncio.CancelledError:
            if not where.cancelled():  # this call was cancelled, not the read
                raise
            return await last(page)  # a newer move replaced the read
    return where


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
    if a.x is None or a.y is None:  # the bridge fills them in (driver.pointer); a direct caller may not
        where = await last(page)
        if where is None:
            raise unknown_position()
        a = a.model_copy(update={"x": where[0] if a.x is None else a.x,
                                 "y": where[1] if a.y is None else a.y})
    assert a.x is not None and a.y is not None
    points = [(a.x, a.y)]
    if a.op == "drag":
        if a.toX is None or a.toY is None:
            raise E.BadRequest("A mouse drag needs its end point (toX, toY).")
        points.append((a.toX, a.toY))
    await _check_in_viewport(page, points)
    mouse = page.mouse
    out: dict[str, Any] = {"at": {"x": a.x, "y": a.y}}
    async with _held(page, a.modifiers):
        moved(page, a.x, a.y)  # the first input below takes it there
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
            moved(page, a.toX, a.toY)
            await asyncio.sleep(DRAG_SETTLE_S)
            await mouse.up(button=a.button)
            out["to"] = {"x": a.toX, "y": a.toY}
    return out


def unknown_position() -> E.BadRequest:
    """BAD_REQUEST for an op without a point when the pointer's position is not known."""
    return E.BadRequest(
        "Where the mouse is is not known: the element the last action pointed at left the "
        "page before its position could be read. Nothing was sent.",
        next_step="Give x and y (CSS px of the viewport), or move the mouse first "
        "(browser_mouse_move_xy, browser_hover).")


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
