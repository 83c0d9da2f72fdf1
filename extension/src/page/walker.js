// The resumable walk behind snapshots (design.md §5). Pure DOM: no chrome.* calls.
//
// A Walker visits one document (or the subtree of one element) in document order,
// through open and closed shadow roots and slots, and produces lines
// {d: depth, s: text, frameKey?} in one of two modes:
//   outline  `- role "name" [state] [ref=e7] [url=…]: value` (the snapshot)
//   read     the visible text, one line per block (depth 0)
// `next(maxChars)` produces lines until the budget is spent, or until it emitted an
// <iframe> line (the caller stitches that frame in, then calls `next` again); the walk
// keeps its position, so a continuation never repeats or skips a line. Nothing is cut
// silently: `done` says whether the walk finished.
//
// What is left out: display:none, aria-hidden and inert subtrees, the contents of a
// content-visibility:hidden element, visibility:hidden elements (their visible children
// stay), the closed part of <details>, script/style/template. Geometry is not looked at:
// parts of a scrolled container (carousels) that are scrolled out of view stay listed.
// Every element line carries a ref (issue 14 item 1); `- text:` lines do not. Lines are
// kept short: a row whose name is its cells prints no name, a cell / list item /
// paragraph that holds one control prints as that control, a wrapper holding one text
// prints it on its own line (`- listitem [ref=e5]: Milk`). A native <select> lists its
// <option>s under its line, each with a ref (a click on it selects it: options.js).
// Outline options: `maxDepth` leaves out lines nested deeper (a `- …` line marks each
// cut), `next(maxChars, deadline)` stops at a time as well as a character budget.

import {
  AriaContext, CONTAINER_ROLES, FLATTEN_ROLES, MASK, NAME_FROM_CONTENT, WIDGET_ROLES, collapse, isEditingHost, statesOf,
  valueOf,
} from './aria.js';
import { contextOf, mayHostShadow } from './dom.js';
import { MAX_NAME, clip, implicitName, scalar, urlOf } from './format.js';
import { elementAttrs } from './refs.js';
import { collectSensitiveValues, isSensitive, scrub } from './sensitive.js';

const SKIP_TAGS = new Set(['script', 'style', 'template', 'noscript', 'head', 'meta', 'link', 'title', 'base', 'option', 'datalist']);
const INLINE_HANDLERS = ['onclick', 'onmousedown', 'onmouseup', 'onpointerdown', 'onpointerup', 'ondblclick'];
const COLLAPSIBLE_WRAPPERS = new Set(['cell', 'listitem', 'paragraph']);
const MAX_TEXT = 200;
const MAX_OPTIONS = 100; // option lines of a select (its own subtree snapshot lists all)
const DEADLINE_EVERY = 64; // visits between two looks at the clock
/** The line that stands for content left out below `maxDepth`. */
export const CUT_LINE = '- …';
const MAX_READ_LINE = 2000;
const BLOCK_DISPLAY = /^(block|flex|grid|table|list-item|flow-root|table-row|table-caption|table-cell|-webkit-box)/;

/**
 * @typedef {object} WalkerOptions
 * @property {'outline'|'read'} mode
 * @property {string} prefix                   ref prefix of this frame ("" or "f1")
 * @property {import('./refs.js').RefRegistry} refs
 * @property {(el: Element) => ShadowRoot|null} shadowRootOf  open or closed root of a host
 * @property {(el: Element) => string} frameKeyOf             key announced to a child frame
 * @property {Element} [root]                  subtree root (itself included); default: body
 * @property {number} [baseDepth]              indentation of this frame in the stitched text
 * @property {number|null} [maxDepth]          outline: lines deeper than this (the root's
 *                                             line is depth 0) are left out, each cut marked
 *                                             by a CUT_LINE one level below
 */

