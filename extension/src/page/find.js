// Find without a full snapshot (issue 14 item 5, page.find). Pure DOM: no chrome.* calls;
// closed shadow roots are reached through the `shadowRootOf` the caller passes.
//
// A query (role, accessible name, text; substrings, or regular expressions) is answered
// with the outline lines of the matching elements, as the snapshot prints them and with
// the same refs (the page's RefRegistry through a Walker: page.act takes them), plus the
// lines of their ancestors. Roles and names are NOT computed for every node: candidates
// are narrowed first by the browser's own machinery, then checked with AriaContext:
//   role only         querySelectorAll of the role's tags and [role] (ROLE_TAGS below)
//   name and/or text  a scan of text nodes that skips every subtree whose textContent
//                     (joined by the browser) cannot match, and of name-bearing
//                     attributes; the elements holding a hit and their ancestors are the
//                     candidates
// Query helpers: find_query.js; how a found element prints: find_lines.js.
//   role and name     all elements of the role when there are few (a name assembled from
//                     several nodes or a <label> is then found too), else the text scan
// Each tree (the document or the `within` element, every open and closed shadow root) is
// searched on its own and stops after limit + 1 matches; the matches of all trees are put
// in flat-tree order and cut at `limit`. Frames: an <iframe> inside the scope is returned
// as an item in that order too; the background searches its document and puts its
// matches there (background/find.js).
//
// Limits (said in docs, not hidden): a text or name is matched inside one text node or
// one attribute (a name assembled from several nodes is found only with `role`, on pages
// with at most ROLE_SCAN_MAX elements of that role); `text` on an element is its
// textContent. Sensitive values are masked (sensitive.js) before matching, so a search
// cannot probe a secret field's value.

import { PageError } from './errors.js';
import { collapse } from './aria.js';
import { mayHostShadow } from './dom.js';
import { collectSensitiveValues } from './sensitive.js';
import { Walker } from './walker.js';
import { OutlineLines, SKIP_TAGS } from './find_lines.js';
import { compareFlat, flatParent, matcher, roleSelector } from './find_query.js';

export { compareFlat, matcher, roleSelector };

/** Elements of a role above which `role` + `name` narrows by text instead of checking all. */
export const ROLE_SCAN_MAX = 2000;
const MAX_FRAMES = 100;
const CHECK_EVERY = 128; // loop iterations between two looks at the clock
const NAME_ATTRS = ['aria-label', 'alt', 'title', 'placeholder', 'aria-placeholder'];
// One flat list of simple selectors: Blink matches it several times faster than compound
// ones (input[type=button][value]); the input types are checked in hits().
const NAME_ATTR_SELECTOR = '[aria-label],[alt],[title],[placeholder],[aria-placeholder],input[value]';
const VALUE_NAMED = new Set(['button', 'submit', 'reset']);

function deepActiveElement(doc) {
  let el = doc.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  return el === doc.body ? null : el;
}

class Finder extends OutlineLines {
  constructor(doc, msg, { shadowRootOf, observer, frameKeys }) {
    const role = msg.role ? String(msg.role).trim().toLowerCase() : null;
    const name = matcher(msg.name, !!msg.regex);
    const text = matcher(msg.text, !!msg.regex);
    if (!role && !name && !text) {
      throw new PageError('BAD_REQUEST', 'page.find needs a role, a name or a text to look for.', {});
    }
    super(doc, new Walker(doc, {
      mode: 'outline', prefix: msg.prefix || '', refs: observer.refs, shadowRootOf,
      frameKeyOf: (el) => frameKeys.keyOf(el), root: doc.documentElement,
    }));
    Object.assign(this, { role, name, text, observer });
    this.limit = Math.max(1, Math.min(Number(msg.limit) || 20, 500));
    this.deadline = performance.now() + Math.max(1, Number(msg.budgetMs) || 3000);
    this.timedOut = false;
    this.ticks = 0;
    this.labelSeen = new Set();
    this.roleSel = role ? roleSelector(role) : null;
  }

  late() {
    if (++this.ticks % CHECK_EVERY) return this.timedOut;
    if (performance.now() > this.deadline) this.timedOut = true;
    return this.timedOut;
  }

  /** `scope` and every shadow root inside it, in tree order. */
  roots(scope) {
    const out = [];
    const visit = (node) => {
      out.push(node);
      for (const el of node.querySelectorAll('*')) {
        if (this.late()) return;
        const sr = this.walker.rootOf(el); // asks only elements that may host one
        if (sr) visit(sr);
      }
    };
    if (scope.nodeType === Node.ELEMENT_NODE) {
      const own = mayHostShadow(scope) ? this.walker.rootOf(scope) : null;
      if (own) visit(own);
    }
    visit(scope);
    return out;
  }

