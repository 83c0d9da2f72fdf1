"""Value-setting verbs keep their promise or say why not (issue 13, items 1 and 2).

- :func:`type_keys` types text one character per Playwright call and looks at the target
  frame between two keys (supervisor/navwatch.py): once a navigation of the frame or an
  ancestor has started, or the frame detached, no further key is sent and the verb fails
  BROWSER_OPERATION_UNCERTAIN with ``details.sent`` / ``details.total`` (never the text).
  One call per character costs ~0.6 ms per character over one ``keyboard.type`` call
  (measured on headless Chromium: 100 characters 212 vs 148 ms); it is what makes "no key
  after the navigation was seen" hold.
- :func:`value_cause` compares the value a field holds with the one promised, after the
  browser's own value sanitisation (newlines dropped in an ``<input>``, ``\\r\\n`` → ``\\n``
  in a ``<textarea>``, surrounding spaces of email / url, numbers compared as numbers), and
  names why it differs: ``unchanged``, ``truncated`` (e.g. ``maxlength``) or ``rewritten``
  (the page or a mask changed it). :func:`not_set` makes the error, giving lengths only for
  text (it may be a secret).
- :func:`range_keys` computes the keys that move a focused ``<input type=range>`` from its
  value to another (Home / End / ArrowUp / ArrowDown by ``step``, the fewest).
- :func:`set_by_script` is the opt-in route (``allowScript``) for a control no trusted
  input can set (a colour input opens an OS picker): value set with the native setter,
  then ``input`` and ``change``; the result says ``inputPath: "script"``.
"""

from __future__ import annotations

import math
from typing import Any

from trustbridge.bridge.protocol import errors as E

from . import humanize
from .navwatch import NavigationWatch

SCRIPT_ONLY_TYPES = frozenset({"color"})
"""Input types with no trusted route in any browser: Chromium and Firefox open an OS
colour picker that page input cannot reach."""

_UNTYPEABLE: dict[str, frozenset[str]] = {
    "chromium": frozenset({"month", "week", "datetime-local"}),
    "firefox": frozenset({"datetime-local"}),
}
"""Input types whose ISO value typed key by key does not become the value (measured with
Playwright 1.62, Chromium 14x and Firefox ESR 153: Chromium's month field takes
``2024-05`` as nothing, week ``2024-W05`` as ``2405-W20``, datetime-local
``2024-05-06T13:45`` as ``40506-02-02T13:45``; Firefox's datetime-local as
``4050-02-02T06:13``). ``time`` is typed right in both; ``date`` has its own per-segment
route (supervisor/actions.py ``_fill_date``)."""


def script_only(kind: str | None, browser: str) -> bool:
    """Whether an ``<input type=kind>`` has no trusted route in ``browser``."""
    return kind in SCRIPT_ONLY_TYPES or kind in _UNTYPEABLE.get(browser, frozenset())

_SET_BY_SCRIPT_JS = """(el, v) => {
  const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
  el.focus();
  setter.call(el, v);
  el.dispatchEvent(new Event('input', {bubbles: true}));
  el.dispatchEvent(new Event('change', {bubbles: true}));
  return el.value;
}"""


def cut(sent: int, total: int) -> E.TrustbridgeError:
    """The error for typing stopped by a document change after ``sent`` of ``total``
    characters (BROWSER_DOCUMENT_CHANGED when none was sent)."""
    if sent == 0:
        return E.BrowserDocumentChanged(
            "The document changed before the first key; nothing was typed.",
            reason="navigation")
    return E.BrowserOperationUncertain(
        f"The document changed while typing: {sent} of {total} characters were sent, "
        "then typing stopped; the page may hold part of the text, or none if it "
        "navigated away. Not repeated.",
        {"sent": sent, "total": total},
        next_step="Take a new snapshot and check the field before typing again.")