export class Walker {
  /** @param {Document} doc @param {WalkerOptions} opts */
  constructor(doc, opts) {
    this.doc = doc;
    this.mode = opts.mode || 'outline';
    this.prefix = opts.prefix || '';
    this.refs = opts.refs;
    this.shadowRootOf = opts.shadowRootOf;
    this.frameKeyOf = opts.frameKeyOf;
    this.baseDepth = opts.baseDepth || 0;
    this.maxDepth = typeof opts.maxDepth === 'number' ? opts.maxDepth : null;
    this.deadline = Infinity;
    this.timedOut = false;
    this.aria = new AriaContext(doc.defaultView);
    this.sensitive = null; // values to scrub, collected on the first chunk (sensitive.js)
    this.focused = null;
    this.clickCache = new Map();
    this.shadowCache = new Map();
    this.chunks = 0;
    this.queue = []; // lines produced but not yet returned (over budget)
    this.readLine = ''; // read mode: the block being assembled
    this.textCursor = null; // read mode: {text, offset} of a long text being split
    this.refCount = 0;
    this.lastRef = null; // [printed, local] of the last line() made
    this.ax = []; // [printed ref, local ref] of axCandidate elements not yet handed out
    this.done = false;
    const start = { text: true, closed: false, inControl: false, invisible: false, label: null, scope: null };
    this.stack = [];
    const root = opts.root || doc.body || doc.documentElement;
    this.rootEl = opts.root || null;
    if (root) {
      if (opts.root) {
        // A subtree walk starts with what its ancestors would have set.
        const above = this.aria.run(() => contextOf(root, this.aria));
        Object.assign(start, above);
        this.stack.push({ items: [root], i: 0, depth: 0, ctx: start, block: false });
      } else if (root === doc.body && isEditingHost(root)) {
        // An editable body (a rich-text editor's iframe: <body contenteditable>, designMode)
        // is the editor: its own textbox line, not only its paragraphs.
        this.stack.push({ items: [root], i: 0, depth: 0, ctx: start, block: false });
      } else {
        this.stack.push({ items: Array.from(this.childrenOf(root)), i: 0, depth: 0, ctx: start, block: false });
      }
    }
  }

  /**
   * Produce lines until `maxChars` characters (indentation and newline included) are
   * spent, `deadline` (ms, `performance.now()` clock of this document) passed, the walk
   * ends, or an iframe line was produced. A call returns at least one line when any is
   * left, even if that line alone is longer than `maxChars` or came after the deadline.
   * @param {number} maxChars
   * @param {number} [deadline]  `performance.now()` value; default: none
   * @returns {{lines: Array<{d: number, s: string, frameKey?: string}>, chars: number, done: boolean, frameKey: string|null, timedOut: boolean}}
   */
  next(maxChars, deadline = Infinity) {
    this.deadline = deadline;
    if (this.chunks++) {
      // The page may have changed since the previous chunk.
      this.aria.refresh();
      this.clickCache.clear();
      this.shadowCache.clear();
    }
    return this.aria.run(() => {
      this.sensitive = collectSensitiveValues(this.doc, new Set());
      this.focused = deepActiveElement(this.doc);
      return this.step(maxChars);
    });
  }

  step(maxChars) {
    const out = { lines: [], chars: 0, done: false, frameKey: null, timedOut: false };
    this.out = out;
    this.budget = maxChars;
    this.stop = false;
    const queued = this.queue;
    this.queue = [];
    for (let i = 0; i < queued.length; i++) {
      if (this.stop) {
        this.queue = this.queue.concat(queued.slice(i));
        return out;
      }
      this.push(queued[i]);
    }
    if (this.stop) return out;
    if (this.textCursor && !this.continueText()) return out;
    let visits = 0;
    while (this.stack.length && !this.stop) {
      if (++visits % DEADLINE_EVERY === 0 && out.lines.length && performance.now() > this.deadline) {
        // Out of time: the stack keeps the position, the next call resumes there.
        out.timedOut = true;
        return out;
      }
      const top = this.stack[this.stack.length - 1];
      if (top.i >= top.items.length) {
        this.stack.pop();
        if (top.block) this.flushRead();
        continue;
      }
      const node = top.items[top.i++];
      this.visit(node, top.depth, top.ctx);
    }
    if (!this.stack.length && !this.stop) {
      this.flushRead();
      if (!this.stop) {
        this.done = true;
        out.done = true;
      }
    }
    return out;
  }

