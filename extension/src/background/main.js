// Background entry: reads config.json (written by the supervisor into its copy of the
// extension) or, in a person's own browser, the stored pairing (options/store.js),
// connects to the bridge and serves the dispatch table below. Only the methods named
// here are callable (allow-list).

import { BridgeConnection, attendedOf } from './connection.js';
import { Owners } from './owners.js';
import { servePopup } from './popup_api.js';
import { closeStartupTabs } from './startup.js';
import { configOf, loadCdpConsent, loadPairing } from '../options/store.js';
import { keepProvisional, snapshotTab } from './snapshot.js';
import { hitTestTab } from './hittest.js';
import { findInTab } from './find.js';
import { PageError } from '../page/errors.js';
import { Tabs } from './tabs.js';

import { api } from '../shim/browser.js';
const tabs = new Tabs(api);
/** Which session owns which tab (the bridge's `sessions.owners`), shown on the action. */
const owners = new Owners(api);

/**
 * Resolve when the tab's top frame finishes loading a document (webNavigation.onCompleted),
 * or, with `sameDocument`, also when it moves within its document (pushState, fragment:
 * a history entry of the same document fires no load; not once a new document has
 * committed, whose load is then awaited). With `requireCommit`, only the load of a
 * navigation that started after this call counts: the previous document's late load event,
 * or a navigation already on its way (a fresh tab's first load), must not end the wait for
 * the next one (it made `back` land two entries back: the awaited page never committed).
 * Rejects BAD_REQUEST (navigation failed), BROWSER_TAB_CLOSED, TIMEOUT after `timeoutMs` ms.
 */
/** Firefox's webNavigation.onErrorOccurred says "Error code 2152398861": the nsresult
 *  by number. The common network ones by name (xpcom/base/ErrorList.py; Chromium already
 *  says net::ERR_CONNECTION_REFUSED and the like). */
const NS_NET_ERRORS = new Map([
  [2152398861, 'NS_ERROR_CONNECTION_REFUSED'], [2152398878, 'NS_ERROR_UNKNOWN_HOST'],
  [2152398862, 'NS_ERROR_NET_TIMEOUT'], [2152398868, 'NS_ERROR_NET_RESET'],
  [2152398919, 'NS_ERROR_NET_INTERRUPT'], [2152398864, 'NS_ERROR_OFFLINE'],
]);

function netErrorName(error) {
  const text = String(error || 'unknown error');
  const m = /\b(\d{10})\b/.exec(text);
  const name = m && NS_NET_ERRORS.get(Number(m[1]));
  return name ? `${name} (${text})` : text;
}

function waitForLoad(tabId, timeoutMs, { sameDocument = false, requireCommit = false, target = null } = {}) {
  return new Promise((resolve, reject) => {
    const nav = api.webNavigation;
    let started = false; // a navigation of this frame started since the call
    let committed = false; // ... and committed a new document
    // A load of about:blank is never the one a navigation to a real URL awaits (a new
    // tab's own first load, still on its way).
    const stray = (d) => target !== null && target !== 'about:blank' && d.url === 'about:blank';
    const top = (d) => d.tabId === tabId && d.frameId === 0 && !stray(d);
    const listeners = [
      [nav.onBeforeNavigate, (d) => { if (top(d)) started = true; }],
      // A navigation already on its way when the call came (the new tab's first load)
      // commits and completes without a start seen here: it is not the one awaited.
      [nav.onCommitted, (d) => { if (top(d) && (started || !requireCommit)) committed = true; }],
      [nav.onCompleted, (d) => { if (top(d) && (committed || !requireCommit)) done(resolve); }],
      [nav.onErrorOccurred, (d) => {
        // With requireCommit, an abort is the previous document's load being cut short by
        // this navigation (or this one replaced by a later one, whose load then counts).
        // Firefox may report the abort by its number: 2152398850 is NS_BINDING_ABORTED
        // (0x804B0002).
        if (requireCommit && /ERR_ABORTED|NS_BINDING_ABORTED|\b2152398850\b/.test(d.error || '')) return;
        if (top(d)) done(reject, new PageError('BAD_REQUEST', `Navigation failed: ${netErrorName(d.error)}.`, { error: d.error },
          'The page did not load (a network error, not the request): check that a server answers at that address, then navigate again.'));
      }],
      [api.tabs.onRemoved, (id) => {
        if (id === tabId) done(reject, new PageError('BROWSER_TAB_CLOSED', 'The tab closed during navigation.', { tabId }));
      }],
    ];
    if (sameDocument) {
      // A same-document move ends the wait only when no new document is on its way (a new
      // page's own replaceState during its load must not end the wait before its load).
      const onSameDocument = (d) => { if (top(d) && !committed) done(resolve); };
      listeners.push([nav.onHistoryStateUpdated, onSameDocument], [nav.onReferenceFragmentUpdated, onSameDocument]);
    }
    const done = (fn, arg) => {
      clearTimeout(timer);
      for (const [event, listener] of listeners) event.removeListener(listener);
      fn(arg);
    };
    const timer = setTimeout(() => done(reject, new PageError('TIMEOUT', `The page did not finish loading within ${timeoutMs} ms.`, { timeoutMs })), timeoutMs);
    for (const [event, listener] of listeners) event.addListener(listener);
  });
}

