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
A script on the element (``Locator.evaluate``, :meth:`Target.handle`) runs in the page's
main world, where Playwright first sets up its injected script (~40 ms once per
document); only rare paths (date fields, multiple selects, scroll, upload) do that.

Coordinates are CSS px in the top-level viewport (Playwright's ``bounding_box``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any

from playwright.async_api import ElementHandle, Error as PlaywrightError, Frame, Locator, Page

from bridge.protocol import errors as E
from bridge.protocol.models import (
    CheckAction,
    ClickAction,
    DragAction,
    FillAction,
    FocusAction,
    HoverAction,
    PressAction,
    ScrollAction,
    SelectAction,
    TypeAction,
    UploadAction,
)

from . import values as V
from .errors import NOT_A_FIELD, map_playwright_errors
from .navwatch import NavigationWatch


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
    """

    locator: Locator
    frame: Frame
    selector: str
    trusted_insert_text: bool
    pointer: PointerPath = PointerPath()
    allow_script: bool = False

    @property
    def page(self) -> Page:
        return self.frame.page

    @contextlib.asynccontextmanager
    async def handle(self) -> AsyncIterator[ElementHandle]:
        """One handle on the element (disposed on exit, without waiting for it).

        Raises:
            PlaywrightError: carrying the match count when not exactly one element matches
                (:data:`supervisor.locator_engine.NOT_UNIQUE_COUNT`).
        """
        handle = await self.frame.query_selector(self.selector)
        if handle is None:  # the unique selector throws instead; kept for the type checker
            raise E.ElementTargetDetached("The element left the document; take a new snapshot.")
        try:
            yield handle
        finally:
            asyncio.ensure_future(dispose_quietly(handle))


async def dispose_quietly(handle: ElementHandle) -> None:
    """Release a handle; a page or frame already gone is not an error."""
    with contextlib.suppress(PlaywrightError):
        await handle.dispose()


async def click(t: Target, a: ClickAction, timeout_ms: int) -> dict[str, Any]:
    """Press and release ``a.button`` ``a.clickCount`` times at the centre or ``a.position``."""
    await t.locator.click(
        button=a.button,
        click_count=a.clickCount,
        modifiers=a.modifiers or None,
        position={"x": a.position.x, "y": a.position.y} if a.position else None,
        timeout=timeout_ms,
        **t.pointer.click_options(),
    )
    return {}


async def hover(t: Target, _a: HoverAction, timeout_ms: int) -> dict[str, Any]:
    await t.locator.hover(timeout=timeout_ms)
    return {}


async def focus(t: Target, _a: FocusAction, timeout_ms: int) -> dict[str, Any]:
    await t.locator.focus(timeout=timeout_ms)
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


async def _field(t: Target, timeout_ms: int) -> tuple[str | None, str | None]:
    """``(input type lower-cased or None, value or None)`` of an editable target.

    Raises:
        ElementNotEditable: readonly, disabled or not a text field.
    """
    editable, kind, before = await asyncio.gather(
        _is_editable(t, timeout_ms), t.locator.get_attribute("type", timeout=timeout_ms),
        _readable_value(t, timeout_ms))
    if not editable:
        raise _not_editable()
    return (kind.strip().lower() if kind is not None else None), before


async def type_text(t: Target, a: TypeAction, timeout_ms: int) -> dict[str, Any]:
    """Focus, then one trusted key event sequence per character; Enter if ``submit``.

    ``timeout_ms`` bounds reaching and focusing the target; the typing itself has no
    deadline once started, so a long text is never cut in the middle and reported as a
    timeout (the bridge allows time per character: bridge/executor.py driver_timeout_s).
    Keys stop at a document change (supervisor/values.py ``type_keys``). A range or
    colour input takes the text as its value, as :func:`fill` sets it.

    Raises:
        ElementNotEditable: readonly, disabled or not a text field; nothing was typed.
        BrowserOperationUncertain: the document changed before the last key
            (``details.sent``, ``details.total``).
        ElementValueNotSet: a readable field kept its value although the text had
            characters to insert (``cause: "unchanged"``; lengths only).
    """
    kind, before = await _field(t, timeout_ms)
    if kind == "range" or V.script_only(kind, _browser_name(t.page)):
        extra = await _set_value(t, kind, a.text, timeout_ms)
    else:
        await t.locator.focus(timeout=timeout_ms)
        extra = {}
        with NavigationWatch(t.frame) as nav:
            await V.type_keys(t, a.text, nav)
            inserts = any(ch not in "\n\r\t" for ch in a.text)
            if V.check_after_keys(nav, t.frame, a.text) and before is not None and inserts:
                after = await _readable_value(t, timeout_ms)
                # read from a document going away?
                V.check_after_keys(nav, t.frame, a.text, enter_ends=False)
                if after == before:
                    raise V.not_set(a.text, after, "unchanged", secret=True)
    if a.submit:
        await t.page.keyboard.press("Enter")
    return extra


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
      whole value, replacing the selection (CDP ``Input.insertText``, what Playwright's own
      ``fill`` does after selecting). No key events for the value's characters.
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

    The value is read back wherever the field has one (not contenteditable) and compared
    with ``a.value`` after the browser's own sanitisation.

    Raises:
        ElementNotEditable: readonly, disabled or not a text field; nothing was typed.
        BadRequest: a date field given something other than ``YYYY-MM-DD``, a number
            field given something that is not a number, a range value off its steps
            (nothing typed).
        ElementValueNotSet: the field holds something else afterwards (``cause``
            unchanged / truncated / rewritten; lengths only, never the text).
        TrustedInputUnavailable: a colour input without ``allowScript``.
        BrowserOperationUncertain: the document changed before the value was all in.
    """
    # Built-in reads run in Playwright's utility world; a script on the element would make
    # Playwright set up its injected script in the page's main world too (~40 ms once per
    # document).
    kind, before = await _field(t, timeout_ms)
    if kind == "range" or V.script_only(kind, _browser_name(t.page)):
        return await _set_value(t, kind, a.value, timeout_ms)
    if kind == "number" and a.value.strip() and not _is_number(a.value):
        # The browser would drop the text and leave the field empty while the fill
        # reported success (Playwright's fill refuses the same way).
        raise E.BadRequest("A number field takes a number; nothing was typed.",
                           {"inputType": "number"})
    if kind == "date" and a.value:
        async with t.handle() as handle:
            return await _fill_date(handle, t.page, a.value)
    keyboard = t.page.keyboard
    await t.locator.press("ControlOrMeta+A", timeout=timeout_ms)  # focus, then the chord
    with NavigationWatch(t.frame) as nav:
        if not a.value:
            await keyboard.press("Delete")
        elif t.trusted_insert_text and kind in _INSERT_TEXT_TYPES:
            await keyboard.insert_text(a.value)  # one edit: it landed whole
        else:
            await V.type_keys(t, a.value, nav)
        keyed = not (t.trusted_insert_text and kind in _INSERT_TEXT_TYPES)
        if V.check_after_keys(nav, t.frame, a.value, enter_ends=keyed) and before is not None:
            after = await _readable_value(t, timeout_ms)
            # read from a document going away?
            V.check_after_keys(nav, t.frame, a.value, enter_ends=False)
            if after is not None and (cause := V.value_cause(a.value, after, before, kind)):
                raise V.not_set(a.value, after, cause, secret=True)
    return {}


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


async def _fill_date(handle: ElementHandle, page: Page, value: str) -> dict[str, Any]:
    try:
        year, month, day = value.split("-")
        int(year), int(month), int(day)
    except ValueError as exc:
        raise E.BadRequest("A date field takes YYYY-MM-DD.", {"value": "(not shown)"}) from exc
    order = await page.evaluate(_DATE_ORDER_JS)
    parts = {"year": year.zfill(4), "month": month.zfill(2), "day": day.zfill(2)}
    # Focus puts the caret in the first segment; each segment's digits overwrite it and
    # the field moves on to the next segment by itself.
    await handle.focus()
    for segment in order:
        if segment in parts:
            await page.keyboard.type(parts[segment])
    got = await handle.evaluate("el => el.value")
    if got != value:
        raise V.not_set(value, got, "unchanged" if not got else "rewritten", secret=False)
    return {}


async def press_key(page: Page, key: str) -> None:
    """``keyboard.press`` that never leaves modifiers held: Playwright presses a chord's
    modifiers before it validates the last key, so a refused key is followed by releasing
    them.

    Raises:
        BadRequest: unknown key name.
    """
    with map_playwright_errors(key=key):
        try:
            await page.keyboard.press(key)
        except PlaywrightError:
            for modifier in ("Alt", "Control", "Meta", "Shift"):
                with contextlib.suppress(PlaywrightError):
                    await page.keyboard.up(modifier)
            raise


async def press(t: Target, a: PressAction, timeout_ms: int) -> dict[str, Any]:
    """Focus the target, then press the key or chord."""
    await t.locator.focus(timeout=timeout_ms)
    await press_key(t.page, a.key)
    return {}


async def set_checked(t: Target, a: CheckAction, timeout_ms: int) -> dict[str, Any]:
    """Click only if the state differs; Playwright verifies the state after the click and
    understands native and ARIA checkbox/radio/switch roles (``aria-checked="mixed"``
    counts as unchecked).

    Raises:
        BadRequest: the target is not a checkbox, radio or switch.
        BrowserOperationUncertain: the click landed but the state did not change.
    """
    with map_playwright_errors(timeout_ms=timeout_ms, wanted=a.checked):
        before = await t.locator.is_checked(timeout=timeout_ms)
        if before == a.checked:
            return {"changed": False, "checked": before}
        await t.locator.set_checked(a.checked, timeout=timeout_ms)
    return {"changed": True, "checked": a.checked}


@dataclass
class _Option:
    value: str
    label: str
    text: str
    disabled: bool  # its own disabled attribute
    in_disabled_group: bool


class _OptionParser(HTMLParser):
    """The ``<option>`` elements of a ``<select>``'s inner HTML, in order, with the value
    and label the DOM gives them (HTML: a missing ``value``/``label`` is the text with
    whitespace stripped and collapsed)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.options: list[_Option] = []
        self._attrs: dict[str, str | None] | None = None
        self._text: list[str] = []
        self._group_disabled = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("option", "optgroup"):
            self._close()
        if tag == "optgroup":
            self._group_disabled = any(k == "disabled" for k, _ in attrs)
        elif tag == "option":
            self._attrs = dict(attrs)
            self._text = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "option":
            self._close()
        elif tag == "optgroup":
            self._close()
            self._group_disabled = False

    def handle_data(self, data: str) -> None:
        if self._attrs is not None:
            self._text.append(data)

    def close(self) -> None:
        super().close()
        self._close()

    def _close(self) -> None:
        if self._attrs is None:
            return
        raw = "".join(self._text)
        text = " ".join(raw.split())
        value, label = self._attrs.get("value"), self._attrs.get("label")
        self.options.append(_Option(
            value=text if value is None else value,
            label=label if label else text,
            text=raw.strip(),
            disabled="disabled" in self._attrs,
            in_disabled_group=self._group_disabled))
        self._attrs = None


def _enabled_options(inner_html: str, multiple: bool) -> list[_Option]:
    """The options a user can pick, in order: not disabled by themselves nor, in a single
    select, by their ``<optgroup>``."""
    parser = _OptionParser()
    parser.feed(inner_html)
    parser.close()
    return [o for o in parser.options
            if not o.disabled and (multiple or not o.in_disabled_group)]


def select_plan(inner_html: str, wanted: list[str], current_value: str | None,
                multiple: bool) -> tuple[list[int], int, int]:
    """Indices of the wanted options and of the current one among the options a user can
    pick, parsed from the select's inner HTML: ``(targets, current, count)``; -1 for an
    option that is missing or disabled (targets) or for no current option.

    A single select's arrows skip options disabled by themselves or by their
    ``<optgroup>``; a multiple select's options are clicked by index among
    ``option:not([disabled])``.
    """
    enabled = _enabled_options(inner_html, multiple)

    def pick(w: str) -> int:
        for i, o in enumerate(enabled):
            if o.value == w:
                return i
        for i, o in enumerate(enabled):
            if o.label.strip() == w or o.text == w:
                return i
        return -1

    current = next((i for i, o in enumerate(enabled) if o.value == current_value), -1)
    return [pick(w) for w in wanted], current, len(enabled)


def select_keys(current: int, target: int, count: int) -> list[str]:
    """The fewest keys that move a focused single ``<select>`` from enabled option
    ``current`` (-1: none selected) to enabled option ``target`` among ``count`` enabled
    options: arrows from the current one, or Home / End then arrows (arrows, Home and End
    skip disabled options). The same keys move the highlight of Chromium's open popup."""
    routes = [["Home"] + ["ArrowDown"] * target,
              ["End"] + ["ArrowUp"] * (count - 1 - target)]
    if current >= 0:
        delta = target - current
        routes.insert(0, ["ArrowDown" if delta > 0 else "ArrowUp"] * abs(delta))
    return min(routes, key=len)


def _type_ahead_key(label: str) -> str | None:
    """The key that type-ahead searches ``label`` by (its first character, lower case),
    or None when that character is not a key to press on its own."""
    first = label.strip()[:1].lower()
    if not first or not first.isprintable() or first.isspace() or first == "+":
        return None  # "+" joins a Playwright chord
    return first


def select_commit_keys(labels: list[str], current: int, target: int) -> list[str]:
    """The fewest keys that move a focused, closed single ``<select>`` from enabled option
    ``current`` (-1: none selected) to ``target``, among the enabled options whose labels
    are ``labels``. A closed select commits (``input`` + ``change``) on every key that
    moves its selection (Chromium and Firefox), so the length is the number of changes the
    page sees; 1 whenever one key reaches the target.

    Keys (Firefox dom/html/HTMLSelectEventListener.cpp; Chromium's type-ahead matches the
    same way, checked in tests/e2e/test_select.py): ArrowDown / ArrowUp (next or
    previous enabled option, no wrap), Home / End (first / last enabled), and a printable
    character (type-ahead: the first enabled option after the current one, wrapping, whose
    trimmed label starts with it, case-insensitive; from the first option when none is
    selected). A character right after another character extends the search string, so
    a route never puts two different characters in a row.
    """
    if current == target:
        return []
    count = len(labels)
    keys = [_type_ahead_key(label) for label in labels]

    def moves(at: int) -> list[tuple[str, int]]:
        out = [("Home", 0), ("End", count - 1)]
        if at >= 0:
            out += [("ArrowDown", min(at + 1, count - 1)), ("ArrowUp", max(at - 1, 0))]
        start = at + 1 if at >= 0 else 0
        for key in dict.fromkeys(k for k in keys if k):
            hit = next(j for j in ((start + i) % count for i in range(count)) if keys[j] == key)
            out.append((key, hit))
        return out

    # Breadth-first over (option, last key if a character); each key is one change.
    start_state = (current, None)
    routes: dict[tuple[int, str | None], list[str]] = {start_state: []}
    frontier = [start_state]
    while frontier:
        nxt = []
        for at, last_char in frontier:
            for key, to in moves(at):
                is_char = len(key) == 1
                if is_char and last_char is not None and key != last_char:
                    continue
                state = (to, key if is_char else None)
                if to == at or state in routes:
                    continue
                routes[state] = routes[(at, last_char)] + [key]
                if to == target:
                    return routes[state]
                nxt.append(state)
        frontier = nxt
    return select_keys(current, target, count)  # unreachable: Home / End reach every option


def _browser_name(page: Page) -> str:
    """Playwright's browser type of the page ("chromium", "firefox", "webkit"), or "" if
    unknown."""
    browser = page.context.browser
    return browser.browser_type.name if browser else ""


async def select(t: Target, a: SelectAction, timeout_ms: int) -> dict[str, Any]:
    """Choose options of a native ``<select>`` with trusted keys (single) or Control-clicks
    on the options (multiple), so change handlers see trusted input (Playwright's
    ``select_option`` sets the value from script).

    A closed single select commits (``input`` + ``change``) on every key that moves its
    selection, in both browsers. So, single select:

    - no key at all when the wanted option is already selected (no event);
    - one key on the closed select when one reaches the option (arrow, Home, End, or the
      label's first character: type-ahead, same rules in both browsers), from
      :func:`select_commit_keys`: one change;
    - otherwise, Chromium: open the popup (Alt+ArrowDown), move its highlight with arrows
      / Home / End (no event) and commit with Enter: one change. Firefox: its popup lives
      in the parent process, out of reach of WebDriver BiDi input (keys and clicks go to
      the page), so the keys of :func:`select_commit_keys` on the closed select: one
      change per key (measured on Firefox ESR 153).

    Type-ahead extends the previous search string when the last key on this select was a
    character less than a second ago (both browsers); the read-back then shows it.

    The plan is made from built-in reads (tag, ``multiple``, inner HTML, value), which run
    in Playwright's utility world: no script in the page's main world.

    Returns:
        ``{"selected": [value, ...]}`` read from the select afterwards, and for a single
        select ``changeEvents``: how many ``change`` events the keys committed (0, 1, or
        on Firefox more when no single key reaches the option: the page saw the options
        in between selected too). When the read fails because the change navigated or
        removed the select: ``{"selected": [value], "changeEvents": 1}`` of the option
        committed by the one change, or only ``changeEvents`` after several.

    Raises:
        BadRequest: not a select, or an option that does not exist or is disabled.
        ElementValueNotSet: the select holds other options afterwards (the page changed
            them back); ``expected`` / ``actual``: option values.
    """
    loc = t.locator
    single, inner, value = await asyncio.gather(
        loc.locator("xpath=self::select[not(@multiple)]").count(),
        loc.inner_html(timeout=timeout_ms),
        _select_value(loc, timeout_ms))
    is_multiple = not single
    if is_multiple and not await loc.locator("xpath=self::select").count():
        raise E.BadRequest("The target is not a native <select>; click its options instead.")
    targets, current, count = select_plan(inner, a.values, value, is_multiple)
    missing = [v for v, i in zip(a.values, targets) if i < 0]
    if missing:
        raise E.BadRequest(f"No enabled option with value or label {missing!r}.",
                           {"missing": missing[:5]})
    if not is_multiple:
        if len(a.values) != 1:
            raise E.BadRequest("A single-choice <select> takes exactly one value.")
        return await _select_single(t, inner, current, targets[0], count, timeout_ms)
    options = loc.locator("option:not([disabled])")
    if not targets:
        # No value: deselect every selected option with Control-clicks (as Playwright's
        # select_option([]) empties a multiple select, but with trusted clicks).
        selected = await loc.evaluate(
            "el => Array.from(el.querySelectorAll('option:not([disabled])'))"
            ".flatMap((o, i) => o.selected ? [i] : [])", timeout=timeout_ms)
        for idx in selected:
            await options.nth(idx).click(modifiers=["ControlOrMeta"], timeout=timeout_ms)
    for n, idx in enumerate(targets):
        await options.nth(idx).click(modifiers=["ControlOrMeta"] if n else None,
                                     timeout=timeout_ms)
    selected = await loc.evaluate(
        "el => Array.from(el.selectedOptions).map(o => o.value)", timeout=timeout_ms)
    wanted = [o.value for i, o in enumerate(_enabled_options(inner, True)) if i in targets]
    if sorted(selected) != sorted(wanted):
        raise _select_not_set(wanted, selected)
    return {"selected": selected}


def _select_not_set(wanted: list[str], selected: list[str]) -> E.ElementValueNotSet:
    return E.ElementValueNotSet(
        "The options were chosen with trusted input but the select holds others; the "
        "page changed them back or refused them.", expected=wanted, actual=selected,
        cause="rewritten")


async def _select_single(t: Target, inner: str, current: int, target: int, count: int,
                         timeout_ms: int) -> dict[str, Any]:
    """Keys of :func:`select` for a single select; the result it returns."""
    loc, page = t.locator, t.page
    enabled = _enabled_options(inner, False)
    keys = select_commit_keys([o.label for o in enabled], current, target)
    changes = len(keys)
    if changes > 1 and _browser_name(page) == "chromium":
        # in the open popup the keys move a highlight; Enter commits
        keys, changes = ["Alt+ArrowDown", *select_keys(current, target, count), "Enter"], 1
    if keys:
        await loc.press(keys[0], timeout=timeout_ms)  # focus, then the first key
    for key in keys[1:]:
        await page.keyboard.press(key)
    try:
        after = await _select_value(loc, timeout_ms)
    except PlaywrightError:  # the change navigated, or replaced or removed the select
        if changes == 1:
            return {"selected": [enabled[target].value], "changeEvents": 1}
        return {"changeEvents": changes}
    if after is not _NOT_SELECT and after != enabled[target].value:
        raise _select_not_set([enabled[target].value], [after])
    return {"selected": [] if after is _NOT_SELECT else [after], "changeEvents": changes}


_NOT_SELECT = object()


async def _select_value(loc: Locator, timeout_ms: int) -> Any:
    """The select's value, or ``_NOT_SELECT`` when the element is not a ``<select>``."""
    try:
        value = await loc.input_value(timeout=timeout_ms)
    except PlaywrightError as exc:  # "Not an <input>, <textarea> or <select> element"
        if not NOT_A_FIELD.search(str(exc)):
            raise
        return _NOT_SELECT
    return value


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
    await page.mouse.up()
    return {}


async def scroll(t: Target, a: ScrollAction, timeout_ms: int) -> dict[str, Any]:
    """Wheel over the container's visible centre; returns its scroll offsets after."""
    await t.locator.hover(timeout=timeout_ms, force=True)
    await t.page.mouse.wheel(a.dx, a.dy)
    await asyncio.sleep(0.05)  # wheel scrolling is applied asynchronously
    return await t.locator.evaluate(
        "el => ({scrollLeft: el.scrollLeft, scrollTop: el.scrollTop})", timeout=timeout_ms)


async def upload(t: Target, a: UploadAction, timeout_ms: int) -> dict[str, Any]:
    """A file input takes the files directly; any other control is clicked with trusted
    input and the file chooser it opens receives them."""
    is_file_input = await t.locator.evaluate(
        "el => el instanceof HTMLInputElement && el.type === 'file'", timeout=timeout_ms)
    if is_file_input:
        await t.locator.set_input_files(a.files, timeout=timeout_ms)
        return {"via": "input"}
    async with t.page.expect_file_chooser(timeout=timeout_ms) as chooser_info:
        await t.locator.click(timeout=timeout_ms)
    chooser = await chooser_info.value
    await chooser.set_files(a.files, timeout=timeout_ms)
    return {"via": "file-chooser"}


VERBS: dict[str, Any] = {
    "click": click,
    "hover": hover,
    "type": type_text,
    "press": press,
    "fill": fill,
    "select": select,
    "check": set_checked,
    "scroll": scroll,
    "upload": upload,
    "focus": focus,
}
"""Action kind → ``verb(target, action, timeout_ms)`` for every single-element verb
(``drag`` takes two targets)."""
