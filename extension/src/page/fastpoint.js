// The verified-point fast path (issue 18): measure where a trusted click on `el` lands.
// NOT BUILT YET: always refuses, so the driver takes Playwright's full path.

/**
 * @param {Element} el
 * @param {(el: Element) => ShadowRoot|null} _shadowRootOf
 * @returns {Promise<{fastPoint: {x: number, y: number}}|{fastRefused: string}>}
 */
export async function measureFastPoint(el, _shadowRootOf) {
  return { fastRefused: 'not-built' };
}
