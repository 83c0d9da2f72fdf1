// Tabs, frames and messaging to the content script of one frame.

import { PageError } from '../page/errors.js';
import { Navigations } from './navigation.js';
import { FramePorts } from './ports.js';
import { SLACK, floorSaver, loadFloor } from './reffloor.js';

/** Documents remembered per frame ordinal, to tell a stale ref from an unknown one. */
const DOCS_PER_FRAME = 16;
/** Ref-number intervals remembered per tab, to tell a ref of an earlier document of this
 *  tab (BROWSER_DOCUMENT_CHANGED) from one that was never this tab's (REF_NOT_FOUND). */
const MINTED_PER_TAB = 256;

export class Tabs {
  constructor(api) {
    this.api = api;
    /** tabId → {ordinals: Map<frameId, number>, frameIds: Map<number, number>, docs: Map<number, string>, next: number} */
    this.state = new Map();
    /**
     * The next ref number any document of ANY tab mints from: one counter for this
     * background's lifetime, so a ref number names one element in the whole browser and a
     * ref of another tab fails (REF_NOT_FOUND) instead of naming some element of this one.
     * Fed by every mint's `nextRef` (snapshots, page.find, hit tests). After a background
     * restart it starts above the floor stored before (reffloor.js), and a live document
     * mints from max(floor, its own registry's `next`) (page/snapshot.js `start`), so no
     * number a live document holds is handed out again. Mints await `floorReady` first.
     */
    this.refFloor = 1;
    this.saveFloor = floorSaver();
    this.floorReady = loadFloor().then((stored) => {
      if (stored > 0) this.refFloor = Math.max(this.refFloor, stored + SLACK);
    });
    /** Navigations in flight (webNavigation); parseRef fences refs of navigating frames. */
    this.navigations = new Navigations(api, (tabId, frameId, msg) => this.toFrame(tabId, frameId, msg));
    /** Per-frame ports of content scripts (background/ports.js): a request goes over the
     *  frame's port only while it provably belongs to the frame's current document, and
     *  never while a navigation of the frame (or an ancestor) is in flight. */
    this.ports = new FramePorts(api, (tabId, frameId) => {
      try {
        this.navigations.check(tabId, frameId);
        return false;
      } catch {
        return true;
      }
    });
    /** tabId → ms since epoch when this background saw the tab open */
    this.openedAt = new Map();
    api.tabs.onRemoved.addListener((tabId) => { this.state.delete(tabId); this.openedAt.delete(tabId); });
    api.tabs.onCreated.addListener((tab) => this.openedAt.set(tab.id, Date.now()));
    /** old tabId → new tabId of a crashed tab recovered by a discard (recoverIfCrashed) */
    this.replacedBy = new Map();
  }

  /**
   * The addressed tab id, or the active tab's. Throws BROWSER_TAB_CLOSED (naming the tab
   * that replaced it when a crash recovery did), or BROWSER_CRASHED when the tab's
   * renderer crashed, unless `allowCrashed` (navigate, reload, select and close serve a
   * crashed tab: they are how it is left or recovered).
   */
  async resolveTab(tabId, { allowCrashed = false } = {}) {
    let tab;
    if (tabId !== undefined && tabId !== null) {
      try {
        tab = await this.api.tabs.get(tabId);
      } catch {
        const by = this.replacedBy.get(tabId);
        if (by !== undefined) {
          throw new PageError('BROWSER_TAB_CLOSED', `Tab ${tabId} recovered from a renderer crash as tab ${by}: use tab ${by} (its refs are new; take a snapshot).`, { tabId, replacedBy: by });
        }
        throw new PageError('BROWSER_TAB_CLOSED', `Tab ${tabId} does not exist (closed?). List tabs and pick another.`, { tabId });
      }
    } else {
      let tabs = await this.api.tabs.query({ active: true, lastFocusedWindow: true });
      if (!tabs.length) tabs = await this.api.tabs.query({ active: true });
      if (!tabs.length) tabs = await this.api.tabs.query({});
      if (!tabs.length) throw new PageError('BROWSER_TAB_CLOSED', 'The browser has no open tab.');
      [tab] = tabs;
    }
    if (!allowCrashed && isCrashed(tab)) throw crashedError(tab.id);
    return tab.id;
  }

