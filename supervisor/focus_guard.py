"""Where the keys go while a verb types: the focus is checked before every destructive
step, followed where the page moves it on as a person's typing would be, and the fields it
visited are read back.

A person typing watches the caret. Two pages need that of the driver:

- Multi-box inputs (one digit per box: one-time codes, PINs) move the focus to the next
  box after each key; the keys land where the page sends them and the text is the boxes'
  values together, not the first box's. :func:`Guard.check` with ``follow`` lets the focus
  move on to an *empty*, editable text field (the next box) and records it in the trail.
- A page script that moves the focus elsewhere mid-fill (an autosave, a "focus thief"):
  the select-all chord and the text would land in another field and destroy what it holds
  (a person's draft). :func:`Guard.check` before the chord, before the text and before
  every key stops the verb when the focus is anywhere else than the target or a box it
  followed to, and the error names where the focus went (ELEMENT_VALUE_NOT_SET, ``cause``
  ``focusMoved``).

The rule for following: the element that took the focus is an ``<input>`` (a text-like
type) or ``<textarea>``, editable, empty, not already in the trail. A field that holds
something is never typed into: a page that moves the focus into an empty field after a key
is indistinguishable from a multi-box input, and typing there destroys nothing.

Every read runs in the driver's isolated world (supervisor/isolated_eval.py); the trail
lives in that world's global, keyed by a per-verb id, and is never visible to the page.
Cost: one isolated round trip per check (~2 ms, headless Chromium; measured in
docs/browsers.md, "Typing: focus checks").

Limit: a page that moves the focus *inside* a key's own handler (``keydown``) gets that
key's character in the new field before any check can run; the check after it stops the
rest.
"""

from __future__ import annotations

import json
import secrets
from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PlaywrightError

from bridge.protocol import errors as E

from .isolated_eval import evaluate_isolated

if TYPE_CHECKING:
    from .actions import Target

# The helpers every guard expression starts with: the focused element through open
# shadow roots, a text-field test, and an element's name as a person reads it (aria-label,
# labelledby, <label> without the controls inside it, placeholder, name, id).
_HELPERS = r"""
  const deep = () => {
    let a = document.activeElement;
    for (let i = 0; a && a.shadowRoot && a.shadowRoot.activeElement && i < 32; i++)
      a = a.shadowRoot.activeElement;
    return a;
  };
  const TEXT = ['', 'text', 'search', 'email', 'url', 'tel', 'password', 'number'];
  const isText = n => !!n && ((n.nodeName === 'INPUT'
      && TEXT.includes((n.getAttribute('type') || '').trim().toLowerCase()))
    || n.nodeName === 'TEXTAREA');
  const clean = s => String(s || '').replace(/\s+/g, ' ').trim().slice(0, 80);
  const name = n => {
    if (!n || n.nodeType !== 1) return '';
    const aria = n.getAttribute('aria-label');
    if (aria && aria.trim()) return clean(aria);
    const by = n.getAttribute('aria-labelledby');
    if (by) {
      const t = by.split(/\s+/).map(id => document.getElementById(id))
        .filter(Boolean).map(x => x.textContent).join(' ');
      if (clean(t)) return clean(t);
    }
    for (const label of n.labels || []) {
      const c = label.cloneNode(true);
      for (const x of c.querySelectorAll('input, textarea, select, button')) x.remove();
      if (clean(c.textContent)) return clean(c.textContent);
    }
    return clean(n.getAttribute('placeholder') || n.getAttribute('name') || n.id || '');
  };
  const describe = n => !n || n === document.body || n === document.documentElement
    ? {tag: n ? n.localName : null, name: '', length: null}
    : {tag: n.localName, name: name(n),
       length: isText(n) ? String(n.value).length : null};
  const within = (outer, n) => !!n && (outer === n || outer.contains(n)
    || (outer.shadowRoot && outer.shadowRoot.contains(n)));
"""

_CHECK_JS = "el => {" + _HELPERS + r"""
  const [id, follow] = %s;
  const store = globalThis.__tbFocusTrail;
  if (!(store && store.id === id) && !el) return {lost: true};
  const g = store && store.id === id ? store : (globalThis.__tbFocusTrail = {id, trail: [el]});
  const last = g.trail[g.trail.length - 1];
  const a = deep();
  if (within(last, a)) return {on: true};
  if (follow && isText(a) && !a.readOnly && !a.disabled && a.value === ''
      && !g.trail.includes(a)) {
    g.trail.push(a);
    return {on: true, followed: describe(a)};
  }
  return {on: false, where: describe(a), sent: g.trail.length};
}"""

