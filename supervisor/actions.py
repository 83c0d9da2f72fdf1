"""Input verbs on one element, through Playwright's real mouse and keyboard.

Each verb receives a :class:`Target`: a Playwright ``Locator`` on the driver's
:func:`~supervisor.locator_engine.unique_selector`, so every step that resolves it fails
at once with the match count unless the locator matches exactly one element (design.md §4),
and uses input the browser itself generates, so pages see ``event.isTrusted === true``.
Playwright's actionability checks (attached, visible, stable, enabled, receives the
pointer) run before any mouse input; they wait up to ``timeout_ms`` and, when they fail,
nothing has been dispatched.

Verbs that read the element before typing into it (fill, select) use Playwright's
built-in reads (``is_editable``, ``get_attribute``, ``inner_html``, ``input_value``), which
run in the utility world like the actions; each read resolves the locator again, so a
page that replaces the element between two steps is read and typed into as it is then.
The few reads a built-in does not give (a date field's segment order, a multiple
select's options, scroll offsets, "is this a file input") run in an isolated world too,
through the driver's evaluation engine (:func:`isolated`, supervisor/isolated_eval.py):
page script cannot see or forge them. Only the opt-in script route (``allowScript``)
runs in the page's main world.

Coordinates are CSS px in the top-level viewport (Playwright's ``bounding_box``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from playwright.async_api import ElementHandle, Frame, Locator, Page
from playwright.async_api import Error as PlaywrightError

from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import (
    CheckAction,
    ClickAction,
    DragAction,
    FillAction,
    FocusAction,
    HoverAction,
    Point,
    PressAction,
    ScrollAction,
    TypeAction,
)

from . import fastpoint, humanize, keys, labels, mouse
from . import values as V
from .errors import NOT_A_FIELD, map_playwright_errors
from .focus import focus_element, read_field
from .focus_guard import Guard, focus_moved, surface_js
from .isolated_eval import evaluate_isolated
from .navwatch import NavigationWatch
from .select import (  # noqa: F401  (re-exported: verbs and their planners)
    _browser_name,
    select,
    select_commit_keys,
    select_keys,
    select_plan,
)
from .upload import upload  # a file input (or its label) only: supervisor/upload.py


@dataclass(frozen=True)
class PointerPath:
    """How a trusted click reaches and presses its target (issue 13, item 12).

    A bare Playwright click is one ``mousemove`` jump to the target then ``mousedown`` and
    ``mouseup`` ~1 ms apart, a pattern pages can tell from a person. ``steps`` > 1 moves
    the pointer there along that many points (Playwright's click ``steps``: evenly spaced
    from where the pointer is); ``hold_ms`` holds the button for a time drawn uniformly
    from that range (Playwright's click ``delay``).

    Cost, measured on headless Chromium (docs/browsers.md, "Pointer path"): Chromium
    dispatches mouse moves aligned to animation frames, so every extra step costs one
    frame (~16 ms at 60 Hz), and any hold costs ~16 ms more than the hold itself. The
    default therefore keeps a bare click's cost (``steps`` 1, no hold: today's input);
    ``TRUSTBRIDGE_CLICK_STEPS`` and ``TRUSTBRIDGE_CLICK_HOLD_MS`` (``"40"`` or ``"30-90"``)
    set it for a driver (:meth:`from_env`).

    Attributes:
        steps: pointer moves to the target, 1 or more.
        hold_ms: (low, high) ms between mousedown and mouseup; (0, 0) for none.
    """

    steps: int = 1
    hold_ms: tuple[float, float] = (0.0, 0.0)

    def hold(self) -> float | None:
        """A hold to use now, ms, or None for none."""
        low, high = self.hold_ms
        return random.uniform(low, high) if high > 0 else None

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> PointerPath:
        """The path ``TRUSTBRIDGE_CLICK_STEPS`` / ``TRUSTBRIDGE_CLICK_HOLD_MS`` ask for.

        Raises:
            ValueError: a value that is not a number or range of numbers ≥ 0.
        """
        steps = int(env.get("TRUSTBRIDGE_CLICK_STEPS") or 1)
        low, _, high = (env.get("TRUSTBRIDGE_CLICK_HOLD_MS") or "0").partition("-")
        hold = (float(low), float(high or low))
        if steps < 1 or hold[0] < 0 or hold[1] < hold[0]:
            raise ValueError("TRUSTBRIDGE_CLICK_STEPS ≥ 1 and TRUSTBRIDGE_CLICK_HOLD_MS "
                             "'N' or 'LOW-HIGH' ms ≥ 0 expected")
        return cls(steps=steps, hold_ms=hold)

    def click_options(self) -> dict[str, Any]:
        """Keyword arguments of Playwright's click for this path (none for a bare click)."""
        options: dict[str, Any] = {}
        if self.steps > 1:
            options["steps"] = self.steps
        if (hold := self.hold()) is not None:
            options["delay"] = hold
        return options


@dataclass(frozen=True)
class Target:
    """The one element an action acts on.

    Attributes:
        locator: ``frame.locator(unique_selector(css))``.
        frame: the element's frame.
        selector: the unique selector itself.
        trusted_insert_text: ``page.keyboard.insert_text`` reaches the page as trusted
            input: Chromium (CDP ``Input.insertText``) and Camoufox (Juggler
            ``Page.insertText``); not Firefox over WebDriver BiDi, where Playwright inserts
            the text from script (``window.__pw_bidiInsertText``).
        pointer: how a click moves and presses (:class:`PointerPath`).
        allow_script: the agent's ``allowScript`` opt-in: a control no trusted input can
            set is set by script (supervisor/values.py ``set_by_script``).
        bidi: the browser is driven over WebDriver BiDi (Firefox): every Playwright mouse
            call is one ``input.performActions``, and ``mouse.click`` sends its three
            (move, down, up) at once, which Firefox answers in ~56 ms against ~27 ms for
            the same three sent one after the other (supervisor/fastpoint.py ``send``).
    """

    locator: Locator
    frame: Frame
    selector: str
    trusted_insert_text: bool
    pointer: PointerPath = PointerPath()
    allow_script: bool = False
    bidi: bool = False
    humanize: bool = False
    """A person's rhythm (supervisor/humanize.py): clicks aim inside the visible box along
    an eased curve and hold the button; typed keys are held and spaced."""
    dispatched: Callable[[], None] = lambda: None
    """Called once a verb's input has all reached the page, before it reads the result
    back (the driver's ``driver.dispatched`` signal, bridge/dispatch_signals.py: the
    bridge may start the page-state snapshot then). Verbs that do not call it signal
    when they return. Calling it more than once is harmless."""

    @property
    def page(self) -> Page:
        return self.frame.page


