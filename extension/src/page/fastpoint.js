// The verified-point fast path (issue 18): where a trusted click on `el` lands, measured
// in the page at once. Pure DOM: no chrome.* calls; closed shadow roots are reached
// through the `shadowRootOf` the content script passes.
//
// Playwright's locator.click() spends most of its ~30 ms waiting and checking: scroll
// into view, a box unchanged over two animation frames, then a hit-target check. The
// extension is already in the page, so it makes the same checks synchronously:
//
//   connected → enabled → visible → non-zero box → in the viewport (after an instant
//   `scrollIntoView({block: "nearest"})` when it is not) → stable (no running animation
//   or transition that may move it, on it or an ancestor, per getAnimations(); and its
//   box unchanged since this element was last measured) → topmost at the point (the hit
//   test lands on it or inside it, across open and closed shadow roots).
//
// One animation frame is waited, and the box measured again, only when stability cannot
// be told at once: right after the extension scrolled, for a hover's element measured for
// the first time (`settle`: a hover has no receipt), or when the box differs from the
// one measured for this element before (a hidden document, which gets no frames, or no
// frame within 100 ms: `no-frame`). Waiting two frames as Playwright does would cost
// the whole budget (~16 ms each in headless Chromium).
//
// Any failed check answers `{fastRefused: <check>}` and the driver takes Playwright's full
// actionability path; nothing here dispatches input. Movement driven by script (a timer
// moving the element) is not visible to getAnimations(): the delivery receipt
// (page/receipt.js) still tells whether the target got the click, and a miss is reported.

/** The checks, as named in `fastRefused` (ResolveTarget.fastRefused). */
export const CHECKS = Object.freeze({
  detached: 'detached',
  disabled: 'disabled',
  hidden: 'hidden',
  zeroSize: 'zero-size',
  outside: 'outside-viewport',
  moving: 'moving',
  covered: 'covered',
  noFrame: 'no-frame',
});

/** Longest wait for the one animation frame, ms: a hidden document (a background tab)
 *  gets no frames at all, and the full path deals with it as Playwright does. */
const FRAME_WAIT_MS = 100;

/** Shadow roots descended at one point at most. */
const MAX_SHADOW_DEPTH = 32;
/** Box difference (CSS px) still counted as the same box. */
const EPSILON = 0.5;
/** Animated properties that never move the box or change what is hit: an animation that
 *  only animates these does not make the target "moving". */
const PAINT_ONLY = new Set([
  'color', 'backgroundColor', 'background-color', 'borderColor', 'border-color',
  'outlineColor', 'outline-color', 'opacity', 'boxShadow', 'box-shadow', 'textShadow',
  'text-shadow', 'fill', 'stroke', 'caretColor', 'caret-color', 'textDecorationColor',
  'text-decoration-color', 'borderTopColor', 'borderRightColor', 'borderBottomColor',
  'borderLeftColor', 'filter', 'backgroundPosition', 'background-position',
]);
/** Keyframe members that are not animated properties. */
const KEYFRAME_META = new Set(['offset', 'computedOffset', 'easing', 'composite']);

/** Boxes measured per element (a WeakMap: no element is kept alive by it). */
const lastBoxes = new WeakMap();

const refuse = (check) => ({ fastRefused: check });

/**
 * @param {Element} el  the ref's element
 * @param {(el: Element) => ShadowRoot|null} shadowRootOf  open or closed shadow root
 * @param {{settle?: boolean}} [opts]  `settle`: wait the one animation frame for an
 *   element measured for the first time too (hover: no receipt catches a target that
 *   script moves, which getAnimations() cannot see)
 * @returns {Promise<{fastPoint: {x: number, y: number}}|{fastRefused: string}>}
 *   `fastPoint`: CSS px of this frame's viewport (the driver maps it to the top-level
 *   viewport); `fastRefused`: the first check that failed (CHECKS)
 */
export async function measureFastPoint(el, shadowRootOf, { settle = false } = {}) {
  const win = el.ownerDocument && el.ownerDocument.defaultView;
  if (!el.isConnected || !win) return refuse(CHECKS.detached);
  if (isDisabled(el)) return refuse(CHECKS.disabled);
  if (typeof el.checkVisibility === 'function' && !el.checkVisibility({ visibilityProperty: true })) {
    return refuse(CHECKS.hidden);
  }
  let box = firstBox(el);
  if (!box) return refuse(CHECKS.zeroSize);
  let waitFrame = false;
  if (!centreInView(box, win)) {
    // Instant, whatever the page's scroll-behavior says: a smooth scroll would move the
    // target under the pointer.
    el.scrollIntoView({ block: 'nearest', inline: 'nearest', behavior: 'instant' });
    box = firstBox(el);
    if (!box) return refuse(CHECKS.zeroSize);
    waitFrame = true; // scroll-linked script (sticky headers, lazy layout) runs next frame
  }
  if (moves(el)) return refuse(CHECKS.moving);
  const before = lastBoxes.get(el);
  if (before ? !sameBox(before, box) : settle) waitFrame = true;
  if (waitFrame) {
    if (el.ownerDocument.hidden || !(await nextFrame(win))) return refuse(CHECKS.noFrame);
    if (!el.isConnected) return refuse(CHECKS.detached);
    const again = firstBox(el);
    if (!again) return refuse(CHECKS.zeroSize);
    if (!sameBox(box, again) || moves(el)) {
      lastBoxes.set(el, again);
      return refuse(CHECKS.moving);
    }
    box = again;
  }
  lastBoxes.set(el, box);
  const point = visibleCentre(box, win);
  if (!point) return refuse(CHECKS.outside);
  const hit = topmostAt(el.ownerDocument, point.x, point.y, shadowRootOf);
  if (!hit || !containsComposed(el, hit)) return refuse(CHECKS.covered);
  return { fastPoint: point };
}

