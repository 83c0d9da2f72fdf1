// Content script entry (one instance per document, all frames): the thin adapter
// between the extension messaging API and the pure page code in ../page/.
// Messages from the background: {op, ...}; answers: {ok: true, result} | {ok: false, error}.

import { PageError, toWireError } from '../page/errors.js';
import { FrameKeys } from '../page/frames.js';
import { locatorFor } from '../page/locator.js';
import { DocumentIdentity } from '../page/identity.js';
import { PageObserver } from '../page/snapshot.js';
import { actSynthetic } from '../page/synthetic.js';
import { Receipts, coordinatesFor } from '../page/receipt.js';
import { waitForText, waitForTextGone } from '../page/wait.js';
import { isSensitive } from '../page/sensitive.js';
import { measureFastPoint } from '../page/fastpoint.js';
import { optionRoute } from '../page/options.js';
import { hitTest } from '../page/hittest.js';
import { find } from '../page/find.js';
import { snapshotBegin } from '../page/begin.js';
import { FRAME_PORT_NAME, FramePort } from '../page/frameport.js';
import { watchReopen } from '../page/reopen.js';
import { FrameToken } from '../page/token.js';

import { api, openOrClosedShadowRoot } from '../shim/browser.js';
import { FRAME_TOKEN_ATTRIBUTE as TOKEN_ATTRIBUTE } from '../generated/protocol.js';

const TOKEN_WAIT_MS = 1000;

const frameKeys = new FrameKeys();
frameKeys.listen(window);
// document.open() (a frame written by script) erases this script's window listeners:
// page/reopen.js restores them.
watchReopen(document, window);
// The frame token reaches this script without a trace in the page (page/token.js).
const token = new FrameToken();
// Chromium's extension origin is chrome-extension://, Firefox's and Camoufox's moz-extension://
// (runtime.getBrowserInfo, shim/browser.js `engine`, is not a content-script API).
if (api.runtime.getURL('').startsWith('chrome-extension:')) token.exposeOn(globalThis);
else token.listenTransient(document, TOKEN_ATTRIBUTE);
// A delivered click's receipt goes to the background when the click's dispatch ends (and
// on to the bridge as a `page.receipt` event; again with `fileInput: true` when a later
// task clicked a file input): over the frame's port when it is open, else by
// runtime.sendMessage (page/frameport.js); fire-and-forget, the bridge falls back to asking.
const receipts = new Receipts(window, (receiptId, receipt) => {
  framePort.push({ receiptPushed: { receiptId, ...receipt } });
}, openOrClosedShadowRoot);

/** Open or closed shadow root of `el` (the extension may see closed ones; design.md §4). */
const shadowRootOf = openOrClosedShadowRoot;

// Observation (issue 4): document identity, refs with one rebind, paged snapshots.
const identity = new DocumentIdentity(window);
const observer = new PageObserver(document, { shadowRootOf, frameKeyOf: (el) => frameKeys.keyOf(el) });
const refs = observer.refs;
// Issue 30 item 8: the supervisor reads the browser's accessibility tree for the elements
// whose role or name page-world code cannot see (ElementInternals). It asks for them by
// ref through CDP in this script's own world (supervisor/frames.py ax_facts), as it hands
// the frame token: page script sees neither the call nor the function.
if (api.runtime.getURL('').startsWith('chrome-extension:')) {
  Object.defineProperty(globalThis, '__trustbridgeAxElements', {
    value: (localRefs) => observer.axElements(localRefs), configurable: true,
  });
}
/** A chunk with ax candidates names this document's frame token (null when it has none yet). */
const withToken = (chunk) => (chunk && chunk.ax ? { ...chunk, frameToken: token.token } : chunk);

/** BROWSER_DOCUMENT_CHANGED unless `expected` ({token, timeOrigin, url} recorded by a
 *  snapshot) is this document and no navigation away from it is pending. */
function checkDocument(expected) {
  identity.check(expected);
}

/** The element behind a local ref: {el, resolvedBy, rebound} (page/refs.js). */
function resolveRef(ref) {
  return observer.resolve(ref);
}

/** The frame token the supervisor handed this document (page/token.js); waits up to
 *  TOKEN_WAIT_MS for a fresh document: the token lands some milliseconds after a document
 *  commits, so an action right after a navigation often gets here first. */
async function frameToken() {
  const got = await token.wait(TOKEN_WAIT_MS);
  if (got) return got;
  throw new PageError('FRAME_TOKEN_UNKNOWN',
    'This frame has no input-driver token yet (it is still loading, or no driver supervises this browser). ' +
    'Wait a moment, take a new snapshot and retry.', {});
}