async def dispose_quietly(handle: ElementHandle) -> None:
    """Release a handle; a page or frame already gone is not an error."""
    with contextlib.suppress(PlaywrightError):
        await handle.dispose()


async def click(t: Target, a: ClickAction, timeout_ms: int) -> dict[str, Any]:
    """Press and release ``a.button`` ``a.clickCount`` times at the centre or ``a.position``.

    A plain left click on a checkbox or radio ``<input>`` that cannot take the click
    itself (no box, hidden, covered at its centre) while a label of it is shown clicks
    that label instead (supervisor/labels.py) and checks the state flipped (a radio: is
    checked); the result says ``viaLabel``.

    Raises:
        BadRequest: ``a.position`` lies outside the target's box (``details.box``: its
            ``width``/``height``, CSS px); nothing was dispatched. Without this check
            Playwright waits the whole timeout for the point to hit the target and ends
            with "<html> intercepts pointer events".
        ElementValueNotSet: the label was clicked and the control's state did not change.
    """
    if a.position is None and a.button == "left" and a.clickCount == 1 and not a.modifiers:
        # A checkbox or radio painted over by its label: a person clicks the label.
        route = await labels.plan(t, timeout_ms)
        if route is not None:
            return await labels.click_label(t, route, True if route["radio"] else None,
                                            timeout_ms)
    if a.position is not None:
        await check_position(t, a.position, timeout_ms)
    elif t.humanize:
        await human_click(t, a, timeout_ms)
        return {}
    await t.locator.click(
        button=a.button,
        click_count=a.clickCount,
        modifiers=a.modifiers or None,
        position={"x": a.position.x, "y": a.position.y} if a.position else None,
        timeout=timeout_ms,
        **t.pointer.click_options(),
    )
    return {}


async def human_click(t: Target, a: ClickAction, timeout_ms: int) -> None:
    """The humanized click (supervisor/humanize.py): an eased path of integer moves from
    the pointer's last position to an integer point inside the target's visible box, a
    pause, then Playwright's click at that point (its hit test refuses a covered point:
    ELEMENT_OBSCURED) with the button held :data:`~supervisor.humanize.PRESS_MS`."""
    position = await humanize.approach(t.page, t.locator, timeout_ms)
    await t.locator.click(
        button=a.button, click_count=a.clickCount, modifiers=a.modifiers or None,
        position=position, timeout=timeout_ms, delay=humanize.draw(humanize.PRESS_MS))


async def check_position(t: Target, at: Point, timeout_ms: int) -> None:
    """Refuse a click point outside the target's bounding box (one ``bounding_box`` call).

    Args:
        at: the offset from the box's top-left corner, CSS px.

    Raises:
        BadRequest: the point is outside ``[0, width] x [0, height]`` (``details.box``,
            ``details.position``). A target with no box (hidden) is left to the click,
            whose actionability waits say why.
    """
    box = await t.locator.bounding_box(timeout=timeout_ms)
    if box is None or (0 <= at.x <= box["width"] and 0 <= at.y <= box["height"]):
        return
    size = {"width": round(box["width"], 2), "height": round(box["height"], 2)}
    raise E.BadRequest(
        f"The click position ({at.x:g}, {at.y:g}) is outside the element's box, "
        f"{size['width']:g} x {size['height']:g} CSS px; nothing was clicked.",
        {"box": size, "position": {"x": at.x, "y": at.y}},
        next_step="Give a position inside the box (offset from its top-left corner, CSS px), "
        "or leave it out to click the centre.")


async def hover(t: Target, _a: HoverAction, timeout_ms: int) -> dict[str, Any]:
    await t.locator.hover(timeout=timeout_ms)
    return {}


async def focus(t: Target, _a: FocusAction, timeout_ms: int) -> dict[str, Any]:
    await focus_element(t, timeout_ms)
    return {}


def _not_editable() -> E.ElementNotEditable:
    return E.ElementNotEditable(
        "The target does not accept text (readonly, disabled or not a text field); "
        "nothing was typed.")


async def _is_editable(t: Target, timeout_ms: int) -> bool:
    """Playwright's ``editable`` state (not disabled, not readonly, native or ARIA); false
    for an element that takes no text at all."""
    try:
        return await t.locator.is_editable(timeout=timeout_ms)
    except PlaywrightError as exc:  # "Element is not an <input>, <textarea> or <select>"
        if not NOT_A_FIELD.search(str(exc)):
            raise
        return False


async def _readable_value(t: Target, timeout_ms: int) -> str | None:
    """The field's value (``<input>``, ``<textarea>``, ``<select>``), or None when the
    element has none to read (contenteditable); a built-in read, in the utility world."""
    try:
        return await t.locator.input_value(timeout=timeout_ms)
    except PlaywrightError as exc:
        if not NOT_A_FIELD.search(str(exc)):
            raise
        return None


FOCUS_KINDS = frozenset({None, "", "text", "search", "email", "url", "tel", "password"})
"""Field types fill and type always focus right after reading them (never a range, colour,
date-like or number field, which take another route or a check first): the read focuses
them in the same round trip (supervisor/focus.py)."""


class _Read(NamedTuple):
    """What :func:`_field` read of an editable target."""

    kind: str | None
    """``type`` attribute lower-cased, or None."""
    before: str | None
    """Its value, or None when it has none to read (contenteditable)."""
    focused: bool
    """The target is one of FOCUS_KINDS and was focused by the read."""
    maxlength: int = -1
    """A native field's ``maxLength`` (-1: none, or not a native field)."""


async def _field(t: Target, timeout_ms: int, total: int = 0,
                 guard: Guard | None = None) -> _Read:
    """What a verb about to type reads of its target (:class:`_Read`).

    One isolated read for a native input or textarea (supervisor/focus.py); Playwright's
    three built-in reads for anything else.

    Args:
        total: characters the verb will type (for the error below).
        guard: armed in the same read when the read focuses the target
            (supervisor/focus_guard.py).

    Raises:
        ElementNotEditable: readonly, disabled or not a text field (nothing was focused).
        ElementValueNotSet: ``cause: "focusMoved"``: the page's focus handler moved the
            focus elsewhere as the read focused the target; nothing was typed
            (supervisor/focus_guard.py).
    """
    field = await read_field(t, timeout_ms, FOCUS_KINDS, guard)
    if field is not None:
        if not field.editable:
            raise _not_editable()
        if field.away is not None:
            raise focus_moved(field.away, 0, total)
        return _Read(field.kind, field.value, field.focused, field.maxlength)
    editable, kind, before = await asyncio.gather(
        _is_editable(t, timeout_ms), t.locator.get_attribute("type", timeout=timeout_ms),
        _readable_value(t, timeout_ms))
    if not editable:
        raise _not_editable()
    return _Read((kind.strip().lower() if kind is not None else None), before, False)


