"""Focusing a target, and the reads typing makes of it first, each in one round trip
(issue 18: fill, type and keyed presses paid ~6 ms for Playwright's focus and ~5 ms for its
three reads, on every call).

Both run in the driver's isolated world (supervisor/isolated_eval.py), where page script
can neither see nor forge them, and do what Playwright's own injected script does:

- :func:`focus_element`: Playwright's ``focusNode`` (what ``locator.focus`` and the focus
  step of ``locator.press`` run). The page sees the same ``focus()`` from script and the
  ``focus`` / ``blur`` events the browser dispatches for it.
- :func:`read_field`: Playwright's ``editable`` state (``locator.is_editable``: not
  natively disabled, no ``aria-disabled="true"`` on it or an ancestor, not ``readonly``),
  the ``type`` attribute and the value, for a native ``<input>`` or ``<textarea>`` without
  a ``role`` attribute, where those rules need no ARIA role computation (every input type
  but ``hidden`` has an implicit role whose ``aria-disabled`` counts, as does textarea's
  ``textbox``); its ``maxLength``; and the focus, when the caller is about to focus it
  anyway, with where the focus is then (a page whose focus handler moves it away at once:
  supervisor/focus_guard.py). Any other
  element (contenteditable, an ARIA textbox, an explicit role) answers None and the caller
  uses Playwright's built-in reads.

The rules are those of Playwright 1.62's injected script (``getAriaDisabled``,
``belongsToDisabledFieldSet``, ``hasAriaDisabledInChain``, ``getReadonly``, ``focusNode``).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import TYPE_CHECKING, NamedTuple

from trustbridge.bridge.protocol import errors as E

from .focus_guard import _HELPERS, Guard, arm_snippet
from .isolated_eval import evaluate_isolated

if TYPE_CHECKING:
    from .actions import Target

# focusNode: a contenteditable target first blurs the focused element; focus() twice (the
# first may only blur); an input not focused before gets its caret at the start.
_FOCUS_BODY = """
  const active = el.getRootNode().activeElement;
  const was = active === el && el.ownerDocument.hasFocus();
  if (el.isContentEditable && !was && active && active.blur) active.blur();
  el.focus();
  el.focus();
  if (!was && el.nodeName.toLowerCase() === 'input') {
    try { el.setSelectionRange(0, 0); } catch (e) { /* a type with no selection */ }
  }
"""
_FOCUS_JS = "el => {" + _FOCUS_BODY + "  return true;\n}"

_FIELD_JS = """el => {""" + _HELPERS.replace("%", "%%") + """
  const focusKinds = %s;
  const tag = el.nodeName;
  if ((tag !== 'INPUT' && tag !== 'TEXTAREA') || el.hasAttribute('role')
      || el.namespaceURI !== 'http://www.w3.org/1999/xhtml') return null;
  const set = el.closest('fieldset[disabled]');
  const legend = set && set.querySelector(':scope > legend');
  let disabled = el.hasAttribute('disabled') || (!!set && !(legend && legend.contains(el)));
  if (!disabled && !(tag === 'INPUT' && el.type === 'hidden')) {
    for (let n = el; n;) {
      const aria = (n.getAttribute('aria-disabled') || '').toLowerCase();
      if (aria === 'true') { disabled = true; break; }
      if (aria === 'false') break;
      const up = n.parentNode;
      n = n.parentElement || (up && up.nodeType === 11 ? up.host : null);
    }
  }
  const editable = !disabled && !el.hasAttribute('readonly');
  const type = el.getAttribute('type');
  const kind = type === null ? null : type.trim().toLowerCase();
  const focus = editable && focusKinds.includes(kind);
  let away = null;
  if (focus) {%s
    const a = deep();
    if (!within(el, a)) away = describe(a);
    else {%s}
  }
  return [editable, type, el.value, focus, el.maxLength, away];
}"""


class Field(NamedTuple):
    """What :func:`read_field` read.

    Attributes:
        editable: Playwright's ``editable`` state.
        kind: the ``type`` attribute trimmed and lower-cased; None without one (and for a
            textarea).
        value: the element's value.
        focused: the target was focused in the same round trip.
        maxlength: its ``maxLength`` (-1: none).
        away: when focusing it left the focus elsewhere (the page's focus handler moved
            it at once), where (supervisor/focus_guard.py ``describe``); else None.
    """

    editable: bool
    kind: str | None
    value: str
    focused: bool
    maxlength: int = -1
    away: dict | None = None


async def focus_element(t: Target, timeout_ms: int) -> None:
    """Focus the target as ``locator.focus()`` does, in one isolated-world round trip
    (~2 ms against ~6 ms for Playwright's resolve, focus through a handle and release,
    headless Chromium, measured).

    Raises:
        PlaywrightError: the unique selector matched 0 or several elements, or the frame
            went away (the caller's map_playwright_errors maps it).
    """
    try:
        await evaluate_isolated(t.frame, t.selector, _FOCUS_JS, timeout_ms / 1000)
    except E.InternalError:
        # The engine gave no answer: the document was being replaced as it ran (a page
        # that navigates while the agent types). Playwright's own focus says what it finds
        # then (the element gone, the context destroyed) in its own errors.
        await t.locator.focus(timeout=timeout_ms)


async def read_field(t: Target, timeout_ms: int,
                     focus_kinds: Collection[str | None] = (),
                     guard: Guard | None = None) -> Field | None:
    """The editable state, type and value of a native input or textarea, in one
    isolated-world round trip; it is focused there too when editable and its kind is in
    ``focus_kinds`` (the caller's next step would focus it), and ``guard`` is armed on it
    once it has the focus (``guard.armed``; supervisor/focus_guard.py).

    Returns:
        The :class:`Field`, or None: another kind of element, or the document was being
        replaced as the read ran (the caller then reads with Playwright's built-ins, which
        say what they find).

    Raises:
        PlaywrightError: the unique selector matched 0 or several elements, or the frame
            went away (the caller's map_playwright_errors maps it).
    """
    expression = _FIELD_JS % (json.dumps(sorted(focus_kinds, key=lambda k: k or "")),
                              _FOCUS_BODY,
                              arm_snippet(guard.id, guard.follow) if guard else "")
    try:
        got = await evaluate_isolated(t.frame, t.selector, expression, timeout_ms / 1000)
    except (E.InternalError, E.BadRequest):
        return None
    if not isinstance(got, list) or len(got) != 6:
        return None
    editable, kind, value, focused, maxlength, away = got
    if guard is not None and focused and away is None:
        guard.armed = True
    return Field(bool(editable), kind.strip().lower() if isinstance(kind, str) else None,
                 str(value), bool(focused),
                 maxlength if isinstance(maxlength, int) else -1,
                 away if isinstance(away, dict) else None)
