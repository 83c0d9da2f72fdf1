/**
 * Whether a click on an element may run anything after its dispatch ends (issue 18, the
 * receipt's `quiet` sign in page/receipt.js): the DOM's dispatch algorithm (DOM §2.9,
 * "activation target") runs, once the `click` has been dispatched, the activation
 * behaviour of the first element on the event's path that has one. That behaviour can
 * navigate (a link, a form's submit button), open a file chooser, fire events page code
 * handles after the dispatch (a checkbox's `input`/`change`, a reset button's `reset`, a
 * popover or command button's `beforetoggle`/`command`), or pass the click on (a label to
 * its control, a summary to its details). None of it is seen by a listener that runs at
 * the dispatch's end, so the receipt calls such a click never quiet, whatever it saw.
 *
 * Conservative by design: any element that may have activation behaviour counts, with
 * one exception, a submit or reset `<button>` with no form owner (its activation does
 * nothing). Sources: HTML §4.6.4 links; §4.10.6 button; §4.10.5 input types checkbox,
 * radio, submit, image, reset, file, color and the date and time pickers; §4.10.4 label;
 * §4.11.1 summary; popovertarget, commandfor. `<select>` and `<option>`
 * count too: their pickers run outside the dispatch. The composed path counts: a click
 * inside a link's shadow content activates the link.
 */
const INPUT_ACTIVATING = new Set([
  'checkbox', 'radio', 'submit', 'image', 'reset', 'file', 'color',
  'date', 'datetime-local', 'month', 'time', 'week',
]);
const ALWAYS = new Set(['label', 'summary', 'select', 'option', 'optgroup']);
const XLINK = 'http://www.w3.org/1999/xlink';

/** Whether `el` itself may have activation behaviour (see the module comment). */
export function hasActivationBehavior(el) {
  if (!el || el.nodeType !== 1) return false;
  const name = el.localName;
  if ((name === 'a' || name === 'area')
      && (el.hasAttribute('href') || (typeof el.hasAttributeNS === 'function' && el.hasAttributeNS(XLINK, 'href')))) {
    return true; // an SVG <a> may link by xlink:href
  }
  if (ALWAYS.has(name)) return true;
  if (el.hasAttribute('popovertarget') || el.hasAttribute('commandfor')) return true;
  if (name === 'button') {
    // A submit or reset button acts on its form owner only (HTML §4.10.6); without one
    // (the usual `<button>` outside a form) its activation does nothing.
    const type = String(el.type || 'submit').toLowerCase();
    return type !== 'button' && !!el.form;
  }
  if (name === 'input') return INPUT_ACTIVATING.has(String(el.type || 'text').toLowerCase());
  return false;
}

/** Whether a click on `el` may run activation behaviour: `el` or an element on its
 *  composed path up to the document (slots and shadow hosts included) has some. */
export function mayActivate(el) {
  for (let node = el; node;) {
    if (hasActivationBehavior(node)) return true;
    const parent = node.parentNode;
    node = node.assignedSlot || (parent && parent.nodeType === 11 ? parent.host : parent);
  }
  return false;
}
