// Observation of one document (design.md §5): snapshots in pages, refs, identity. Pure DOM:
// no chrome.* calls; closed shadow roots are reached through the `shadowRootOf` function
// the caller passes.
//
// The background stitches frames: it starts a walk in each frame it reaches, receives
// lines {d, s, frameKey?} up to a character budget, and continues a walk by its id when
// the agent follows a cursor. Output form (YAML-like, as agents know it from Playwright):
//   - button "Save" [ref=e7]
//   - textbox "Email" [required] [ref=e8]: ada@example.com
//   - link "Docs" [ref=e9] [url=https://example.org/docs]
// Roles and names from dom-accessibility-api (aria.js); walk rules in walker.js.

import { PageError } from './errors.js';
import { AriaContext, FLATTEN_ROLES } from './aria.js';
import { deepQueryAll } from './frames.js';
import { RefRegistry, elementAttrs, sameDescriptor } from './refs.js';
import { isSensitive } from './sensitive.js';
import { contextOf } from './dom.js';
import { MAX_NAME, clip, implicitName } from './format.js';
import { Walker, hasAuthorName } from './walker.js';

const MAX_WALKERS = 8;
const WALKER_TTL_MS = 10 * 60 * 1000;

export class PageObserver {
  /**
   * @param {Document} doc
   * @param {object} opts
   * @param {(el: Element) => ShadowRoot|null} opts.shadowRootOf
   * @param {(frameEl: Element) => string} opts.frameKeyOf
   * @param {RefRegistry} [opts.refs]
   */
  constructor(doc, { shadowRootOf, frameKeyOf, refs }) {
    this.doc = doc;
    this.shadowRootOf = shadowRootOf;
    this.frameKeyOf = frameKeyOf;
    this.refs = refs || new RefRegistry();
    /** @type {Map<string, {walker: Walker, at: number}>} */
    this.walkers = new Map();
    this.nextWalker = 1;
  }

  /**
   * Start a walk and return its first chunk.
   * @param {object} p
   * @param {'outline'|'read'} [p.mode]
   * @param {string} [p.prefix]     ref prefix of this frame
   * @param {number} [p.baseDepth]  indentation of this frame in the stitched text
   * @param {string} [p.rootRef]    start at this ref's element (subtree snapshot)
   * @param {number} p.maxChars     budget of this chunk, characters
   * @param {number} [p.refFloor]   mint new refs from this number on (the background keeps
   *                                ref numbers unique across the documents of a tab)
   * @param {string} [p.url]        this document's URL (no fragment): when it changed since
   *                                the last walk (history API), every ref is minted anew
   * @param {number|null} [p.depth] outline: leave out lines nested deeper than this below
   *                                the root (walker.js CUT_LINE marks each cut)
   * @param {number|null} [p.timeBudgetMs] stop this chunk after this many ms (`timedOut`)
   * @returns {{walkerId: string|null, lines: Array, chars: number, done: boolean, pausedAt: string|null, refCount: number, resolvedBy?: string}}
   * @throws PageError REF_NOT_FOUND | ELEMENT_TARGET_* when rootRef cannot be resolved
   */
  start({ mode = 'outline', prefix = '', baseDepth = 0, rootRef = null, maxChars, refFloor = 1, url = null,
    depth = null, timeBudgetMs = null }) {
    if (url !== null && this.url !== undefined && url !== this.url && mode === 'outline') this.refs.reset();
    if (url !== null && mode === 'outline') this.url = url;
    this.refs.next = Math.max(this.refs.next, refFloor);
    let root = null;
    let resolvedBy;
    if (rootRef) {
      const res = this.resolve(rootRef);
      root = res.el;
      resolvedBy = res.resolvedBy;
    }
    if (mode === 'outline') this.refs.observe();
    const walker = new Walker(this.doc, {
      mode, prefix, baseDepth, root, refs: this.refs, shadowRootOf: this.shadowRootOf, frameKeyOf: this.frameKeyOf,
      maxDepth: mode === 'outline' && typeof depth === 'number' ? depth : null,
    });
    const id = `w${this.nextWalker++}`;
    this.walkers.set(id, { walker, at: Date.now() });
    this.prune();
    const chunk = this.chunk(id, walker, maxChars, timeBudgetMs);
    if (resolvedBy) chunk.resolvedBy = resolvedBy;
    return chunk;
  }