async def type_keys(target: Any, text: str, nav: NavigationWatch) -> None:
    """Type ``text`` into the focused element one character per call; stop at a
    document change.

    Args:
        target: the verb's :class:`supervisor.actions.Target` (frame and page).
        text: the characters (Playwright's US layout; others are inserted as text).
        nav: a watch on the target's frame, entered before the first key.

    Raises:
        BrowserOperationUncertain: the frame or an ancestor started a navigation, or the
            frame detached, before a key after the first (``details.sent``,
            ``details.total``); the keys after it were not sent.
        BrowserDocumentChanged: that happened before the first key.
    """
    frame, keyboard = target.frame, target.page.keyboard
    for sent, ch in enumerate(text):
        if changed(nav, frame):
            raise cut(sent, len(text))
        if getattr(target, "humanize", False):  # held keys with gaps (supervisor/humanize.py)
            await humanize.key(keyboard, ch)
            continue
        # TypeAction's contract: "\t" presses Tab (the focus moves); keyboard.type would
        # insert a tab character instead.
        await (keyboard.press("Tab") if ch == "\t" else keyboard.type(ch))


def changed(nav: NavigationWatch, frame: Any) -> bool:
    """The watched frame's document changed (a navigation started, or it detached)."""
    return nav.changed or frame.is_detached()


def check_after_keys(nav: NavigationWatch, frame: Any, text: str, *,
                     enter_ends: bool = True) -> bool:
    """After every key was answered: may the field be read back now?

    Args:
        nav, frame: the watch and its frame.
        text: what was typed.
        enter_ends: a text ending in Enter may navigate (false for a check after the
            read-back, or for text inserted as one edit, which presses no key).

    Returns:
        True when the document did not change; False when it changed and the last key
        was Enter (the navigation is that Enter's doing, as with ``submit``: done, with
        ``postActionDocumentChanged``).

    Raises:
        BrowserOperationUncertain: it changed otherwise: every key was delivered to the
            old document, whose field cannot be read back (``sent == total``).
    """
    if not changed(nav, frame):
        return True
    if enter_ends and text.endswith(("\n", "\r")):
        return False
    raise E.BrowserOperationUncertain(
        f"The document changed just after all {len(text)} characters were sent; the "
        "field cannot be read back. Not repeated.", {"sent": len(text), "total": len(text)},
        next_step="Take a new snapshot and check the field before typing again.")


def _candidates(expected: str, kind: str | None) -> set[str]:
    """What a field may hold after taking ``expected``, per HTML value sanitisation."""
    unified = expected.replace("\r\n", "\n").replace("\r", "\n")
    out = {expected, unified, unified.replace("\n", "")}
    if kind in ("email", "url"):
        out |= {v.strip(" \t\n\f") for v in out}
    return out


def value_cause(expected: str, actual: str, before: str | None,
                kind: str | None) -> str | None:
    """Why ``actual`` is not ``expected`` (None when it is): ``unchanged``, ``truncated``
    or ``rewritten``."""
    if actual in _candidates(expected, kind):
        return None
    if kind in ("number", "range") and actual and expected:
        try:
            if math.isclose(float(actual), float(expected), rel_tol=0, abs_tol=1e-9):
                return None
        except ValueError:
            pass
    if before is not None and actual == before:
        return "unchanged"
    if actual and any(c.startswith(actual) for c in _candidates(expected, kind)):
        return "truncated"
    return "rewritten"


def formatted(typed: str, actual: str, before: str | None) -> bool:
    """Whether a field the page rewrote still holds every typed character, in order and in
    the same case, with characters of its own between them: an input mask or formatter
    (``5551234567`` typed, ``+1 (555) 123-4567`` held; IMask, Cleave, a phone or card
    field). The keys landed and the page took them, so the action is done (the result says
    the page formatted the value); Playwright's ``fill`` / ``pressSequentially`` succeed
    there too (the differential corpus, docs/benchmarks/corpus.md). A field that dropped or
    changed a typed character (``maxlength``, uppercasing) is not formatted, nor one that
    kept ``before``.
    """
    if not typed or actual == before or len(actual) <= len(typed):
        return False
    rest = iter(actual)
    return all(ch in rest for ch in typed)


FORMATTED_NOTE = ("formatted: the page rewrote the value as it took it (a mask or formatter); "
                  "the field holds {n} characters, every typed character among them in order")
