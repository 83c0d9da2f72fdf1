// A document rewritten by document.open() (an `about:blank` iframe that page script fills
// with document.open/write/close, or with a bare document.write after load): HTML's
// "document open steps" keep the Document and its Window but remove every node, the root
// element with the frame token the supervisor stamped on it (design.md §3), and "erase all
// event listeners and handlers" of the document and of its Window: the content script's own
// window listeners too (frame key, delivery receipts, identity). Without this module such a
// frame had no token (every action failed FRAME_TOKEN_UNKNOWN) and never learnt its frame
// key (the snapshot showed "(frame content not available)").
//
// `onWindow` adds a window listener and remembers it; `watchReopen` observes the document's
// own children (not its subtree: one record per root change) and, when a root element goes,
// adds the remembered listeners again and writes the removed root's token onto the new root.
// The token stays right: document.open() keeps the Document in the same frame, which is what
// the token names (the supervisor keeps the token of a document that still holds it).

/** @type {WeakMap<object, Array<[string, Function, object|boolean|undefined]>>} */
const remembered = new WeakMap();

/** `win.addEventListener(type, fn, options)`, remembered for `restoreWindowListeners`. */
export function onWindow(win, type, fn, options) {
  win.addEventListener(type, fn, options);
  let list = remembered.get(win);
  if (!list) remembered.set(win, (list = []));
  list.push([type, fn, options]);
}

/** Add every remembered listener of `win` again. One still in place is not added twice
 *  (DOM "add an event listener" ignores a listener with the same type, callback, capture). */
export function restoreWindowListeners(win) {
  for (const [type, fn, options] of remembered.get(win) || []) win.addEventListener(type, fn, options);
}

/**
 * Watch `doc` for its root element being replaced (document.open(), or a page replacing
 * `document.documentElement`): restore `win`'s remembered listeners, and carry the token
 * attribute `attr` of the removed root onto the new one when the new one has none.
 * @param {Document} doc
 * @param {Window} win
 * @param {string} attr  the frame token attribute (FRAME_TOKEN_ATTRIBUTE)
 * @param {(token: string) => void} [onToken]  told the token carried over
 * @returns {MutationObserver}
 */
export function watchReopen(doc, win, attr, onToken = () => {}) {
  let carried = null; // the token of the last removed root, until a new root takes it
  const observer = new MutationObserver((records) => {
    let removedRoot = false;
    for (const record of records) {
      for (const node of record.removedNodes) {
        if (node.nodeType !== 1) continue;
        removedRoot = true;
        const token = node.getAttribute(attr);
        if (token) carried = token;
      }
    }
    if (removedRoot) restoreWindowListeners(win);
    const root = doc.documentElement;
    if (carried && root) {
      if (!root.hasAttribute(attr)) {
        root.setAttribute(attr, carried);
        onToken(carried);
      }
      carried = null;
    }
  });
  observer.observe(doc, { childList: true });
  return observer;
}
