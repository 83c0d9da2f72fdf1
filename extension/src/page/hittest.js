// Hit test at a point of this frame's viewport (issue 15 item 1, MouseAction). Pure DOM:
// no chrome.* calls; closed shadow roots are reached through the `shadowRootOf` the
// content script passes.
//
// The background asks the top frame first (background/hittest.js). The element at the
// point is found as the browser's own hit test finds it (elementFromPoint: what a real
// pointer event there would target, pointer-events:none skipped), then descended into
// open and closed shadow roots. An <iframe> there answers `{frame}`: its key and the point
// in the child's viewport, and the background asks the child frame next.
//
// What is named is the element the pointer acts on: the nearest ancestor (across shadow
// hosts) that is a widget or looks clickable, as a snapshot decides it, else the element
// itself. It gets a ref from the same registry snapshots use, so the ref works for
// page.act, and the line a snapshot would print for it (name scrubbed of typed secrets).

import { PageError } from './errors.js';
import { AriaContext, FLATTEN_ROLES, MASK, WIDGET_ROLES, collapse, statesOf, valueOf } from './aria.js';
import { mayHostShadow, parentOf } from './dom.js';
import { MAX_NAME, clip, implicitName, scalar, urlOf } from './format.js';
import { collectSensitiveValues, scrub } from './sensitive.js';
import { describeElement } from './snapshot.js';

/** Shadow roots descended at one point at most (a page nesting deeper is cut there). */
const MAX_SHADOW_DEPTH = 32;
const MAX_TEXT = 200;
const INLINE_HANDLERS = ['onclick', 'onmousedown', 'onmouseup', 'onpointerdown', 'onpointerup', 'ondblclick'];

/**
 * The element at (`msg.x`, `msg.y`), CSS px of this frame's viewport.
 * @param {Document} doc
 * @param {{x: number, y: number, top?: boolean, receipt?: boolean, prefix?: string,
 *   refFloor?: number, noDescend?: boolean}} msg  `top`: this is the top-level frame (the
 *   point is checked against its viewport); `receipt`: arm a delivery receipt on the
 *   element; `prefix`: this frame's ref prefix ("" or "f2"); `refFloor`: mint refs from
 *   this number on (as a snapshot does); `noDescend`: name an <iframe> at the point
 *   instead of answering `frame` (its frame could not be reached)
 * @param {{shadowRootOf: Function, refs: import('./refs.js').RefRegistry,
 *   receipts: import('./receipt.js').Receipts, frameKeys: import('./frames.js').FrameKeys}} ctx
 * @returns {{frame: {key: string, x: number, y: number}} |
 *   {ref: string, role: string, name: string, line: string, tag: string, nextRef: number, receiptId?: string} |
 *   {ref: null}}  `{ref: null}`: nothing but the page itself (html, body) is there
 * @throws PageError BAD_REQUEST: not a point, or (top frame) outside the viewport
 */
export function hitTest(doc, msg, { shadowRootOf, refs, receipts, frameKeys }) {
  const x = Number(msg.x);
  const y = Number(msg.y);
  if (!Number.isFinite(x) || !Number.isFinite(y)) {
    throw new PageError('BAD_REQUEST', 'A hit test needs a numeric point {x, y}.');
  }
  const win = doc.defaultView;
  if (msg.top && (x < 0 || y < 0 || x >= win.innerWidth || y >= win.innerHeight)) {
    throw new PageError('BAD_REQUEST',
      `The point (${x}, ${y}) is outside the viewport (${win.innerWidth}×${win.innerHeight} CSS px). ` +
      'Coordinates are CSS px from the top-left corner of the viewport (a viewport screenshot divided by its scale); ' +
      'scroll the page to bring the target into view first.',
      { x, y, width: win.innerWidth, height: win.innerHeight });
  }
  const raw = deepElementFromPoint(doc, x, y, shadowRootOf);
  if (!raw || raw === doc.documentElement || raw === doc.body) return { ref: null };
  if ((raw.localName === 'iframe' || raw.localName === 'frame') && !msg.noDescend) {
    const inner = intoFrame(raw, x, y, win);
    if (inner) return { frame: { key: frameKeys.keyOf(raw), ...inner } };
  }
  const aria = new AriaContext(win);
  return aria.run(() => {
    const el = pointerTarget(raw, aria, doc);
    const described = describe(el, aria, doc, shadowRootOf);
    refs.next = Math.max(refs.next, Number(msg.refFloor) || 1);
    const ref = refs.refFor(el, describeElement(el, described.role, described.name, aria));
    const prefixed = `${msg.prefix || ''}${ref}`;
    const out = {
      ref: prefixed, role: described.role, name: described.name, tag: el.localName,
      line: described.line.replace('\u0000REF', ` [ref=${prefixed}]`), nextRef: refs.next,
    };
    if (msg.receipt) out.receiptId = receipts.arm(el);
    return out;
  });
}

/** The deepest element at the point: the document's hit, then inside each shadow root
 *  (open or closed) down from it. */
