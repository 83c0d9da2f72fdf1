// Find without a full snapshot (issue 14 item 5, page.find). Pure DOM: no chrome.* calls;
// closed shadow roots are reached through the `shadowRootOf` the caller passes.
//
// A query (role, accessible name, text; substrings, or regular expressions) is answered
// with the outline lines of the matching elements, as the snapshot prints them and with
// the same refs (the page's RefRegistry through a Walker: page.act takes them), plus the
// lines of their ancestors. Roles and names are NOT computed for every node: candidates
// are narrowed first by the browser's own machinery, then checked with AriaContext:
//   role only         querySelectorAll of the role's tags and [role] (ROLE_TAGS below)
//   name and/or text  a scan of text nodes (TreeWalker) and of name-bearing attributes;
//                     the elements holding a hit, and their ancestors, are the candidates
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
import { FLATTEN_ROLES, NAME_FROM_CONTENT, WIDGET_ROLES, CONTAINER_ROLES, collapse } from './aria.js';
import { mayHostShadow } from './dom.js';
import { clip, implicitName, scalar } from './format.js';
import { collectSensitiveValues } from './sensitive.js';
import { Walker } from './walker.js';

/** Elements of a role above which `role` + `name` narrows by text instead of checking all. */
export const ROLE_SCAN_MAX = 2000;
const MAX_FRAMES = 100;
const CHECK_EVERY = 128; // loop iterations between two looks at the clock
const MAX_TESTED = 10_000; // characters of one text node a pattern is tested against
// Skipped with their subtree, as the walk skips them (walker.js SKIP_TAGS).
const SKIP_TAGS = new Set(['script', 'style', 'template', 'noscript', 'head', 'meta', 'link', 'title', 'base', 'option', 'datalist']);
const NAME_ATTRS = ['aria-label', 'alt', 'title', 'placeholder', 'aria-placeholder'];
// One flat list of simple selectors: Blink matches it several times faster than compound
// ones (input[type=button][value]); the input types are checked in hits().
const NAME_ATTR_SELECTOR = '[aria-label],[alt],[title],[placeholder],[aria-placeholder],input[value]';
const VALUE_NAMED = new Set(['button', 'submit', 'reset']);
const COLLAPSIBLE_WRAPPERS = new Set(['cell', 'listitem', 'paragraph']); // walker.js

function hasAuthorName(el) {
  return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') || el.hasAttribute('title');
}

// Tags that may carry a role implicitly (html-aam), a superset: every candidate is checked
// with AriaContext.role. A role missing here is searched among all elements.
const ROLE_TAGS = {
  button: 'button, input, summary', link: 'a, area', textbox: 'input, textarea, [contenteditable]',
  searchbox: 'input', checkbox: 'input', radio: 'input', combobox: 'input, select', listbox: 'select, datalist',
  option: 'option', spinbutton: 'input', slider: 'input', switch: 'input', heading: 'h1, h2, h3, h4, h5, h6',
  img: 'img, svg, input, area', list: 'ul, ol, menu', listitem: 'li', table: 'table', row: 'tr',
  cell: 'td, th', gridcell: 'td', columnheader: 'th', rowheader: 'th', rowgroup: 'thead, tbody, tfoot',
  navigation: 'nav', main: 'main', banner: 'header', contentinfo: 'footer', complementary: 'aside',
  region: 'section', form: 'form', search: 'search, form', article: 'article', dialog: 'dialog',
  group: 'fieldset, details, optgroup, address', paragraph: 'p', separator: 'hr', progressbar: 'progress',
  meter: 'meter', figure: 'figure', term: 'dfn, dt', definition: 'dd', blockquote: 'blockquote', code: 'code',
  strong: 'strong, b', emphasis: 'em, i', time: 'time', status: 'output', iframe: 'iframe, frame',
  deletion: 'del, s', insertion: 'ins', subscript: 'sub', superscript: 'sup', mark: 'mark', math: 'math',
  caption: 'caption, figcaption', menu: 'menu',
};

/** The CSS selector of the candidates of `role` (its implicit tags and [role]). */
export function roleSelector(role) {
  const tags = ROLE_TAGS[role];
  return tags ? `${tags}, [role]` : '*';
}

