// Per-frame persistent ports: the content script of every document (all frames) opens
// runtime.connect({name: FRAME_PORT_NAME}) (page/frameport.js), and tabs.toFrame sends a
// read request over it instead of tabs.sendMessage when the port provably belongs to the
// frame's CURRENT document. Measured on Debian Chromium (service worker, median of 100):
// a port round trip 0.4–0.5 ms against 0.8–1.0 ms for tabs.sendMessage, which opens a new
// channel per message.
//
// The rule that binds a port to a document (Chromium; design.md, extension messaging):
// a port is used for frame F only when
//   1. it is F's newest port (no later connect from F was seen) and still connected,
//   2. it was opened by a document the browser called active (sender.documentLifecycle),
//   3. its document (sender.documentId) is the document the latest webNavigation
//      onCommitted of F named (or, when this background has seen no commit of F since it
//      started, what webNavigation.getFrame answered, with no commit seen meanwhile), and
//   4. no navigation of F or of an ancestor is in flight (onBeforeNavigate seen, neither
//      its commit nor its error yet: background/navigation.js).
// Why it holds: a document's id never names another document, and a document that stops
// being F's current one never becomes current again except by a back/forward-cache
// restore, which Chromium reports as a commit (condition 3 then names it again) and
// before which it closed the cached page's ports. Once this background has heard of a
// commit of another document in F, by its onCommitted or by that document's own connect,
// condition 1 or 3 fails for the old port, so no new request goes to it, and requests
// still waiting on it are failed at once (their answers are never taken). A commit this
// background has not heard of yet is covered by condition 4 (the browser sends
// onBeforeNavigate when the navigation starts, a network round trip or more before the
// commit), and by Chromium itself, which closes a port at the commit when the new
// document reuses the frame's RenderFrameHost or the old page enters the back/forward
// cache. What is left: a navigation whose onBeforeNavigate has not reached this
// background yet, committed into a new RenderFrameHost while the old document, not yet
// unloaded in its renderer, still answers (the same window in which a sendMessage that
// reached the old document just before the commit is answered by it today); its answer is
// refused if the commit or the new document's connect arrives first.
// Firefox gives no documentId: condition 3 never holds there, every request goes
// by tabs.sendMessage, and the port carries only the content script's receipt pushes
// (a push is the document's own fact, true whatever document is current now).
//
// A request waits, as tabs.sendMessage does, for the answer or for its channel to close
// (the document went away, the renderer crashed, the frame was removed); tabs.toFrame
// turns a failure into the same errors as for sendMessage.

import { FRAME_PORT_NAME } from '../page/frameport.js';

/** Content-script ops that may go over a port: reads, and `locate` (which arms a receipt,
 *  harmless if repeated). `act` and `historyGo` change the page: their answer must never
 *  be dropped after the effect, so they keep tabs.sendMessage. */
export const PORT_OPS = new Set([
  'identify', 'announceFrames', 'snapshotBegin', 'snapshot', 'snapshotContinue',
  'locate', 'receipt', 'hitTest', 'find', 'waitText',
]);

/** Frames whose last committed document is remembered (all tabs); the oldest is
 *  forgotten first (its port then falls back to sendMessage until the frame commits
 *  again or a port of it connects). */
const COMMITS_KEPT = 512;

/** Requests one port may have waiting: beyond it (content-script ops that never settle,
 *  which sendMessage would also keep open until the document goes) new ones go by
 *  tabs.sendMessage, so a port's table stays small. */
const PENDING_PER_PORT = 64;

const keyOf = (tabId, frameId) => `${tabId}:${frameId}`;

export class FramePorts {
  /**
   * @param {object} api  chrome / browser namespace
   * @param {(tabId: number, frameId: number) => boolean} navigating  true while a
   *   navigation of the frame or an ancestor is in flight (background/navigation.js)
   */
  constructor(api, navigating) {
    this.api = api;
    this.navigating = navigating;
    /** "tab:frame" → {port, documentId, pending: Map<id, {resolve, reject}>, next, closed} */
    this.ports = new Map();
    /** "tab:frame" → documentId of the frame's latest commit seen (insertion = age) */
    this.commits = new Map();
    /** receipt pushes that came over a port: (msg, sender) => void */
    this.pushListeners = [];
    // No runtime.onConnect (a stand-in API of a unit test): no port is ever usable, every
    // request goes by tabs.sendMessage.
    if (api.runtime && api.runtime.onConnect) api.runtime.onConnect.addListener((port) => this.accept(port));
    // Firefox's webNavigation events carry no documentId: nothing is recorded there.
    api.webNavigation.onCommitted.addListener((d) => this.committed(d.tabId, d.frameId, d.documentId, d.documentLifecycle));
    api.tabs.onRemoved.addListener((tabId) => this.forgetTab(tabId));
  }

  /** Call `fn(msg, sender)` for each {receiptPushed} message a content script posts on its port. */
  onPush(fn) {
    this.pushListeners.push(fn);
  }