  /** Append a line if it fits; otherwise queue it for the next call and stop. Lines
   *  pushed after a stop are queued in order. */
  push(line) {
    if (this.stop) {
      this.queue.push(line);
      return false;
    }
    if (this.maxDepth !== null && line.d > this.maxDepth) {
      // Below the depth limit: one CUT_LINE (under the last line kept) stands for what
      // is left out there.
      if (this.lastWasCut) return true;
      line = { d: this.maxDepth + 1, s: CUT_LINE };
    }
    const cost = (this.mode === 'read' ? 0 : 2 * (this.baseDepth + line.d)) + line.s.length + 1;
    if (this.out.lines.length && this.out.chars + cost > this.budget) {
      this.queue.push(line);
      this.stop = true;
      return false;
    }
    this.out.lines.push(line);
    this.out.chars += cost;
    this.lastWasCut = line.s === CUT_LINE;
    if (line.frameKey) {
      this.out.frameKey = line.frameKey;
      this.stop = true;
    }
    return true;
  }

  /** Shadow root (open or closed) of `el`, asked once per element and only of elements
   *  that can host one (the extension API call for closed roots is not free). */
  rootOf(el) {
    if (!mayHostShadow(el)) return null;
    let root = this.shadowCache.get(el);
    if (root === undefined) {
      root = this.shadowRootOf(el) || null;
      this.shadowCache.set(el, root);
    }
    return root;
  }

  childrenOf(el) {
    const root = this.rootOf(el);
    if (root) return root.childNodes;
    if (el.localName === 'slot' && typeof el.assignedNodes === 'function') {
      const assigned = el.assignedNodes({ flatten: true });
      if (assigned.length) return assigned;
    }
    return el.childNodes;
  }

  descend(el, depth, ctx, block = false) {
    if (this.aria.skipsContents(el)) {
      if (block) this.flushRead();
      return;
    }
    if (this.maxDepth !== null && depth > this.maxDepth && this.mode === 'outline') {
      // Not walked: a CUT_LINE says something may be there (an element or a text).
      for (const n of this.childrenOf(el)) {
        if (n.nodeType === Node.ELEMENT_NODE || (n.nodeType === Node.TEXT_NODE && n.data.trim())) {
          this.push({ d: depth, s: CUT_LINE });
          break;
        }
      }
      return;
    }
    let items = this.childrenOf(el);
    const root = this.rootOf(el);
    if (root) {
      collectSensitiveValues(root, this.sensitive);
      if (root.mode === 'closed' && !ctx.closed) ctx = { ...ctx, closed: true };
    }
    if (el instanceof HTMLDetailsElement && !el.open) {
      items = Array.from(items).filter((n) => n.nodeType === Node.ELEMENT_NODE && n.localName === 'summary');
    }
    if (items.length) this.stack.push({ items: Array.from(items), i: 0, depth, ctx, block });
    else if (block) this.flushRead();
  }