  /**
   * Make a crashed tab loadable again: Chromium keeps a crashed tab's WebContents, whose
   * Playwright page stays "crashed" for good (no reload or navigation of it is driven or
   * stamped again), so the tab is discarded (a new WebContents, a new tab id: the
   * supervisor sees a new page) and the caller then loads a URL into it.
   * Returns the tab's new id, or null when the tab had not crashed (nothing done).
   * Throws BROWSER_CRASHED when the browser refuses to discard it.
   */
  async recoverIfCrashed(tabId) {
    const tab = await this.api.tabs.get(tabId);
    if (!isCrashed(tab)) return null;
    let fresh = null;
    try {
      fresh = await this.api.tabs.discard(tabId);
    } catch {
      fresh = null;
    }
    if (!fresh || fresh.id === undefined) {
      throw new PageError('BROWSER_CRASHED',
        `The renderer of tab ${tabId} crashed and the browser would not unload the tab to load it again. Close the tab and open a new one.`,
        { tabId, what: 'renderer' });
    }
    if (fresh.id !== tabId) {
      this.replacedBy.set(tabId, fresh.id);
      if (this.openedAt.has(tabId)) this.openedAt.set(fresh.id, this.openedAt.get(tabId));
    }
    this.state.delete(tabId); // every ref of the crashed page is gone
    return fresh.id;
  }

  async list() {
    const tabs = await this.api.tabs.query({});
    return tabs.map((t) => ({
      tabId: t.id, url: t.url || t.pendingUrl || '', title: t.title || '', active: !!t.active,
      openerTabId: t.openerTabId ?? null, openedAt: this.openedAt.get(t.id) ?? null,
      // the browser window the tab is in (tabs.new {window: true} opens one per tab)
      windowId: t.windowId ?? null,
      // 'loading' | 'complete': the MCP server waits for a tab it follows to load (issue 15)
      status: t.status ?? null,
      ...(isCrashed(t) ? { crashed: true } : {}),
    }));
  }

  tabState(tabId) {
    let st = this.state.get(tabId);
    if (!st) {
      // docs: ordinal → [{identity: {token, timeOrigin, url}, lo, hi}] newest last; minted:
      // [[lo, hi]] ref numbers this tab's documents were given (merged, oldest first). New
      // documents start at the background's global `refFloor`, so a ref number is never
      // reused by a later document or another tab.
      st = { ordinals: new Map([[0, 0]]), frameIds: new Map([[0, 0]]), docs: new Map(), next: 1, minted: [] };
      this.state.set(tabId, st);
    }
    return st;
  }

  /** Stable per-tab ordinal of a frame: 0 for the top frame, then 1, 2, ... */
  ordinalOf(tabId, frameId) {
    const st = this.tabState(tabId);
    let n = st.ordinals.get(frameId);
    if (n === undefined) {
      n = st.next++;
      st.ordinals.set(frameId, n);
      st.frameIds.set(n, frameId);
    }
    return n;
  }

