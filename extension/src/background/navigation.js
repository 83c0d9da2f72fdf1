// Navigations in flight, per tab and frame, as the browser reports them (webNavigation).
//
// A ref whose frame (or an ancestor frame) is navigating to another document is fenced
// with BROWSER_DOCUMENT_CHANGED (design.md §5), even before the new document commits: an
// action aimed at it could otherwise land on the next page, whose elements may sit at the
// same place with the same CSS path (tests/e2e/test_observation.py
// ::test_pending_navigation_fences_refs). The content script marks the
// navigations its own document starts (page/identity.js); this record covers the rest
// (browser-initiated loads, a parent frame navigating) and the time after the old
// document stopped answering.

import { PageError } from '../page/errors.js';

export class Navigations {
  /**
   * @param {object} api   chrome / browser namespace
   * @param {(tabId: number, frameId: number, msg: object) => Promise<object>} toFrame
   */
  constructor(api, toFrame) {
    /** tabId → Map<frameId, {parentFrameId: number}> navigations started, not committed */
    this.pending = new Map();
    /** tabId → Map<frameId, parentFrameId> last known frame tree */
    this.parents = new Map();
    const nav = api.webNavigation;
    nav.onBeforeNavigate.addListener((d) => {
      this.frames(this.pending, d.tabId).set(d.frameId, { parentFrameId: d.parentFrameId });
      this.frames(this.parents, d.tabId).set(d.frameId, d.parentFrameId);
    });
    nav.onCommitted.addListener((d) => this.clear(d.tabId, d.frameId));
    nav.onErrorOccurred.addListener((d) => {
      // The navigation did not replace the document (aborted, 204, download, blocked):
      // the old document and its refs stay valid.
      this.clear(d.tabId, d.frameId);
      toFrame(d.tabId, d.frameId, { op: 'navigationSettled' }).catch(() => null);
    });
    api.tabs.onRemoved.addListener((tabId) => {
      this.pending.delete(tabId);
      this.parents.delete(tabId);
    });
  }

  frames(table, tabId) {
    let m = table.get(tabId);
    if (!m) {
      m = new Map();
      table.set(tabId, m);
    }
    return m;
  }

  clear(tabId, frameId) {
    const m = this.pending.get(tabId);
    if (m) m.delete(frameId);
  }

  /** Remember the frame tree a snapshot saw (webNavigation.getAllFrames entries). */
  learn(tabId, frames) {
    const m = this.frames(this.parents, tabId);
    for (const f of frames) m.set(f.frameId, f.parentFrameId);
  }

  /** Throw BROWSER_DOCUMENT_CHANGED when `frameId` or one of its ancestors is navigating. */
  check(tabId, frameId) {
    const pending = this.pending.get(tabId);
    if (!pending || !pending.size) return;
    const parents = this.parents.get(tabId) || new Map();
    for (let f = frameId, hops = 0; f !== undefined && f !== -1 && hops < 64; f = parents.get(f), hops++) {
      if (pending.has(f)) {
        throw new PageError('BROWSER_DOCUMENT_CHANGED',
          (f === frameId ? 'This frame' : 'A frame that contains this one') +
          ' is navigating to another document; refs from the current one are no longer safe to use. ' +
          'Wait for the load, then take a new snapshot.',
          { reason: 'navigation-pending' });
      }
    }
  }
}