  visit(node, depth, ctx) {
    if (node.nodeType === Node.TEXT_NODE) {
      if (ctx.text && !ctx.invisible) {
        if (this.mode === 'read') this.readText(node.data);
        else this.text(node.data, depth, ctx);
      }
      return;
    }
    if (node.nodeType !== Node.ELEMENT_NODE) return;
    const el = node;
    if (SKIP_TAGS.has(el.localName) || !el.isConnected || this.aria.prunes(el)) return;
    const invisible = this.aria.invisible(el);
    if (invisible !== ctx.invisible) ctx = { ...ctx, invisible };
    if (this.mode === 'read') {
      this.visitRead(el, depth, ctx, invisible);
      return;
    }
    const role = this.aria.role(el);
    if (role === 'iframe') {
      if (!invisible) this.frameLine(el, depth, ctx);
      return;
    }
    if (invisible) {
      this.descend(el, depth, ctx);
      return;
    }
    if ((el.localName === 'legend' && el.parentElement instanceof HTMLFieldSetElement) ||
        (el.localName === 'caption' && el.parentElement instanceof HTMLTableElement)) {
      return; // the group's or table's name: printed on its line
    }
    if (el.localName === 'label' && !role) {
      const control = el.control;
      if (control && !this.aria.prunes(control)) {
        // The control's line carries this label as its name; the label's own text is
        // printed only where the name does not contain it.
        this.descend(el, depth, { ...ctx, label: control });
        return;
      }
    }
    const clickable = !ctx.inControl && this.clickable(el, role);
    if ((!role || role === 'generic') && axCandidate(el, clickable)) {
      // Its role and name may live in ElementInternals, which page-world code cannot read:
      // a line with a ref, which the bridge rewrites from the browser's own accessibility
      // tree where the driver can read it (Chromium; supervisor/frames.py ax_facts).
      const name = clip(this.safe(implicitName(el, Infinity)), 100);
      this.push(this.line(el, 'generic', name, depth, ctx, { clickable: false }));
      if (!ctx.closed) this.ax.push(this.lastRef);
      this.descend(el, depth + 1, { ...ctx, text: !name && ctx.text, inControl: true });
      return;
    }
    if (!role || FLATTEN_ROLES.has(role)) {
      if (!clickable) {
        if (ctx.text && !ctx.label && this.ownText(el)) {
          // A block that holds just one text is a `generic` with a ref (right-click,
          // double-click, drag on text need a target); other wrappers flatten.
          const held = this.contents(el);
          if (!held.bail && held.texts === 1 && held.elements === 0) {
            const name = clip(this.safe(implicitName(el, Infinity)), 100); // the ref's descriptor
            this.push(this.line(el, 'generic', name, depth, ctx, { inline: held.text, shown: '' }));
            return;
          }
        }
        this.descend(el, depth, ctx);
        return;
      }
      const name = clip(this.safe(implicitName(el, Infinity)), 100); // scrubbed before it is cut
      this.push(this.line(el, 'generic', name, depth, ctx, { clickable: false }));
      this.descend(el, depth + 1, { ...ctx, text: !name && ctx.text, inControl: true });
      return;
    }
    // A row named by its cells prints no name (the cells below say it) and its ref's
    // descriptor has none: its name is not even computed (snapshot.js descriptorName).
    const name = role === 'row' && !hasAuthorName(el) ? '' : this.safe(this.aria.name(el));
    if (COLLAPSIBLE_WRAPPERS.has(role)) {
      const held = this.contents(el);
      const authorName = el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') || el.hasAttribute('title');
      if (!held.bail) {
        // A cell that holds only controls, or a cell / list item / paragraph holding one
        // control, prints as its controls.
        const onlyControls = held.texts === 0 && held.elements > 0 && !authorName && !clickable;
        if (onlyControls && (role !== 'listitem' || held.elements === 1)) {
          this.descend(el, depth, ctx);
          return;
        }
        if (role === 'paragraph' && held.texts === 0 && held.elements === 0 && !authorName) return; // empty
        if (held.texts === 1 && held.elements === 0 && (!name || name === held.text)) {
          const named = role === 'cell' && !!name; // a cell's name is its text
          this.push(this.line(el, role, name, depth, ctx,
            { clickable, shown: named ? name : '', inline: named ? undefined : held.text }));
          return;
        }
      }
    }
    if (role === 'article' && !name && !clickable) {
      // An unnamed article (a card) adds a level, not a fact: its heading says where it
      // starts (a draggable or clickable one keeps its line).
      this.descend(el, depth, ctx);
      return;
    }
    this.push(this.line(el, role, name, depth, ctx, { clickable }));
    if (!name && !ctx.closed && NAME_FROM_CONTENT.has(role) && WIDGET_ROLES.has(role)) {
      // A control named from its content with no name here: its name may be CSS
      // generated content (::before / ::after, as Quill's pickers), which the browser's
      // tree counts and accname-in-page does not: ask the tree too (axCandidate).
      this.ax.push(this.lastRef);
    }
    if (el instanceof HTMLSelectElement) {
      this.optionLines(el, depth + 1, ctx);
      return;
    }
    // A textarea's children are its initial value; an editing host's text is its value.
    if (el instanceof HTMLTextAreaElement || (role === 'textbox' && isEditingHost(el))) return;
    const suppress = NAME_FROM_CONTENT.has(role) && !!name;
    const inControl = ctx.inControl || WIDGET_ROLES.has(role) || clickable;
    const scope = name && CONTAINER_ROLES.has(role) && role !== 'row' ? { role, name } : ctx.scope;
    const next = suppress || inControl !== ctx.inControl || scope !== ctx.scope
      ? { ...ctx, text: suppress ? false : ctx.text, inControl, scope }
      : ctx;
    this.descend(el, depth + 1, next);
  }

