// Waiting for text to appear in one document (page.wait {text}). Pure DOM.
//
// A MutationObserver wakes the check when the DOM changes, so the answer comes within a
// few ms of the text appearing instead of at the next tick of a fixed poll; a slow
// interval covers changes no mutation announces (a stylesheet or media query revealing
// hidden text). The text is matched against `body.innerText`, i.e. rendered text only.

const POLL_MS = 250;
const MIN_GAP_MS = 8;

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
 * @returns {Promise<{found: boolean}>}
 */
export function waitForText(doc, text, maxMs) {
  const view = doc.defaultView;
  let cost = 0;
  const has = () => {
    const t0 = view.performance.now();
    const found = !!(doc.body && doc.body.innerText.includes(text));
    cost = view.performance.now() - t0;
    return found;
  };
  if (has()) return Promise.resolve({ found: true });
  return new Promise((resolve) => {
    let last = view.performance.now();
    let trailing = null;
    let done = false;
    const finish = (found) => {
      if (done) return;
      done = true;
      observer.disconnect();
      view.clearTimeout(timer);
      view.clearTimeout(trailing);
      view.clearInterval(poll);
      resolve({ found });
    };
    const check = () => {
      trailing = null;
      last = view.performance.now();
      if (has()) finish(true);
    };
    const onMutation = () => {
      const gap = Math.max(MIN_GAP_MS, 4 * cost);
      const since = view.performance.now() - last;
      if (since >= gap) check();
      else if (trailing === null) trailing = view.setTimeout(check, gap - since);
    };
    const observer = new view.MutationObserver(onMutation);
    observer.observe(doc, { subtree: true, childList: true, characterData: true, attributes: true });
    const poll = view.setInterval(check, POLL_MS);
    const timer = view.setTimeout(() => finish(has()), Math.max(0, maxMs));
  });
}
