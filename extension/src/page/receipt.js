// Delivery receipts and the coordinate route (issue 5). Pure DOM: no chrome.* calls.
//
// Receipt: before a trusted click is dispatched, the content script arms a receipt for
// the target element; capture listeners on window (registered at document_start, so
// before any page listener) note trusted pointerdown/mousedown/click events whose
// composed path holds the target. The moment a trusted click reaches the target, the
// receipt is pushed (`onDelivered`, sent to the bridge as a `page.receipt` event), so the
// bridge has it by the time the driver answers: no extra round trip (design.md §10, "each
// room once"). A click the target never received pushes nothing; the bridge then reads
// the receipt (`read`) and reports `delivered: false`, not success.
// Which event ends a click depends on the button pressed (UI Events: `click` is for the
// primary button only; the others fire `auxclick`; the secondary button also fires
// `contextmenu`): left counts `click`; middle `auxclick`; right `contextmenu` or `auxclick`.
// Measured (tests/e2e/test_receipts.py): Chromium fires mousedown, contextmenu, mouseup,
// auxclick for a right press; a page whose contextmenu handler calls preventDefault still
// has contextmenu dispatched to the target (our capture listener sees it first), so it
// still counts as delivered.
// File input sign: a page's "Choose file" button often forwards its click to a hidden
// `<input type=file>` by calling `input.click()` (an untrusted click, dispatched from the
// button's handler, so AFTER this receipt was pushed from the window capture listener).
// The browser announces the file chooser to the driver only a few protocol round trips
// later, sometimes after the driver answered; so while receipts are armed, a `click`
// (trusted or not) whose first path entry is an enabled file input marks the receipts
// whose press is recent (FILE_INPUT_WINDOW_MS) with `fileInput: true`, and a receipt
// already pushed is pushed again with it (same id). The bridge then asks the driver to
// wait, bounded, for that chooser (bridge/executor.py, supervisor/watch.py). The sign
// only makes the bridge wait: a chooser is reported only when the driver saw it.
// The push itself waits for the end of the click's dispatch (a bubble-phase listener on
// window, or a 0 ms timer when the page stopped the click's propagation), so whatever
// the page's own click handlers do synchronously (the usual `input.click()`) is in the
// first and only push: pushing from the capture listener sent a receipt without the sign
// that the bridge could take before the second push came (a CI failure,
// tests/e2e/test_mcp_upload_cancel.py). A second push remains for a handler that clicks
// the input later (a timer, a promise).
// The dispatch's end is a bubble listener on window added when the trusted click reaches
// window's capture phase, so it runs after every window listener the page had registered
// by then (DOM §2.9: each phase at window invokes a fresh copy of its listener list).
// Submission sign: a trusted `formdata` event (HTML §4.10.21.3: fired for every form
// submission that goes ahead, after its `submit` event was not cancelled, and for
// form.submit()) within FILE_INPUT_WINDOW_MS of the press, for a form whose target is this
// frame or an ancestor, marks the receipt `navigates: true`, pushed again when it was
// already pushed (a submit button's submission is its activation behaviour, which runs
// after the dispatch's end). Such a navigation is planned a task later, so its request
// may reach the driver after its answer; the bridge then asks the driver to wait for it
// (bridge/after_input.py `awaited_navigation`). `formdata` is not composed: the target's
// shadow roots get listeners of their own; a form in a shadow root the target is not in
// gives no sign.
// Download sign: a `navigate` event with a `downloadRequest` since the press (the page's
// handler clicked a download link it made) marks the receipt `download: true`: the
// browser announces such a download to the driver only after the click (no navigation
// request, no focused download link to wait on), so the bridge asks the driver to wait
// for it, bounded (bridge/after_input.py `awaited_download`). So does the trusted click
// itself (left, or middle) when it follows a download link (the innermost `<a>`/`<area>`
// with `href` on its composed path has `download` and a URL of this origin, `blob:` or
// `data:`; HTML §4.6.5 "downloading hyperlinks"), prevented or not (a page that prevents
// it usually starts the download itself): known in the first push, in every browser
// (Firefox ESR has no Navigation API), so the driver makes no look of its own for a
// focused download link after a click (issue 18: ~1 ms a click, supervisor/watch.py).
// A link inside a closed shadow root the target is not in is hidden from the path seen
// here (as it was from the old look at the focused element): its download comes late.

