"""What each browser's input driver can deliver as trusted input, and the refusals that
keep the one rule (design.md, the one rule: a tool may fail, it never quietly becomes a different tool).

Playwright drives Firefox ESR over WebDriver BiDi, and three verbs do not survive that
path as what was asked (evidence and test names: docs/browsers.md):

- ``multiClick``: every Playwright mouse call is its own ``input.performActions`` chain and
  Firefox's remote agent resets its click counter at the start of each chain, so a double
  click arrives as two single clicks (``detail`` 1, no ``dblclick``).
- ``html5DragDrop``: once a native drag session starts, Firefox's remote agent ends it on
  mouseup without a ``drop`` (EventUtils ``_maybeEndDragSession``): ``dragstart`` and
  ``dragover`` fire, the drop never does.
- ``unicodeText``: characters with no key on the US layout (é, ✓, 日, emoji, Tab) are
  inserted by Playwright from script with an untrusted ``input`` event.

Chromium (CDP) delivers all three. Camoufox runs Playwright's Juggler protocol, which
passes click counts, native drags and ``Page.insertText`` to the browser; that is read
from Playwright's code, not run here (no Camoufox binary on this machine).

On a browser without the capability the driver refuses with ``TRUSTED_INPUT_UNAVAILABLE``
before anything is dispatched. Mouse input at a viewport point (``MouseAction``, the
vision tools) is held to the same rules: a click with ``clickCount`` > 1, and a ``drag``
whose start point is on a natively draggable element. Not covered: a draggable element
inside a closed shadow root (page script sees only its host), and a native drag built
from separate ``down`` / ``move`` / ``up`` ops.
"""

from __future__ import annotations

from typing import Any

from playwright.async_api import ElementHandle, Locator, Page

from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import (
    ClickAction,
    DragAction,
    FillAction,
    MouseAction,
    TypeAction,
)

DRIVER_CAPABILITIES: dict[str, dict[str, bool]] = {
    "chromium": {"trustedInput": True, "coordinateRoute": True, "multiClick": True,
                 "html5DragDrop": True, "unicodeText": True},
    "firefox": {"trustedInput": True, "coordinateRoute": False, "multiClick": False,
                "html5DragDrop": False, "unicodeText": False},
    "camoufox": {"trustedInput": True, "coordinateRoute": False, "multiClick": True,
                 "html5DragDrop": True, "unicodeText": True},
}
"""Per browser: ``trustedInput`` (input comes from the browser's own pipeline),
``coordinateRoute`` (the opt-in ``allowCoordinates`` click into a closed shadow root is
safe: its hit test sees what covers the target), and the three verb capabilities described
in the module docstring. ``coordinateRoute`` is false in Gecko: ``ShadowRoot.elementFromPoint``
there ignores elements outside that shadow tree, so extension/src/page/receipt.js's check
passes for a covered target (docs/browsers.md); reported, not enforced here."""

# Characters Playwright types as real key presses (its US layout); every other character
# goes through insertText, which is script on WebDriver BiDi. Tab is not among them.
KEYED_CHARACTERS = frozenset(chr(c) for c in range(0x20, 0x7F)) | {"\n", "\r"}

# Whether a drag from this element starts a native (HTML5) drag session: the nearest
# element with an explicit draggable attribute decides, else images and links drag.
_NATIVE_DRAG_JS = """el => {
  for (let n = el; n; n = n.parentElement || (n.getRootNode() && n.getRootNode().host) || null) {
    if (n.hasAttribute && n.hasAttribute('draggable')) return n.draggable;
    if (n.localName === 'img' || (n.localName === 'a' && n.hasAttribute('href'))) return true;
  }
  return false;
}"""

# The element at a viewport point of one frame's document, through open shadow roots
# (the same descent as extension/src/page/hittest.js; a closed root answers its host).
_ELEMENT_AT_JS = """([x, y]) => {
  let root = document, el = null;
  for (let depth = 0; depth < 32; depth++) {
    const next = root.elementFromPoint(x, y);
    if (!next || next === el) break;
    el = next;
    if (!el.shadowRoot) break;
    root = el.shadowRoot;
  }
  return el;
}"""

# Where a point of the parent's viewport falls in an <iframe>'s own viewport, CSS px:
# its content box starts past the border and the padding.
_INTO_FRAME_JS = """(el, [x, y]) => {
  const r = el.getBoundingClientRect(), cs = getComputedStyle(el);
  return [x - r.left - el.clientLeft - parseFloat(cs.paddingLeft),
          y - r.top - el.clientTop - parseFloat(cs.paddingTop)];
}"""

MAX_FRAME_DEPTH = 8
"""Frames descended into to find the element under a mouse point (as the extension's hit
test, extension/src/background/hittest.js)."""