  accept(port) {
    if (port.name !== FRAME_PORT_NAME) return;
    const sender = port.sender || {};
    const tabId = sender.tab ? sender.tab.id : undefined;
    const frameId = sender.frameId;
    if (typeof tabId !== 'number' || typeof frameId !== 'number') {
      port.disconnect();
      return;
    }
    // Only a document the browser calls its frame's current one serves requests; one that
    // is not (prerendered, being unloaded, cached), and any document on Firefox (no
    // documentId), may still push receipts over its port.
    const documentId = sender.documentLifecycle === 'active' && typeof sender.documentId === 'string'
      ? sender.documentId : null;
    if (documentId === null) {
      port.onMessage.addListener((m) => this.received(null, sender, m));
      return;
    }
    const key = keyOf(tabId, frameId);
    const entry = { port, documentId, pending: new Map(), next: 1, closed: false, probed: false };
    const before = this.ports.get(key);
    this.ports.set(key, entry);
    // A connect from another active document of this frame: that document committed after
    // the old port's, so the old port's answers would describe a page the frame left.
    if (before && before.documentId !== documentId) this.close(before, 'another document of the frame connected');
    port.onMessage.addListener((m) => this.received(entry, sender, m));
    port.onDisconnect.addListener(() => {
      this.fail(entry, 'the port closed');
      entry.closed = true;
      if (this.ports.get(key) === entry) this.ports.delete(key);
    });
    if (!this.commits.has(key)) this.probe(key, tabId, frameId, entry);
  }

  /** No commit of this frame seen since this background started (it restarted, or the
   *  entry was forgotten): ask the browser, once per port, which document is current. A commit that
   *  arrives meanwhile wins (it may be newer than the answer). */
  probe(key, tabId, frameId, entry) {
    entry.probed = true; // once per port: never a getFrame per request
    this.api.webNavigation.getFrame({ tabId, frameId }).then((f) => {
      if (f && typeof f.documentId === 'string' && !this.commits.has(key)) this.remember(key, f.documentId);
    }, () => null);
  }

  committed(tabId, frameId, documentId, lifecycle) {
    if (typeof documentId !== 'string') return;
    // A prerendered document is not yet what its frame shows.
    if (lifecycle !== undefined && lifecycle !== 'active') return;
    const key = keyOf(tabId, frameId);
    this.remember(key, documentId);
    const entry = this.ports.get(key);
    if (entry && entry.documentId !== documentId) {
      this.close(entry, 'the frame committed another document');
      this.ports.delete(key);
    }
  }

  remember(key, documentId) {
    this.commits.delete(key);
    this.commits.set(key, documentId);
    if (this.commits.size > COMMITS_KEPT) this.commits.delete(this.commits.keys().next().value);
  }

  forgetTab(tabId) {
    const prefix = `${tabId}:`;
    for (const key of [...this.commits.keys()]) if (key.startsWith(prefix)) this.commits.delete(key);
    for (const [key, entry] of [...this.ports]) {
      if (key.startsWith(prefix)) {
        this.fail(entry, 'the tab closed');
        this.ports.delete(key);
      }
    }
  }

  /** The frame's port entry when the binding rule (header) holds, else null. */
  usable(tabId, frameId) {
    const key = keyOf(tabId, frameId);
    const entry = this.ports.get(key);
    if (!entry || entry.closed || entry.documentId === null) return null;
    if (!this.commits.has(key) && !entry.probed) this.probe(key, tabId, frameId, entry); // forgotten (COMMITS_KEPT)
    if (this.commits.get(key) !== entry.documentId) return null;
    if (this.navigating(tabId, frameId)) return null;
    return entry;
  }

  /**
   * Send `msg` over the frame's port when the binding rule holds.
   * Returns null when it does not (or the port refused the message, nothing sent: the
   * caller then uses tabs.sendMessage); else a promise of the content script's reply
   * ({ok, result} | {ok: false, error}) that rejects when the port closes or the frame
   * commits another document before the answer.
   */
  request(tabId, frameId, msg) {
    if (!PORT_OPS.has(msg.op)) return null;
    const entry = this.usable(tabId, frameId);
    if (!entry || entry.pending.size >= PENDING_PER_PORT) return null;
    const id = entry.next++;
    try {
      entry.port.postMessage({ id, msg });
    } catch {
      // Chromium throws for a port already closed whose onDisconnect is still queued.
      entry.closed = true;
      return null;
    }
    return new Promise((resolve, reject) => entry.pending.set(id, { resolve, reject }));
  }

  received(entry, sender, m) {
    if (!m || typeof m !== 'object') return;
    if (m.receiptPushed) {
      for (const fn of this.pushListeners) fn(m, sender);
      return;
    }
    if (!entry) return;
    const waiter = entry.pending.get(m.id);
    if (!waiter) return;
    entry.pending.delete(m.id);
    waiter.resolve(m.reply);
  }

  /** Reject every request waiting on `entry` (tabs.toFrame makes them
   *  BROWSER_DOCUMENT_CHANGED, or BROWSER_CRASHED after its crash check). */
  fail(entry, why) {
    const waiting = [...entry.pending.values()];
    entry.pending.clear();
    for (const w of waiting) w.reject(new Error(`No answer from the frame: ${why}.`));
  }

  close(entry, why) {
    this.fail(entry, why);
    entry.closed = true;
    try { entry.port.disconnect(); } catch { /* already closed */ }
  }

  /** Counts for tests and benchmarks: {ports, usable, commits, pending}. */
  stats() {
    let usable = 0;
    let pending = 0;
    for (const [key, entry] of this.ports) {
      const [tabId, frameId] = key.split(':').map(Number);
      if (this.usable(tabId, frameId)) usable++;
      pending += entry.pending.size;
    }
    return { ports: this.ports.size, usable, commits: this.commits.size, pending };
  }
}