// Press guard (fast path only, issue 18): the fast path measured the point and found the
// target topmost there, but the driver's move reaches the page before its press, and a
// page may put something new under the pointer in between (a hover card opened by
// `mouseover`, a menu; or the target moved by script, which getAnimations() cannot see).
// Playwright's own click stops such a press with a hit-target check in the page; the
// fast path's `page.mouse` has none. So a receipt armed with a guard checks the first
// trusted press-or-click event near its point (GUARD_NEAR_PX): the event's composed path
// holds the target, or the topmost element at the event's point (through open and closed
// roots) is inside it. Otherwise that event and every press/click event after it for
// GUARD_BLOCK_MS are cancelled (preventDefault + stopImmediatePropagation, from window's
// capture phase, registered at document_start before any page listener), so the element
// on top never gets the press, the click or its activation behaviour; the receipt then
// reads `intercepted: {tag, text}` and the bridge answers ELEMENT_OBSCURED (nothing was
// pressed; hover effects of the move may have run). A guard checks events near its point
// only, within GUARD_ARMED_MS of arming, until its receipt is read and until the next
// receipt is armed in this document (the next action: a press it let through is no longer
// checked by it; one it is stopping stays stopped): a later input
// elsewhere (a person's, in an attached browser) is never touched. Once a press was let
// through, only later presses are checked (not that press's own up and click, which a
// page re-rendering on mousedown sends elsewhere as it would for a person): a double
// click's second press that the first click's own effect covered (an overlay the click
// opened) is stopped, and `intercepted.afterPresses` says how many presses went through.

import { PageError } from './errors.js';
import { containsComposed, topmostAt } from './fastpoint.js';
import { isDownload } from './identity.js';
import { onWindow } from './reopen.js';

const RECEIPT_TTL_MS = 60000;
const MAX_RECEIPTS = 64;
/** How long after a receipt's press a click on a file input counts as its doing, ms. */
export const FILE_INPUT_WINDOW_MS = 1000;

/** How long after arming a press guard may decide, ms (the driver's press follows the
 *  resolve step at once; a guard whose action never pressed lapses). */
const GUARD_ARMED_MS = 3000;
/** Once a guard stopped a press, how long it stops the press/click events after it, ms
 *  (the rest of that click: pointerup, mouseup, click, a double click's second press). */
const GUARD_BLOCK_MS = 1000;
/** How near the guard's point an event must be to be the guarded press, CSS px. */
const GUARD_NEAR_PX = 2;

/** Events that end a click of some button (see `delivered`). */
const TERMINAL = new Set(['click', 'auxclick', 'contextmenu']);

export class Receipts {
  /**
   * @param {Window} win  the window whose capture listeners observe input
   * @param {(id: string, receipt: {delivered: boolean, events: string[], fileInput: boolean, download: boolean, navigates: boolean}) => void} [onDelivered]
   *   called at the end of the dispatch of a trusted click (with its pointerdown or
   *   mousedown) that reached the target; called again, with `fileInput: true` or
   *   `navigates: true`, when a file input is clicked or a form submitted after that push
   *   (see the header)
   */
  constructor(win, onDelivered = null, shadowRootOf = null) {
    /** @type {Map<string, {target: WeakRef<Element>, seen: Set<string>, at: number, pushed: boolean, fileInput: boolean}>} */
    this.armed = new Map(); // entries also get `button` and `pressedAt` (ms) of the first press seen
    this.next = 1;
    this.onDelivered = onDelivered;
    /** Open or closed shadow root of an element (the press guard's hit test). */
    this.shadowRootOf = shadowRootOf || ((el) => el.shadowRoot || null);
    // Ids are unique across documents and frames: the bridge matches pushed receipts by id.
    this.prefix = `r${Math.random().toString(36).slice(2, 10)}-`;
    /** @type {WeakSet<ShadowRoot>} roots listened to (a closed root hides its inside
     *  from composedPath() seen at window, so it gets listeners of its own; every root
     *  gets the submission sign's, see the header) */
    this.roots = new WeakSet();
    /** @type {Set<string>} delivered receipts whose push waits for the dispatch's end */
    this.pending = new Set();
    this.flushTimer = null;
    /** The last trusted `submit` event's form and submitter (its formtarget counts). */
    this.lastSubmit = null;
    this.win = win;
    this.listen(win);
    // The trusted click bubbling back to window, after the page's own window listeners,
    // ends its dispatch (a nested untrusted click, the page's input.click(), does not).
    for (const type of TERMINAL) {
      onWindow(win, type, (e) => {
        if (!e.isTrusted || !this.armed.size) return;
        win.addEventListener(type, (late) => { if (late === e) this.flush(); }, { once: true });
      }, { capture: true });
    }
    this.listenForms(win);
    // The download sign (see the header). Trusted events only: a page's own
    // dispatchEvent starts nothing and must not make every click wait for a download.
    if (win.navigation && typeof win.navigation.addEventListener === 'function') {
      win.navigation.addEventListener('navigate', (e) => { if (e.isTrusted) this.navigated(e); });
    }
  }