  /** Send {op, ...} to one frame's content script; returns its result or throws PageError
   *  (BROWSER_CRASHED when it cannot answer because the tab's renderer crashed). Goes over
   *  the frame's port when background/ports.js proves it is the current document's, else
   *  by tabs.sendMessage; a port that closes, or whose frame commits another document,
   *  before the answer fails the request here as a closed sendMessage channel does. */
  async toFrame(tabId, frameId, msg) {
    let reply;
    try {
      reply = await (this.ports.request(tabId, frameId, msg) ?? this.api.tabs.sendMessage(tabId, msg, { frameId }));
    } catch (err) {
      await this.throwIfCrashed(tabId);
      throw new PageError('BROWSER_DOCUMENT_CHANGED',
        'The frame of this ref is gone or not ready (it navigated or closed). Take a new snapshot.',
        { frameId });
    }
    if (!reply) {
      await this.throwIfCrashed(tabId);
      throw new PageError('BROWSER_DOCUMENT_CHANGED', 'The frame did not answer (it is navigating). Take a new snapshot.', { frameId });
    }
    if (!reply.ok) throw new PageError(reply.error.code, reply.error.message, reply.error.details);
    return reply.result;
  }

  /** Throw BROWSER_CRASHED when the tab's renderer crashed (a message that got no answer
   *  is told apart from a navigation by the tab's state, never guessed). */
  async throwIfCrashed(tabId) {
    const tab = await this.api.tabs.get(tabId).catch(() => null);
    if (tab && isCrashed(tab)) throw crashedError(tabId);
  }

  /**
   * Record that the document `identity` of frame `ordinal` minted refs below `nextRef`
   * (it was asked to start at `floor`).
   */
  noteDocument(tabId, ordinal, identity, floor, nextRef) {
    const st = this.tabState(tabId);
    let docs = st.docs.get(ordinal);
    if (!docs) {
      docs = [];
      st.docs.set(ordinal, docs);
    }
    const last = docs[docs.length - 1];
    if (last && sameIdentity(last.identity, identity)) {
      last.hi = Math.max(last.hi, nextRef - 1);
    } else {
      docs.push({ identity, lo: floor, hi: Math.max(floor, nextRef) - 1 });
      if (docs.length > DOCS_PER_FRAME) docs.shift();
    }
    if (nextRef > floor) {
      const last2 = st.minted[st.minted.length - 1];
      if (last2 && floor <= last2[1] + 1 && floor >= last2[0]) last2[1] = Math.max(last2[1], nextRef - 1);
      else st.minted.push([floor, nextRef - 1]);
      if (st.minted.length > MINTED_PER_TAB) st.minted.shift();
    }
    if (nextRef > this.refFloor) {
      this.refFloor = nextRef;
      this.saveFloor(nextRef);
    }
  }

  /** The tab (other than `tabId`) one of whose remembered documents minted ref number `n`,
   *  or null. */
  tabOfRef(tabId, n) {
    for (const [other, st] of this.state) {
      if (other === tabId) continue;
      for (const docs of st.docs.values()) {
        if (docs.some((d) => d.lo <= n && n <= d.hi)) return other;
      }
    }
    return null;
  }

  /** REF_NOT_FOUND for a ref whose number tab `tabId`'s snapshots never gave, naming the tab
   *  that did when this background knows it. */
  notThisTab(tabId, ref, n) {
    const from = this.tabOfRef(tabId, n);
    if (from !== null) {
      return new PageError('REF_NOT_FOUND',
        `Ref ${ref} is not from this tab's snapshots (tab ${tabId}): it is from tab ${from}. Address tab ${from} to use it, or take a new snapshot of tab ${tabId} and use its refs.`,
        { ref, tabId, refTabId: from });
    }
    return null;
  }