/** Disabled as Playwright's "enabled" check sees it: a disabled form control (or one in a
 *  disabled fieldset), or aria-disabled="true" on it or an ancestor. */
function isDisabled(el) {
  if (typeof el.matches === 'function' && el.matches(':disabled')) return true;
  for (let cur = el; cur; cur = composedParent(cur)) {
    if (cur.getAttribute && cur.getAttribute('aria-disabled') === 'true') return true;
  }
  return false;
}

/** The element's first client rect with an area (a link wrapped over two lines is
 *  clicked on its first line, as Playwright does), as {left, top, width, height}. */
function firstBox(el) {
  const rects = el.getClientRects();
  for (const r of rects) {
    if (r.width > 0 && r.height > 0) return { left: r.left, top: r.top, width: r.width, height: r.height };
  }
  return null;
}

function viewport(win) {
  // clientWidth/Height leave out scroll bars (a point on a scroll bar hits nothing).
  const root = win.document.documentElement;
  return { width: root.clientWidth || win.innerWidth, height: root.clientHeight || win.innerHeight };
}

function centreInView(box, win) {
  const { width, height } = viewport(win);
  const x = box.left + box.width / 2;
  const y = box.top + box.height / 2;
  return x >= 0 && y >= 0 && x < width && y < height;
}

/** Centre of the part of the box inside the viewport, or null when none is. */
function visibleCentre(box, win) {
  const { width, height } = viewport(win);
  const left = Math.max(box.left, 0);
  const top = Math.max(box.top, 0);
  const right = Math.min(box.left + box.width, width);
  const bottom = Math.min(box.top + box.height, height);
  if (right - left < 1 || bottom - top < 1) return null;
  return { x: (left + right) / 2, y: (top + bottom) / 2 };
}

function sameBox(a, b) {
  return Math.abs(a.left - b.left) <= EPSILON && Math.abs(a.top - b.top) <= EPSILON
    && Math.abs(a.width - b.width) <= EPSILON && Math.abs(a.height - b.height) <= EPSILON;
}

/** A running animation or transition on `el` or an ancestor (across shadow hosts) that
 *  may move it or change what is hit. */
function moves(el) {
  for (let cur = el; cur; cur = composedParent(cur)) {
    if (typeof cur.getAnimations !== 'function') continue;
    for (const anim of cur.getAnimations()) {
      if (anim.playState === 'running' && !paintOnly(anim)) return true;
    }
  }
  return false;
}

function paintOnly(anim) {
  const effect = anim.effect;
  if (!effect || typeof effect.getKeyframes !== 'function') return false;
  let props = 0;
  for (const frame of effect.getKeyframes()) {
    for (const key of Object.keys(frame)) {
      if (KEYFRAME_META.has(key)) continue;
      if (!PAINT_ONLY.has(key)) return false;
      props++;
    }
  }
  // A CSS transition lists its one property as `transitionProperty`, not in keyframes.
  if (typeof anim.transitionProperty === 'string') return PAINT_ONLY.has(anim.transitionProperty);
  return props > 0;
}

/** True after the next animation frame, false when none came within FRAME_WAIT_MS. */
function nextFrame(win) {
  return new Promise((resolve) => {
    const timer = win.setTimeout(() => resolve(false), FRAME_WAIT_MS);
    win.requestAnimationFrame(() => { win.clearTimeout(timer); resolve(true); });
  });
}

/** Parent across shadow boundaries (a shadow root's parent is its host). */
function composedParent(node) {
  if (node.parentElement) return node.parentElement;
  const up = node.parentNode;
  return up instanceof ShadowRoot ? up.host : null;
}

/** The element a real pointer at (x, y) would target: the document's hit test, then down
 *  through each shadow root (open or closed) at the point; elementFromPoint retargets a
 *  hit inside a shadow tree to its host, so each level is asked again. */
export function topmostAt(doc, x, y, shadowRootOf) {
  let hit = doc.elementFromPoint(x, y);
  for (let i = 0; hit && i < MAX_SHADOW_DEPTH; i++) {
    const root = shadowRootOf(hit);
    if (!root || typeof root.elementFromPoint !== 'function') break;
    const inner = root.elementFromPoint(x, y);
    // A hit outside this tree comes back as the host (or above): nothing deeper.
    if (!inner || inner === hit || !root.contains(inner)) break;
    hit = inner;
  }
  return hit;
}

/** `el` is `node` or one of its ancestors in the flat tree (a slotted node counts as
 *  inside the slot's host's shadow content, and a shadow tree's nodes inside their host). */
export function containsComposed(el, node) {
  for (let cur = node, i = 0; cur && i < 10000; i++) {
    if (cur === el) return true;
    cur = cur.assignedSlot || composedParent(cur);
  }
  return false;
}
