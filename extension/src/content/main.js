// Content script entry (one instance per document, all frames): the thin adapter
// between the extension messaging API and the pure page code in ../page/.
// Messages from the background: {op, ...}; answers: {ok: true, result} | {ok: false, error}.

import { PageError, toWireError } from '../page/errors.js';
import { FrameKeys } from '../page/frames.js';
import { locatorFor } from '../page/locator.js';
import { RefRegistry } from '../page/refs.js';
import { snapshotDocument } from '../page/snapshot.js';
import { actSynthetic } from '../page/synthetic.js';

const api = globalThis.browser ?? globalThis.chrome;
const TOKEN_ATTRIBUTE = 'data-mcjug';
const TOKEN_WAIT_MS = 1000;

const refs = new RefRegistry();
const frameKeys = new FrameKeys();
frameKeys.listen(window);
const docId = (() => {
  const a = new Uint32Array(2);
  crypto.getRandomValues(a);
  return a[0].toString(36) + a[1].toString(36);
})();

/** Open or closed shadow root of `el` (the extension may see closed ones; DESIGN §4). */
function shadowRootOf(el) {
  if (el.shadowRoot) return el.shadowRoot;
  try {
    if (api.dom && typeof api.dom.openOrClosedShadowRoot === 'function') {
      return api.dom.openOrClosedShadowRoot(el) || null;
    }
    if (typeof el.openOrClosedShadowRoot === 'function') return el.openOrClosedShadowRoot() || null;
  } catch {
    /* not a host */
  }
  return null;
}

function checkDocument(expected) {
  if (expected && expected !== docId) {
    throw new PageError('BROWSER_DOCUMENT_CHANGED',
      'This ref belongs to an earlier document of this frame (it navigated or reloaded). Take a new snapshot.',
      {});
  }
}

/** The frame token the supervisor stamped; waits up to 1 s for a fresh document. */
async function frameToken() {
  const deadline = performance.now() + TOKEN_WAIT_MS;
  for (;;) {
    const token = document.documentElement && document.documentElement.getAttribute(TOKEN_ATTRIBUTE);
    if (token) return token;
    if (performance.now() > deadline) {
      throw new PageError('FRAME_TOKEN_UNKNOWN',
        'This frame has no input-driver token yet (it is still loading, or no driver supervises this browser). ' +
        'Wait a moment, take a new snapshot and retry.', {});
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

const handlers = {
  announceFrames() {
    return { count: frameKeys.announce(document, shadowRootOf) };
  },
  snapshot({ prefix }) {
    const { lines, refCount } = snapshotDocument(document, {
      prefix: prefix || '',
      refs,
      shadowRootOf,
      frameKeyOf: (el) => frameKeys.keyOf(el),
    });
    return {
      docId, frameKey: frameKeys.mine, isTop: window === window.top,
      url: location.href, title: document.title, lines, refCount,
    };
  },
  async locate({ ref, docId: expected }) {
    checkDocument(expected);
    if (!ref) return { frameToken: await frameToken(), css: null };
    const el = refs.resolve(ref);
    const css = locatorFor(el, refs.describe(ref) || {});
    return { frameToken: await frameToken(), css };
  },
  act({ ref, docId: expected, action }) {
    checkDocument(expected);
    const el = ref ? refs.resolve(ref) : null;
    if (!el && action.kind !== 'press') {
      throw new PageError('BAD_REQUEST', `A ${action.kind} needs a ref.`);
    }
    return actSynthetic(el, action);
  },
  hasText({ text }) {
    return { found: !!(document.body && document.body.innerText.includes(text)) };
  },
};

api.runtime.onMessage.addListener((msg, _sender, sendResponse) => {
  if (!msg || typeof msg.op !== 'string' || !Object.hasOwn(handlers, msg.op)) return false;
  Promise.resolve()
    .then(() => handlers[msg.op](msg))
    .then((result) => sendResponse({ ok: true, result }), (err) => sendResponse({ ok: false, error: toWireError(err) }));
  return true; // answer asynchronously
});