def driver_capabilities(browser: str) -> dict[str, bool]:
    """The capabilities the driver of ``browser`` reports in its hello (shown by doctor).

    Raises:
        ValueError: unknown browser.
    """
    try:
        return dict(DRIVER_CAPABILITIES[browser])
    except KeyError:
        raise ValueError(
            f"Unsupported browser {browser!r}; choose one of {tuple(DRIVER_CAPABILITIES)}."
        ) from None


def _unavailable(browser: str, capability: str, what: str, extra: dict[str, Any]) -> E.TrustedInputUnavailable:
    return E.TrustedInputUnavailable(
        f"{browser} cannot deliver {what} as trusted input through Playwright's WebDriver "
        "BiDi path (see docs/browsers.md); nothing was sent to the page. Use a Chromium or "
        "Camoufox device for this step.",
        {"browser": browser, "capability": capability, **extra},
    )


async def element_at(page: Page, x: float, y: float) -> ElementHandle | None:
    """The element under a point of the tab's viewport, through frames and open shadow roots.

    Args:
        page: the tab's page.
        x, y: CSS px from the top-left corner of the top-level viewport (MouseAction).

    Returns:
        A handle on the innermost element found (the caller disposes of it), or None when
        nothing but the viewport is there. A cross-origin frame is entered too: Playwright
        reaches every frame of the page.
    """
    frame, point = page.main_frame, [x, y]
    for depth in range(MAX_FRAME_DEPTH + 1):
        handle = (await frame.evaluate_handle(_ELEMENT_AT_JS, point)).as_element()
        if handle is None:
            return None
        child = await handle.content_frame() if depth < MAX_FRAME_DEPTH else None
        if child is None:
            return handle
        point = await handle.evaluate(_INTO_FRAME_JS, point)
        await handle.dispose()
        frame = child
    return None  # not reached: the last depth returns its element


async def refuse_undeliverable(capabilities: dict[str, bool], browser: str, action: Any,
                               source: Locator | ElementHandle | None,
                               page: Page | None = None) -> None:
    """Raise before dispatch when ``action`` would not reach the page as asked.

    A ``MouseAction`` is held to the same rules as the verbs with a ref: a ``click`` with
    ``clickCount`` > 1 as a ClickAction's, a ``drag`` as a DragAction whose source is the
    element under its start point (:func:`element_at`, looked up only on a browser
    without ``html5DragDrop``).

    Args:
        capabilities: the driver's capabilities (:func:`driver_capabilities`).
        browser: name for the message, e.g. ``"firefox"``.
        action: the protocol action about to run.
        source: the target element (the drag source for a drag), if any: the driver's
            unique locator on it, or a handle.
        page: the tab's page; needed for a MouseAction ``drag`` (its start point is
            looked up there). Without it such a drag is not probed.

    Raises:
        TrustedInputUnavailable: ``details = {browser, capability, ...}``; for text only
            the count of the offending characters is given, never the text; a mouse
            drag's details add ``x``, ``y`` (its start point).
    """
    clicks = action.clickCount if isinstance(action, ClickAction) else (
        action.clickCount if isinstance(action, MouseAction) and action.op == "click" else 1)
    if clicks > 1 and not capabilities.get("multiClick", True):
        what = {2: "a double click", 3: "a triple click"}.get(clicks, f"{clicks} clicks")
        raise _unavailable(browser, "multiClick",
                           f"{what} (clickCount {clicks}; it would arrive as single clicks)",
                           {"clickCount": clicks})
    if isinstance(action, MouseAction) and action.op == "drag" and page is not None \
            and not capabilities.get("html5DragDrop", True):
        start = await element_at(page, action.x, action.y)
        if start is not None:
            try:
                native = await start.evaluate(_NATIVE_DRAG_JS)
            finally:
                await start.dispose()
            if native:
                raise _unavailable(browser, "html5DragDrop",
                                   "an HTML5 drag-and-drop (the element at the start point "
                                   "is draggable; the drop would never fire)",
                                   {"x": action.x, "y": action.y})
    if isinstance(action, (TypeAction, FillAction)) and not capabilities.get("unicodeText", True):
        text = action.text if isinstance(action, TypeAction) else action.value
        count = sum(1 for ch in text if ch not in KEYED_CHARACTERS)
        if count:
            raise _unavailable(browser, "unicodeText",
                               "characters without a key on the US layout (accents, symbols, "
                               "non-Latin scripts, emoji, Tab)", {"characters": count})
    if isinstance(action, DragAction) and source is not None \
            and not capabilities.get("html5DragDrop", True) \
            and await source.evaluate(_NATIVE_DRAG_JS):
        raise _unavailable(browser, "html5DragDrop",
                           "an HTML5 drag-and-drop (the source is draggable; the drop would "
                           "never fire)", {})
