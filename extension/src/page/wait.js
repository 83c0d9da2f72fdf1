// Waiting for text to appear in one document (page.wait {text}), or to leave it
// (page.wait {textGone}). Pure DOM.
//
// A MutationObserver wakes the check when the DOM changes, so the answer comes within a
// few ms of the text appearing instead of at the next tick of a fixed poll; a slow
// interval covers changes no mutation announces (a stylesheet or media query revealing
// hidden text). The text is matched against `body.innerText`, i.e. rendered text only,
// and against the rendered text inside shadow roots (open and, given `shadowRootOf`,
// closed), which `innerText` leaves out. Mutations inside shadow roots are not reported to
// an observer on the document, so shadow text is checked on the slow poll.

const POLL_MS = 250;
const MIN_GAP_MS = 8;

/** Does the rendered text of any shadow tree under `root` contain `text`? */
function inShadows(root, text, shadowRootOf) {
  const SHOW_ELEMENT = 1; // NodeFilter.SHOW_ELEMENT
  const walker = (root.ownerDocument || root).createTreeWalker(root, SHOW_ELEMENT);
  for (let el = walker.nextNode(); el; el = walker.nextNode()) {
    const shadow = shadowRootOf(el);
    if (!shadow) continue;
    for (const child of shadow.childNodes) {
      const rendered = child.nodeType === 1 ? child.innerText : child.nodeType === 3 ? child.data : '';
      if (typeof rendered === 'string' && rendered.includes(text)) return true;
    }
    if (inShadows(shadow, text, shadowRootOf)) return true;
  }
  return false;
}

/**
 * Resolve `{found: true}` as soon as `text` is part of the document's rendered text, or
 * `{found: false}` after `maxMs` (ms).
 *
 * Checks are spaced by at least 8 ms and by 4× the last check's own cost (innerText
 * forces layout; on a very large page it is not free), so a page that mutates constantly
 * is not slowed down by the wait.
 * @param {Document} doc
 * @param {string} text
 * @param {number} maxMs
 * @param {(el: Element) => ShadowRoot|null} [shadowRootOf]  open or closed shadow root of an
 *   element (default: open ones only)
 * @returns {Promise<{found: boolean}>}
 */
export function waitForText(doc, text, maxMs, shadowRootOf = (el) => el.shadowRoot) {
  return waitFor(doc, text, maxMs, shadowRootOf, true).then((met) => ({ found: met }));
}

/**
 * Resolve `{gone: true}` as soon as `text` is no longer part of the document's rendered
 * text (shadow roots included), or `{gone: false}` after `maxMs` (ms). Every check of a
 * gone wait reads the shadow trees too: a text that left the light DOM may still be
 * rendered inside one, and mutations there are not announced to the document.
 * @param {Document} doc
 * @param {string} text
 * @param {number} maxMs
 * @param {(el: Element) => ShadowRoot|null} [shadowRootOf]
 * @returns {Promise<{gone: boolean}>}
 */
export function waitForTextGone(doc, text, maxMs, shadowRootOf = (el) => el.shadowRoot) {
  return waitFor(doc, text, maxMs, shadowRootOf, false).then((met) => ({ gone: met }));
}

/** Resolve true once the text's presence equals `present`, false after `maxMs`. */
function waitFor(doc, text, maxMs, shadowRootOf, present) {
  const view = doc.defaultView;
  let cost = 0;
  const has = (shadows = false) => {
    const t0 = view.performance.now();
    const found = !!(doc.body && (doc.body.innerText.includes(text) ||
      ((shadows || !present) && inShadows(doc.body, text, shadowRootOf))));
    cost = view.performance.now() - t0;
    return found;
  };
  const met = (shadows = false) => has(shadows) === present;
  if (met(true)) return Promise.resolve(true);
  return new Promise((resolve) => {
    let last = view.performance.now();
    let trailing = null;
    let done = false;
    const finish = (ok) => {
      if (done) return;
      done = true;
      observer.disconnect();
      view.clearTimeout(timer);
      view.clearTimeout(trailing);
      view.clearInterval(poll);
      resolve(ok);
    };
    const check = (shadows = false) => {
      trailing = null;
      last = view.performance.now();
      if (met(shadows)) finish(true);
    };
    const onMutation = () => {
      const gap = Math.max(MIN_GAP_MS, 4 * cost);
      const since = view.performance.now() - last;
      if (since >= gap) check();
      else if (trailing === null) trailing = view.setTimeout(check, gap - since);
    };
    const observer = new view.MutationObserver(onMutation);
    observer.observe(doc, { subtree: true, childList: true, characterData: true, attributes: true });
    const poll = view.setInterval(() => check(true), POLL_MS);
    const timer = view.setTimeout(() => finish(met(true)), Math.max(0, maxMs));
  });
}