  /** A navigation started: one that is a download (`downloadRequest`: a download link the
   *  page's handler clicked) gives the receipts pressed before it the `download` sign. */
  navigated(event) {
    if (!isDownload(event)) return;
    for (const r of this.armed.values()) {
      if (r.pressedAt !== undefined) r.download = true;
    }
  }

  /** The submission sign's listeners on `target` (window or a shadow root; see the header). */
  listenForms(target) {
    const on = (type, fn, options) => (target === this.win
      ? onWindow(target, type, fn, options) : target.addEventListener(type, fn, options));
    on('submit', (e) => {
      if (e.isTrusted) this.lastSubmit = { event: e, form: e.target, submitter: e.submitter || null };
    }, { capture: true });
    on('formdata', (e) => {
      if (!e.isTrusted) return;
      const last = this.lastSubmit;
      // Inside the page's submit handler (its `new FormData(form)`, the usual app form that
      // cancels the submission): no submission of its own; the submission's formdata comes
      // after the submit event's dispatch, and only when it was not cancelled.
      if (last && last.event.eventPhase !== 0) return;
      this.lastSubmit = null;
      const ours = last && last.form === e.target && !last.event.defaultPrevented;
      this.submitting(e.target, ours ? last.submitter : null);
    }, { capture: true });
  }

  /** `form` is being submitted (its `formdata` event) by `submitter` (null: form.submit(),
   *  or a `new FormData(form)` outside a submit handler: the bridge's wait for its
   *  navigation then ends when no request came, bridge/after_input.py). */
  submitting(form, submitter) {
    if (!Receipts.navigatesBy(form, submitter) || !Receipts.targetsSelf(form, submitter)) return;
    const now = Date.now();
    for (const [id, r] of this.armed) {
      if (r.navigates || r.pressedAt === undefined || now - r.pressedAt > FILE_INPUT_WINDOW_MS) continue;
      r.navigates = true;
      if (r.pushed && !this.pending.has(id) && this.onDelivered) this.push(id, r);
    }
  }

  /** Whether a submission of `form` by `submitter` loads a document at all (HTML
   *  §4.10.21.3): not `method=dialog` (it closes a dialog), not a `javascript:` action. */
  static navigatesBy(form, submitter) {
    const attr = (el, name) => (el && typeof el.hasAttribute === 'function' && el.hasAttribute(name)
      ? el.getAttribute(name) : null);
    const method = attr(submitter, 'formmethod') ?? attr(form, 'method') ?? '';
    const action = attr(submitter, 'formaction') ?? attr(form, 'action') ?? '';
    return method.trim().toLowerCase() !== 'dialog' && !/^\s*javascript:/i.test(action);
  }

  /** Whether a submission of `form` by `submitter` navigates this frame or an ancestor
   *  (HTML §4.10.21.3 "get an element's target": the submitter's formtarget, else the
   *  form's target, else the document's base target; empty, `_self`, `_parent`, `_top`).
   *  A named target (another frame or window) leaves this document in place. */
  static targetsSelf(form, submitter) {
    const attr = (el, name) => (el && typeof el.hasAttribute === 'function' && el.hasAttribute(name)
      ? el.getAttribute(name) : null);
    let target = attr(submitter, 'formtarget') ?? attr(form, 'target');
    if (target === null) {
      const doc = form && form.ownerDocument;
      const base = doc && typeof doc.querySelector === 'function' ? doc.querySelector('base[target]') : null;
      target = attr(base, 'target') ?? '';
    }
    return ['', '_self', '_parent', '_top'].includes(target.trim().toLowerCase());
  }