/**
 * A test for `pattern`: a case-insensitive substring (whitespace collapsed), or with
 * `regex` a JavaScript regular expression, bare (`Delete \\d+`, case-sensitive) or in
 * slashes with flags (`/delete/i`, as Playwright MCP's browser_find takes it).
 * @returns {((s: string) => boolean)|null}  null for no pattern
 * @throws PageError BAD_REQUEST for a regular expression that does not compile
 */
export function matcher(pattern, regex) {
  if (pattern === null || pattern === undefined || pattern === '') return null;
  if (!regex) {
    const words = collapse(String(pattern)).split(' ').filter(Boolean);
    if (!words.length) return null;
    // The substring on whitespace-collapsed text, as one case-insensitive regex over the
    // raw text (no copy of the text is made per node: the scan of a huge page is this).
    const re = new RegExp(words.map((w) => w.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')).join('\\s+'), 'i');
    const test = (s) => re.test(s);
    test.raw = true; // the test holds on raw text as on collapsed text
    return test;
  }
  const m = /^\/([\s\S]+)\/([dgimsuvy]*)$/.exec(pattern);
  let re;
  try {
    re = m ? new RegExp(m[1], m[2].replace(/[gy]/g, '')) : new RegExp(pattern);
  } catch (err) {
    throw new PageError('BAD_REQUEST', `Not a valid regular expression: ${err.message}`, { pattern: clip(String(pattern), 100) });
  }
  const test = (s) => re.test(s.length > MAX_TESTED ? s.slice(0, MAX_TESTED) : s);
  // A subtree can be skipped when its whole (collapsed) text does not match the pattern
  // without its outer anchors: a match inside one of its text nodes would be a match
  // there too. Only for patterns where that holds: no inner anchors, word boundaries or
  // lookarounds (a conservative check of the source).
  const inner = (m ? m[1] : pattern).replace(/^\^/, '').replace(/(^|[^\\])\$$/, '$1');
  if (!/[\^$]|\\[bB]|\(\?<?[=!]/.test(inner)) {
    try {
      const loose = new RegExp(inner, re.flags);
      test.prune = (all) => loose.test(collapse(all));
    } catch { /* no pruning */ }
  }
  return test;
}

function deepActiveElement(doc) {
  let el = doc.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  return el === doc.body ? null : el;
}

/** Parent in the rendered (flat) tree: a slotted node's slot, a shadow root's host. */
function flatParent(node) {
  const slot = node.assignedSlot;
  if (slot) return slot;
  const parent = node.parentNode;
  if (!parent || parent.nodeType === Node.DOCUMENT_NODE) return null;
  if (parent instanceof ShadowRoot) return parent;
  return parent;
}

/** The chain of tree members from the outermost document node down to `node`: one entry
 *  per tree crossed (a host, then the node inside its shadow root ...). */
function treeChain(node) {
  const out = [];
  for (let n = node; n;) {
    out.push(n);
    const root = n.getRootNode();
    n = root instanceof ShadowRoot ? root.host : null;
  }
  return out.reverse();
}

/** Flat-tree order of two nodes of one document (shadow content at its host's place). */
export function compareFlat(a, b) {
  if (a === b) return 0;
  const ca = treeChain(a);
  const cb = treeChain(b);
  let i = 0;
  while (i < ca.length && i < cb.length && ca[i] === cb[i]) i++;
  if (i === ca.length) return -1; // a is a host of b's tree: a first
  if (i === cb.length) return 1;
  const pos = ca[i].compareDocumentPosition(cb[i]);
  if (pos & Node.DOCUMENT_POSITION_CONTAINED_BY) return -1;
  if (pos & Node.DOCUMENT_POSITION_CONTAINS) return 1;
  return pos & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1;
}

class Finder {
  constructor(doc, msg, { shadowRootOf, observer, frameKeys }) {
    this.doc = doc;
    this.shadowRootOf = shadowRootOf;
    this.observer = observer;
    this.prefix = msg.prefix || '';
    this.role = msg.role ? String(msg.role).trim().toLowerCase() : null;
    this.name = matcher(msg.name, !!msg.regex);
    this.text = matcher(msg.text, !!msg.regex);
    if (!this.role && !this.name && !this.text) {
      throw new PageError('BAD_REQUEST', 'page.find needs a role, a name or a text to look for.', {});
    }
    this.limit = Math.max(1, Math.min(Number(msg.limit) || 20, 500));
    this.deadline = performance.now() + Math.max(1, Number(msg.budgetMs) || 3000);
    this.timedOut = false;
    this.ticks = 0;
    this.walker = new Walker(doc, {
      mode: 'outline', prefix: this.prefix, refs: observer.refs, shadowRootOf,
      frameKeyOf: (el) => frameKeys.keyOf(el), root: doc.documentElement,
    });
    this.aria = this.walker.aria;
    this.visibleMemo = new Map();
    this.lineMemo = new Map();
    this.ids = new Map();
    this.labelSeen = new Set();
    this.printedMemo = new Map();
    this.roleSel = this.role ? roleSelector(this.role) : null;
  }

  late() {
    if (++this.ticks % CHECK_EVERY) return this.timedOut;
    if (performance.now() > this.deadline) this.timedOut = true;
    return this.timedOut;
  }

  idOf(node) {
    let id = this.ids.get(node);
    if (id === undefined) {
      id = this.ids.size + 1;
      this.ids.set(node, id);
    }
    return id;
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

  /** Whether `el` is in the rendered outline's reach: nothing on its flat-tree path is
   *  skipped, pruned (display:none, aria-hidden, inert) or inside a closed <details>. */
  reachable(el) {
    const memo = this.visibleMemo.get(el);
    if (memo !== undefined) return memo;
    let ok = !SKIP_TAGS.has(el.localName) && !this.aria.prunes(el);
    if (ok) {
      let parent = flatParent(el);
      if (parent instanceof ShadowRoot) parent = parent.host;
      if (parent) {
        if (parent instanceof HTMLDetailsElement && !parent.open && el.localName !== 'summary') ok = false;
        else ok = this.reachable(parent);
      }
    }
    this.visibleMemo.set(el, ok);
    return ok;
  }

  /** The role the outline prints `el` under (null: no line of its own). */
  printedRole(el) {
    let printed = this.printedMemo.get(el);
    if (printed === undefined) {
      printed = this.computePrinted(el);
      this.printedMemo.set(el, printed);
    }
    return printed;
  }

  computePrinted(el) {
    const role = this.aria.role(el);
    if (role === 'iframe') return role;
    if (el.localName === 'label' && !role && el.control) return null; // the control carries it
    if (role && !FLATTEN_ROLES.has(role)) return role;
    if (this.walker.clickable(el, role)) return 'generic';
    // A block holding just one text prints as a generic (walker.js, issue 14 item 1).
    // single() first: it stops at the second child element, ownText() reads every child.
    if (typeof this.walker.ownText === 'function' && this.single(el) && this.walker.ownText(el)) return 'generic';
    return null;
  }

  /** The text of `el` when it holds exactly one text and nothing else (roleless wrappers
   *  looked through, as walker.js contents() does), else null. Unlike contents() it
   *  stops at the first element of its own or the second text: a tbody of 60,000 rows
   *  is answered at its first row. */
  single(el) {
    let text = null;
    let count = 0;
    const look = (parent) => {
      for (const child of this.walker.childrenOf(parent)) {
        if (child.nodeType === Node.TEXT_NODE) {
          const t = collapse(child.data);
          if (t && ++count > 1) return false;
          if (t) text = clip(this.walker.safe(t), 200);
          continue;
        }
        if (child.nodeType !== Node.ELEMENT_NODE || SKIP_TAGS.has(child.localName) || this.aria.prunes(child)) continue;
        const role = this.aria.role(child);
        if (this.aria.invisible(child) || role === 'iframe' || child.localName === 'label') return false;
        if ((role && !FLATTEN_ROLES.has(role)) || this.walker.clickable(child, role)) return false;
        if (!look(child)) return false;
      }
      return true;
    };
    return look(el) && count === 1 ? text : null;
  }

  nameOf(el, printed) {
    if (printed === 'iframe') {
      return this.walker.safe(collapse(el.getAttribute('title') || el.getAttribute('name') || el.getAttribute('aria-label') || ''));
    }
    if (printed === 'generic') return clip(this.walker.safe(implicitName(el, Infinity)), 100);
    return this.walker.safe(this.aria.name(el));
  }

  /** Printed ancestors of `node` from the top, as entries with the walk's context
   *  (closed shadow, scope, inside a control) for each. */
  path(node) {
    const chain = [];
    for (let n = flatParent(node); n; n = flatParent(n)) chain.push(n);
    chain.reverse();
    const out = [];
    let ctx = { text: true, closed: false, inControl: false, invisible: false, label: null, scope: null };
    for (const n of chain) {
      if (n === this.doc.documentElement || n === this.doc.body) continue; // the walk starts below them
      if (n instanceof ShadowRoot) {
        if (n.mode === 'closed' && !ctx.closed) ctx = { ...ctx, closed: true };
        continue;
      }
      const entry = this.entry(n, ctx);
      if (entry) out.push(entry);
      ctx = this.childCtx(n, entry, ctx);
    }
    return { ancestors: out, ctx };
  }

  /**
   * How the walk prints `el` under `ctx` (walker.js visit): null for no line, else
   * {el, role, name, ctx, opts} where opts are Walker.line's ({clickable, inline, shown}).
   */
  entry(el, ctx) {
    if (this.aria.invisible(el)) return null;
    const own = this.aria.role(el);
    const role = this.printedRole(el);
    if (!role) return null;
    const name = this.nameOf(el, role);
    const clickable = role !== 'generic' && role !== 'iframe' && !ctx.inControl && this.walker.clickable(el, own);
    let opts = { clickable };
    if (role === 'generic') {
      const isControl = !ctx.inControl && this.walker.clickable(el, own);
      if (!isControl) {
        const text = ctx.text && typeof this.walker.ownText === 'function' && this.single(el) && this.walker.ownText(el)
          ? this.single(el) : null;
        if (!text) return null;
        opts = { inline: text, shown: '' };
      } else {
        opts = { clickable: false };
      }
    } else if (COLLAPSIBLE_WRAPPERS.has(role)) {
      const held = this.walker.contents(el);
      const authorName = hasAuthorName(el);
      if (!held.bail) {
        if (held.texts === 0 && held.elements > 0 && !authorName && !clickable && (role !== 'listitem' || held.elements === 1)) {
          return null; // printed as its controls
        }
        if (held.texts === 1 && held.elements === 0 && (!name || name === held.text)) {
          const named = role === 'cell' && !!name;
          opts = { clickable, shown: named ? name : '', inline: named ? undefined : held.text };
        }
      }
    } else if (role === 'row' && !hasAuthorName(el)) {
      opts = { clickable, shown: '' }; // a row named by its cells: the cells say it
    }
    return { el, role, name, ctx, opts };
  }

  /** The text of the entry is on its own line (inline, or as its shown name). */
  carries(entry) {
    const shown = entry.opts.shown === undefined ? entry.name : entry.opts.shown;
    return !!entry.opts.inline || ((NAME_FROM_CONTENT.has(entry.role) || entry.role === 'generic') && !!shown);
  }

  childCtx(el, entry, ctx) {
    if (!entry) return ctx;
    const { role, name } = entry;
    const inControl = ctx.inControl || WIDGET_ROLES.has(role) || role === 'generic' || !!entry.opts.clickable;
    const scope = name && CONTAINER_ROLES.has(role) && role !== 'row' ? { role, name } : ctx.scope;
    const text = ctx.text && !this.carries(entry);
    return { ...ctx, inControl, scope, text };
  }

  /** The outline line of a printed element, {s, ref, key}, as the walk prints it. */
  lineOf(entry) {
    const memo = this.lineMemo.get(entry.el);
    if (memo) return memo;
    const { s } = this.walker.line(entry.el, entry.role, entry.name, 0, entry.ctx, entry.opts);
    const m = /\[ref=((?:f\d+)?e\d+)\]/.exec(s);
    const line = { s, ref: m ? m[1] : null, key: this.idOf(entry.el) };
    this.lineMemo.set(entry.el, line);
    return line;
  }

  /** The item of one matched element: its line and its ancestors' lines. */
  elementItem(el) {
    const { ancestors, ctx } = this.path(el);
    let entry = this.entry(el, ctx);
    if (!entry) {
      // Matched but folded into its parent by the walk (a cell of controls): its own line.
      const role = this.aria.role(el) || 'generic';
      entry = { el, role, name: this.nameOf(el, role), ctx, opts: {} };
    }
    const line = this.lineOf(entry);
    return { node: el, ref: line.ref, line: line.s, key: line.key, ancestry: ancestors.map((a) => this.lineOf(a)) };
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

  /** The item of a text line: `- text: …` under its ancestors. */
  textItem(t) {
    const { ancestors } = this.path(t);
    const s = '- text: ' + scalar(clip(this.walker.safe(collapse(t.data)), 200));
    return { node: t, ref: null, line: s, key: this.idOf(t), ancestry: ancestors.map((a) => this.lineOf(a)) };
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