  /** Does `el` satisfy every criterion? */
  matches(el) {
    if (!this.reachable(el) || this.aria.invisible(el)) return false;
    const printed = this.printedRole(el);
    if (this.role && this.aria.role(el) !== this.role && printed !== this.role) return false;
    if (this.name && !this.name(this.nameOf(el, printed || this.aria.role(el)))) return false;
    if (this.text && !this.text(this.walker.safe(collapse(el.textContent || '')))) return false;
    return true;
  }

  // -- candidates -------------------------------------------------------------------

  /** Role only (or few elements of the role): every element of the role, in order. */
  byRole(root, found) {
    for (const el of root.querySelectorAll(this.roleSel)) {
      if (this.late()) return;
      if (this.matches(el)) found.push(el);
      if (found.length > this.limit) return;
    }
  }

  /** Hits of `test` in one tree, in document order: text nodes and elements whose
   *  name-bearing attribute matches. */
  *hits(root, test) {
    const attrs = [];
    for (const el of root.querySelectorAll(NAME_ATTR_SELECTOR)) {
      for (const a of NAME_ATTRS.concat(el.localName === 'input' && VALUE_NAMED.has(el.type) ? ['value'] : [])) {
          const v = el.getAttribute(a);
        if (v && test(this.walker.safe(collapse(v)))) { attrs.push(el); break; }
      }
    }
    let ai = 0;
    const prune = test.raw ? test : test.prune;
    for (const t of prune ? this.prunedText(root, prune) : this.allText(root)) {
      if (this.late()) return;
      const data = t.data;
      if (test.raw ? !test(data) : !test(collapse(data))) continue;
      const text = collapse(data);
      // Masked first: a search must not probe a secret field's value (sensitive.js).
      if (this.walker.sensitive.size && !test(this.walker.safe(text))) continue;
      while (ai < attrs.length && compareFlat(attrs[ai], t) < 0) yield { el: attrs[ai++] };
      yield { text: t };
    }
    while (ai < attrs.length) yield { el: attrs[ai++] };
  }

