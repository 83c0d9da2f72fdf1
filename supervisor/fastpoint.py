"""The driver's half of the verified-point fast path (issue 18; supervisor/actions.py
``fast_pointer`` runs it, extension/src/page/fastpoint.js measures the point).

- :func:`top_point`: the extension's point, CSS px of the target frame's viewport, as CSS
  px of the top-level viewport, or the name of the check that failed. A frame one level
  down is mapped through its frame element: its border box from Playwright (CDP / BiDi,
  not page script), its border and padding and a hit test at the mapped point from the
  parent document's isolated world (supervisor/isolated_eval.py), where page script can
  neither see nor forge them. Deeper frames are not mapped (``nested-frame``).
- :func:`send`: the trusted mouse input at a top-level point (recorded as the pointer's
  position, supervisor/mouse.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import TYPE_CHECKING

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Page

from trustbridge.bridge.protocol.models import ClickAction, HoverAction, Point

from .isolated_eval import evaluate_isolated
from .mouse import moved

if TYPE_CHECKING:
    from .actions import PointerPath

# In the parent document: the one <iframe>/<frame> whose border box is Playwright's box
# of the target frame's element (±1 px), its content box (the child's viewport), the point
# mapped into the parent's viewport, and the parent's own hit test there (descending open
# shadow roots; a closed one's host is what it returns, which is not the frame element).
_FRAME_POINT_JS = """() => {
  const a = %s;
  const near = (p, q) => Math.abs(p - q) <= 1;
  const found = [...document.querySelectorAll('iframe, frame')].filter((f) => {
    const r = f.getBoundingClientRect();
    return near(r.left, a.box.x) && near(r.top, a.box.y)
      && near(r.width, a.box.width) && near(r.height, a.box.height);
  });
  if (found.length !== 1) return 'frame-unknown';
  const f = found[0];
  const r = f.getBoundingClientRect();
  if ((f.offsetWidth && !near(r.width, f.offsetWidth)) || (f.offsetHeight && !near(r.height, f.offsetHeight))) {
    return 'frame-transformed';
  }
  // Only a translation keeps the frame's viewport an offset of its box: a mirror, a
  // 180-degree turn or a 90-degree turn of a square keeps the box's size (the check
  // above), and CSS zoom scales what is inside. On the frame or any ancestor.
  const identity = /^matrix\\(1, 0, 0, 1, [^,]+, [^,]+\\)$/;
  for (let e = f; e; e = e.parentElement || (e.parentNode && e.parentNode.host) || null) {
    const cs = getComputedStyle(e);
    const t = cs.transform;
    if (t && t !== 'none' && !identity.test(t)) return 'frame-transformed';
    if ((cs.rotate && cs.rotate !== 'none') || (cs.scale && cs.scale !== 'none')) return 'frame-transformed';
    if (cs.zoom && cs.zoom !== '1' && cs.zoom !== 'normal') return 'frame-transformed';
  }
  const s = getComputedStyle(f);
  const px = (v) => parseFloat(v) || 0;
  const left = r.left + f.clientLeft + px(s.paddingLeft);
  const top = r.top + f.clientTop + px(s.paddingTop);
  const width = f.clientWidth - px(s.paddingLeft) - px(s.paddingRight);
  const height = f.clientHeight - px(s.paddingTop) - px(s.paddingBottom);
  if (a.x < 0 || a.y < 0 || a.x >= width || a.y >= height) return 'outside-frame';
  const x = left + a.x;
  const y = top + a.y;
  const root = document.documentElement;
  if (x < 0 || y < 0 || x >= root.clientWidth || y >= root.clientHeight) return 'outside-top-viewport';
  let hit = document.elementFromPoint(x, y);
  for (let i = 0; hit && hit.shadowRoot && i < 32; i++) {
    const inner = hit.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  return hit === f ? [x, y] : 'frame-covered';
}"""


async def top_point(frame: Frame, at: Point, timeout_ms: int) -> tuple[float, float] | str:
    """``at`` (CSS px of ``frame``'s viewport) in the top-level viewport, or why not.

    Returns:
        ``(x, y)``, CSS px of the top-level viewport; or a check name: ``nested-frame``
        (two or more frames down), ``frame-unknown`` (the frame element was not found by
        its box, e.g. inside a shadow root, or it has none), ``frame-transformed`` (a CSS
        transform other than a translation, ``rotate``, ``scale`` or ``zoom`` on it or an
        ancestor: a mirrored or turned frame keeps its box's size, so the point cannot be
        mapped by its box; a review's probe had ``scaleX(-1)`` click the mirror-image
        button), ``outside-frame``, ``outside-top-viewport``,
        ``frame-covered`` (something in the parent document is on top at the point).

    Raises:
        PlaywrightError: the frame or its parent went away (the caller maps it).
    """
    parent = frame.parent_frame
    if parent is None:
        size = frame.page.viewport_size
        if size is not None and not (0 <= at.x < size["width"] and 0 <= at.y < size["height"]):
            return "outside-top-viewport"
        return at.x, at.y
    if parent.parent_frame is not None:
        return "nested-frame"
    owner = await frame.frame_element()
    try:
        box = await owner.bounding_box()
    finally:
        with contextlib.suppress(PlaywrightError):
            await owner.dispose()
    if box is None:
        return "frame-unknown"
    args = json.dumps({"box": box, "x": at.x, "y": at.y})
    got = await evaluate_isolated(parent, None, _FRAME_POINT_JS % args, timeout_ms / 1000)
    if isinstance(got, list) and len(got) == 2:
        return float(got[0]), float(got[1])
    return str(got)


async def send(page: Page, a: ClickAction | HoverAction, x: float, y: float,
               pointer: PointerPath, bidi: bool) -> None:
    """Trusted mouse input at (x, y), CSS px of the top-level viewport: a move in
    ``pointer.steps`` steps; for a click, ``a.clickCount`` presses of ``a.button`` with
    ``a.modifiers`` held (released after, whatever happens) and ``pointer``'s hold.

    Chromium: one ``mouse.click`` (its move, press and release go out together, ~2.5 ms).
    Over WebDriver BiDi (``bidi``) every mouse call is one ``input.performActions``, and
    Firefox answers ``mouse.click``'s three at once in ~56 ms against ~27 ms for the same
    three one after the other (measured, headless Firefox ESR 128): sent one by one there.
    """
    mouse = page.mouse
    moved(page, x, y)  # the first input below takes the pointer there
    if isinstance(a, HoverAction):
        await mouse.move(x, y, steps=pointer.steps)
        return
    keyboard = page.keyboard
    held: list[str] = []
    try:
        for modifier in a.modifiers:
            await keyboard.down(modifier)
            held.append(modifier)
        hold = pointer.hold()
        if pointer.steps == 1 and not bidi:
            await mouse.click(x, y, button=a.button, click_count=a.clickCount, delay=hold)
            return
        await mouse.move(x, y, steps=pointer.steps)
        for count in range(1, a.clickCount + 1):
            await mouse.down(button=a.button, click_count=count)
            if hold:
                await asyncio.sleep(hold / 1000)
            await mouse.up(button=a.button, click_count=count)
    finally:
        for modifier in reversed(held):
            with contextlib.suppress(PlaywrightError):
                await keyboard.up(modifier)