# The text fields from the target to the last field the focus visited, in document order
# (a page may spread one edit over boxes it never focuses: the boxes between count), with
# each one's name and value.
_READ_JS = "el => {" + _HELPERS + r"""
  const id = %s;
  const g = globalThis.__tbFocusTrail;
  if (!g || g.id !== id || g.trail.length < 2) return null;
  const first = g.trail[0], last = g.trail[g.trail.length - 1];
  const root = first.getRootNode();
  const all = [...root.querySelectorAll('input, textarea')].filter(isText);
  const from = all.indexOf(first), to = all.indexOf(last);
  const fields = from >= 0 && to > from ? all.slice(from, to + 1) : g.trail;
  return {visited: g.trail.length,
          fields: fields.map(n => ({name: name(n), value: String(n.value ?? '')}))};
}"""


class Guard:
    """The focus checks of one verb on one target (see the module).

    Attributes:
        followed: the fields the focus moved on to, in order (``describe`` shapes:
            ``tag``, ``name``, ``length``).
    """

    def __init__(self, t: Target, timeout_ms: int) -> None:
        self._t = t
        self._timeout_s = timeout_ms / 1000
        self._id = secrets.token_hex(6)
        self._started = False
        self.followed: list[dict[str, Any]] = []

    async def check(self, *, follow: bool, typed: int = 0, total: int = 0) -> None:
        """Before a destructive step: the focus is on the target, or (``follow``) on an
        empty text field the page moved it to, which joins the trail.

        Args:
            follow: may the focus have moved on to an empty field (between two keys).
            typed, total: characters sent so far and in all, for the error.

        Raises:
            ElementValueNotSet: ``cause: "focusMoved"``; ``details.focusedTag``,
                ``focusedName`` (the element that has the focus), ``sent``, ``total``.
                Nothing more was sent.
        """
        expression = _CHECK_JS % json.dumps([self._id, follow])
        # The first check finds the target and starts the trail; the later ones read the
        # trail at the document (the target may have been re-rendered since: the focus
        # is still judged against the element the keys went to).
        try:
            got = await evaluate_isolated(
                self._t.frame, None if self._started else self._t.selector, expression,
                self._timeout_s)
        except (E.TrustbridgeError, PlaywrightError):
            # The document is going away (the caller's navigation watch says so next),
            # or the target is gone before the first key: Playwright's own steps say it.
            if not self._started:
                raise
            return
        self._started = True
        if not isinstance(got, dict) or got.get("on") or got.get("lost"):
            if isinstance(got, dict) and isinstance(got.get("followed"), dict):
                self.followed.append(got["followed"])
            return
        raise focus_moved(got.get("where") or {}, typed, total)

    async def landed(self) -> list[dict[str, str]] | None:
        """The fields the text went into when the focus moved on (the target first), each
        ``{"name", "value"}``; None when the focus never left the target."""
        if not self.followed:
            return None
        got = await evaluate_isolated(self._t.frame, None,
                                      _READ_JS % json.dumps(self._id), self._timeout_s)
        if not isinstance(got, dict) or not isinstance(got.get("fields"), list):
            return None
        return [{"name": str(f.get("name") or ""), "value": str(f.get("value") or "")}
                for f in got["fields"] if isinstance(f, dict)]


def focus_moved(where: dict[str, Any], typed: int, total: int) -> E.ElementValueNotSet:
    """ELEMENT_VALUE_NOT_SET for a verb the page took the focus from (lengths only)."""
    tag, name = where.get("tag"), where.get("name") or ""
    place = (f'<{tag}> "{name}"' if name else f"<{tag}>") if tag else "nothing"
    holds = (f" (it holds {where['length']} characters, left as they were)"
             if isinstance(where.get("length"), int) and where["length"] else "")
    done = (f"{typed} of {total} characters went into the target first; "
            if typed else "nothing was typed; ")
    return E.ElementValueNotSet(
        f"The page moved the focus away from the target to {place}{holds} while typing: "
        f"{done}typing stopped before any key reached the other element.",
        {"expected": {"length": total}, "actual": {"sent": typed},
         "cause": "focusMoved", "focusedTag": tag, "focusedName": name,
         "sent": typed, "total": total},
        next_step="Take a snapshot: the page moves the focus (an autosave, a script on "
                  "focus or input). Act on the element that has it, or make the page stop "
                  "first, then type again into the target.")


# A target that is not a text field: a native form control (refused as before: readonly,
# disabled), disabled (``disabled`` or aria-disabled="true" on it or an ancestor), or
# focused here, as Playwright's focusNode focuses it; where the focus is then.
_SURFACE_JS = "el => {" + _HELPERS + r"""
  const field = ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.nodeName);
  let disabled = !!el.disabled;
  for (let n = el; n && !disabled; n = n.parentElement) {
    const aria = (n.getAttribute('aria-disabled') || '').toLowerCase();
    if (aria === 'true') disabled = true;
    if (aria === 'false') break;
  }
  if (field || disabled) return {field, disabled};
  if (!within(el, deep())) el.focus();
  const a = deep();
  return {field, disabled, on: within(el, a), where: describe(a)};
}"""


def surface_js() -> str:
    """The isolated expression that focuses a target that is not a text field and says
    whether it took the focus (``{field, disabled, on, where}``)."""
    return _SURFACE_JS