  /** Parse a ref ("e7" or "f2e7") into {frameId, local ref, docId: identity of the document
   *  that minted it}. Throws REF_NOT_FOUND, or BROWSER_DOCUMENT_CHANGED when that frame (or
   *  an ancestor) is navigating or the ref came from a document no longer remembered. */
  parseRef(tabId, ref) {
    const m = /^(?:f(\d+))?e(\d+)$/.exec(ref || '');
    if (!m) throw new PageError('REF_NOT_FOUND', `Ref ${ref} is not a ref from a snapshot.`, { ref });
    const ordinal = m[1] ? Number(m[1]) : 0;
    const n = Number(m[2]);
    const st = this.tabState(tabId);
    const frameId = st.frameIds.get(ordinal);
    const elsewhere = () => this.notThisTab(tabId, ref, n);
    if (frameId === undefined) {
      const other = elsewhere();
      if (other) throw other;
      throw new PageError('REF_NOT_FOUND', `Ref ${ref} names a frame the snapshots of tab ${tabId} never showed. Take a new snapshot (if it came from another tab, e.g. before a click opened this one, list tabs and name that tab).`, { ref, tabId });
    }
    this.navigations.check(tabId, frameId);
    const docs = st.docs.get(ordinal) || [];
    let docId = null;
    for (let i = docs.length - 1; i >= 0; i--) {
      if (docs[i].lo <= n && n <= docs[i].hi) { docId = docs[i].identity; break; }
    }
    if (!docId) {
      const other = elsewhere();
      if (other) throw other;
      // Ref numbers are unique across tabs: a number below this frame's oldest remembered
      // document is an earlier document's only if this tab minted it.
      const ours = st.minted.some(([lo, hi]) => lo <= n && n <= hi);
      if (n >= 1 && docs.length && n < docs[0].lo && ours) { // refs start at e1: e0 was never issued
        throw new PageError('BROWSER_DOCUMENT_CHANGED',
          `Ref ${ref} belongs to an earlier document of this frame. Take a new snapshot.`, { ref, reason: 'navigated' });
      }
      if (!docs.length) {
        // This background never snapshotted the tab: the ref may be from another tab, or
        // from before the extension restarted (its refs were in memory only), which it
        // cannot tell apart. Measured on Firefox ESR: SIGSEGV of the content process that
        // held the page restarted the extension and left the tab on about:blank
        // (tests/e2e/test_crash.py::test_a_firefox_content_crash_says_refs_are_gone).
        throw new PageError('REF_NOT_FOUND', `Ref ${ref} is not from a snapshot of tab ${tabId} taken since the extension started (refs from before an extension or browser restart are gone). Take a new snapshot (if it came from another tab, list tabs and name that tab).`, { ref, tabId });
      }
      throw new PageError('REF_NOT_FOUND', `Ref ${ref} is not from this tab's snapshots (tab ${tabId}). Take a new snapshot (if it came from another tab, e.g. before a click opened this one, list tabs and name that tab).`, { ref, tabId });
    }
    return { frameId, local: `e${n}`, docId };
  }
}

/**
 * True when the tab's renderer crashed. Chromium (measured after CDP Page.crash, the
 * Chromium of Playwright 1.62; tests/e2e/test_crash.py): a crashed tab keeps its
 * URL and title, reports `status: "unloaded"` while `discarded: false` (a discarded tab is
 * `discarded: true`), fires no tabs or webNavigation event, and its content scripts are
 * gone (sendMessage: "Could not establish connection"); it stays so until it loads again.
 * A blank tab that has not loaded a document yet reports `status: "unloaded"` too
 * (measured: a new tab at about:blank whose first navigation had not committed, under
 * load, scripts/benchlib/b5_tabs.py): it has no renderer to crash, so a tab at
 * about:blank (or with no URL yet) is never called crashed.
 */
export function isCrashed(tab) {
  const blank = !tab.url || tab.url === 'about:blank';
  return tab.status === 'unloaded' && tab.discarded === false && !blank;
}

/** BROWSER_CRASHED for a tab whose renderer crashed, with the way out. */
export function crashedError(tabId) {
  return new PageError('BROWSER_CRASHED',
    `The renderer of tab ${tabId} crashed: its page is gone, and so is every ref from it. Navigate or reload the tab to load it again (it may come back under a new tab id), then take a new snapshot.`,
    { tabId, what: 'renderer' });
}

function sameIdentity(a, b) {
  return a.token === b.token && a.timeOrigin === b.timeOrigin && a.url === b.url;
}