/** How long tabs.new without a URL waits for the new tab's own about:blank load, ms. */
const BLANK_SETTLE_MS = 5000;

/**
 * Wait (bounded) until a new tab's initial about:blank load is over. Answered before it,
 * a page.navigate right after raced that load: its events were taken for the navigation's
 * own ("Navigated to about:blank"), or the load replaced the navigation (a 30 s TIMEOUT):
 * 1 run in 6 of tests/e2e/test_mcp_sessions.py on a loaded machine.
 */
async function settleBlank(tabId) {
  const until = Date.now() + BLANK_SETTLE_MS;
  while (Date.now() < until) {
    const tab = await api.tabs.get(tabId).catch(() => null);
    if (!tab || tab.status === 'complete') return;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Slice of a text wait handed to each frame at once, ms: frames attached meanwhile join
 *  at the next slice. */
const WAIT_SLICE_MS = 1000;

/** True as soon as any frame of the tab renders `text` within `maxMs` (each frame's
 *  content script waits on its own MutationObserver: page/wait.js). */
async function framesWaitText(tabId, text, maxMs) {
  const frames = await api.webNavigation.getAllFrames({ tabId });
  const asks = frames.map((f) => tabs.toFrame(tabId, f.frameId, { op: 'waitText', text, maxMs })
    .then((a) => (a.found ? true : Promise.reject(new Error('not found')))));
  return Promise.any(asks).then(() => true, () => false);
}

/** True once no frame of the tab renders `text` (each frame waits on its own observer
 *  until the text leaves it, at most `maxMs`: page/wait.js), confirmed by one immediate
 *  round over every frame, so a text that moved from one frame to another still counts as
 *  shown. A frame that cannot answer (being replaced, no content script) shows nothing
 *  the extension can read: the same frames a text wait reads. */
async function framesTextGone(tabId, text, maxMs) {
  const round = async (ms) => {
    const frames = await api.webNavigation.getAllFrames({ tabId });
    const asks = frames.map((f) => tabs.toFrame(tabId, f.frameId, { op: 'waitText', text, maxMs: ms, gone: true })
      .then((a) => a.gone === true, () => true));
    return (await Promise.all(asks)).every(Boolean);
  };
  return (await round(maxMs)) && round(0);
}

/** Result fields of a navigation that recovered a crashed tab (`recovered`: its new id,
 *  or null when the tab had not crashed). */
function recoveryFacts(asked, recovered) {
  return recovered === null ? {} : { recoveredFromCrash: true, crashedTabId: asked };
}

/** Run `load` (a tabs.update / tabs.create / windows.create that loads `url`); a URL the
 *  browser will not let an extension load becomes BAD_REQUEST with what to do instead.
 *  Firefox answers "Illegal URL" for file: URLs (extensions may not open them, whatever
 *  the bridge allows: MDN tabs.update, "url" cannot be a file: URL), and for privileged
 *  pages the bridge refuses before sending. */
async function loadingUrl(url, load) {
  try {
    return await load();
  } catch (err) {
    const message = err && err.message ? String(err.message) : String(err);
    if (!/Illegal URL/i.test(message)) throw err;
    const file = /^file:/i.test(url);
    throw new PageError('BAD_REQUEST',
      file ? 'This browser does not let extensions open file: URLs (it answered "Illegal URL"), even when the bridge allows them; Chromium does.'
        : `This browser does not let extensions open this URL (it answered "Illegal URL").`,
      { scheme: (url.split(':', 1)[0] || '').toLowerCase().slice(0, 32) },
      file ? 'Nothing was loaded. Serve the folder over loopback (python3 -m http.server --bind 127.0.0.1 8000) and open http://127.0.0.1:8000/..., or use a Chromium device.'
        : 'Nothing was loaded. Open an http(s): URL or about:blank.');
  }
}

/**
 * A tab whose top document is about:blank (a new tab, or one sent there) has no content
 * script: the browser runs none in a top-level about:blank of no origin, even with
 * match_about_blank. Throw BROWSER_DOCUMENT_CHANGED with `blank: {index, count}` (this
 * tab's place among the browser's blank tabs, oldest first, by tab id) so the bridge can
 * ask the driver for the page in the same place (driver.blankPage); return when the tab
 * is not blank (the caller throws its own error).
 */
async function throwIfBlank(tabId) {
  const isBlank = (t) => !t.url || t.url === 'about:blank';
  const tab = await api.tabs.get(tabId).catch(() => null);
  if (!tab || !isBlank(tab)) return;
  const blanks = (await api.tabs.query({})).filter(isBlank).map((t) => t.id).sort((a, b) => a - b);
  throw new PageError('BROWSER_DOCUMENT_CHANGED',
    'The tab shows about:blank, where the extension has no script.',
    { frameId: 0, tabId, blank: { index: blanks.indexOf(tabId), count: blanks.length } });
}

const handlers = {
  async 'tabs.list'() {
    return { tabs: await tabs.list() };
  },

  // A tab whose renderer crashed is discarded first (tabs.recoverIfCrashed), then loaded:
  // the result names its new id and says recoveredFromCrash.
  async 'page.navigate'({ tabId, url, timeoutMs = 30000 }) {
    const asked = await tabs.resolveTab(tabId, { allowCrashed: true });
    const recovered = await tabs.recoverIfCrashed(asked);
    const id = recovered ?? asked;
    // sameDocument: a URL that differs only by its fragment loads nothing (not after a
    // crash: the discarded tab has no document, and must load).
    const loaded = waitForLoad(id, timeoutMs, { sameDocument: recovered === null, requireCommit: true, target: url });
    try {
      await loadingUrl(url, () => api.tabs.update(id, { url }));
    } catch (err) {
      loaded.catch(() => null);  // nothing loads: its wait's timeout is nobody's error
      throw err;
    }
    await loaded;
    const tab = await api.tabs.get(id);
    return { tabId: id, url: tab.url || url, title: tab.title || '', ...recoveryFacts(asked, recovered) };
  },

  // window: open the tab in a new normal window of its own, focused, so it is the
  // foreground (active) tab there, however many sessions open tabs (issue 16). Measured
  // in our headless launches: Firefox reports a background tab of a window hidden;
  // Chromium reports it visible (tests/e2e/test_tab_windows.py).
  async 'tabs.new'({ url, window: ownWindow = false }) {
    const target = url || 'about:blank';
    let tab;
    if (ownWindow) {
      const win = await loadingUrl(target, () => api.windows.create({ url: target, focused: true, type: 'normal' }));
      [tab] = win.tabs && win.tabs.length ? win.tabs : await api.tabs.query({ windowId: win.id });
      if (!tab) throw new PageError('INTERNAL_ERROR', `The new window ${win.id} has no tab.`, { windowId: win.id });
    } else {
      tab = await loadingUrl(target, () => api.tabs.create({ url: target, active: true }));
    }
    if (url) await waitForLoad(tab.id, 30000).catch(() => null);
    else await settleBlank(tab.id);
    const now = await api.tabs.get(tab.id);
    return { tabId: tab.id, url: now.url || now.pendingUrl || url || '', title: now.title || '', windowId: now.windowId };
  },

  async 'tabs.select'({ tabId }) {
    const id = await tabs.resolveTab(tabId, { allowCrashed: true });
    const tab = await api.tabs.update(id, { active: true });
    if (tab.windowId !== undefined) await api.windows.update(tab.windowId, { focused: true }).catch(() => null);
    return { tabId: id, url: tab.url || '', title: tab.title || '' };
  },

  // issue 32 item 4: asked by the bridge only after a request on the tab timed out.
  // A page whose main thread is stuck (an endless script, a hung renderer) never runs
  // the probe's script; null when the page cannot be scripted at all (unknown).
  async 'tabs.probe'({ tabId, timeoutMs = 1500 }) {
    const started = Date.now();
    const ran = api.scripting.executeScript({ target: { tabId }, func: () => 1 })
      .then(() => true, () => null);
    let timer;
    const late = new Promise((resolve) => { timer = setTimeout(() => resolve(false), timeoutMs); });
    const responsive = await Promise.race([ran, late]);
    clearTimeout(timer);
    return { tabId, responsive, ms: Date.now() - started };
  },

  async 'tabs.close'({ tabId }) {
    const id = await tabs.resolveTab(tabId, { allowCrashed: true });
    await api.tabs.remove(id);
    return { tabId: id, closed: true };
  },

  // back / forward / reload; waits for the load of the new document (or, for back and
  // forward, the move to another entry of the same document), or reports
  // transitionPending when the history had nowhere to go within the time.
  // A reload of a crashed tab recovers it as page.navigate does (to the URL it showed);
  // back and forward on it answer BROWSER_CRASHED (resolveTab).
  async 'page.history'({ tabId, direction, timeoutMs = 30000 }) {
    if (direction === 'reload') {
      const asked = await tabs.resolveTab(tabId, { allowCrashed: true });
      const { url } = await api.tabs.get(asked);
      const recovered = await tabs.recoverIfCrashed(asked);
      if (recovered !== null) {
        const loaded = waitForLoad(recovered, timeoutMs, { requireCommit: true });
        // A discarded tab has no document to reload: load the URL the crashed page showed.
        await api.tabs.update(recovered, { url });
        await loaded;
        const tab = await api.tabs.get(recovered);
        return { tabId: recovered, url: tab.url || url, title: tab.title || '', transitionPending: false, ...recoveryFacts(asked, recovered) };
      }
    }
    const id = await tabs.resolveTab(tabId);
    const loaded = waitForLoad(id, timeoutMs, { sameDocument: direction !== 'reload' });
    if (direction === 'reload') {
      await api.tabs.reload(id);
    } else {
      // history.go(±1) in the top frame, as the page's own back/forward would: the
      // browser's tabs.goBack/goForward skip entries the user never interacted with
      // (Chromium's history manipulation intervention), so after pages loaded by
      // navigate, `back` could land two or more pages back. Unscriptable pages (no content
      // script: about:blank, error pages) fall back to the tabs API.
      const delta = direction === 'back' ? -1 : 1;
      try {
        await tabs.toFrame(id, 0, { op: 'historyGo', delta });
      } catch {
        await (delta < 0 ? api.tabs.goBack(id) : api.tabs.goForward(id));
      }
    }
    try {
      await loaded;
    } catch (err) {
      if (err.code === 'TIMEOUT') return { tabId: id, transitionPending: true };
      throw err;
    }
    const tab = await api.tabs.get(id);
    return { tabId: id, url: tab.url || '', title: tab.title || '', transitionPending: false };
  },

  // params: {tabId, mode, maxChars, ref, cursor, session} (background/snapshot.js).
  async 'page.snapshot'(params) {
    const { tabId, cursor } = params;
    const id = cursor && (tabId === undefined || tabId === null) ? null : await tabs.resolveTab(tabId);
    return snapshotTab(api, tabs, id, params);
  },

  async 'page.resolveTarget'({ tabId, ref, receipt = false, allowCoordinates = false, at = null, fastPoint = false, settle = false }) {
    const id = await tabs.resolveTab(tabId);
    if (!ref) {
      let res;
      try {
        res = await tabs.toFrame(id, 0, { op: 'locate', ref: null });
      } catch (err) {
        if (err.code === 'BROWSER_DOCUMENT_CHANGED' && !at) await throwIfBlank(id);
        throw err;
      }
      // MouseAction: name the element at the point (background/hittest.js).
      if (at) res.hit = await hitTestTab(api, tabs, id, at, receipt, res);
      return { ...res, tabId: id };
    }
    const { frameId, local, docId } = tabs.parseRef(id, ref);
    const res = await tabs.toFrame(id, frameId, { op: 'locate', ref: local, docId, receipt, allowCoordinates, fastPoint, settle });
    return { ...res, tabId: id };
  },

  async 'page.find'(params) {
    const id = await tabs.resolveTab(params.tabId);
    return findInTab(api, tabs, id, params);
  },

  // Delivery receipt of a trusted click, read on demand: the bridge asks only when no
  // receipt was pushed (the click did not reach the target, or the page went away).
  async 'page.receipt'({ tabId, ref, receiptId }) {
    const id = await tabs.resolveTab(tabId);
    const { frameId } = tabs.parseRef(id, ref);
    return tabs.toFrame(id, frameId, { op: 'receipt', receiptId }).catch((err) => {
      if (err.code === 'BROWSER_DOCUMENT_CHANGED') return { delivered: null, events: [] };
      throw err;
    });
  },

  // Synthetic path: only for devices that never asked for trusted input (the bridge
  // decides and labels the result inputPath: "synthetic").
  async 'page.act'({ tabId, ref, action }) {
    const id = await tabs.resolveTab(tabId);
    if (!ref) {
      const res = await tabs.toFrame(id, 0, { op: 'act', ref: null, action });
      return { ...res, tabId: id };
    }
    const { frameId, local, docId } = tabs.parseRef(id, ref);
    const res = await tabs.toFrame(id, frameId, { op: 'act', ref: local, docId, action });
    return { ...res, tabId: id };
  },

  // ms first, then textGone, then text (Playwright MCP's browser_wait_for order). With a
  // text, timeoutMs bounds the whole call, the fixed wait included (the bridge waits
  // timeoutMs and its margin for the answer).
  async 'page.wait'({ tabId, ms, text, textGone, timeoutMs = 10000 }) {
    const id = await tabs.resolveTab(tabId);
    const begun = Date.now();
    if (ms !== undefined && ms !== null) {
      await new Promise((r) => setTimeout(r, ms));
      if (!text && !textGone) return { tabId: id, waitedMs: ms };
    }
    if (!text && !textGone) throw new PageError('BAD_REQUEST', 'Give ms, text or textGone to wait for.');
    const start = begun;
    const until = async (satisfied) => {
      for (;;) {
        const left = timeoutMs - (Date.now() - start);
        if (left <= 0) return false;
        const sliceStart = Date.now();
        if (await satisfied(Math.min(left, WAIT_SLICE_MS))) return true;
        // Every frame failed at once (a document being replaced): do not spin.
        if (Date.now() - sliceStart < 50) await new Promise((r) => setTimeout(r, 50));
      }
    };
    const out = { tabId: id };
    if (textGone) {
      if (!(await until((slice) => framesTextGone(id, textGone, slice)))) {
        throw new PageError('TIMEOUT', `The text was still shown after ${timeoutMs} ms.`, { timeoutMs, textGone: true });
      }
      out.gone = true;
    }
    if (text) {
      if (!(await until((slice) => framesWaitText(id, text, slice)))) {
        throw new PageError('TIMEOUT', `The text did not appear within ${timeoutMs} ms.`, { timeoutMs });
      }
      out.found = true;
    }
    return { ...out, waitedMs: Date.now() - begun };
  },
};

let connection = null;

// The popup's questions (owner of a tab) and a person's Stop (background/popup_api.js).
servePopup(api, owners, () => connection);

// Receipts pushed by content scripts the moment a trusted click reached its target, and
// once more with `fileInput: true` when a file input is clicked right after (page/receipt.js): forwarded to the bridge as a one-way `page.receipt` event, which
// the bridge matches to the click it is running by receiptId. Registered at top level so
// a woken service worker still hears it.
function forwardReceipt(msg, sender) {
  const pushed = msg && msg.receiptPushed;
  if (!pushed || !sender.tab || typeof pushed.receiptId !== 'string' || !connection) return false;
  connection.sendEvent('page.receipt', {
    tabId: sender.tab.id, receiptId: pushed.receiptId, delivered: pushed.delivered === true,
    events: Array.isArray(pushed.events) ? pushed.events.slice(0, 8) : [],
    fileInput: pushed.fileInput === true,
    download: pushed.download === true,
    navigates: pushed.navigates === true,
    ...(pushed.pressedOn && typeof pushed.pressedOn === 'object'
      ? { pressedOn: { tag: String(pushed.pressedOn.tag || '').slice(0, 64), text: String(pushed.pressedOn.text || '').slice(0, 80) } }
      : {}),
  });
  return false;
}
api.runtime.onMessage.addListener(forwardReceipt);
// The same push over the frame's port, when the content script has one open (background/ports.js).
tabs.ports.onPush(forwardReceipt);

// A tab a page opened (target=_blank, window.open, a modified click): told to the bridge
// at once, so a click's result can name the tab it opened even when the browser reports
// it to the driver only after the click returned.
api.tabs.onCreated.addListener((tab) => {
  if (tab.openerTabId === undefined || tab.openerTabId === null) return;
  if (!connection) return;
  connection.sendEvent('tab.opened', {
    tabId: tab.id, openerTabId: tab.openerTabId, url: tab.pendingUrl || tab.url || '',
  });
});

// config.json is written by a supervisor into its private copy of the extension. A
// person's own browser has none: it uses the pairing its options page stored
// (options/store.js, bridge/pairing.py) and, unpaired, connects to nothing.
async function loadConfig() {
  try {
    const response = await fetch(api.runtime.getURL('config.json'));
    if (response.ok) return { config: await response.json(), fromSupervisor: true };
  } catch { /* no config.json: not a supervised copy */ }
  const paired = configOf(await loadPairing());
  return { config: paired, fromSupervisor: false };
}

// The options page stored a pairing: connect with it (a new one replaces the old).
api.runtime.onMessage.addListener((msg) => {
  if (!msg || msg.pairingChanged !== true) return false;
  started.then(async () => {
    if (!connection) return main();
    const paired = configOf(await loadPairing());
    if (paired) { Object.assign(connection.config, paired); if (connection.ws) connection.ws.close(); }
  });
  return false;
});

// The person turned the CDP door on or off in the options page: the bridge is told now,
// and later hellos carry it (capability cdpAllowed).
api.runtime.onMessage.addListener((msg) => {
  if (!msg || msg.cdpConsentChanged !== true) return false;
  started.then(async () => {
    const allowed = await loadCdpConsent();
    if (!connection) return;
    connection.config.cdpAllowed = allowed;
    connection.sendEvent('consent.cdp', { allowed });
  });
  return false;
});

async function main() {
  const { config, fromSupervisor } = await loadConfig();
  if (!config || connection) return;
  config.cdpAllowed = await loadCdpConsent();
  if (config.startupMarker) { // issue 6: Firefox's undriven start-up window
    await closeStartupTabs(api, config.startupMarker, 10000).catch(() => 0);
  }
  // config.json is written by the supervisor that launched this browser.
  const attended = attendedOf(config, fromSupervisor);
  connection = new BridgeConnection({ ...config, attended }, handlers, api, {
    events: {
      'sessions.owners': (params) => { owners.set(params.tabs).catch(() => null); },
      // A provisional page-state snapshot the bridge showed (background/snapshot.js).
      'snapshot.keep': (params) => keepProvisional(params.id),
    },
    // The bridge's sessions are unknown while away: show no owner rather than a stale one.
    onClose: () => { owners.clear().catch(() => null); },
  });
  connection.start();
}

const started = main();
