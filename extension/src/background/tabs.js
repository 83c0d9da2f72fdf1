// Tabs, frames and messaging to the content script of one frame.

export class ExtError extends Error {
  constructor(code, message, details = {}) {
    super(message);
    this.code = code;
    this.details = details;
  }
}

export class Tabs {
  constructor(api) {
    this.api = api;
    /** tabId → {ordinals: Map<frameId, number>, frameIds: Map<number, number>, docs: Map<number, string>, next: number} */
    this.state = new Map();
    api.tabs.onRemoved.addListener((tabId) => this.state.delete(tabId));
  }

  /** The addressed tab id, or the active tab's. Throws BROWSER_TAB_CLOSED. */
  async resolveTab(tabId) {
    if (tabId !== undefined && tabId !== null) {
      try {
        await this.api.tabs.get(tabId);
      } catch {
        throw new ExtError('BROWSER_TAB_CLOSED', `Tab ${tabId} does not exist (closed?). List tabs and pick another.`, { tabId });
      }
      return tabId;
    }
    let tabs = await this.api.tabs.query({ active: true, lastFocusedWindow: true });
    if (!tabs.length) tabs = await this.api.tabs.query({ active: true });
    if (!tabs.length) tabs = await this.api.tabs.query({});
    if (!tabs.length) throw new ExtError('BROWSER_TAB_CLOSED', 'The browser has no open tab.');
    return tabs[0].id;
  }

  async list() {
    const tabs = await this.api.tabs.query({});
    return tabs.map((t) => ({ tabId: t.id, url: t.url || '', title: t.title || '', active: !!t.active }));
  }

  tabState(tabId) {
    let st = this.state.get(tabId);
    if (!st) {
      st = { ordinals: new Map([[0, 0]]), frameIds: new Map([[0, 0]]), docs: new Map(), next: 1 };
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

  /** Send {op, ...} to one frame's content script; returns its result or throws ExtError. */
  async toFrame(tabId, frameId, msg) {
    let reply;
    try {
      reply = await this.api.tabs.sendMessage(tabId, msg, { frameId });
    } catch (err) {
      throw new ExtError('BROWSER_DOCUMENT_CHANGED',
        'The frame of this ref is gone or not ready (it navigated or closed). Take a new snapshot.',
        { frameId });
    }
    if (!reply) {
      throw new ExtError('BROWSER_DOCUMENT_CHANGED', 'The frame did not answer (it is navigating). Take a new snapshot.', { frameId });
    }
    if (!reply.ok) throw new ExtError(reply.error.code, reply.error.message, reply.error.details);
    return reply.result;
  }

  /** Parse a ref ("e7" or "f2e7") into {frameId, local ref, expected docId}. Throws REF_NOT_FOUND. */
  parseRef(tabId, ref) {
    const m = /^(?:f(\d+))?(e\d+)$/.exec(ref || '');
    if (!m) throw new ExtError('REF_NOT_FOUND', `Ref ${ref} is not a ref from a snapshot.`, { ref });
    const ordinal = m[1] ? Number(m[1]) : 0;
    const st = this.tabState(tabId);
    const frameId = st.frameIds.get(ordinal);
    if (frameId === undefined) {
      throw new ExtError('REF_NOT_FOUND', `Ref ${ref} names a frame this tab's snapshots never showed. Take a new snapshot.`, { ref });
    }
    return { frameId, local: m[2], docId: st.docs.get(ordinal) };
  }
}