  /**
   * Next chunk of a walk started by start().
   * @throws PageError BAD_REQUEST when the walk is unknown or expired
   */
  continue(walkerId, maxChars, timeBudgetMs = null, refFloor = 1) {
    // Another tab may have minted from the background's global floor since the last chunk:
    // new refs of this chunk start above it (background/tabs.js `refFloor`).
    this.refs.next = Math.max(this.refs.next, Number(refFloor) || 1);
    const entry = this.walkers.get(walkerId);
    if (!entry) {
      throw new PageError('BAD_REQUEST',
        'This snapshot cursor expired (cursors live 10 minutes; a few per page). Take a new snapshot.',
        { walkerId });
    }
    entry.at = Date.now();
    return this.chunk(walkerId, entry.walker, maxChars, timeBudgetMs);
  }

  chunk(id, walker, maxChars, timeBudgetMs = null) {
    const before = walker.refCount;
    const deadline = typeof timeBudgetMs === 'number' ? performance.now() + timeBudgetMs : Infinity;
    const res = walker.next(maxChars, deadline);
    if (res.done) this.walkers.delete(id);
    return {
      walkerId: res.done ? null : id, lines: res.lines, chars: res.chars, done: res.done,
      pausedAt: res.frameKey, refCount: walker.refCount - before, nextRef: this.refs.next, timedOut: res.timedOut,
      ...(walker.ax.length ? { ax: walker.ax.splice(0) } : {}),
    };
  }

  prune() {
    const now = Date.now();
    for (const [id, entry] of this.walkers) if (now - entry.at > WALKER_TTL_MS) this.walkers.delete(id);
    while (this.walkers.size > MAX_WALKERS) this.walkers.delete(this.walkers.keys().next().value);
  }

  /** The elements behind local refs (null where a ref is unknown or its node gone), for
   *  the driver's accessibility-tree read (supervisor/frames.py ax_facts). No rebind: the
   *  facts are about the very element the snapshot showed. */
  axElements(refs) {
    return (Array.isArray(refs) ? refs : []).map((ref) => {
      const entry = this.refs.byRef.get(String(ref));
      const el = entry && entry.node.deref();
      return el && el.isConnected ? el : null;
    });
  }

  /** The element behind `ref` (refs.js resolve(), with one rebind allowed). */
  resolve(ref) {
    return this.refs.resolve(ref, (desc) => this.equivalents(desc));
  }

  /** Visible elements of this document (shadow roots included) matching a descriptor. */
  equivalents(desc) {
    const aria = new AriaContext(this.doc.defaultView);
    return aria.run(() => this.findEquivalents(desc, aria));
  }

  findEquivalents(desc, aria) {
    const out = [];
    const tag = /^[a-z][a-z0-9-]*$/.test(desc.tag) ? desc.tag : '*';
    for (const el of deepQueryAll(this.doc, tag, this.shadowRootOf)) {
      // display:contents has no box of its own, but its element is rendered (its children)
      if (typeof el.checkVisibility === 'function' && !el.checkVisibility() &&
          aria.style(el).display !== 'contents') continue;
      if (el.closest('[aria-hidden="true"]')) continue;
      const role = aria.role(el);
      const implicit = desc.role === 'generic' && (!role || FLATTEN_ROLES.has(role));
      if (role !== desc.role && !implicit) continue;
      // as the walk names them: a row named by its cells has no name in its descriptor
      const rowByCells = role === 'row' && !hasAuthorName(el);
      const name = rowByCells ? '' : clip(implicit ? implicitName(el) : aria.name(el), MAX_NAME);
      if (sameDescriptor(desc, describeElement(el, desc.role, name, aria))) out.push(el);
    }
    return out;
  }
}

/** Descriptor of an element outside a walk (its scope found by climbing). */
export function describeElement(el, role, name, aria) {
  const { scope, closed } = contextOf(el, aria);
  return { tag: el.localName, role, name, attrs: elementAttrs(el), scope, sensitive: isSensitive(el), closed };
}