DATE_KINDS = frozenset({"date", "time", "datetime-local", "month", "week"})
"""Input types whose value is not the text typed into them: the browser's field takes
keys per segment, in the locale's order (typing the ISO text ``2024-03-15`` into a date
field gave ``40315-02-02``). ``type`` sets them as ``fill`` does (:func:`_fill_datelike`)
and reads the value back."""


async def type_text(t: Target, a: TypeAction, timeout_ms: int) -> dict[str, Any]:
    """Focus, then one trusted key event sequence per character; Enter if ``submit``.

    ``timeout_ms`` bounds reaching and focusing the target; the typing itself has no
    deadline once started, so a long text is never cut in the middle and reported as a
    timeout (the bridge allows time per character: bridge/executor.py driver_timeout_s).
    Keys stop at a document change (supervisor/values.py ``type_keys``). A range or
    colour input takes the text as its value, as :func:`fill` sets it; a date-like input
    (:data:`DATE_KINDS`) too, its value read back.

    Every key is guarded (supervisor/focus_guard.py): it goes into the target, or into
    the empty field the page moved the focus to after a character (multi-box codes: the
    text is then read back from the boxes together); a key aimed anywhere else is
    cancelled before it changes anything, and so is every later one. After a Tab in the
    text the keys go where the Tab took the focus, as asked.

    A focusable element that is not a text field (a canvas, a terminal surface, a grid
    that handles keys) gets the keys, as Playwright's ``pressSequentially`` gives them
    (:func:`_type_keys_only`).

    Raises:
        ElementNotEditable: readonly or disabled field, or an element that cannot take
            the focus; nothing was typed.
        BrowserOperationUncertain: the document changed before the last key
            (``details.sent``, ``details.total``).
        ElementValueNotSet: a readable field kept its value although the text had
            characters to insert (``cause: "unchanged"``), or lost or changed them
            (``truncated``, ``rewritten``; :func:`_check_typed`); lengths only. ``cause:
            "focusMoved"``: the page moved the focus to another element (not an empty
            field after a character), named in ``details``; no key changed it.

    Returns:
        ``{}``; ``{"valueCheck": str}`` when a Tab moved the focus out of the target
        part way (only the text typed before it was checked), or the page moved it on
        through other fields (``focusFollowed``: ``{"fields": n, "names": [...]}``);
        ``{"keysOnly": True, "valueCheck": str}`` for an element with no value.
    """
    guard = Guard(t, timeout_ms)
    if t.humanize:
        await _focus_by_click(t, timeout_ms)
    try:
        kind, before, focused, _ = await _field(t, timeout_ms, len(a.text), guard)
    except E.ElementNotEditable:
        extra = await _type_keys_only(t, a.text, timeout_ms)
        if a.submit:
            await t.page.keyboard.press("Enter")
        return extra
    if kind == "range" or V.script_only(kind, _browser_name(t.page)):
        extra = await _set_value(t, kind, a.text, timeout_ms)
    elif kind in DATE_KINDS:
        extra = await _fill_datelike(t, a.text, timeout_ms)
    else:
        was = await _editable_text(t, timeout_ms) if before is None else None
        if not focused:
            await focus_element(t, timeout_ms)
        if not guard.armed:
            await guard.arm(len(a.text))
        try:
            extra = await _typed_and_checked(t, a, kind, before, was, guard, timeout_ms)
        finally:
            await guard.release()
    if a.submit:
        await t.page.keyboard.press("Enter")
    return extra


_EMPTY_UNFOCUSED_FIELD_JS = """(el) => el !== document.activeElement
  && (el.localName === 'textarea' || (el.localName === 'input' && el.value !== undefined))
  && el.value === '' && !el.disabled && !el.readOnly"""


async def _focus_by_click(t: Target, timeout_ms: int) -> None:
    """Humanize: an empty text field without the focus gets it from a humanized click, as
    a person gives it (a page can tell a focus with no pointer before it). A field with
    text keeps the script focus of :func:`type_text`, so the caret goes where it goes
    without humanize; anything else is left to the usual path."""
    if await evaluate_isolated(t.frame, t.selector, _EMPTY_UNFOCUSED_FIELD_JS, timeout_ms / 1000):
        await human_click(t, ClickAction(), timeout_ms)


async def _typed_and_checked(t: Target, a: TypeAction, kind: str | None, before: str | None,
                             was: str | None, guard: Guard, timeout_ms: int
                             ) -> dict[str, Any]:
    """:func:`type_text`'s keys into a text field and the read-back: the guard's outcome
    first (a key cancelled because the page moved the focus: ``focusMoved``), then the
    boxes the page moved the focus through, or the target's value."""
    extra: dict[str, Any] = {}
    with NavigationWatch(t.frame) as nav:
        await V.type_keys(t, a.text, nav)
        landed = V.check_after_keys(nav, t.frame, a.text)
        if landed:
            await _finish_guard(guard, nav, t, a.text)
        if landed and guard.fields is not None:
            note = _check_typed(before or "", "".join(b["value"] for b in guard.fields),
                                a.text, kind)
            if note:
                extra["valueCheck"] = note
            extra.update(_followed(guard.fields))
        elif landed and before is None and _inserts(a.text) and "\t" not in a.text:
            await _check_editable(t, a.text, timeout_ms, was)
            V.check_after_keys(nav, t.frame, a.text, enter_ends=False)
        elif landed and before is not None and _inserts(a.text):
            after = await _readable_value(t, timeout_ms)
            # read from a document going away?
            V.check_after_keys(nav, t.frame, a.text, enter_ends=False)
            typed = await _typed_into_target(t, a.text, timeout_ms)
            if typed != a.text:  # said, never a false "rewritten" (issue: Tab)
                extra["valueCheck"] = (
                    f"partial: the focus left the target at a Tab; only the first "
                    f"{len(typed)} of {len(a.text)} characters went into it and were "
                    "checked, the rest was typed wherever the focus went")
            if _inserts(typed) and after == before:
                # Read from the next document before its navigation showed (a loaded
                # machine): the keys went to the old one. Same grace as below.
                await asyncio.sleep(NAV_GRACE_S)
                V.check_after_keys(nav, t.frame, a.text, enter_ends=False)
                raise V.not_set(a.text, after, "unchanged", secret=True)
            if _inserts(typed) and kind in TEXT_KINDS and after is not None:
                try:
                    note = _check_typed(before, after, typed, kind)
                    if note and "valueCheck" not in extra:
                        extra["valueCheck"] = note
                except E.ElementValueNotSet:
                    # Keys a document on its way out dropped look like a short field:
                    # give the navigation a moment to show before blaming the field.
                    await asyncio.sleep(NAV_GRACE_S)
                    V.check_after_keys(nav, t.frame, a.text, enter_ends=False)
                    raise
    return extra


