"""``select``: choose options of a native ``<select>`` with trusted keys or clicks.

The plan is made from the select's inner HTML, parsed here the way the DOM gives options
their value and label (:func:`select_plan`); the keys from :func:`select_commit_keys`
(closed select) or :func:`select_keys` (Chromium's open popup). Moved out of
supervisor/actions.py, which re-exports these names.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page

from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import SelectAction

from .errors import NOT_A_FIELD
from .focus import _FOCUS_BODY, focus_element
from .isolated_eval import evaluate_isolated
from .keys import LAYOUT_KEYS, press, press_keys

if TYPE_CHECKING:
    from .actions import Target


async def isolated(t: Target, expression: str, timeout_ms: int) -> Any:
    """``expression`` (a function of the select) run in an isolated world; its value."""
    return await evaluate_isolated(t.frame, t.selector, expression, timeout_ms / 1000)


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
    or None when that character is not a key to press on its own: Playwright's keyboard
    has keys for printable ASCII only (supervisor/keys.py ``LAYOUT_KEYS``) and refuses
    ``é`` or ``中`` as an unknown key, so such a label is reached by arrows, Home or End."""
    first = label.strip()[:1].lower()
    if first not in LAYOUT_KEYS or first.isspace() or first == "+":
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

    The plan is made from one isolated-world read (tag, ``multiple``, inner HTML, value:
    :func:`_read_select`; Playwright's built-in reads, in its utility world, when that
    gives no answer): no script in the page's main world. The select is focused as
    ``locator.press`` would focus it (supervisor/focus.py) before its first key.

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
    read = await _read_select(t, a.values, timeout_ms)
    focused = False
    if read is None:  # not answered in one round trip: Playwright's built-in reads
        single, inner, value = await asyncio.gather(
            loc.locator("xpath=self::select[not(@multiple)]").count(),
            loc.inner_html(timeout=timeout_ms),
            _select_value(loc, timeout_ms))
        is_select = bool(single) or bool(await loc.locator("xpath=self::select").count())
        is_multiple = not single
    else:
        is_select, is_multiple, inner, value, focused = read
    if not is_select:
        raise E.BadRequest("The target is not a native <select>; click its options instead.")
    targets, current, count = select_plan(inner, a.values, value, is_multiple)
    missing = [v for v, i in zip(a.values, targets) if i < 0]
    if missing:
        raise E.BadRequest(f"No enabled option with value or label {missing!r}.",
                           {"missing": missing[:5]})
    if not is_multiple:
        if len(a.values) != 1:
            raise E.BadRequest("A single-choice <select> takes exactly one value.")
        return await _select_single(t, inner, current, targets[0], count, timeout_ms,
                                    focused=focused)
    options = loc.locator("option:not([disabled])")
    if not targets:
        # No value: deselect every selected option with Control-clicks (as Playwright's
        # select_option([]) empties a multiple select, but with trusted clicks).
        selected = await isolated(
            t, "el => Array.from(el.querySelectorAll('option:not([disabled])'))"
            ".flatMap((o, i) => o.selected ? [i] : [])", timeout_ms)
        for idx in selected:
            await options.nth(idx).click(modifiers=["ControlOrMeta"], timeout=timeout_ms)
    for n, idx in enumerate(targets):
        await options.nth(idx).click(modifiers=["ControlOrMeta"] if n else None,
                                     timeout=timeout_ms)
    selected = await isolated(
        t, "el => Array.from(el.selectedOptions).map(o => o.value)", timeout_ms)
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
                         timeout_ms: int, *, focused: bool = False) -> dict[str, Any]:
    """Keys of :func:`select` for a single select; the result it returns. ``focused``: the
    read focused the select already (:func:`_read_select`)."""
    loc, page = t.locator, t.page
    enabled = _enabled_options(inner, False)
    keys = select_commit_keys([o.label for o in enabled], current, target)
    changes = len(keys)
    popup: list[str] = []
    if changes > 1 and _browser_name(page) == "chromium":
        # in the open popup the keys move a highlight; Enter commits
        keys, changes = ["Alt+ArrowDown"], 1
        popup = [*select_keys(current, target, count), "Enter"]
    if keys and not focused:
        # Focus as locator.press does (Playwright's focusNode), in one isolated round trip
        # (supervisor/focus.py; ~2 ms against locator.press's ~5 ms of resolving and
        # focusing through a handle), then the keys.
        await focus_element(t, timeout_ms)
    # One after the other, each key's events at once where supervisor/keys.py allows: on
    # the closed select each key commits and the page's change handlers run before the next.
    for key in keys:
        await press(page, key, bidi=t.bidi)
    if popup:
        # The popup is open once Alt+ArrowDown was answered; the keys in it reach the
        # popup's own document, not the page, so they all go at once (a 30-option select,
        # End + 9 ArrowUp + Enter: driver act 53 -> 37 ms, scripts/bench_keys.py).
        await press_keys(page, popup, bidi=t.bidi)
    t.dispatched()  # the read-back below only reads
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