  /** True when `el` (no role of its own) is a block with a non-blank text child. */
  ownText(el) {
    let has = false;
    for (const n of el.childNodes) {
      if (n.nodeType === Node.TEXT_NODE && n.data.trim()) { has = true; break; }
    }
    if (!has || this.rootOf(el)) return false;
    const display = this.aria.style(el).display;
    return !display.startsWith('inline') && display !== 'contents';
  }

  /** The <option>s of a native select, one line each with a ref, under its line. */
  optionLines(select, depth, ctx) {
    if (this.maxDepth !== null && depth > this.maxDepth) {
      if (select.options.length) this.push({ d: depth, s: CUT_LINE });
      return;
    }
    const options = select.options;
    if (select !== this.rootEl && options.length && this.replacedSelect(select)) {
      // A select no one can see or reach, kept by a widget library that draws its own
      // (tom-select, Choices, select2): its options get no lines, so the options a
      // client finds by name are the widget's, which a person clicks. A click on the
      // hidden select's option changed the hidden select and not the widget (corpus
      // pages lib:tom_select, lib:choices_select). select_option on it still works.
      this.push({ d: depth, s: `- text: "${options.length} options of a select hidden behind the page's own control (select_option takes any by value or label)"` });
      return;
    }
    const max = select === this.rootEl ? options.length : Math.min(options.length, MAX_OPTIONS);
    // A secret select (card expiry ...) shows its value masked: which option is selected
    // is not said either.
    const secret = isSensitive(select);
    for (let i = 0; i < max; i++) {
      const o = options[i];
      const label = this.safe(collapse(o.label));
      this.push(this.line(o, 'option', label, depth, ctx, { hideSelected: secret }));
    }
    if (options.length > max) {
      this.push({ d: depth, s: `- text: "… ${options.length - max} more options (select_option takes any by value or label)"` });
    }
  }

  /** True when a native select is drawn hidden although it is in the layout (the way
   *  widget libraries keep the original select for forms and screen readers): clipped to
   *  nothing (`clip: rect(0 0 0 0)`, `clip-path: inset(50%)`, a box of 1 CSS px or less),
   *  or fully transparent where the point at its centre (inside the viewport) hits another
   *  element. A transparent select on top of a styled box, which a person clicks to open
   *  it, is not replaced. */
  replacedSelect(select) {
    const rect = select.getBoundingClientRect();
    if (rect.width <= 1 || rect.height <= 1) return true;
    const style = this.aria.style(select);
    if (/^rect\(\s*0(px)?[\s,]+0(px)?[\s,]+0(px)?[\s,]+0(px)?\s*\)$/.test(style.clip || '')) return true;
    if ((style.clipPath || '').replace(/\s+/g, '') === 'inset(50%)') return true;
    if (parseFloat(style.opacity) !== 0) return false;
    const x = rect.left + rect.width / 2, y = rect.top + rect.height / 2;
    const view = select.ownerDocument.defaultView;
    if (!view || x < 0 || y < 0 || x >= view.innerWidth || y >= view.innerHeight) return false;
    const root = select.getRootNode();
    const hit = typeof root.elementFromPoint === 'function' ? root.elementFromPoint(x, y) : null;
    return !!hit && hit !== select && !select.contains(hit);
  }

  /** An outline line for an element: every one carries a ref. `shown` is the name
   *  printed when it differs from the ref's descriptor name (a row named by its cells). */
  line(el, role, name, depth, ctx, { clickable, inline, shown = name, hideSelected = false } = {}) {
    let s = `- ${role}`;
    if (shown) s += ' ' + JSON.stringify(clip(shown, MAX_NAME));
    for (const state of statesOf(el, role, this.focused)) if (!hideSelected || state !== 'selected') s += ` [${state}]`;
    if (role === 'textbox' && isEditingHost(el) && !this.aria.style(el).display.startsWith('inline')) s += ' [multiline]';
    if (clickable && role !== 'generic') s += ' [clickable]';
    if (ctx.closed) s += ' [closed-shadow]';
    const clipped = clip(name, MAX_NAME);
    const ref = this.refs.seen(el, role, clipped, ctx.scope, ctx.closed) ||
      this.refs.refFor(el, this.descriptor(el, role, name, ctx));
    this.refCount++;
    this.lastRef = [`${this.prefix}${ref}`, ref];
    s += ` [ref=${this.prefix}${ref}]`;
    if (role === 'link') {
      const url = urlOf(el);
      if (url) s += ` [url=${this.safe(url)}]`; // a page may put a typed secret in a link
    }
    const value = valueOf(el, role);
    if (value === MASK) s += ': ' + MASK;
    else if (value !== null && value !== '') s += ': ' + scalar(clip(this.safe(collapse(value)), MAX_TEXT));
    else if (inline) s += ': ' + scalar(inline);
    return { d: depth, s };
  }