async def _fill_datelike(t: Target, text: str, timeout_ms: int) -> dict[str, Any]:
    """``type`` into a date-like field (:data:`DATE_KINDS`): the field's value becomes
    ``text`` as :func:`fill` sets it (a date per segment in the locale's order, a time by
    its keys) and is read back; typing "after the content" has no meaning in a field of
    segments. An empty text types nothing.

    Raises:
        As :func:`fill`: BadRequest (a date not ``YYYY-MM-DD``), ElementValueNotSet (the
        field holds another value).
    """
    if not text:
        return {}
    return await fill(t, FillAction(value=text), timeout_ms)


def _followed(boxes: list[dict[str, str]]) -> dict[str, Any]:
    """The result fields of a text the page spread over several fields."""
    names = [b["name"] for b in boxes]
    return {"focusFollowed": {"fields": len(boxes), "names": names},
            "valueCheck": f"the page moved the focus on field by field as the keys came; "
                          f"the text went into {len(boxes)} fields ("
                          + ", ".join(repr(n) for n in names) + "), read back together"}


async def _type_keys_only(t: Target, text: str, timeout_ms: int) -> dict[str, Any]:
    """Type into a focusable element that is not a text field (a ``<canvas>`` game, a
    terminal surface, a grid): focus it and send the keys, guarded
    (supervisor/focus_guard.py), as Playwright's ``pressSequentially`` delivers them to
    the focused element. There is no value to read back: the result says so.

    Raises:
        ElementNotEditable: a native ``<input>``, ``<textarea>`` or ``<select>`` that is
            readonly or disabled, a disabled element, or one that cannot take the focus;
            nothing was typed.
        ElementValueNotSet: ``focusMoved`` (see :func:`type_text`).
    """
    state = await isolated(t, surface_js(), timeout_ms)
    if not isinstance(state, dict) or state.get("field") or state.get("disabled"):
        raise _not_editable()
    if not state.get("on"):
        raise E.ElementNotEditable(
            "The target is not a text field and cannot take the focus, so typed keys "
            "would go elsewhere; nothing was typed.",
            {"focusedTag": (state.get("where") or {}).get("tag")},
            next_step="Type into a focusable element (a textbox, or the element that "
                      "handles keys), or press keys on the page with the press verb.")
    guard = Guard(t, timeout_ms, follow=False)
    await guard.arm(len(text))
    try:
        with NavigationWatch(t.frame) as nav:
            await V.type_keys(t, text, nav)
            if V.check_after_keys(nav, t.frame, text):
                await _finish_guard(guard, nav, t, text)
    finally:
        await guard.release()
    t.dispatched()
    return {"keysOnly": True,
            "valueCheck": f"none: the target is not a text field; {len(text)} keys were "
                          "delivered to it with trusted input; it has no value to read back"}


NAV_GRACE_S = 0.15
"""How long a field that looks short after typing is watched for a navigation that would
explain it (keys sent to a document being unloaded are dropped), s; only on that failure."""
TEXT_KINDS = frozenset({None, "text", "search", "password", "tel", "url", "email"})
"""Field types whose value after typing must hold every typed character, in order
(``None``: a textarea or an input without a type)."""


async def _finish_guard(guard: Guard, nav: NavigationWatch, t: Target, text: str) -> None:
    """``guard.finish`` after every key landed. A read that fails because the document went
    away meanwhile (the page navigated right after the last key) is
    BROWSER_OPERATION_UNCERTAIN with every character sent, as the value read-backs say it,
    not the read's own error: a refusal there would tell the agent no key landed, and it
    would type them all again (tests/e2e/test_truthful_input.py, typing cut by navigation).

    Raises:
        ElementValueNotSet: the guard stopped keys aimed elsewhere (``focusMoved``).
        BrowserOperationUncertain: the read met a document change.
    """
    try:
        await guard.finish(len(text))
    except E.ElementValueNotSet:
        raise
    except Exception as exc:
        await asyncio.sleep(NAV_GRACE_S)  # the navigation's commit may be reported late
        V.check_after_keys(nav, t.frame, text, enter_ends=False)
        if isinstance(exc, E.BrowserDocumentChanged) or "context was destroyed" in str(exc):
            raise E.BrowserOperationUncertain(
                f"The document changed just after all {len(text)} characters were sent; "
                "the field cannot be read back. Not repeated.",
                {"sent": len(text), "total": len(text)},
                next_step="Take a new snapshot and check the field before typing "
                "again.") from exc
        raise


KEY_CHARS = "\n\r\t"
"""Characters TypeAction types as keys (Enter, Tab), not as text (bridge/protocol/models.py
``TypeAction``)."""
_NO_KEY_CHARS = str.maketrans("", "", KEY_CHARS)


def _inserts(text: str) -> bool:
    """``text`` has a character typed as text input (not only Enter/Tab keys)."""
    return any(ch not in KEY_CHARS for ch in text)


async def _typed_into_target(t: Target, text: str, timeout_ms: int) -> str:
    """The part of ``text`` that went into the target: all of it, or, when a Tab in it
    moved the focus away (the contract of TypeAction's ``\t``), the part before the first
    Tab; the rest went to the element that took the focus. One isolated read, only for a
    text with a Tab."""
    if "\t" not in text:
        return text
    kept = await isolated(t, "el => el.matches(':focus-within')", timeout_ms)
    return text if kept else text.split("\t", 1)[0]