  listen(target) {
    for (const type of ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click', 'dblclick', 'auxclick', 'contextmenu']) {
      const fn = (e) => this.observe(e);
      if (target === this.win) onWindow(target, type, fn, { capture: true });
      else target.addEventListener(type, fn, { capture: true });
    }
  }

  /** Arm a receipt for `el`; returns its id. `guard`: {x, y}, the fast path's point (CSS
   *  px of this frame's viewport): arm the press guard there (see the header). */
  arm(el, guard = null) {
    for (let root = el.getRootNode(); root instanceof ShadowRoot; root = root.host.getRootNode()) {
      if (!this.roots.has(root)) {
        this.roots.add(root);
        if (root.mode === 'closed') this.listen(root);
        this.listenForms(root); // formdata is not composed, even out of an open root
      }
    }
    const now = Date.now();
    for (const [id, r] of this.armed) {
      if (now - r.at > RECEIPT_TTL_MS || this.armed.size > MAX_RECEIPTS) this.armed.delete(id);
      // A new arm means the previous action on this tab is over (the bridge runs one
      // action per tab at a time, docs/design.md §2.1): its guard lapses, unless it is
      // stopping a press right now. Repeated clicks on one control paid a hit test per
      // guard still armed at every press (up to one per click of the last 3 s). Where
      // two actions do overlap on one document (a request without tabId queued under a
      // stale active-tab hint, or a click answered early for a dialog its hover opened,
      // whose press comes after the dialog), the earlier press goes unguarded; its
      // receipt still says whether the target got it.
      else if (r.guard && !r.guard.intercepted) r.guard.until = Math.min(r.guard.until, now - 1);
    }
    const id = `${this.prefix}${this.next++}`;
    this.armed.set(id, {
      target: new WeakRef(el), seen: new Set(), at: now, pushed: false, fileInput: false, navigates: false,
      guard: guard ? { x: Number(guard.x), y: Number(guard.y), until: now + GUARD_ARMED_MS, intercepted: null } : null,
    });
    return id;
  }

  observe(event) {
    if (!this.armed.size) return;
    const path = event.composedPath();
    if (event.isTrusted && this.guarded(event, path)) return;
    // Before the loop: a trusted click on the file input itself is pushed with the flag.
    if (event.type === 'click' && Receipts.isFileInput(path[0])) this.fileInputClicked();
    if (!event.isTrusted) return;
    for (const [id, r] of this.armed) {
      const target = r.target.deref();
      if (!target || !path.includes(target)) continue;
      if ((event.type === 'pointerdown' || event.type === 'mousedown') && r.button === undefined) {
        r.button = event.button;
        r.pressedAt = Date.now();
      }
      r.seen.add(event.type);
      // A left click (`click`) or a middle one (`auxclick`, button 1) follows a link.
      if ((event.type === 'click' || (event.type === 'auxclick' && event.button === 1))
          && r.linkClick === undefined) r.linkClick = downloadLink(path) ? event : null;
      if (event.type === 'pointerdown' && !r.pressedOn) {
        const inner = innerControl(path, target);
        if (inner) r.pressedOn = describeHit(inner);
      }
      if (TERMINAL.has(event.type) && !r.pushed && this.onDelivered && Receipts.delivered(r.seen, r.button)) {
        r.pushed = true;
        this.pending.add(id);
        this.flushTimer ??= setTimeout(() => this.flush(), 0);
      }
    }
  }

  /** The press guard (see the header): true when `event` was stopped. */
  guarded(event, path) {
    const now = Date.now();
    for (const r of this.armed.values()) {
      const g = r.guard;
      if (!g || now > g.until) continue;
      if (g.intercepted) {
        event.preventDefault();
        event.stopImmediatePropagation();
        return true;
      }
      if (Math.abs(event.clientX - g.x) > GUARD_NEAR_PX || Math.abs(event.clientY - g.y) > GUARD_NEAR_PX) continue;
      const target = r.target.deref();
      const doc = target && target.ownerDocument;
      const hit = doc ? topmostAt(doc, event.clientX, event.clientY, this.shadowRootOf) : null;
      const press = event.type === 'pointerdown' || event.type === 'mousedown';
      // The rest of a press let through is the page's: after the first decision only a
      // new press (its pointerdown) is checked, one hit test per press.
      if (g.decided && event.type !== 'pointerdown') continue;
      if (target && (path.includes(target) || (hit && containsComposed(target, hit)))) {
        // The press is the target's. The guard stays for a later press of the same action
        // (a double click's second, which the first click's own effect may cover).
        if (event.type === 'pointerdown' || (!g.decided && press)) g.passed = (g.passed || 0) + 1;
        g.decided = true;
        continue;
      }
      const on = hit || path[0];
      g.intercepted = { ...describeHit(on), targetGone: !target || !target.isConnected };
      if (g.passed) g.intercepted.afterPresses = g.passed;
      g.until = now + GUARD_BLOCK_MS;
      event.preventDefault();
      event.stopImmediatePropagation();
      return true;
    }
    return false;
  }

