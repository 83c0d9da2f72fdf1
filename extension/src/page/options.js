// Options of a native <select> (issue 14 item 2). Pure DOM: no chrome.* calls.
//
// The snapshot lists a select's <option>s under its line, each with a ref (walker.js
// optionLines). An <option> of a collapsed select has no box an input device can reach
// (the open popup is drawn by the browser, outside the page), so a click on its ref is
// routed to the select: the driver selects the option there with trusted keys, the same
// route as the select action (supervisor/select.py click_option), and reads it back.

/**
 * The select route of an option ref, or null when `el` is not an option of a native
 * <select> (every other element keeps its own locator).
 * @param {Element} el  the ref's element
 * @param {(el: Element, describe?: object) => string} locatorFor  page/locator.js locatorFor
 * @returns {{css: string, selectOption: number}|null}  the select's locator and the
 *          option's index in `select.options` (disabled options included: the driver
 *          refuses one with ELEMENT_TARGET_DISABLED)
 * @throws PageError ELEMENT_TARGET_DETACHED | CLOSED_SHADOW_ROOT (from locatorFor)
 */
export function optionRoute(el, locatorFor) {
  const select = selectOf(el);
  if (!select) return null;
  const index = Array.prototype.indexOf.call(select.options, el);
  if (index < 0) return null;
  return { css: locatorFor(select, { role: 'combobox', name: select.name || '' }), selectOption: index };
}

/** The <select> that owns option `el` (directly or through an <optgroup>), or null. */
export function selectOf(el) {
  if (!(el instanceof HTMLOptionElement)) return null;
  let parent = el.parentElement;
  if (parent && parent.localName === 'optgroup') parent = parent.parentElement;
  return parent instanceof HTMLSelectElement ? parent : null;
}