# What select() plans from, in one isolated-world round trip: whether the element is a
# native <select> (the HTML element, as the former XPath ``self::select`` read it), its
# ``multiple`` attribute, its inner HTML and its value (Playwright's ``inner_html`` and
# ``input_value`` read the same properties), all read before anything else happens; then
# the focus (Playwright's focusNode, supervisor/focus.py) only when the plan is sure to
# press a key: a single select asked for one value that an enabled option has exactly
# (select_plan picks the first enabled option of that value, and the current option has
# another value, so select_commit_keys gives at least one key). Any other case (a label,
# no such option, already selected) is left to the plan, which focuses when it presses.
_READ_SELECT_JS = r"""el => {
  const wanted = %s;
  if (el.localName !== 'select' || el.namespaceURI !== 'http://www.w3.org/1999/xhtml') {
    return [false, false, '', null, false];
  }
  const multiple = el.hasAttribute('multiple');
  const got = [true, multiple, el.innerHTML, el.value, false];
  const enabled = (o) => !o.hasAttribute('disabled') && !(o.parentElement
    && o.parentElement.localName === 'optgroup' && o.parentElement.hasAttribute('disabled'));
  // The value select_plan parses: the attribute, or the text with white space collapsed
  // (the same as the DOM's only for ASCII text: Python's split() knows more spaces).
  const plain = (o) => o.hasAttribute('value') || /^[\x20-\x7e\t\n\f\r]*$/.test(o.textContent);
  if (!multiple && wanted.length === 1 && el.value !== wanted[0]
      && Array.from(el.querySelectorAll('option')).some(
        (o) => enabled(o) && plain(o) && o.value === wanted[0])) {
%s
    got[4] = true;
  }
  return got;
}"""


async def _read_select(t: Target, wanted: list[str], timeout_ms: int
                       ) -> tuple[bool, bool, str, str | None, bool] | None:
    """``(is a native select, multiple, inner HTML, value, focused)`` of the target in one
    isolated-world round trip (page script cannot see or forge it; ~2 ms against ~4 ms for
    Playwright's three built-in reads side by side, and the focus in the same trip when a
    key is sure to follow: ``_READ_SELECT_JS``), or None when the engine gave no answer
    (the document was being replaced: the caller reads with the built-ins, which say what
    they find).

    Args:
        wanted: the action's values.

    Raises:
        PlaywrightError: the unique selector matched 0 or several elements, or the frame
            went away (the caller's map_playwright_errors maps it).
    """
    try:
        got = await isolated(t, _READ_SELECT_JS % (json.dumps(wanted), _FOCUS_BODY),
                             timeout_ms)
    except (E.InternalError, E.BadRequest):
        return None
    if not isinstance(got, list) or len(got) != 5:
        return None
    is_select, multiple, inner, value, focused = got
    return (bool(is_select), bool(multiple), str(inner),
            value if isinstance(value, str) else None, bool(focused))


