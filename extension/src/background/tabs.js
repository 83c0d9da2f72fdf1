// Tabs, frames and messaging to the content script of one frame.

import { PageError } from '../page/errors.js';
import { Navigations } from './navigation.js';

/** Documents remembered per frame ordinal, to tell a stale ref from an unknown one. */
const DOCS_PER_FRAME = 16;

export class Tabs {
  constructor(api) {
    this.api = api;
    /** tabId → {ordinals: Map<frameId, number>, frameIds: Map<number, number>, docs: Map<number, string>, next: number} */
    this.state = new Map();
    /** Navigations in flight (webNavigation); parseRef fences refs of navigating frames. */
    this.navigations = new Navigations(api, (tabId, frameId, msg) => this.toFrame(tabId, frameId, msg));
    /** tabId → ms since epoch when this background saw the tab open */
    this.openedAt = new Map();
    api.tabs.onRemoved.addListener((tabId) => { this.state.delete(tabId); this.openedAt.delete(tabId); });
    api.tabs.onCreated.addListener((tab) => this.openedAt.set(tab.id, Date.now()));
  }

  /** The addressed tab id, or the active tab's. Throws BROWSER_TAB_CLOSED. */
  async resolveTab(tabId) {
    if (tabId !== undefined && tabId !== null) {
      try {
        await this.api.tabs.get(tabId);
      } catch {
        throw new PageError('BROWSER_TAB_CLOSED', `Tab ${tabId} does not exist (closed?). List tabs and pick another.`, { tabId });
      }
      return tabId;
    }
    let tabs = await this.api.tabs.query({ active: true, lastFocusedWindow: true });
    if (!tabs.length) tabs = await this.api.tabs.query({ active: true });
    if (!tabs.length) tabs = await this.api.tabs.query({});
    if (!tabs.length) throw new PageError('BROWSER_TAB_CLOSED', 'The browser has no open tab.');
    return tabs[0].id;
  }

  async list() {
    const tabs = await this.api.tabs.query({});
    return tabs.map((t) => ({
      tabId: t.id, url: t.url || t.pendingUrl || '', title: t.title || '', active: !!t.active,
      openerTabId: t.openerTabId ?? null, openedAt: this.openedAt.get(t.id) ?? null,
    }));
  }

  tabState(tabId) {
    let st = this.state.get(tabId);
    if (!st) {
      // docs: ordinal → [{identity: {token, timeOrigin, url}, lo, hi}] newest last; refFloor: the
      // next ref number any new document of this tab starts from, so a ref number is never
      // reused by a later document (a stale ref cannot name an element of the next page).
      st = { ordinals: new Map([[0, 0]]), frameIds: new Map([[0, 0]]), docs: new Map(), next: 1, refFloor: 1 };
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

  /** Send {op, ...} to one frame's content script; returns its result or throws PageError. */
  async toFrame(tabId, frameId, msg) {
    let reply;
    try {
      reply = await this.api.tabs.sendMessage(tabId, msg, { frameId });
    } catch (err) {
      throw new PageError('BROWSER_DOCUMENT_CHANGED',
        'The frame of this ref is gone or not ready (it navigated or closed). Take a new snapshot.',
        { frameId });
    }
    if (!reply) {
      throw new PageError('BROWSER_DOCUMENT_CHANGED', 'The frame did not answer (it is navigating). Take a new snapshot.', { frameId });
    }
    if (!reply.ok) throw new PageError(reply.error.code, reply.error.message, reply.error.details);
    return reply.result;
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
    st.refFloor = Math.max(st.refFloor, nextRef);
  }

  /** Parse a ref ("e7" or "f2e7") into {frameId, local ref, docId: identity of the document
   *  that minted it}. Throws REF_NOT_FOUND, or BROWSER_DOCUMENT_CHANGED when that frame (or
   *  an ancestor) is navigating or the ref came from a document no longer remembered. */
  parseRef(tabId, ref) {
    const m = /^(?:f(\d+))?e(\d+)$/.exec(ref || '');
    if (!m) throw new PageError('REF_NOT_FOUND', `Ref ${ref} is not a ref from a snapshot.`, { ref });
    const ordinal = m[1] ? Number(m[1]) : 0;
    const st = this.tabState(tabId);
    const frameId = st.frameIds.get(ordinal);
    if (frameId === undefined) {
      throw new PageError('REF_NOT_FOUND', `Ref ${ref} names a frame the snapshots of tab ${tabId} never showed. Take a new snapshot (if it came from another tab, e.g. before a click opened this one, list tabs and name that tab).`, { ref, tabId });
    }
    this.navigations.check(tabId, frameId);
    const n = Number(m[2]);
    const docs = st.docs.get(ordinal) || [];
    let docId = null;
    for (let i = docs.length - 1; i >= 0; i--) {
      if (docs[i].lo <= n && n <= docs[i].hi) { docId = docs[i].identity; break; }
    }
    if (!docId) {
      if (n >= 1 && docs.length && n < docs[0].lo) { // refs start at e1: e0 was never issued
        throw new PageError('BROWSER_DOCUMENT_CHANGED',
          `Ref ${ref} belongs to an earlier document of this frame. Take a new snapshot.`, { ref, reason: 'navigated' });
      }
      throw new PageError('REF_NOT_FOUND', `Ref ${ref} was not given by a snapshot of tab ${tabId}. Take a new snapshot (if it came from another tab, e.g. before a click opened this one, list tabs and name that tab).`, { ref, tabId });
    }
    return { frameId, local: `e${n}`, docId };
  }
}

function sameIdentity(a, b) {
  return a.token === b.token && a.timeOrigin === b.timeOrigin && a.url === b.url;
}