  frameLine(el, depth, ctx) {
    const name = this.safe(collapse(el.getAttribute('title') || el.getAttribute('name') || el.getAttribute('aria-label') || ''));
    const line = this.line(el, 'iframe', name, depth, ctx, {});
    line.frameKey = this.frameKeyOf(el);
    this.push(line);
  }

  text(data, depth, ctx) {
    const t = collapse(data);
    if (!t) return;
    if (ctx.label && this.aria.name(ctx.label).includes(t) && !this.aria.prunes(ctx.label)) return; // carried by the control's name
    this.push({ d: depth, s: '- text: ' + scalar(clip(this.safe(t), MAX_TEXT)) });
  }

  /** Semantic descriptor of a ref (refs.js): never a field value. */
  descriptor(el, role, name, ctx) {
    return { tag: el.localName, role, name: clip(name, MAX_NAME), attrs: elementAttrs(el), scope: ctx.scope,
      sensitive: isSensitive(el), closed: ctx.closed };
  }

  /** `s` with sensitive field values masked (sensitive.js scrub). */
  safe(s) {
    return scrub(s, this.sensitive);
  }

  /**
   * Does `el` act as a control without saying so? Signals an isolated-world content
   * script can read: an inline on*click/mouse/pointer handler attribute, tabindex ≥ 0,
   * draggable=true, contenteditable, `cursor: pointer` where the parent has none, and
   * a <label> whose control is hidden. Not visible here: listeners added with
   * addEventListener and handlers the page assigned to the `onclick` property (Chromium
   * shows an isolated world only the handlers of its own world; the property check below
   * catches what this world can see). Seeing them would mean patching the page's own
   * world, which pages can detect; cursor:pointer is what frameworks' clickable elements
   * nearly always set (docs/observation.md).
   */
  clickable(el, role) {
    if (role && WIDGET_ROLES.has(role)) return false;
    let hit = this.clickCache.get(el);
    if (hit !== undefined) return hit;
    hit = false;
    if (el !== this.doc.body && el !== this.doc.documentElement) {
      for (const attr of INLINE_HANDLERS) if (el.hasAttribute(attr)) { hit = true; break; }
      if (!hit && typeof el.onclick === 'function') hit = true;
      if (!hit) {
        const tabindex = el.getAttribute('tabindex');
        if (tabindex !== null && Number(tabindex) >= 0) hit = true;
      }
      if (!hit && el.getAttribute('draggable') === 'true') hit = true;
      if (!hit && el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) hit = true;
      if (!hit && this.aria.style(el).cursor === 'pointer') {
        const parent = el.parentElement || (el.getRootNode() instanceof ShadowRoot ? el.getRootNode().host : null);
        hit = !parent || this.aria.style(parent).cursor !== 'pointer';
      }
      if (!hit && el.localName === 'label' && el.control) hit = true; // its control is hidden (see visit)
    }
    this.clickCache.set(el, hit);
    return hit;
  }

  /**
   * What `el` holds once roleless wrappers are looked through: {texts, elements, el,
   * text, bail}, counts capped at 2. `el`/`text` is the last one seen; `bail` is set for
   * content that needs the general path (frames, labels, invisible parts).
   */
  contents(el) {
    const res = { texts: 0, elements: 0, el: null, text: undefined, bail: false };
    const look = (parent) => {
      for (const child of this.childrenOf(parent)) {
        if (res.bail || (res.texts > 1 && res.elements > 1)) return;
        if (child.nodeType === Node.TEXT_NODE) {
          const t = collapse(child.data);
          if (t) { res.texts = Math.min(res.texts + 1, 2); res.text = clip(this.safe(t), MAX_TEXT); }
          continue;
        }
        if (child.nodeType !== Node.ELEMENT_NODE || SKIP_TAGS.has(child.localName) || this.aria.prunes(child)) continue;
        const role = this.aria.role(child);
        if (this.aria.invisible(child) || role === 'iframe' || child.localName === 'label') {
          res.bail = true;
          return;
        }
        if ((!role || FLATTEN_ROLES.has(role)) && !this.clickable(child, role)) {
          look(child);
          continue;
        }
        res.elements = Math.min(res.elements + 1, 2);
        res.el = child;
      }
    };
    look(el);
    return res;
  }