# Where the keys went, for an element with no value to read: the element is editable
# content (contenteditable), whether the focus is still in it (through open shadow roots)
# and its text; `activeTag`: the element that has the focus.
_EDITABLE_STATE_JS = """el => {
  let a = document.activeElement;
  for (let i = 0; a && a.shadowRoot && a.shadowRoot.activeElement && i < 32; i++) a = a.shadowRoot.activeElement;
  return { editable: !!el.isContentEditable, within: el.matches(':focus-within'),
           text: String(el.innerText ?? el.textContent ?? '').slice(0, 200000),
           activeTag: a ? a.localName : null };
}"""

_SPACES = re.compile(r"[\s\u00a0]+")


def _plain(text: str) -> str:
    """Text compared for an editable element: no zero-width characters, runs of spaces,
    line breaks and tabs as one space (editors wrap lines in blocks and use nbsp)."""
    return _SPACES.sub(" ", text.replace("\u200b", "").replace("\ufeff", "")).strip()


async def _editable_text(t: Target, timeout_ms: int) -> str | None:
    """The text of a ``contenteditable`` target before the keys (:func:`_plain`), or None
    when the target is not editable content (one isolated read, only for targets with no
    value to read)."""
    state = await isolated(t, _EDITABLE_STATE_JS, timeout_ms)
    if not isinstance(state, dict) or not state.get("editable"):
        return None
    return _plain(str(state.get("text") or ""))


async def _check_editable(t: Target, text: str, timeout_ms: int,
                          was: str | None = None) -> None:
    """An element with no value to read (``contenteditable``): the keys went into it when
    the focus is still in it, or its text changed since before the keys (``was``, from
    :func:`_editable_text`) and holds ``text``; when the focus left it and its text is
    unchanged or does not hold ``text``, they went elsewhere (a page that moves the focus
    on focus: a review's probe typed into a hidden search field and was answered done;
    a second probe's editor already held the typed word). An editor that reformats what
    it is given (Markdown, autocorrect) keeps the focus, so it is never blamed. Not for
    an ARIA textbox without editable content: its text may be drawn from a field
    elsewhere.

    Raises:
        ElementValueNotSet: ``cause: "unchanged"``, ``details.focusedTag``: where the
            focus went (lengths only, never the text).
    """
    state = await isolated(t, _EDITABLE_STATE_JS, timeout_ms)
    if not isinstance(state, dict) or not state.get("editable") or state.get("within"):
        return
    wanted = _plain(text)
    now = _plain(str(state.get("text") or ""))
    if not wanted or (wanted in now and now != was):
        return
    where = state.get("activeTag")
    err = V.not_set(text, "", "unchanged", secret=True)
    raise E.ElementValueNotSet(
        "The keys were delivered, but not into the target: the focus left it "
        f"(to <{where or 'nothing'}>) and its text did not change to hold what was typed.",
        {**err.details, "focusedTag": where},
        next_step="Take a snapshot: the page moved the focus when the target got it. "
                  "Act on the element that took the focus, or click the target first.")


def _check_typed(before: str, after: str, text: str, kind: str | None) -> str | None:
    """A text field that took fewer characters than were typed (``maxlength``) or holds
    them changed (a page that uppercases or reformats) did not take the text: typing key
    by key promises the characters were inserted, wherever the caret was.

    Enter and Tab are keys whose effect depends on the field: Enter inserts a line break
    in a textarea and nothing in an ``<input>``; a Tab that keeps the focus may insert a
    tab character (Chromium does for the key Playwright's ``keyboard.type("\t")`` sends).
    So the comparison leaves line breaks and tabs out of both sides: what they did is not
    judged, the text characters are.

    Args:
        before, after: the field's value before and after typing.
        text: the part of the typed text that went into the field (see
            :func:`_typed_into_target`).

    A field whose page formatted the text (every typed character kept, in order, with the
    page's own between them: an input mask; :func:`V.formatted`) took it: the note for the
    result's ``valueCheck`` is returned instead of an error.

    Returns:
        None, or the ``valueCheck`` note of a formatted field.

    Raises:
        ElementValueNotSet: ``truncated`` or ``rewritten`` (lengths only).
    """
    inserted = text.translate(_NO_KEY_CHARS)
    seen, had = after.translate(_NO_KEY_CHARS), before.translate(_NO_KEY_CHARS)
    if kind in ("email", "url"):  # the browser drops white space in these
        inserted, seen = "".join(inserted.split()), "".join(seen.split())
    if len(seen) < len(had) + len(inserted):
        raise V.not_set(before + inserted, after, "truncated", secret=True)
    if inserted not in seen:
        if V.formatted(inserted, seen, had):
            return V.FORMATTED_NOTE.format(n=len(after))
        raise V.not_set(before + inserted, after, "rewritten", secret=True)
    return None


async def _set_value(t: Target, kind: str, value: str, timeout_ms: int) -> dict[str, Any]:
    """A range input by keys; a control with no trusted route by script if allowed."""
    if kind != "range":
        return await V.set_by_script(t, value, kind, t.allow_script, timeout_ms)
    lo, hi, step, current = await asyncio.gather(
        *(t.locator.get_attribute(n, timeout=timeout_ms) for n in ("min", "max", "step")),
        t.locator.input_value(timeout=timeout_ms))
    keys = V.range_keys(value, current, lo, hi, step)
    if keys:
        await t.locator.press(keys[0], timeout=timeout_ms)  # focus, then the first key
    for key in keys[1:]:
        await t.page.keyboard.press(key)
    after = await t.locator.input_value(timeout=timeout_ms)
    if cause := V.value_cause(value, after, current, "range"):
        raise V.not_set(value, after, cause, secret=False)
    return {}


# Input types whose text a trusted insertText replaces as one edit (Playwright's own fill
# list, ``kInputTypesToTypeInto``); None is a <textarea>, a contenteditable element or an
# input without a type attribute.
_INSERT_TEXT_TYPES = frozenset({None, "", "text", "search", "email", "url", "tel",
                                "password", "number"})


