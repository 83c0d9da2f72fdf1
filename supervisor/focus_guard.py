"""Where the keys go while a verb types: keys that would land anywhere but the target are
cancelled before they change anything, the focus is followed where the page moves it on
as a person's typing would be, and the fields it visited are read back.

A person typing watches the caret. Two pages need that of the driver:

- Multi-box inputs (one digit per box: one-time codes, PINs) move the focus to the next
  box after each key; the keys land where the page sends them and the text is the boxes'
  values together, not the first box's. The guard lets the focus move on to an *empty*,
  editable text field once a character went into the target, and records it in the trail.
- A page script that moves the focus elsewhere mid-fill (an autosave, a "focus thief"):
  the select-all chord and the text would land in another field and destroy what it holds
  (a person's draft). The guard cancels every key and edit aimed anywhere else than the
  target or a box it followed to, and the verb fails naming where the focus went
  (ELEMENT_VALUE_NOT_SET, ``cause`` ``focusMoved``).

How: while a verb types, a listener of the driver's isolated world (supervisor/
isolated_eval.py: page script can neither see nor remove it) looks at every trusted
``keydown``, ``keypress`` and ``beforeinput`` of the target's document, in the capture
phase at the window, so before any page listener: aimed at the trail's last element (or
inside it) it passes; aimed at an empty text field after a character went in (``keydown``
only: a new key starting in the next box) it passes and the field joins the trail;
anything else is cancelled (``preventDefault``: no character, no select-all, no implicit
submission), and so is every later key of the verb. The check is at the event itself, so
it also holds for a page that moves the focus inside a key's own handler, and costs no
round trip per key: the guard is armed in the read that focuses the target
(supervisor/focus.py) or in one round trip, and read back and disarmed in one
(docs/browsers.md, "Typing: focus guard", for the measured cost).

The rule for following: the element that got the key is an ``<input>`` of a text-like type
or a ``<textarea>``, editable, empty, not already in the trail. A field that holds
something is never typed into: a page that moves the focus into an empty field after a
key is indistinguishable from a multi-box input, and typing there destroys nothing. After
a Tab in the text the guard lets everything pass (TypeAction's contract: the rest is typed
wherever the Tab took the focus).

What the page can see: the cancelled keys still reach its listeners, with
``defaultPrevented`` true. Limits: keys the focus takes to another frame are not seen by
the target document's listener (the read-back then finds the focus outside the target);
a guard left armed by a verb that never finished (the driver gone) disarms itself after
:data:`IDLE_MS` without a key.
"""

from __future__ import annotations

import contextlib
import json
import secrets
from typing import TYPE_CHECKING, Any

from trustbridge.bridge.protocol import errors as E

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
  const within = (outer, n) => {  // n is outer or inside it, through shadow roots
    for (let x = n, i = 0; x && i < 4096; i++) {
      if (x === outer) return true;
      x = x.nodeType === 11 ? x.host : x.parentNode;
    }
    return false;
  };