export function deepElementFromPoint(doc, x, y, shadowRootOf) {
  let el = doc.elementFromPoint(x, y);
  for (let i = 0; el && i < MAX_SHADOW_DEPTH; i++) {
    const root = mayHostShadow(el) ? shadowRootOf(el) : null;
    if (!root || typeof root.elementFromPoint !== 'function') break;
    const inner = root.elementFromPoint(x, y);
    // Chromium retargets a hit outside this tree to the host (or above): nothing deeper.
    if (!inner || inner === el || !root.contains(inner)) break;
    el = inner;
  }
  return el;
}

/**
 * The point in the viewport of `frameEl`'s document: minus the frame element's
 * position, border and padding (its content box is the child's viewport), divided by any
 * scale a CSS transform gives it. Null when the point is on its border or padding.
 */
export function intoFrame(frameEl, x, y, win) {
  const rect = frameEl.getBoundingClientRect();
  const style = win.getComputedStyle(frameEl);
  const px = (v) => parseFloat(v) || 0;
  const scaleX = frameEl.offsetWidth ? rect.width / frameEl.offsetWidth : 1;
  const scaleY = frameEl.offsetHeight ? rect.height / frameEl.offsetHeight : 1;
  const cx = (x - rect.left) / (scaleX || 1) - px(style.borderLeftWidth) - px(style.paddingLeft);
  const cy = (y - rect.top) / (scaleY || 1) - px(style.borderTopWidth) - px(style.paddingTop);
  const width = frameEl.clientWidth - px(style.paddingLeft) - px(style.paddingRight);
  const height = frameEl.clientHeight - px(style.paddingTop) - px(style.paddingBottom);
  if (cx < 0 || cy < 0 || cx >= width || cy >= height) return null;
  return { x: cx, y: cy };
}

/** The element the pointer acts on: `el` or its nearest ancestor across shadow hosts that
 *  is a widget or looks clickable (the signals of walker.js clickable()); else `el`. */
function pointerTarget(el, aria, doc) {
  for (let cur = el; cur; cur = parentOf(cur)) {
    if (!(cur instanceof Element)) continue;
    if (cur === doc.body || cur === doc.documentElement) break;
    const role = aria.role(cur);
    if (role && WIDGET_ROLES.has(role)) return cur;
    if (looksClickable(cur, aria)) return cur;
  }
  return el;
}

function looksClickable(el, aria) {
  for (const attr of INLINE_HANDLERS) if (el.hasAttribute(attr)) return true;
  if (typeof el.onclick === 'function') return true;
  const tabindex = el.getAttribute('tabindex');
  if (tabindex !== null && Number(tabindex) >= 0) return true;
  if (el.getAttribute('draggable') === 'true') return true;
  if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) return true;
  if (aria.style(el).cursor === 'pointer') {
    const up = parentOf(el);
    const parent = up instanceof ShadowRoot ? up.host : up;
    return !(parent instanceof Element) || aria.style(parent).cursor !== 'pointer';
  }
  return false;
}

/** Role, name and the snapshot line of `el` (the ref goes where `\0REF` stands). */
function describe(el, aria, doc, shadowRootOf) {
  const sensitive = collectSensitiveValues(doc, new Set());
  const root = el.getRootNode();
  if (root instanceof ShadowRoot) collectSensitiveValues(root, sensitive);
  const role0 = aria.role(el);
  const implicit = !role0 || FLATTEN_ROLES.has(role0);
  const role = implicit ? 'generic' : role0;
  const name = clip(scrub(implicit ? implicitName(el, Infinity) : aria.name(el), sensitive), implicit ? 100 : MAX_NAME);
  let line = `- ${role}`;
  if (name) line += ' ' + JSON.stringify(name);
  for (const state of statesOf(el, role, deepActiveElement(doc, shadowRootOf))) line += ` [${state}]`;
  if (role === 'generic' && el.isContentEditable) line += ' [editable]';
  if (inClosedRoot(el)) line += ' [closed-shadow]';
  line += '\u0000REF';
  if (role === 'link') {
    const url = urlOf(el);
    if (url) line += ` [url=${scrub(url, sensitive)}]`;
  }
  const value = valueOf(el, role);
  if (value === MASK) line += ': ' + MASK;
  else if (value !== null && value !== '') line += ': ' + scalar(clip(scrub(collapse(value), sensitive), MAX_TEXT));
  else if (!name) {
    // A nameless element (a list item, a cell) reads as its text, as a snapshot inlines it.
    const text = collapse(el.textContent || '');
    if (text) line += ': ' + scalar(clip(scrub(text, sensitive), MAX_TEXT));
  }
  return { role, name, line };
}

function inClosedRoot(el) {
  for (let r = el.getRootNode(); r instanceof ShadowRoot; r = r.host.getRootNode()) {
    if (r.mode === 'closed') return true;
  }
  return false;
}

function deepActiveElement(doc, shadowRootOf) {
  let el = doc.activeElement;
  for (let i = 0; el && i < MAX_SHADOW_DEPTH; i++) {
    const root = mayHostShadow(el) ? shadowRootOf(el) : null;
    if (!root || !root.activeElement) break;
    el = root.activeElement;
  }
  return el === doc.body ? null : el;
}