async def fill(t: Target, a: FillAction, timeout_ms: int) -> dict[str, Any]:
    """Replace the field's content in one edit, never setting ``.value`` from script.

    What the page sees, all with ``isTrusted === true``:

    - Chromium and Camoufox, text-like fields (input types text, search, email, url, tel,
      password, number; ``<textarea>``; contenteditable): ``focus``; the keys of
      ``ControlOrMeta+A`` (``keydown``/``keyup`` of Control and ``a``) selecting all; then
      one ``beforeinput``/``input`` with ``inputType: "insertText"`` and ``data`` = the
      value but its last character, replacing the selection (CDP ``Input.insertText``,
      what Playwright's own ``fill`` does after selecting); then the last character's key
      (``keydown``/``keypress``/``beforeinput``/``input``/``keyup``) when it is printable
      ASCII: a page that reacts to key events only (a filter on ``keyup``) sees a person's
      last keystroke with the whole value in the field (tests/e2e/test_typing_truth.py
      ::test_fill_reaches_a_page_that_listens_to_keys_only). No key events for the other
      characters.
    - A value longer than the field's ``maxlength`` is typed key by key: one box of a
      multi-box code, whose page moves the focus box to box; the boxes are read back
      together (``focusFollowed``).
    - Every key and edit is guarded (supervisor/focus_guard.py): one the page aimed at
      another element by moving the focus (a focus thief) is cancelled before it changes
      anything there, and the fill fails ``focusMoved``.
    - Firefox (WebDriver BiDi), and other input types everywhere: ``focus``,
      ``ControlOrMeta+A``, then ``keydown``/``keypress``/``beforeinput``/``input``/``keyup``
      per character (the first replaces the selection). Playwright's ``insertText`` and
      ``fill`` on BiDi insert from script: an untrusted ``input`` event (design.md §9).
    - Empty ``a.value``: ``ControlOrMeta+A`` then ``Delete`` (one ``deleteContentForward``
      edit).
    - A native ``<input type=date>`` takes ``YYYY-MM-DD`` and is typed segment by segment
      in the page locale's order.

    The field is never emptied as a separate edit: masked inputs parse every intermediate
    value and an empty one can corrupt them (tests/e2e/test_regressions_input.py
    ::test_fill_never_empties_a_masked_field_and_types_a_native_date). A page that needs a key
    event per character (autocomplete, key-driven masks) wants the ``type`` verb.

    - ``<input type=range>``: keys (Home / End / arrows by ``step``) from its value to
      ``a.value``; ``<input type=color>``: no trusted route, refused unless the agent
      allowed script (supervisor/values.py).

    The value is read back wherever the field has one and compared with ``a.value`` after
    the browser's own sanitisation; a contenteditable target, which has none, must still
    have the focus or show the value (:func:`_check_editable`).

    Raises:
        ElementNotEditable: readonly, disabled or not a text field; nothing was typed.
        BadRequest: a date field given something other than ``YYYY-MM-DD``, a number
            field given something that is not a number, a range value off its steps
            (nothing typed).
        ElementValueNotSet: the field holds something else afterwards (``cause``
            unchanged / truncated / rewritten; lengths only, never the text), or
            ``focusMoved``: the page moved the focus to another element, named in
            ``details`` (``focusedTag``, ``focusedName``), whose content no key changed.
        TrustedInputUnavailable: a colour input without ``allowScript``.
        BrowserOperationUncertain: the document changed before the value was all in.

    Returns:
        ``{}``, or ``focusFollowed`` and ``valueCheck`` when the page moved the focus on
        through several fields.
    """
    # Built-in reads run in Playwright's utility world; a script on the element would make
    # Playwright set up its injected script in the page's main world too (~40 ms once per
    # document).
    guard = Guard(t, timeout_ms)
    kind, before, focused, maxlength = await _field(t, timeout_ms, len(a.value), guard)
    if kind == "range" or V.script_only(kind, _browser_name(t.page)):
        return await _set_value(t, kind, a.value, timeout_ms)
    if kind == "number" and a.value.strip() and not _is_number(a.value):
        # The browser would drop the text and leave the field empty while the fill
        # reported success (Playwright's fill refuses the same way).
        raise E.BadRequest("A number field takes a number; nothing was typed.",
                           {"inputType": "number"})
    if kind == "date" and a.value:
        return await _fill_date(t, a.value, timeout_ms)
    was = await _editable_text(t, timeout_ms) if before is None and a.value else None
    if not focused:
        await focus_element(t, timeout_ms)
    if not guard.armed:
        await guard.arm(len(a.value))
    try:
        return await _fill_guarded(t, a, kind, before, maxlength, was, guard, timeout_ms)
    finally:
        await guard.release()


async def _fill_guarded(t: Target, a: FillAction, kind: str | None, before: str | None,
                        maxlength: int, was: str | None, guard: Guard,
                        timeout_ms: int) -> dict[str, Any]:
    """:func:`fill`'s keys and read-back once the target has the focus and ``guard`` is
    armed: the guard's outcome first (``focusMoved``), then the boxes the page moved the
    focus through, or the target's value."""
    keyboard = t.page.keyboard
    # After the focus, as locator.press does it; its four events sent at once
    # (supervisor/keys.py). The text goes only once all four were answered: CDP's
    # Input.insertText is not ordered after key events still on their way.
    await keys.press(t.page, "ControlOrMeta+A", bidi=t.bidi)
    # One edit, where the browser inserts trusted text, unless the value is longer than
    # the field's maxlength (one box of a multi-box code: typed key by key, following the
    # page's focus box to box); the last character as its key, so pages that listen to
    # key events (a filter on keyup) see a person's last keystroke with the value in.
    one_edit = t.trusted_insert_text and kind in _INSERT_TEXT_TYPES \
        and not 0 <= maxlength < len(a.value)
    head, last = _split_last_key(a.value) if one_edit else (a.value, "")
    extra: dict[str, Any] = {}
    with NavigationWatch(t.frame) as nav:
        if not a.value:
            await keyboard.press("Delete")
        elif one_edit:
            if head:
                await keyboard.insert_text(head)  # one edit: it landed whole
            if last and not V.changed(nav, t.frame):
                await keyboard.type(last)
        else:
            await V.type_keys(t, a.value, nav)
        t.dispatched()  # the read-back below only reads
        landed = V.check_after_keys(nav, t.frame, a.value, enter_ends=not one_edit)
        if landed:
            await _finish_guard(guard, nav, t, a.value)
        boxes = guard.fields if landed else None
        if boxes is not None:
            joined = "".join(b["value"] for b in boxes)
            if cause := V.value_cause(a.value, joined, before, kind):
                if cause == "rewritten" and V.formatted(a.value, joined, before):
                    extra["valueCheck"] = V.FORMATTED_NOTE.format(n=len(joined))
                else:
                    raise V.not_set(a.value, joined, cause, secret=True)
            extra.update(_followed(boxes))
        elif landed and before is None and a.value:
            await _check_editable(t, a.value, timeout_ms, was)
            V.check_after_keys(nav, t.frame, a.value, enter_ends=False)
        elif landed and before is not None:
            after = await _readable_value(t, timeout_ms)
            # read from a document going away?
            V.check_after_keys(nav, t.frame, a.value, enter_ends=False)
            if after is not None and (cause := V.value_cause(a.value, after, before, kind)):
                if cause == "rewritten" and V.formatted(a.value, after, before):
                    extra["valueCheck"] = V.FORMATTED_NOTE.format(n=len(after))
                else:
                    raise V.not_set(a.value, after, cause, secret=True)
    return extra


