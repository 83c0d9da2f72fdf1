"""A person's rhythm for trusted input (issue 35 item 2): ``--humanize``, off by default.

With it on, a click on a ref:

- aims at an **integer** point of the target's visible box (its border box cut to the
  viewport), drawn around the centre and kept :data:`INSET` of the way in from every edge
  (:func:`aim`), never outside it;
- reaches it from the pointer's last position (supervisor/mouse.py ``last``) along a
  curve (a quadratic Bézier bowed sideways by up to a fifth of the distance) with
  ease-in-out timing: :data:`MOVES` integer points, the last one the aim (:func:`path`);
- waits :data:`SETTLE_MS` before pressing, and holds the button :data:`PRESS_MS`;
- still presses through Playwright's ``locator.click(position=…)``, whose hit test at that
  point refuses a point another element covers (the press guard holds: a covered point is
  ELEMENT_OBSCURED, never a click on the cover).

Typing (``type``) holds each key :data:`KEY_HOLD_MS` and leaves :data:`KEY_GAP_MS` between
keys; an empty field that does not have the focus gets it by that humanized click instead of
from script (a field with text keeps the script focus, so the caret stays where ``type``
puts it without humanize).

Ranges are uniform draws; their medians are what the issue asks for (press 40–160 ms, key
holds 50–150 ms, gaps ≥ 80 ms) with margin. Sources for the human values: keystroke
studies give holds of ~80–120 ms and ~150+ ms between keys for ordinary typists (Dhakal et
al., "Observations on Typing from 136 Million Keystrokes", CHI 2018); mouse button presses
of ~50–150 ms.

Not humanized (said in docs/browsers.md): ``fill`` (an insert, as a paste is), clicks at
viewport coordinates (the agent chose the point), hover and drag, and the keys of ``press``.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Sequence
from typing import Any

from playwright.async_api import Error as PlaywrightError

MOVES = (8, 14)
"""Pointer moves to the target, inclusive range (each a mousemove the page sees)."""
SETTLE_MS = (60.0, 160.0)
"""Pause between the last move and the press, ms."""
PRESS_MS = (60.0, 130.0)
"""Button held, ms (median ~95)."""
KEY_HOLD_MS = (65.0, 125.0)
"""Key held, ms (median ~95)."""
KEY_GAP_MS = (100.0, 200.0)
"""Between one key's release and the next key's press, ms (median ~150)."""
INSET = 0.25
"""Fraction of the visible box's width / height kept free on each side of the aim."""

Box = dict[str, float]


def draw(span: tuple[float, float], rng: random.Random | None = None) -> float:
    """A uniform draw from ``span`` (ms)."""
    return (rng or random).uniform(*span)


def visible_box(box: Box, viewport: dict[str, int] | None) -> Box:
    """``box`` (x, y, width, height; CSS px of the top-level viewport) cut to the viewport
    (``viewport``: width, height; None: not cut)."""
    if viewport is None:
        return dict(box)
    x0, y0 = max(box["x"], 0.0), max(box["y"], 0.0)
    x1 = min(box["x"] + box["width"], float(viewport["width"]))
    y1 = min(box["y"] + box["height"], float(viewport["height"]))
    return {"x": x0, "y": y0, "width": max(x1 - x0, 0.0), "height": max(y1 - y0, 0.0)}


def aim(box: Box, rng: random.Random | None = None) -> tuple[int, int]:
    """An integer point strictly inside ``box``, drawn around its centre within the middle
    ``1 - 2 * INSET`` of each side (a triangular draw: nearer the centre more often). A box
    too small to hold an integer point inside gets its centre's floor/ceil that lies in it.

    Raises:
        ValueError: ``box`` has no area.
    """
    r = rng or random
    if box["width"] <= 0 or box["height"] <= 0:
        raise ValueError("the target has no visible area")

    def axis(start: float, size: float) -> int:
        low, high = start + size * INSET, start + size * (1 - INSET)
        lo_i, hi_i = math.ceil(low), math.floor(high)
        if lo_i > hi_i:  # no integer in the middle band: any integer strictly inside
            lo_i, hi_i = math.floor(start) + 1, math.ceil(start + size) - 1
            if lo_i > hi_i:  # no integer strictly inside (a box under 1 px): the nearest
                return round(start + size / 2)
        return min(max(round(r.triangular(lo_i, hi_i)), lo_i), hi_i)

    return axis(box["x"], box["width"]), axis(box["y"], box["height"])