  /** Every text node of one tree, in document order. */
  *allText(root) {
    const tw = this.doc.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let t = tw.nextNode(); t; t = tw.nextNode()) yield t;
  }

  /** The text nodes of one tree that may match, in document order: a subtree whose
   *  textContent (joined in C++) fails `test` (which a superstring of any match passes)
   *  holds no matching text node, so it is skipped without visiting its nodes. */
  *prunedText(node, test) {
    for (let c = node.firstChild; c; c = c.nextSibling) {
      if (c.nodeType === Node.TEXT_NODE) {
        yield c;
      } else if (c.nodeType === Node.ELEMENT_NODE && !SKIP_TAGS.has(c.localName)) {
        if (this.late()) return;
        const all = c.textContent;
        if (all && test(all)) yield* this.prunedText(c, test);
      }
    }
  }

  /** Role and/or name, narrowed by the text scan: climb from each hit. */
  byHits(root, found, seen) {
    const test = this.text || this.name;
    for (const hit of this.hits(root, test)) {
      let start = hit.el || hit.text.parentElement;
      if (!start) continue;
      if (this.role) {
        for (let n = start; n && n !== this.scope; n = flatParent(n)) {
          if (n instanceof ShadowRoot) continue;
          if (seen.has(n)) break; // its ancestors were checked from an earlier hit
          seen.add(n);
          if (n.matches(this.roleSel) && this.matches(n)) found.push(n);
          this.label(n, found, seen);
        }
      } else {
        // No role: the innermost element with a line of its own that matches.
        for (let n = start; n && n !== this.scope; n = flatParent(n)) {
          if (n instanceof ShadowRoot) continue;
          if (this.label(n, found, seen)) break;
          if (!this.printedRole(n)) continue;
          if (seen.has(n)) break;
          if (this.matches(n)) {
            seen.add(n);
            found.push(n);
            break;
          }
        }
      }
      if (found.length > this.limit || this.timedOut) return;
    }
  }

  /** A <label> or an aria-labelledby source passed on the climb: its control may be
   *  named by it. Returns true when a control matched. */
  label(n, found, seen) {
    if (!this.name) return false;
    const targets = [];
    if (n.localName === 'label' && n.control) targets.push(n.control);
    if (n.id) {
      const root = n.getRootNode();
      if (root.querySelectorAll) {
        for (const el of root.querySelectorAll(`[aria-labelledby~="${CSS.escape(n.id)}"]`)) targets.push(el);
      }
    }
    let any = false;
    for (const el of targets) {
      if (this.labelSeen.has(el)) continue;
      this.labelSeen.add(el);
      if ((!this.roleSel || el.matches(this.roleSel)) && this.matches(el)) {
        found.push(el);
        any = true;
      }
    }
    return any;
  }

  /** Text only: the text lines, or the line of the element that prints the text (a
   *  button's name, a list item's inline text, a legend's group). */
  byText(root, found, seen) {
    for (const hit of this.hits(root, this.text)) {
      const node = hit.el || hit.text;
      const el = hit.el || hit.text.parentElement;
      if (!el || !this.reachable(el) || (hit.text && this.aria.invisible(el))) continue;
      let carried = !!hit.el;
      let owner = null;
      for (let n = el; n && n !== this.scope; n = flatParent(n)) {
        if (n instanceof ShadowRoot) continue;
        const tag = n.localName;
        if ((tag === 'legend' || tag === 'caption') && n.parentElement &&
            (n.parentElement.localName === 'fieldset' || n.parentElement.localName === 'table')) carried = true;
        if (n !== this.doc.body && n !== this.doc.documentElement && this.printedRole(n) && !this.aria.invisible(n)) {
          owner = n;
          break;
        }
      }
      let match = hit.text ? node : null;
      if (owner) {
        const { ctx } = this.path(owner);
        const entry = this.entry(owner, ctx);
        if (carried || (entry && this.carries(entry))) match = owner;
      }
      if (match && !seen.has(match)) {
        seen.add(match);
        found.push(match);
      }
      if (found.length > this.limit || this.timedOut) return;
    }
  }

  /** The frames inside the scope that the outline shows, as items. */
  frames(roots) {
    const out = [];
    for (const root of roots) {
      for (const el of root.querySelectorAll('iframe, frame')) {
        if (out.length >= MAX_FRAMES) return out;
        if (!this.reachable(el) || this.aria.invisible(el)) continue;
        const item = this.elementItem(el);
        item.frameKey = this.walker.frameKeyOf(el);
        out.push(item);
      }
    }
    return out;
  }

  /** Whether `node` is in the search scope (a label's control may be outside it). */
  inside(node) {
    if (this.scope.nodeType === Node.DOCUMENT_NODE) return true;
    for (let n = node; n; n = n.parentNode || n.host || null) if (n === this.scope) return true;
    return false;
  }

  run(scope) {
    this.scope = scope;
    this.walker.sensitive = collectSensitiveValues(this.doc, new Set());
    this.walker.focused = deepActiveElement(this.doc);
    const roots = this.roots(scope);
    for (const r of roots) if (r !== this.doc) collectSensitiveValues(r, this.walker.sensitive);
    const found = [];
    let more = false;
    for (const root of roots) {
      if (this.timedOut) break;
      const here = [];
      const seen = new Set();
      if (this.role && !this.name && !this.text) this.byRole(root, here);
      else if (!this.role && !this.name) this.byText(root, here, seen);
      else if (this.role && root.querySelectorAll(this.roleSel).length <= ROLE_SCAN_MAX) this.byRole(root, here);
      else this.byHits(root, here, seen);
      if (here.length > this.limit) more = true;
      found.push(...here);
    }
    const nodes = Array.from(new Set(found)).filter((n) => n !== scope && this.inside(n));
    nodes.sort(compareFlat);
    if (nodes.length > this.limit) more = true;
    const kept = nodes.slice(0, this.limit);
    const items = kept.map((n) => (n.nodeType === Node.TEXT_NODE ? this.textItem(n) : this.elementItem(n)));
    const frameItems = this.timedOut ? [] : this.frames(roots);
    const all = items.concat(frameItems).sort((a, b) => compareFlat(a.node, b.node));
    return {
      items: all.map(({ node, ...rest }) => { void node; return rest; }),
      more, timedOut: this.timedOut, nextRef: this.observer.refs.next,
    };
  }
}

/**
 * Find in this document (page.find; the background stitches frames).
 * @param {Document} doc
 * @param {{role?: string, name?: string, text?: string, regex?: boolean, within?: string,
 *   limit?: number, budgetMs?: number, prefix?: string, refFloor?: number, url?: string}} msg
 *   `within`: a local ref of this document; `budgetMs`: time this frame may take, ms;
 *   `prefix`/`refFloor`: as for a snapshot walk; `url`: this document's URL without its
 *   fragment (refs are minted anew after a history-API URL change, as snapshot.js does)
 * @param {{shadowRootOf: Function, observer: import('./snapshot.js').PageObserver, frameKeys: import('./frames.js').FrameKeys}} ctx
 * @returns {{items: Array<{ref: string|null, line: string, key: number, ancestry: Array<{s: string, ref: string|null, key: number}>, frameKey?: string}>,
 *   more: boolean, timedOut: boolean, nextRef: number}}
 *   items in flat-tree order; `more`: matches past the limit exist; `timedOut`: the
 *   budget ran out before the search ended
 * @throws PageError BAD_REQUEST (no criterion, bad regex), REF_NOT_FOUND /
 *   ELEMENT_TARGET_* (`within`)
 */
export function find(doc, msg, ctx) {
  const { observer } = ctx;
  const url = typeof msg.url === 'string' ? msg.url : null;
  if (url !== null && observer.url !== undefined && url !== observer.url) observer.refs.reset();
  if (url !== null) observer.url = url;
  observer.refs.next = Math.max(observer.refs.next, Number(msg.refFloor) || 1);
  const finder = new Finder(doc, msg, ctx);
  return finder.aria.run(() => {
    const scope = msg.within ? observer.resolve(msg.within).el : doc;
    return finder.run(scope);
  });
}
