"""A checkbox or radio button painted over by its label: click the label, as a person does.

Design kits hide the native ``<input type=checkbox|radio>`` and paint their own box: a
0×0 or transparent input inside a wrapping ``<label>`` (Element UI, many CSS kits), a
visually-hidden one (``clip: rect(0 0 0 0)``, 1×1 px; Bootstrap's ``.visually-hidden``
and ``.btn-check``) with a ``<label for>`` styled as the control, or a styled element
inside the label laid over the input. Playwright's ``check`` and ``click`` act on the
input itself: its actionability waits for a visible input that receives the pointer, and
time out (Playwright MCP's agent clicks the label instead: its snapshot gives such inputs
no ref, ``generateAriaTree``'s ``refs: "interactable"``).

Here the input keeps its ref (its role, name and checked state are in the snapshot), and
when it cannot take the click itself (:func:`plan`: no box, hidden, or something else on
top at its centre) but a label of it is shown, the driver clicks that label with trusted
input through Playwright's own actionability path (the ``tblabel`` engine below chooses
the element to click), then reads the input's checked state back (HTML's label
activation behaviour: a click on a label, or on a non-interactive element inside it,
clicks its labeled control, https://html.spec.whatwg.org/#the-label-element). A state
that did not change is an error, never a success.

All reads run in Playwright's isolated world (supervisor/isolated_eval.py and the
engine's ``content_script``): page script cannot forge ``labels`` or the hit test to turn
the click onto another element.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from playwright.async_api import Locator

from trustbridge.bridge.protocol import errors as E

from . import mouse
from .isolated_eval import evaluate_isolated

if TYPE_CHECKING:
    from .actions import Target

ENGINE = "tblabel"
"""Selector engine chained after the input's locator (``input >> tblabel=``): the element
of its label to click, or none."""

# Shared by the engine and the plan: which element of a shown label of `input` to click.
# - the element painted over the input's centre, when it is inside one of its labels;
# - else a shown label holding no other interactive content (a click on a link inside a
#   label follows the link and does not activate the label);
# - else a shown non-interactive element inside such a label.
_CHOOSE = r"""
const INTERACTIVE = 'a[href], button, input, select, textarea, summary, iframe, '
  + '[contenteditable]:not([contenteditable="false"]), [tabindex]:not([tabindex="-1"])';
const boxOf = (el) => {
  for (const r of el.getClientRects()) if (r.width >= 1 && r.height >= 1) return r;
  return null;
};
const shown = (el) => (typeof el.checkVisibility !== 'function'
  || el.checkVisibility({ visibilityProperty: true })) && !!boxOf(el);