"""

IDLE_MS = 10_000
"""A guard with no key for this long, ms, lets everything pass and disarms (a verb that
never finished must not keep a person's keys from the page)."""

# Arms the guard of verb ``id`` on ``el`` (installs the listener once per document).
_ARM = r"""
  const arm = (el, id, follow) => {
    const g = globalThis.__tbGuard || (globalThis.__tbGuard = {cur: null});
    g.cur = {id, follow, trail: [el], stopped: null, blocked: 0, chars: 0, free: false,
             seen: Date.now()};
    if (g.listening) return;
    g.listening = true;
    const on = e => {
      const c = g.cur;
      if (!c || !e.isTrusted) return;
      if (Date.now() - c.seen > %d) { g.cur = null; return; }
      c.seen = Date.now();
      if (c.free) return;
      const t = e.composedPath()[0];
      if (!c.stopped) {
        const last = c.trail[c.trail.length - 1];
        if (within(last, t)) {
          if (e.type === 'keydown' && e.key === 'Tab') c.free = true;
          if (e.type === 'beforeinput') c.chars += String(e.data || '').length;
          return;
        }
        if (e.type === 'keydown' && c.follow && c.chars > 0 && isText(t) && !t.readOnly
            && !t.disabled && t.value === '' && !c.trail.includes(t)) {
          c.trail.push(t);
          return;
        }
        c.stopped = describe(t);
      }
      c.blocked++;
      e.preventDefault();
    };
    for (const type of ['keydown', 'keypress', 'beforeinput'])
      window.addEventListener(type, on, true);
  };
""" % IDLE_MS

_ARM_JS = "el => {" + _HELPERS + _ARM + r"""
  const [id, follow] = %s;
  const a = deep();
  if (!within(el, a)) return {away: describe(a)};
  arm(el, id, follow);
  return {};
}"""

# The guard's outcome, and it disarmed: where it stopped, how many characters went into
# the trail, and, when the focus moved on, the text fields from the target to the last
# field it visited in document order (a page may spread one edit over boxes it never
# focuses: the boxes between count), each with its name and value.
_FINISH_JS = "() => {" + _HELPERS + r"""
  const id = %s;
  const g = globalThis.__tbGuard;
  const c = g && g.cur;
  if (!c || c.id !== id) return {lost: true};
  g.cur = null;
  const first = c.trail[0], last = c.trail[c.trail.length - 1];
  let fields = null;
  if (c.trail.length > 1) {
    const all = [...first.getRootNode().querySelectorAll('input, textarea')].filter(isText);
    const from = all.indexOf(first), to = all.indexOf(last);
    fields = (from >= 0 && to > from ? all.slice(from, to + 1) : c.trail)
      .map(n => ({name: name(n), value: String(n.value ?? '')}));
  }
  return {stopped: c.stopped, blocked: c.blocked, chars: c.chars, fields};
}"""


def arm_snippet(guard_id: str, follow: bool) -> str:
    """JavaScript for an expression of ``el`` (the helpers and ``arm`` defined, see
    supervisor/focus.py ``read_field``) that arms guard ``guard_id`` on ``el``."""
    return _ARM + f"\n  arm(el, {json.dumps(guard_id)}, {json.dumps(follow)});\n"


class Guard:
    """The focus guard of one verb on one target (see the module).

    Attributes:
        id: the verb's guard id (armed by :meth:`arm` or by supervisor/focus.py
            ``read_field``).
        armed: it was armed.
        fields: after :meth:`finish`, the fields the text went into when the page moved
            the focus on (the target first), each ``{"name", "value"}``; else None.
    """

    def __init__(self, t: Target, timeout_ms: int, *, follow: bool = True) -> None:
        self._t = t
        self._timeout_s = timeout_ms / 1000
        self.id = secrets.token_hex(6)
        self.follow = follow
        self.armed = False
        self.fields: list[dict[str, str]] | None = None

    async def arm(self, total: int) -> None:
        """Arm on the focused target (one isolated round trip).

        Raises:
            ElementValueNotSet: ``focusMoved``: the focus is not in the target (the page
                moved it as the target got it); nothing was typed.
        """
        got = await evaluate_isolated(self._t.frame, self._t.selector,
                                      _ARM_JS % json.dumps([self.id, self.follow]),
                                      self._timeout_s)
        if isinstance(got, dict) and isinstance(got.get("away"), dict):
            raise focus_moved(got["away"], 0, total)
        self.armed = True

    async def finish(self, total: int) -> None:
        """Read the outcome and disarm (one isolated round trip); sets :attr:`fields`.

        Raises:
            ElementValueNotSet: ``focusMoved``: keys were cancelled because they were
                aimed elsewhere (``details``: where, ``sent`` characters that went into
                the target first).
        """
        if not self.armed:
            return
        self.armed = False
        got = await evaluate_isolated(self._t.frame, None, _FINISH_JS % json.dumps(self.id),
                                      self._timeout_s)
        if not isinstance(got, dict) or got.get("lost"):
            return
        if isinstance(got.get("stopped"), dict):
            chars = got.get("chars")
            raise focus_moved(got["stopped"], chars if isinstance(chars, int) else 0, total)
        if isinstance(got.get("fields"), list):
            self.fields = [{"name": str(f.get("name") or ""), "value": str(f.get("value") or "")}
                           for f in got["fields"] if isinstance(f, dict)]

    async def release(self) -> None:
        """Disarm after a verb that failed part way (best effort: a document gone took
        the guard with it)."""
        if not self.armed:
            return
        self.armed = False
        with contextlib.suppress(Exception):
            await evaluate_isolated(self._t.frame, None, _FINISH_JS % json.dumps(self.id),
                                    self._timeout_s)


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
        f"{done}every key after that was cancelled before it could change the other element.",
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