  // -- read mode ------------------------------------------------------------------

  visitRead(el, depth, ctx, invisible) {
    const role = this.aria.role(el);
    if (role === 'iframe') {
      if (invisible) return;
      this.flushRead();
      const name = this.safe(collapse(el.getAttribute('title') || el.getAttribute('name') || ''));
      this.push({ d: 0, s: `[frame${name ? ' ' + JSON.stringify(name) : ''}]`, frameKey: this.frameKeyOf(el) });
      return;
    }
    const display = this.aria.style(el).display;
    const block = BLOCK_DISPLAY.test(display) || el.localName === 'br';
    if (block) this.flushRead();
    if (el.localName === 'br') return;
    if (role === 'heading' && !invisible) {
      const level = Number(el.getAttribute('aria-level') || (/^h([1-6])$/.exec(el.localName) || [])[1] || 2);
      this.readLine += '#'.repeat(Math.min(level, 6)) + ' ';
    }
    if ((el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) && !invisible) {
      const type = el.type;
      if (type !== 'hidden' && type !== 'checkbox' && type !== 'radio' && el.value && !isSensitive(el)) {
        this.appendRead(`[${collapse(el.value)}]`);
      }
    }
    if (el instanceof HTMLSelectElement && !invisible) {
      const chosen = Array.from(el.selectedOptions, (o) => collapse(o.label)).join(', ');
      if (chosen) this.appendRead(`[${isSensitive(el) ? MASK : this.safe(chosen)}]`);
    }
    if (el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement) {
      if (block) this.flushRead();
      return; // their children are their value or options
    }
    this.descend(el, depth, ctx, block);
  }

  appendRead(text) {
    if (this.readLine && !/[\s#]$/.test(this.readLine)) this.readLine += ' ';
    this.readLine += text;
    if (this.readLine.length >= MAX_READ_LINE) this.flushRead();
  }

  flushRead() {
    if (this.mode !== 'read') return;
    const line = this.readLine.trim();
    this.readLine = '';
    if (line && line !== '#' && !/^#+$/.test(line)) this.push({ d: 0, s: this.safe(line) });
  }

  /** Read mode: text is appended to the block; long text is split across lines/pages. */
  readText(data) {
    const t = collapse(data);
    if (!t) return;
    if (t.length <= MAX_READ_LINE) {
      this.appendRead(t);
      return;
    }
    this.flushRead();
    this.textCursor = { text: this.safe(t), offset: 0 };
    this.continueText();
  }

  continueText() {
    const cur = this.textCursor;
    while (cur.offset < cur.text.length && !this.stop) {
      const piece = cur.text.slice(cur.offset, cur.offset + MAX_READ_LINE);
      cur.offset += piece.length;
      this.push({ d: 0, s: piece });
    }
    if (cur.offset >= cur.text.length) this.textCursor = null;
    return !this.stop;
  }
}

/**
 * True for an element whose role and name may come from ElementInternals
 * (`attachInternals()`: `internals.role`, `internals.ariaLabel`), which no page-world or
 * content-script API reads: an autonomous custom element (a dash in its tag name, HTML
 * "valid custom element name") with no `role` attribute that a person can reach: a tab
 * stop or `clickable` (walker.js clickable()). Framework wrappers (`<app-root>`) are
 * neither and still flatten. Cheap: no extra style or layout read.
 */
export function axCandidate(el, clickable) {
  if (!el.localName.includes('-') || el.hasAttribute('role')) return false;
  return clickable || el.tabIndex >= 0;
}

/** True when `el` is named by its author (not from its content). */
export function hasAuthorName(el) {
  return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') || el.hasAttribute('title');
}

function deepActiveElement(doc) {
  let el = doc.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  // The body is where focus rests when nothing has it; an editable body (an editor's
  // iframe) is focused only while its document has the focus.
  if (el === doc.body) return isEditingHost(el) && doc.hasFocus() ? el : null;
  return el;
}
