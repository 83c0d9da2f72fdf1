// How page.find (find.js) prints what it found: the outline line of an element, with the
// ref a snapshot gives it, and the lines of its printed ancestors. It mirrors the
// decisions of the walk (walker.js visit: which elements print a line, under which role,
// name and options) for single elements, and prints through Walker.line itself, so the
// text and the refs are the snapshot's. Pure DOM.

import { CONTAINER_ROLES, FLATTEN_ROLES, NAME_FROM_CONTENT, WIDGET_ROLES, collapse } from './aria.js';
import { clip, implicitName, scalar } from './format.js';
import { flatParent } from './find_query.js';

// Skipped with their subtree, as the walk skips them (walker.js SKIP_TAGS).
export const SKIP_TAGS = new Set(['script', 'style', 'template', 'noscript', 'head', 'meta', 'link', 'title', 'base', 'option', 'datalist']);
const COLLAPSIBLE_WRAPPERS = new Set(['cell', 'listitem', 'paragraph']); // walker.js

function hasAuthorName(el) {
  return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') || el.hasAttribute('title');
}

export class OutlineLines {
  /**
   * @param {Document} doc
   * @param {import('./walker.js').Walker} walker  prints the lines (its AriaContext, refs,
   *        prefix and sensitive values are this search's)
   */
  constructor(doc, walker) {
    this.doc = doc;
    this.walker = walker;
    this.aria = walker.aria;
    this.visibleMemo = new Map();
    this.lineMemo = new Map();
    this.printedMemo = new Map();
    this.ids = new Map();
  }

  idOf(node) {
    let id = this.ids.get(node);
    if (id === undefined) {
      id = this.ids.size + 1;
      this.ids.set(node, id);
    }
    return id;
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

  /** The item of a text line: `- text: …` under its ancestors. */
  textItem(t) {
    const { ancestors } = this.path(t);
    const s = '- text: ' + scalar(clip(this.walker.safe(collapse(t.data)), 200));
    return { node: t, ref: null, line: s, key: this.idOf(t), ancestry: ancestors.map((a) => this.lineOf(a)) };
  }
}