  /** Whether `el` is an enabled `<input type=file>` (by name, not instanceof: the element
   *  may come from another realm). */
  static isFileInput(el) {
    return !!el && el.localName === 'input' && typeof el.type === 'string'
      && el.type.toLowerCase() === 'file' && !el.disabled;
  }

  /** A file input got a click: mark the receipts whose press is recent (see the header);
   *  one already pushed is pushed again with the flag. */
  fileInputClicked() {
    const now = Date.now();
    for (const [id, r] of this.armed) {
      if (r.fileInput || r.pressedAt === undefined || now - r.pressedAt > FILE_INPUT_WINDOW_MS) continue;
      r.fileInput = true;
      // One still pending carries the flag in its first push.
      if (r.pushed && !this.pending.has(id) && this.onDelivered) this.push(id, r);
    }
  }

  /** Push the delivered receipts that waited for the end of their click's dispatch. */
  flush() {
    if (this.flushTimer !== null) {
      clearTimeout(this.flushTimer);
      this.flushTimer = null;
    }
    const ids = Array.from(this.pending);
    this.pending.clear();
    for (const id of ids) {
      const r = this.armed.get(id);
      if (r) this.push(id, r);
    }
  }

  push(id, r) {
    try {
      this.onDelivered(id, { delivered: true, events: Array.from(r.seen).sort(), fileInput: r.fileInput, download: Receipts.downloads(r), navigates: r.navigates, ...(r.pressedOn ? { pressedOn: r.pressedOn } : {}) });
    } catch { /* the bridge reads it instead */ }
  }

  /** The download sign (see the header): a download the page's handler started, or a
   *  click on a download link. A click whose default the page prevented counts too: such
   *  a page usually starts the download itself (a fetch with its credentials, then a blob
   *  link), which Firefox gives no other sign of; the bridge's wait is bounded (2 s) when
   *  nothing comes (the driver's former look at the focused link waited the same way). */
  static downloads(r) {
    return !!r.download || !!r.linkClick;
  }

  /**
   * Whether the events the target saw make a delivered click of `button` (MouseEvent.button
   * of its press: 0 left, 1 middle, 2 right; undefined: no press seen): the press
   * (pointerdown or mousedown) and the event that button's click ends with.
   */
  static delivered(seen, button) {
    if (!(seen.has('pointerdown') || seen.has('mousedown'))) return false;
    if (button === 1) return seen.has('auxclick');
    if (button === 2) return seen.has('contextmenu') || seen.has('auxclick');
    if (button === 0) return seen.has('click');
    return false;
  }

  /** {delivered, events, fileInput}: whether a trusted click (its press + the button's
   *  click event: click, auxclick or contextmenu) reached the target, and whether a file
   *  input was clicked right after its press. */
  read(id) {
    const r = this.armed.get(id);
    if (!r) throw new PageError('BAD_REQUEST', `Receipt ${id} is unknown or expired.`);
    this.armed.delete(id);
    this.pending.delete(id);
    const events = Array.from(r.seen).sort();
    const out = { delivered: Receipts.delivered(r.seen, r.button), events, fileInput: r.fileInput, download: Receipts.downloads(r), navigates: r.navigates };
    if (r.guard && r.guard.intercepted) out.intercepted = r.guard.intercepted;
    if (r.pressedOn) out.pressedOn = r.pressedOn;
    return out;
  }
}

const CONTROL_TAGS = new Set(['a', 'button', 'input', 'select', 'textarea', 'summary']);
const CONTROL_ROLES = new Set(['button', 'link', 'menuitem', 'menuitemcheckbox', 'menuitemradio',
  'option', 'tab', 'checkbox', 'radio', 'switch', 'treeitem']);

/** The control nearest the press inside the target, strictly below it on the press's
 *  composed path (a link or button the target contains: a menu its hover opened inside
 *  it, a card's inner link), or null. The click still reaches the target by bubbling, as
 *  Playwright's hit-target check allows; the answer names the control that was hit. */