"""The ``valueCheck`` of a result whose field the page formatted (:func:`formatted`)."""


def not_set(expected: str, actual: str, cause: str, secret: bool) -> E.ElementValueNotSet:
    """ELEMENT_VALUE_NOT_SET for a field; ``secret``: text whose value is never given
    (every text-like field: it may be a password, a card number, a key)."""
    words = {"unchanged": "kept its previous value", "truncated": "holds only the first "
             f"{len(actual)} of {len(expected)} characters (maxlength?)",
             "rewritten": "holds another value (the page or a mask rewrote it)"}
    shown = ({"length": len(expected)}, {"length": len(actual)}) if secret \
        else (expected, actual)
    return E.ElementValueNotSet(
        f"The input was delivered but the field {words[cause]}.",
        expected=shown[0], actual=shown[1], cause=cause)


def _number(raw: str | None, default: float) -> float:
    try:
        value = float(raw) if raw is not None else default
    except ValueError:
        return default
    return value if math.isfinite(value) else default


def range_keys(value: str, current: str, lo_raw: str | None, hi_raw: str | None,
               step_raw: str | None) -> list[str]:
    """The fewest keys taking a focused range input from ``current`` to ``value``.

    HTML defaults: min 0, max 100, step 1; ``step`` values are counted from min and max
    is the last step at or below it. ArrowUp / ArrowDown move one step up / down whatever
    the writing direction (Chromium and Firefox), Home / End go to min / the last step.

    Raises:
        BadRequest: ``value`` is not a number, outside [min, max], or not on a step.
        TrustedInputUnavailable: ``step="any"``: arrows cannot reach an arbitrary value.
    """
    lo, hi = _number(lo_raw, 0.0), _number(hi_raw, 100.0)
    hi = max(hi, lo)
    if (step_raw or "").strip().lower() == "any":
        raise E.TrustedInputUnavailable(
            "A range with step=\"any\" cannot be set to an exact value with keys; nothing "
            "was sent.", {"inputType": "range"}, next_step=_SCRIPT_STEP)
    step = _number(step_raw, 1.0)
    step = step if step > 0 else 1.0
    facts = {"min": lo, "max": hi, "step": step}
    try:
        wanted = float(value)
    except ValueError:
        raise E.BadRequest("A range takes a number; nothing was sent.", facts) from None
    index = (wanted - lo) / step
    if not (lo <= wanted <= hi) or not math.isclose(index, round(index), abs_tol=1e-7):
        raise E.BadRequest("The value is outside the range or not on one of its steps; "
                           "nothing was sent.", facts)
    target, last = round(index), math.floor((hi - lo) / step + 1e-7)
    at = round((_number(current, lo) - lo) / step)
    routes = [["ArrowUp" if target > at else "ArrowDown"] * abs(target - at),
              ["Home"] + ["ArrowUp"] * target, ["End"] + ["ArrowDown"] * (last - target)]
    return min(routes, key=len)


_SCRIPT_STEP = ("No trusted input can set this control. To set it by script (the page sees "
                "untrusted input and change events; the result says inputPath \"script\"), "
                "repeat the call with allowScript: true.")


async def set_by_script(target: Any, value: str, kind: str, allowed: bool,
                        timeout_ms: int) -> dict[str, Any]:
    """Set a control no trusted input can reach, if the agent allowed script.

    Returns:
        ``{"inputPath": "script"}``.

    Raises:
        TrustedInputUnavailable: not allowed (``allowScript`` false); nothing was sent.
        ElementValueNotSet: the browser sanitised the value to another one (e.g. a colour
            not in ``#rrggbb``).
    """
    if not allowed:
        raise E.TrustedInputUnavailable(
            f"An <input type={kind}> has no trusted route in this browser (its own picker, "
            "or typed keys that do not become the value); nothing was sent.",
            {"inputType": kind}, next_step=_SCRIPT_STEP)
    got = await target.locator.evaluate(_SET_BY_SCRIPT_JS, value, timeout=timeout_ms)
    if got != value and got != value.lower():
        raise not_set(value, got, "rewritten", secret=False)
    return {"inputPath": "script"}
