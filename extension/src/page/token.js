// The frame token (design.md §3, supervisor/frames.py): the supervisor's name for this
// frame's document, which the driver turns back into its Playwright Frame. It never sits
// in the page's DOM (issue 35 item 1). It arrives by one of two routes:
//
// - Chromium ("cdp"): the supervisor calls `globalThis[ACCEPT_FUNCTION](old, fresh)` in this
//   content script's own isolated world over CDP (Runtime.evaluate with that world's
//   context id). Page script cannot see this world's globals.
// - Firefox / Camoufox ("transient"): no protocol reaches a content-script sandbox, so the
//   supervisor sets `data-mcjug="tb:<token>"` on the root and removes it (or puts the page's
//   own value back) in the same synchronous script; this content script's MutationObserver
//   reads the token from the records' `oldValue`. The attribute never exists while page
//   script runs.

/** The content script's global the supervisor calls (supervisor/frames.py ACCEPT_FUNCTION). */
export const ACCEPT_FUNCTION = '__trustbridgeAcceptToken';
/** A token as the supervisor makes them: 32 lowercase hex digits (secrets.token_hex(16)). */
const TOKEN = /^[0-9a-f]{32}$/;
const ANNOUNCED = 'tb:';

export class FrameToken {
  constructor() {
    /** @type {string|null} */
    this.token = null;
    /** @type {Array<(token: string) => void>} */
    this.waiters = [];
  }

  /** Chromium route: keep the token in force when it is `old` (the registry's record of
   *  this document), else take `fresh`. Returns the token in force. */
  accept(old, fresh) {
    if (!(this.token && old && this.token === old)) this.set(fresh);
    return this.token;
  }

  /** Take `token` (ignored unless it has the supervisor's shape) and wake the waiters. */
  set(token) {
    if (typeof token !== 'string' || !TOKEN.test(token)) return;
    this.token = token;
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake(token);
  }

  /** The token, or one that arrives within `ms`; null after that. */
  wait(ms) {
    if (this.token) return Promise.resolve(this.token);
    return new Promise((resolve) => {
      const wake = (token) => { clearTimeout(limit); resolve(token); };
      const limit = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== wake);
        resolve(null);
      }, ms);
      this.waiters.push(wake);
    });
  }

  /** Chromium route: expose `accept` on this world's global (`scope`: the content script's
   *  globalThis, an isolated world the page cannot see). */
  exposeOn(scope) {
    Object.defineProperty(scope, ACCEPT_FUNCTION, {
      value: (old, fresh) => this.accept(old, fresh), configurable: true,
    });
  }

  /** Transient route: take tokens announced on `doc`'s root through `attr` (the records of
   *  a set-and-remove in one script: the token is the `oldValue` of the second). Observes
   *  the document's subtree, so a root replaced by document.open() is still covered. */
  listenTransient(doc, attr) {
    const observer = new MutationObserver((records) => {
      for (const r of records) {
        if (r.target !== doc.documentElement || typeof r.oldValue !== 'string') continue;
        if (r.oldValue.startsWith(ANNOUNCED)) this.set(r.oldValue.slice(ANNOUNCED.length));
      }
    });
    observer.observe(doc, { subtree: true, attributes: true, attributeFilter: [attr], attributeOldValue: true });
    return observer;
  }
}