async def _select_value(loc: Locator, timeout_ms: int) -> Any:
    """The select's value, or ``_NOT_SELECT`` when the element is not a ``<select>``."""
    try:
        value = await loc.input_value(timeout=timeout_ms)
    except PlaywrightError as exc:  # "Not an <input>, <textarea> or <select> element"
        if not NOT_A_FIELD.search(str(exc)):
            raise
        return _NOT_SELECT
    return value


def option_at(inner_html: str, index: int) -> tuple[_Option | None, int]:
    """Option ``index`` of ``select.options`` parsed from a select's inner HTML, and its
    place among the options a user can pick (the keys of :func:`select_keys` skip the
    others): -1 when it is disabled by itself or by its ``<optgroup>``; ``(None, -1)``
    when there is no such option."""
    parser = _OptionParser()
    parser.feed(inner_html)
    parser.close()
    if not 0 <= index < len(parser.options):
        return None, -1
    option = parser.options[index]
    if option.disabled or option.in_disabled_group:
        return option, -1
    return option, sum(1 for o in parser.options[:index]
                       if not o.disabled and not o.in_disabled_group)


async def click_option(t: Target, index: int, timeout_ms: int) -> dict[str, Any]:
    """A click on option ``index`` (of ``select.options``, disabled ones counted) of the
    native select ``t`` names (issue 14 item 2: the option's ref, routed to its select by
    extension/src/page/options.js): the option is chosen the way a user's click on it in
    the open popup would, with trusted input, and read back.

    A single select goes the route of :func:`select` (one change: keys on the closed
    select, or in Chromium's popup when no single key reaches it); a multiple select gets
    a plain click on the option (it alone is selected, as for a user's click).

    Returns:
        ``{"selected": [value, ...], "option": {"index", "value", "label"}}`` and, for a
        single select, ``changeEvents`` (as :func:`select`).

    Raises:
        BadRequest: ``t`` is not a native select.
        ElementTargetDetached: the select has no option ``index`` any more.
        ElementTargetDisabled: the option (itself or its ``<optgroup>``) or the select is
            disabled; nothing was sent.
        ElementValueNotSet: the select holds another option afterwards.
    """
    loc = t.locator
    single, is_select, inner, value = await asyncio.gather(
        loc.locator("xpath=self::select[not(@multiple)]").count(),
        loc.locator("xpath=self::select").count(),
        loc.inner_html(timeout=timeout_ms),
        _select_value(loc, timeout_ms))
    if not is_select:
        raise E.BadRequest("This option is not in a native <select>; click the element itself.")
    option, target = option_at(inner, index)
    if option is None:
        raise E.ElementTargetDetached(
            f"The select has no option {index + 1} any more: take a new snapshot.")
    described = {"index": index, "value": option.value, "label": option.label}
    if target < 0:
        raise E.ElementTargetDisabled(
            f"The option {option.label!r} is disabled; nothing was selected.",
            {"option": described}, next_step="Choose an enabled option from a snapshot.")
    if await loc.is_disabled(timeout=timeout_ms):
        raise E.ElementTargetDisabled("The select is disabled; nothing was selected.",
                                      {"option": described})
    if single:
        enabled = _enabled_options(inner, False)
        current = next((i for i, o in enumerate(enabled) if o.value == value), -1)
        out = await _select_single(t, inner, current, target, len(enabled), timeout_ms)
        return {**out, "option": described}
    await loc.locator("option").nth(index).click(timeout=timeout_ms)
    selected = await isolated(
        t, "el => Array.from(el.selectedOptions).map(o => o.value)", timeout_ms)
    if selected != [option.value]:
        raise _select_not_set([option.value], selected)
    return {"selected": selected, "option": described}