def _split_last_key(value: str) -> tuple[str, str]:
    """``(inserted as one edit, typed as a key)`` for a fill: the last character as its
    key when it is printable ASCII (a key of Playwright's US layout that inserts itself,
    never Enter or Tab); otherwise the whole value as one edit."""
    if value and " " <= value[-1] <= "~":
        return value[:-1], value[-1]
    return value, ""


def _is_number(text: str) -> bool:
    """What ``<input type=number>`` accepts as a value (a float, ``1e3``, ``-2``, ``.5``)."""
    try:
        float(text.strip())
    except ValueError:
        return False
    return "_" not in text and text.strip().lower().lstrip("+-") not in ("inf", "infinity", "nan")


# Order of the year/month/day segments of a native date input in the page's locale.
_DATE_ORDER_JS = """() => new Intl.DateTimeFormat(navigator.language)
  .formatToParts(new Date(2023, 2, 23)).filter(p => p.type !== 'literal').map(p => p.type)"""


async def _fill_date(t: Target, value: str, timeout_ms: int) -> dict[str, Any]:
    try:
        year, month, day = value.split("-")
        int(year), int(month), int(day)
    except ValueError as exc:
        raise E.BadRequest("A date field takes YYYY-MM-DD.", {"value": "(not shown)"}) from exc
    order = await evaluate_isolated(t.frame, None, _DATE_ORDER_JS, timeout_ms / 1000)
    parts = {"year": year.zfill(4), "month": month.zfill(2), "day": day.zfill(2)}
    # Focus puts the caret in the first segment; each segment's digits overwrite it and
    # the field moves on to the next segment by itself.
    await t.locator.focus(timeout=timeout_ms)
    for segment in order:
        if segment in parts:
            await t.page.keyboard.type(parts[segment])
    got = await t.locator.input_value(timeout=timeout_ms)
    if got != value:
        raise V.not_set(value, got, "unchanged" if not got else "rewritten", secret=False)
    return {}


async def isolated(t: Target, expression: str, timeout_ms: int) -> Any:
    """``expression`` (a function of the element) run on the target in an isolated world;
    its JSON value."""
    return await evaluate_isolated(t.frame, t.selector, expression, timeout_ms / 1000)


async def press_key(page: Page, key: str, *, bidi: bool | None = None) -> None:
    """``keyboard.press`` that never leaves modifiers held: Playwright presses a chord's
    modifiers before it validates the last key, so a refused key is followed by releasing
    them. The events are sent at once where supervisor/keys.py allows it.

    Args:
        bidi: the browser is driven over WebDriver BiDi (``Target.bidi``); None when the
            caller does not know: only Chromium is then known not to be.

    Raises:
        BadRequest: unknown key name.
    """
    if bidi is None:
        bidi = _browser_name(page) != "chromium"
    with map_playwright_errors(key=key):
        try:
            await keys.press(page, key, bidi=bidi)
        except PlaywrightError:
            for modifier in ("Alt", "Control", "Meta", "Shift"):
                with contextlib.suppress(PlaywrightError):
                    await page.keyboard.up(modifier)
            raise


async def press(t: Target, a: PressAction, timeout_ms: int) -> dict[str, Any]:
    """Focus the target, then press the key or chord."""
    await focus_element(t, timeout_ms)
    await press_key(t.page, a.key, bidi=t.bidi)
    return {}


async def set_checked(t: Target, a: CheckAction, timeout_ms: int) -> dict[str, Any]:
    """Click only if the state differs; Playwright verifies the state after the click and
    understands native and ARIA checkbox/radio/switch roles (``aria-checked="mixed"``
    counts as unchecked).

    A checkbox or radio ``<input>`` that cannot take the click itself (no box, hidden,
    covered at its centre: a kit's painted box over a transparent or 0×0 input) while a
    label of it is shown is set by clicking that label, then read back
    (supervisor/labels.py); the result says ``viaLabel: {label, why}``.

    Raises:
        BadRequest: the target is not a checkbox, radio or switch.
        BrowserOperationUncertain: the click landed but the state did not change.
        ElementValueNotSet: the label was clicked but the state did not change.
    """
    with map_playwright_errors(timeout_ms=timeout_ms, wanted=a.checked):
        before = await t.locator.is_checked(timeout=timeout_ms)
        if before == a.checked:
            return {"changed": False, "checked": before}
        return await _set_checked_now(t, a, timeout_ms)


async def _set_checked_now(t: Target, a: CheckAction, timeout_ms: int) -> dict[str, Any]:
    """Change the state (it differs): through a shown label when the input cannot take
    the click itself (supervisor/labels.py; the result says ``viaLabel``), else
    Playwright's ``set_checked`` (which refuses to uncheck a radio button)."""
    route = await labels.plan(t, timeout_ms)
    if route is not None and (a.checked or not route["radio"]):
        return await labels.click_label(t, route, a.checked, timeout_ms)
    await t.locator.set_checked(a.checked, timeout=timeout_ms)
    return {"changed": True, "checked": a.checked}