const composedParent = (n) => n.assignedSlot || n.parentNode || n.host || null;
const within = (outer, el) => { for (let n = el; n; n = composedParent(n)) if (n === outer) return true; return false; };
const deepHit = (doc, x, y) => {
  let hit = doc.elementFromPoint(x, y);
  for (let i = 0; hit && hit.shadowRoot && i < 32; i++) {
    const inner = hit.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  return hit;
};
// No interactive element but `input` in `el`, nor between `el` and its label.
const safe = (el, label, input) => {
  for (let n = el; n && n !== label; n = composedParent(n)) {
    if (n !== input && n.matches && n.matches(INTERACTIVE)) return false;
  }
  for (const d of el.querySelectorAll(INTERACTIVE)) if (d !== input) return false;
  return true;
};
const isToggle = (el) => el instanceof HTMLInputElement && (el.type === 'checkbox' || el.type === 'radio');
const shownLabels = (input) => Array.from(input.labels || []).filter(shown);
const centreOf = (r) => [r.left + r.width / 2, r.top + r.height / 2];
function labelTarget(input) {
  if (!isToggle(input) || input.disabled) return null;
  const labels = shownLabels(input);
  if (!labels.length) return null;
  const box = boxOf(input);
  if (box) {
    const hit = deepHit(input.ownerDocument, ...centreOf(box));
    if (hit && hit !== input) {
      for (const label of labels) if (within(label, hit) && safe(hit, label, input)) return hit;
    }
  }
  for (const label of labels) if (safe(label, label, input)) return label;
  for (const label of labels) {
    for (const d of label.querySelectorAll('*')) if (d !== input && shown(d) && safe(d, label, input)) return d;
  }
  return null;
}
"""

ENGINE_SCRIPT = "({\n  queryAll(root, body) {\n" + _CHOOSE + """
    const el = labelTarget(root);
    return el ? [el] : [];
  },
})"""

# On the input: null when the input can take the click itself, or no shown label of it
# can; else why not, and the label's text (for the result).
_PLAN_JS = "(input) => {" + _CHOOSE + r"""
  if (!isToggle(input)) return null;
  const box = boxOf(input);
  let why = null;
  if (!box) why = 'zero-size';
  else if (!shown(input)) why = 'hidden';
  else {
    const win = input.ownerDocument.defaultView;
    const root = input.ownerDocument.documentElement;
    const [x, y] = centreOf(box);
    if (x < 0 || y < 0 || x >= root.clientWidth || y >= root.clientHeight) {
      // Where Playwright's click would scroll it to (it scrolls first too).
      input.scrollIntoView({ block: 'nearest', inline: 'nearest', behavior: 'instant' });
    }
    const again = boxOf(input);
    if (!again) why = 'zero-size';
    else if (deepHit(input.ownerDocument, ...centreOf(again)) !== input) why = 'covered';
  }
  if (!why) return null;
  const target = labelTarget(input);
  if (!target) return null;
  let label = target;
  while (label && label.localName !== 'label') label = composedParent(label);
  // Its text in the flat tree: a slot's assigned nodes count, as a person sees them.
  const flat = (n) => n.nodeType === 3 ? n.data
    : n.localName === 'slot' ? n.assignedNodes({ flatten: true }).map(flat).join('')
    : Array.from(n.childNodes).map(flat).join('');
  const text = flat(label || target).replace(/\s+/g, ' ').trim().slice(0, 80);
  return { why, label: text, radio: input.type === 'radio' };
}"""

WHY = {
    "zero-size": "has no size",
    "hidden": "is hidden",
    "covered": "is covered or clipped at its centre",
}
"""Why the input could not take the click itself (``viaLabel.why``), as results say it."""


async def plan(t: Target, timeout_ms: int) -> dict[str, Any] | None:
    """Whether ``t`` is a checkbox or radio ``<input>`` to click through its label.

    Returns:
        None: not such an input, or it can take the click itself, or no shown label of it
        can (Playwright's path then runs, with its own waits and errors); else ``{why:
        "zero-size" | "hidden" | "covered", label: str, radio: bool}`` (``label``: the
        label's text, whitespace collapsed, at most 80 characters).
    """
    return await evaluate_isolated(t.frame, t.selector, _PLAN_JS, timeout_ms / 1000)


async def click_label(t: Target, route: dict[str, Any], wanted: bool | None,
                      timeout_ms: int) -> dict[str, Any]:
    """Click the label element the engine chooses for ``t``'s input (trusted input,
    Playwright's actionability: visible, stable, enabled, receives the pointer), then read
    the input's checked state.

    Args:
        route: :func:`plan`'s answer.
        wanted: the state the input must be in afterwards; None for a checkbox click (the
            state must have flipped).

    Returns:
        ``{changed: bool, checked: bool, viaLabel: {label, why}}`` (``changed``: the
        state differs from before the click; a checked radio stays checked).

    Raises:
        ElementValueNotSet: the label was clicked (the page saw it) but the input's state
            is not the one wanted (``cause: "unchanged"``; the page refused it, or the
            label activates nothing).
        Timeout / ElementObscured: the label itself could not be clicked (Playwright's
            errors, mapped by the caller); nothing was dispatched.
    """
    before = await t.locator.is_checked(timeout=timeout_ms)
    if wanted is None:
        wanted = not before
    target: Locator = t.locator.locator(f"{ENGINE}=")
    await target.click(timeout=timeout_ms, **t.pointer.click_options())
    mouse.moved_over(t.page, target)
    t.dispatched()  # the read-back below only reads
    after = await t.locator.is_checked(timeout=timeout_ms)
    via = {"label": route.get("label") or "", "why": route.get("why")}
    if after == wanted:
        return {"changed": after != before, "checked": after, "viaLabel": via}
    raise E.ElementValueNotSet(
        f"The control {WHY.get(str(route.get('why')), 'cannot take a click')}, so its "
        f"label \"{via['label']}\" was clicked with trusted input, but the control is "
        f"{'checked' if after else 'unchecked'}, not {'checked' if wanted else 'unchecked'}: "
        "the page refused the change.", {"viaLabel": via}, expected=wanted, actual=after,
        cause="unchanged")