const handlers = {
  announceFrames() {
    return { count: frameKeys.announce(document, shadowRootOf) };
  },
  /** Who this frame is: its identity, the key its parent announced, URL and title. */
  identify() {
    return {
      docId: identity.current(), frameKey: frameKeys.mine, isTop: window === window.top,
      url: location.href, title: document.title, navigating: identity.navigating(),
    };
  },
  /** announceFrames + identify + snapshot in one message (page/begin.js; background/snapshot.js `begin`). */
  snapshotBegin(msg) {
    return snapshotBegin(handlers, msg);
  },
  /** Start a walk (outline or read, optionally at a ref) and return its first chunk. */
  snapshot({ prefix, mode, maxChars, baseDepth, rootRef, refFloor, docId: expected, depth, timeBudgetMs }) {
    if (rootRef) checkDocument(expected);
    const chunk = observer.start({
      mode, prefix: prefix || '', baseDepth: baseDepth || 0, rootRef, maxChars: maxChars || 50000,
      refFloor: refFloor || 1, url: identity.current().url,
      depth: depth ?? null, timeBudgetMs: timeBudgetMs ?? null,
    });
    return withToken({ ...chunk, docId: identity.current() });
  },
  /** Next chunk of a walk. */
  snapshotContinue({ walkerId, maxChars, docId: expected, timeBudgetMs, refFloor }) {
    checkDocument(expected);
    // The browser-wide ref floor (background/tabs.js): another tab may have minted since.
    return withToken(observer.continue(walkerId, maxChars || 50000, timeBudgetMs ?? null, refFloor || 1));
  },
  /** The browser reported that a navigation of this frame did not happen. */
  navigationSettled() {
    identity.settle();
    return {};
  },
  async locate({ ref, docId: expected, receipt, allowCoordinates, fastPoint, settle }) {
    checkDocument(expected);
    if (!ref) return { frameToken: await frameToken(), css: null };
    const { el, resolvedBy, rebound } = resolveRef(ref);
    let css;
    let point;
    try {
      css = locatorFor(el, refs.describe(ref) || {});
    } catch (err) {
      // Opt-in only: a closed shadow root is reached by coordinates, proven by hit test.
      if (!(allowCoordinates && err.code === 'CLOSED_SHADOW_ROOT')) throw err;
      css = 'css:light=html';
      point = coordinatesFor(el);
    }
    const out = { frameToken: await frameToken(), css, resolvedBy, rebound };
    if (point) out.point = point;
    // issue 14 item 2: an option of a collapsed <select> is clicked through its select.
    const option = optionRoute(el, locatorFor);
    if (option) Object.assign(out, option);
    // issue 18: a verified click point ({fastPoint} or {fastRefused}), page/fastpoint.js.
    else if (fastPoint && !point) Object.assign(out, await measureFastPoint(el, shadowRootOf, { settle: !!settle }));
    // The bridge then masks what the agent types here wherever the page echoes it.
    if (isSensitive(el)) out.sensitive = true;
    // An option is selected through its select (no click reaches it): no receipt to wait for.
    // The fast path's press is guarded at its point (page/receipt.js, "Press guard").
    if (receipt && !option) out.receiptId = receipts.arm(el, out.fastPoint || null);
    return out;
  },
  receipt({ receiptId }) {
    return receipts.read(receiptId);
  },
  /** The element at a point of this frame's viewport (page/hittest.js; MouseAction). */
  hitTest(msg) {
    return hitTest(document, msg, { shadowRootOf, refs: observer.refs, receipts, frameKeys });
  },
  /** Matching outline lines with refs (page/find.js; page.find). */
  find(msg) {
    return find(document, msg, { shadowRootOf, observer, frameKeys });
  },
  async act({ ref, docId: expected, action }) {
    checkDocument(expected);
    if (action.kind === 'mouse') {
      // Input at a viewport point is only ever the driver's real mouse: synthetic events
      // at coordinates would claim what no pointer did (issue 15 item 1).
      throw new PageError('TRUSTED_INPUT_UNAVAILABLE',
        'Mouse input at coordinates needs the input driver (real browser input); this browser has none, ' +
        'and no synthetic events were sent. Use a ref from a snapshot instead, or run the browser with ' +
        'trustbridge up.', { action: 'mouse', op: action.op });
    }
    const resolved = ref ? resolveRef(ref) : null;
    const el = resolved ? resolved.el : null;
    if (!el && action.kind !== 'press') {
      throw new PageError('BAD_REQUEST', `A ${action.kind} needs a ref.`);
    }
    const before = identity.current().url;
    const result = await actSynthetic(el, action);
    const observation = {
      postActionDocumentChanged: identity.navigating() || identity.current().url !== before,
    };
    if (resolved) Object.assign(observation, { resolvedBy: resolved.resolvedBy, rebound: resolved.rebound });
    return { ...result, ...observation };
  },
  /** Move `delta` entries in the joint session history (queued: the answer goes first). */
  historyGo({ delta }) {
    if (delta !== -1 && delta !== 1) throw new PageError('BAD_REQUEST', 'historyGo takes -1 or 1.');
    history.go(delta);
    return {};
  },
  /** {found} as soon as the text is rendered in this document, or false after maxMs;
   *  with gone, {gone} once it is not. */
  waitText({ text, maxMs, gone = false }) {
    const ms = Math.min(Math.max(Number(maxMs) || 0, 0), 5000);
    // gone: {gone} as soon as the text is no longer rendered here (page.wait textGone).
    if (gone) return waitForTextGone(document, String(text), ms, shadowRootOf);
    return waitForText(document, String(text), ms, shadowRootOf);
  },
};

/** The reply to a request {op, ...}: {ok: true, result} | {ok: false, error}. */
function answer(msg) {
  return Promise.resolve()
    .then(() => handlers[msg.op](msg))
    .then((result) => ({ ok: true, result }), (err) => ({ ok: false, error: toWireError(err) }));
}

const isRequest = (msg) => !!msg && typeof msg.op === 'string' && Object.hasOwn(handlers, msg.op);

// Requests come over this frame's port when the background can prove it belongs to this
// document (background/ports.js), else by tabs.sendMessage below.
const framePort = new FramePort(api.runtime, window, FRAME_PORT_NAME,
  (msg) => (isRequest(msg) ? answer(msg) : Promise.resolve({ ok: false, error: toWireError(new PageError('BAD_REQUEST', 'Unknown content-script op.')) })));

api.runtime.onMessage.addListener((msg, _sender, sendResponse) => {
  if (!isRequest(msg)) return false;
  // No-op while the port is open; without one (the background restarted, the page came
  // back from the back/forward cache), open it for the next request.
  framePort.connect();
  answer(msg).then(sendResponse);
  return true; // answer asynchronously
});