async def fast_set_checked(t: Target, a: CheckAction, at: Point,
                           timeout_ms: int) -> dict[str, Any]:
    """:func:`set_checked` with the verified-point click (issue 18): read the state
    (Playwright's ``is_checked``: native and ARIA roles), and only when it differs, trusted
    mouse input at the point the extension checked (:func:`fast_pointer`), then the state
    read back, as Playwright's ``set_checked`` reads it after its click. Only for checking
    (the bridge asks for a point then): unchecking keeps Playwright's path, which refuses a
    radio button with its own message.

    Raises:
        BadRequest: the target is not a checkbox, radio or switch.
        ElementValueNotSet: the click landed but the state did not change (``cause:
            "unchanged"``).
    """
    with map_playwright_errors(timeout_ms=timeout_ms, wanted=a.checked):
        before = await t.locator.is_checked(timeout=timeout_ms)
        if before == a.checked:
            return {"changed": False, "checked": before}
        point = await fastpoint.top_point(t.frame, at, timeout_ms)
        if isinstance(point, str):
            slow = await _set_checked_now(t, a, timeout_ms)
            return {**slow, "fastPath": False, "fastRefused": point}
        await fastpoint.send(t.page, ClickAction(), point[0], point[1], t.pointer, t.bidi)
        t.dispatched()  # the read-back below only reads
        after = await t.locator.is_checked(timeout=timeout_ms)
    if after != a.checked:
        raise E.ElementValueNotSet(
            "The trusted click landed but the control did not change state; the page "
            "refused it.", expected=a.checked, actual=after, cause="unchanged")
    return {"changed": True, "checked": a.checked, "fastPath": True}


async def drag(source: Target, target: Target, a: DragAction,
               timeout_ms: int) -> dict[str, Any]:
    """Real pointer path: move to the source, press, small move (starts HTML5 drag),
    ``a.steps`` moves to the target's centre, release."""
    page = source.page
    await source.locator.scroll_into_view_if_needed(timeout=timeout_ms)
    await source.locator.hover(timeout=timeout_ms)  # actionability of the source
    src = await source.locator.bounding_box(timeout=timeout_ms)
    dst = await target.locator.bounding_box(timeout=timeout_ms)
    if src is None or dst is None:
        raise E.ElementTargetDetached("The drag source or target has no box (hidden?).")
    sx, sy = src["x"] + src["width"] / 2, src["y"] + src["height"] / 2
    tx, ty = dst["x"] + dst["width"] / 2, dst["y"] + dst["height"] / 2
    await page.mouse.move(sx, sy)
    await page.mouse.down()
    await page.mouse.move(sx + 4, sy + 4, steps=2)
    await page.mouse.move(tx, ty, steps=a.steps)
    await asyncio.sleep(0.03)  # let dragover handlers run before the drop
    await page.mouse.move(tx + 1, ty + 1)
    mouse.moved(page, tx + 1, ty + 1)
    await page.mouse.up()
    return {}


async def scroll(t: Target, a: ScrollAction, timeout_ms: int) -> dict[str, Any]:
    """Wheel over the container's visible centre; returns its scroll offsets after."""
    await t.locator.hover(timeout=timeout_ms, force=True)
    await t.page.mouse.wheel(a.dx, a.dy)
    await asyncio.sleep(0.05)  # wheel scrolling is applied asynchronously
    return await isolated(
        t, "el => ({scrollLeft: el.scrollLeft, scrollTop: el.scrollTop})", timeout_ms)


REFOCUSED_NOTE = ("refocused: the page moved the focus away as the target got it, before any "
                  "key changed anything; the target was focused again, as a person clicks "
                  "back into it, and took the text")
"""The ``valueCheck`` of a fill or type done on its second focus (:func:`_refocusing`)."""


def _refocusing(verb: Any) -> Any:
    """``verb`` (fill or type) tried once more when the page took the focus from the target
    as it got it and nothing was typed anywhere (ELEMENT_VALUE_NOT_SET ``focusMoved`` with
    ``sent`` 0: the focus guard cancelled every key before it changed the other element;
    supervisor/focus_guard.py). A person whose click into a field was answered by the page
    moving the caret (a draft restored, an autosave's focus) clicks back and types; the
    page's thief often acts once (the differential corpus, page focus_thief, where
    Playwright MCP's fill succeeds). A page that takes the focus again fails as before;
    a verb that typed any character is never repeated."""
    async def run(t: Target, a: Any, timeout_ms: int) -> dict[str, Any]:
        try:
            return await verb(t, a, timeout_ms)
        except E.ElementValueNotSet as exc:
            if exc.cause != "focusMoved" or exc.details.get("sent") != 0:
                raise
        extra = await verb(t, a, timeout_ms)
        note = extra.get("valueCheck")
        return {**extra, "valueCheck": f"{REFOCUSED_NOTE}; {note}" if note else REFOCUSED_NOTE}
    run.__doc__ = verb.__doc__
    run.__name__ = verb.__name__
    return run


VERBS: dict[str, Any] = {
    "click": click,
    "hover": hover,
    "type": _refocusing(type_text),
    "press": press,
    "fill": _refocusing(fill),
    "select": select,
    "check": set_checked,
    "scroll": scroll,
    "upload": upload,
    "focus": focus,
}
"""Action kind → ``verb(target, action, timeout_ms)`` for every single-element verb
(``drag`` takes two targets)."""


async def fast_pointer(t: Target, a: ClickAction | HoverAction, at: Point,
                       timeout_ms: int) -> dict[str, Any]:
    """The verified-point fast path (issue 18): trusted mouse input at the point the
    extension measured and checked (extension/src/page/fastpoint.js: in view, stable, the
    target topmost there), without Playwright's actionability waits.

    ``page.mouse`` sends the same browser input ``locator.click`` ends with (CDP
    ``Input.dispatchMouseEvent`` / BiDi ``input.performActions``), at the point mapped to
    the top-level viewport (supervisor/fastpoint.py: a frame one level down through its
    frame element, hit-tested in the parent document). ``t.pointer``'s steps and hold
    apply as on the full path.

    When the driver cannot map or confirm the point, the full way runs
    (``locator.click`` / ``locator.hover``, Playwright's actionability path) and the result
    says why (``fastRefused``: ``nested-frame``, ``frame-unknown``, ``frame-transformed``,
    ``outside-frame``, ``outside-top-viewport``, ``frame-covered``).

    The delivery receipt armed on the target (bridge/after_input.py) still says whether
    the target got the press; a miss is reported, never retried.

    Args:
        at: the verified point, CSS px of the target frame's viewport.

    Returns:
        ``{fastPath: True}``, or the full path's fields with ``fastPath: False`` and
        ``fastRefused``.
    """
    point = await fastpoint.top_point(t.frame, at, timeout_ms)
    if isinstance(point, str):
        slow = await (click(t, a, timeout_ms) if isinstance(a, ClickAction)
                      else hover(t, a, timeout_ms))
        return {**slow, "fastPath": False, "fastRefused": point}
    await fastpoint.send(t.page, a, point[0], point[1], t.pointer, t.bidi)
    return {"fastPath": True}