function innerControl(path, target) {
  for (const node of path) {
    if (node === target) return null;
    if (!node || typeof node.localName !== 'string') continue;
    if ((node.localName === 'a' && !node.hasAttribute('href')) || node.localName === 'label') continue;
    if (CONTROL_TAGS.has(node.localName) || CONTROL_ROLES.has((node.getAttribute('role') || '').trim())) return node;
  }
  return null;
}

/** Whether a click on `path` follows a download link: the innermost `<a>`/`<area>` with
 *  `href` on it (HTML elements only) carries a `download` attribute and its URL is one the
 *  browser downloads: same origin as the document, `blob:` of this origin or `data:`
 *  (HTML §4.6.5: a cross-origin link's `download` is ignored and the link navigates,
 *  Chromium and Firefox; the bridge would wait 2 s for a download that never comes). A
 *  control inside the link does not stop it: Chromium follows a link around a button
 *  (the old look, at the focused element's closest `a[download]`, saw the same). */
function downloadLink(path) {
  for (const node of path) {
    if (!node || typeof node.localName !== 'string' || node.namespaceURI !== 'http://www.w3.org/1999/xhtml') continue;
    if ((node.localName === 'a' || node.localName === 'area') && node.hasAttribute('href')) {
      return node.hasAttribute('download') && downloadable(node);
    }
  }
  return false;
}

/** Whether a download link's URL keeps its `download` attribute (see downloadLink). */
function downloadable(link) {
  try {
    const url = new URL(link.href);
    if (url.protocol === 'data:') return true;
    const own = link.ownerDocument && link.ownerDocument.location;
    return !own || url.origin === own.origin; // a blob: URL has its creator's origin
  } catch {
    return true; // no URL to judge: keep the sign (a bounded wait at worst)
  }
}

/** What took a guarded press: {tag, text} (a control's visible text or label, at most 80
 *  characters; none for a field, whose value may be a secret). */
function describeHit(el) {
  if (!el || typeof el.localName !== 'string') return { tag: null, text: '' };
  const field = ['input', 'textarea', 'select'].includes(el.localName) || el.isContentEditable;
  const label = el.getAttribute('aria-label') || (field ? '' : el.textContent || '');
  return { tag: el.localName, text: label.replace(/\s+/g, ' ').trim().slice(0, 80) };
}

/**
 * Coordinate route for an element the locator path may not reach (closed shadow root).
 * Returns the element's centre as an offset in CSS px from the top-left corner of the
 * document element's border box, after proving by hit test (inside the element's own
 * root) that the element itself is topmost there.
 * @throws PageError ELEMENT_OBSCURED (something else is on top) | ELEMENT_TARGET_DETACHED
 */
export function coordinatesFor(el) {
  const rect = el.getBoundingClientRect();
  if (!el.isConnected || rect.width === 0 || rect.height === 0) {
    throw new PageError('ELEMENT_TARGET_DETACHED', 'The element has no box (hidden or detached).');
  }
  const x = rect.left + rect.width / 2;
  const y = rect.top + rect.height / 2;
  const root = el.getRootNode();
  const hit = typeof root.elementFromPoint === 'function' ? root.elementFromPoint(x, y) : null;
  // Firefox's ShadowRoot.elementFromPoint ignores elements outside that shadow tree, so
  // the document's own hit test must also land on the element's outermost host (or on
  // the element itself when it is in the light DOM).
  let outermost = el;
  for (let r = el.getRootNode(); r instanceof ShadowRoot; r = r.host.getRootNode()) outermost = r.host;
  const docHit = el.ownerDocument.elementFromPoint(x, y);
  const docOk = docHit === outermost || (outermost === el && docHit && el.contains(docHit));
  if (!hit || !(hit === el || el.contains(hit)) || !docOk) {
    throw new PageError('ELEMENT_OBSCURED',
      `Another element (<${(docOk ? hit : docHit) ? (docOk ? hit : docHit).localName : 'nothing'}>) is topmost at the target's centre; no coordinate click was sent.`,
      { coveredBy: (docOk ? hit : docHit) ? (docOk ? hit : docHit).localName : null });
  }
  const origin = el.ownerDocument.documentElement.getBoundingClientRect();
  return { x: x - origin.left, y: y - origin.top };
}
