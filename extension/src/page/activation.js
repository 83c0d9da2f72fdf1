/**
 * Whether a click on an element can, by the browser's own activation behaviour, start a
 * navigation or a download (issue 18): the driver looks for a focused download link and
 * waits for a navigation that may turn into a download after such a click only
 * (supervisor/watch.py); a click on anything else skips that round trip (2–3 ms).
 *
 * Activation behaviour (HTML §4.6.4 links, §4.10.6 buttons, §4.10.4 labels): an `<a>` or
 * `<area>` with an `href` follows it (a `download` attribute makes it a download); a
 * submit button (`<button>` whose type is submit, `<input type=submit|image>`) of a form
 * submits it; a `<label>` passes the click to its control, which may be one of those,
 * unless the click's target is a form control inside the label (Chromium's
 * HTMLLabelElement: a click on the control itself, e.g. a checkbox wrapped in its label,
 * is not passed on). The composed path counts: a click inside a link's shadow content
 * activates the link.
 * Page script that navigates from a handler is not activation behaviour: such a download
 * is reported when it shows (the driver's tail: the next action's result).
 */
const CONTROLS = new Set(['input', 'button', 'select', 'textarea']);

export function mayActivateNavigation(el) {
  let inControl = false;
  for (let node = el; node;) {
    if (node.nodeType === 1) {
      const name = node.localName;
      if ((name === 'a' || name === 'area') && node.hasAttribute('href')) return true;
      if (name === 'label' && !inControl) return true;
      if (name === 'button' && node.form && (node.type || 'submit') === 'submit') return true;
      if (name === 'input' && node.form && (node.type === 'submit' || node.type === 'image')) return true;
      if (CONTROLS.has(name)) inControl = true;
    }
    const parent = node.parentNode;
    node = node.assignedSlot || (parent && parent.nodeType === 11 ? parent.host : parent);
  }
  return false;
}