def _ease(t: float) -> float:
    """Ease-in-out (cubic): slow start, fast middle, slow arrival."""
    return 4 * t ** 3 if t < 0.5 else 1 - (-2 * t + 2) ** 3 / 2


def path(start: tuple[float, float], end: tuple[int, int], moves: int,
         rng: random.Random | None = None) -> list[tuple[int, int]]:
    """``moves`` integer points from near ``start`` to exactly ``end`` along a bowed curve
    with eased spacing; consecutive duplicates are nudged so every point is a move."""
    r = rng or random
    (x0, y0), (x1, y1) = start, end
    dx, dy = x1 - x0, y1 - y0
    dist = math.hypot(dx, dy)
    bow = r.uniform(-0.2, 0.2) * dist
    nx, ny = (-dy / dist, dx / dist) if dist else (0.0, 0.0)
    cx, cy = (x0 + x1) / 2 + nx * bow, (y0 + y1) / 2 + ny * bow
    points: list[tuple[int, int]] = []
    for i in range(1, moves + 1):
        t = _ease(i / moves)
        bx = (1 - t) ** 2 * x0 + 2 * (1 - t) * t * cx + t ** 2 * x1
        by = (1 - t) ** 2 * y0 + 2 * (1 - t) * t * cy + t ** 2 * y1
        points.append((round(bx), round(by)))
    points[-1] = end
    # A short distance rounds several points onto one pixel: approach from the side.
    for i in range(len(points) - 2, -1, -1):
        if points[i] == points[i + 1]:
            points[i] = (points[i + 1][0] - 1, points[i + 1][1])
    return points


def median(values: Sequence[float]) -> float:
    """The median of ``values`` (used by tests and the detection benchmark)."""
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


async def approach(page: Any, locator: Any, timeout_ms: int) -> dict[str, float]:
    """Scroll the target into view, aim inside its visible box, move the pointer there
    along :func:`path` and wait :data:`SETTLE_MS`. Returns the aim as a ``position`` for
    Playwright (offset from the border box's top-left, CSS px).

    Raises:
        PlaywrightError: the target went away or has no box (for map_playwright_errors).
    """
    from . import mouse  # the pointer's last position (no import cycle at module load)

    await locator.scroll_into_view_if_needed(timeout=timeout_ms)
    box = await locator.bounding_box(timeout=timeout_ms)
    if box is None:
        raise PlaywrightError("Element is not visible")
    seen = visible_box(box, page.viewport_size)
    try:
        x, y = aim(seen)
    except ValueError as exc:
        raise PlaywrightError("Element is outside of the viewport") from exc
    start = await mouse.last(page) or (0.0, 0.0)
    vp = page.viewport_size or {"width": 1 << 16, "height": 1 << 16}
    for px, py in path(start, (x, y), random.randint(*MOVES)):
        # The bow may leave the viewport (WebDriver BiDi refuses such a move): clamp.
        await page.mouse.move(min(max(px, 0), vp["width"] - 1), min(max(py, 0), vp["height"] - 1))
    mouse.moved(page, x, y)
    await asyncio.sleep(draw(SETTLE_MS) / 1000)
    return {"x": x - box["x"], "y": y - box["y"]}


async def key(keyboard: Any, ch: str) -> None:
    """One character as a held key then a gap: ``\\n``/``\\r`` Enter, ``\\t`` Tab, a key of
    Playwright's US layout by ``press(…, delay=hold)``; any other character is inserted as
    text (``keyboard.type``), as without humanize."""
    hold = draw(KEY_HOLD_MS)
    name = {"\n": "Enter", "\r": "Enter", "\t": "Tab"}.get(ch, ch)
    if name == ch and not (" " <= ch <= "~"):
        await keyboard.type(ch)
    else:
        await keyboard.press(name, delay=hold)
    await asyncio.sleep(draw(KEY_GAP_MS) / 1000)
