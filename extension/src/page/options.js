// Options of a collapsed native <select> (issue 14 item 2).
// NOT BUILT YET: no option is routed through its select.

/**
 * @param {Element} el  the ref's element
 * @param {Function} _locatorFor  page/locator.js locatorFor
 * @returns {{css: string, selectOption: number}|null}  the select's locator and the option's index
 */
export function optionRoute(el, _locatorFor) {
  return null;
}
