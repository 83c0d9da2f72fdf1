// A document rewritten by document.open() (an `about:blank` iframe that page script fills
// with document.open/write/close, or with a bare document.write after load): HTML's
// "document open steps" keep the Document and its Window but remove every node and "erase
// all event listeners and handlers" of the document and of its Window: the content
// script's own window listeners too (frame key, delivery receipts, identity). Without this
// module such a frame never learnt its frame key (the snapshot showed "(frame content not
// available)").
//
// `onWindow` adds a window listener and remembers it; `watchReopen` observes the document's
// own children (not its subtree: one record per root change) and, when a root element goes,
// adds the remembered listeners again.

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
 * `document.documentElement`) and add `win`'s remembered listeners again. (The frame token
 * is no longer on the root: it lives in this script's own state, page/token.js, which
 * document.open() keeps.)
 * @param {Document} doc
 * @param {Window} win
 * @returns {MutationObserver}
 */
export function watchReopen(doc, win) {
  const observer = new MutationObserver((records) => {
    const removedRoot = records.some((r) => [...r.removedNodes].some((n) => n.nodeType === 1));
    if (removedRoot) restoreWindowListeners(win);
  });
  observer.observe(doc, { childList: true });
  return observer;
}
