// Frame keys: how the background learns which <iframe> element holds which child frame.
// Pure DOM. The parent gives each frame element a random key and posts it to the child's
// window; the child's agent remembers the key it got from window.parent. Page script can
// see these messages; a key only places a frame's lines in the outline, it grants nothing.

import { mayHostShadow } from './dom.js';
import { onWindow } from './reopen.js';

export const FRAME_KEY_FIELD = '__trustbridgeFrameKey';

function randomKey() {
  const a = new Uint32Array(2);
  crypto.getRandomValues(a);
  return a[0].toString(36) + a[1].toString(36);
}

/** Every element matching `selector` in `root`, including inside shadow roots (open, and
 *  closed ones `shadowRootOf` reveals). Only elements that can host a shadow root are
 *  asked for one (https://dom.spec.whatwg.org/#dom-element-attachshadow). */
export function deepQueryAll(root, selector, shadowRootOf) {
  const out = [];
  const visit = (node) => {
    for (const el of node.querySelectorAll(selector)) out.push(el);
    for (const el of node.querySelectorAll('*')) {
      if (!mayHostShadow(el)) continue;
      const sr = shadowRootOf(el);
      if (sr) visit(sr);
    }
  };
  visit(root);
  return out;
}

export class FrameKeys {
  constructor() {
    /** @type {WeakMap<Element, string>} */
    this.keys = new WeakMap();
    this.mine = null; // the key this document's parent announced
  }

  /** Key of a frame element; a new element gets a key and the child is told. */
  keyOf(frameEl) {
    let key = this.keys.get(frameEl);
    if (!key) {
      key = randomKey();
      this.keys.set(frameEl, key);
    }
    try {
      frameEl.contentWindow && frameEl.contentWindow.postMessage({ [FRAME_KEY_FIELD]: key }, '*');
    } catch {
      /* a frame without a window yet: it is announced on the next snapshot */
    }
    return key;
  }

  /** Announce keys to every child frame of `doc`; returns how many. */
  announce(doc, shadowRootOf) {
    const frames = deepQueryAll(doc, 'iframe, frame', shadowRootOf);
    for (const el of frames) this.keyOf(el);
    return frames.length;
  }

  /** Listen for the key our parent announces. */
  listen(win) {
    onWindow(win, 'message', (event) => {
      const data = event.data;
      if (event.source === win.parent && win.parent !== win && data && typeof data[FRAME_KEY_FIELD] === 'string') {
        this.mine = data[FRAME_KEY_FIELD];
      }
    }, true);
  }
}
