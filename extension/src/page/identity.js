// Document identity (design.md §5): URL + performance.timeOrigin + a per-document token.
// Pure DOM: no chrome.* / browser.* calls.
//
// The content script creates one DocumentIdentity per document it runs in. A snapshot
// records the identity of every frame it read; a later ref must come from the same
// identity, or it fails with BROWSER_DOCUMENT_CHANGED. The URL part ignores the fragment
// (in-page anchors are soft changes); a pushState/replaceState to another path or query
// is a new identity, as the design says.
//
// A navigation that has started but not yet replaced the document also fences refs: the
// Navigation API's `navigate` event (Chromium) marks it the moment the page starts it
// (a link click, form submit, location change), before the browser reports it. It is
// cleared by `navigateerror`/`navigatesuccess` (intercepted or aborted) or by the
// background when the browser says the navigation failed (settle()); a mark older than
// PENDING_MAX_MS is treated as abandoned (the background's own webNavigation record
// still fences a navigation that is really still in flight).

import { PageError } from './errors.js';
import { onWindow } from './reopen.js';

export const PENDING_MAX_MS = 10_000;

function randomToken() {
  const a = new Uint32Array(3);
  crypto.getRandomValues(a);
  return Array.from(a, (n) => n.toString(36)).join('');
}

function withoutFragment(href) {
  const i = href.indexOf('#');
  return i < 0 ? href : href.slice(0, i);
}

/** Whether a `navigate` event is a download (HTML's NavigateEvent.downloadRequest: null
 *  for a navigation, the file name for a download, "" for a bare `download` attribute). */
export function isDownload(event) {
  return event.downloadRequest !== null && event.downloadRequest !== undefined;
}

export class DocumentIdentity {
  /** @param {Window} win */
  constructor(win) {
    this.win = win;
    this.token = randomToken();
    this.timeOrigin = win.performance.timeOrigin;
    this.pendingSince = null;
    const nav = win.navigation;
    if (nav && typeof nav.addEventListener === 'function') {
      nav.addEventListener('navigate', (event) => {
        const dest = event.destination;
        // A download (even a bare `download` attribute's, whose downloadRequest is "") is
        // no navigation: counting it fenced the page's refs for PENDING_MAX_MS.
        if (dest && !dest.sameDocument && !isDownload(event)) this.pendingSince = win.performance.now();
      });
      const clear = () => { this.pendingSince = null; };
      nav.addEventListener('navigateerror', clear);
      nav.addEventListener('navigatesuccess', clear);
    }
    onWindow(win, 'pageshow', () => { this.pendingSince = null; });
  }

  /** {token, timeOrigin, url}: what a snapshot records for this frame. */
  current() {
    return { token: this.token, timeOrigin: this.timeOrigin, url: withoutFragment(this.win.location.href) };
  }

  /** True while a cross-document navigation started by this document is in flight. */
  navigating() {
    return this.pendingSince !== null && this.win.performance.now() - this.pendingSince < PENDING_MAX_MS;
  }

  /** The browser reported that the navigation did not happen (background). */
  settle() {
    this.pendingSince = null;
  }

  /**
   * Throw BROWSER_DOCUMENT_CHANGED unless `expected` (recorded by a snapshot) is this
   * document and no navigation away from it is pending. No `expected` (an action without
   * a ref, e.g. a key press on the focused element): nothing to check.
   * @param {{token: string, timeOrigin: number, url: string}|null|undefined} expected
   */
  check(expected) {
    if (!expected) return;
    {
      let reason = null;
      if (expected.token !== this.token || expected.timeOrigin !== this.timeOrigin) reason = 'navigated';
      else if (expected.url !== withoutFragment(this.win.location.href)) reason = 'url-changed';
      if (reason) {
        throw new PageError('BROWSER_DOCUMENT_CHANGED',
          reason === 'navigated'
            ? 'This ref (or snapshot cursor) belongs to an earlier document of this frame (it navigated or reloaded). Take a new snapshot.'
            : 'The page changed its URL (history navigation) since this ref or cursor was taken. Take a new snapshot.',
          { reason });
      }
    }
    if (this.navigating()) {
      throw new PageError('BROWSER_DOCUMENT_CHANGED',
        'This frame is navigating to another document; refs from the current one are no longer safe to use. ' +
        'Wait for the load, then take a new snapshot.',
        { reason: 'navigation-pending' });
    }
  }
}
