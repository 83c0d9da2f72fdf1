// Ref registry of one document (design.md §5). Pure DOM: no chrome.* / browser.* calls.
//
// A ref names an element the agent saw in a snapshot. The same element keeps the same ref
// across snapshots of this document. Each entry keeps the node weakly (WeakRef: a page
// that drops the node lets it be collected) and a semantic descriptor (tag, role, name,
// a few identifying attributes, the nearest named landmark/group) that never holds a
// field's value.
//
// Lifetime: a ref stays valid while it was seen in one of the last 16 observations
// (snapshots) of this document and less than 30 minutes ago. Soft page changes (title,
// focus, toasts, timers, later snapshots) do not touch it.
//
// Resolution: the original node while it is connected; otherwise ONE rebind to a unique
// equivalent element of the same document (same tag, role, name, attributes, scope).
// Several equivalents: ELEMENT_TARGET_AMBIGUOUS and nothing is acted on. None, or a
// second replacement before the agent looked again: ELEMENT_TARGET_DETACHED. A new
// snapshot that shows the element again allows a new rebind.

import { PageError } from './errors.js';

export const MAX_OBSERVATIONS = 16;
export const TTL_MS = 30 * 60 * 1000;
const MAX_EXPIRED_REMEMBERED = 4096;
const MATCH_ATTRS = ['id', 'name', 'type', 'placeholder', 'aria-label', 'data-testid', 'href'];

export class RefRegistry {
  /**
   * @param {object} [opts]
   * @param {number} [opts.maxObservations]  snapshots a ref survives without being seen
   * @param {number} [opts.ttlMs]            ms a ref survives without being seen
   * @param {() => number} [opts.now]        clock, ms
   */
  constructor({ maxObservations = MAX_OBSERVATIONS, ttlMs = TTL_MS, now = () => Date.now() } = {}) {
    /** @type {Map<string, {node: WeakRef<Element>, desc: object, seenObs: number, seenAt: number, rebinds: number}>} */
    this.byRef = new Map();
    /** @type {WeakMap<Element, string>} */
    this.byElement = new WeakMap();
    this.expired = new Map(); // ref -> why, for a clear error
    this.next = 1;
    this.observation = 0;
    this.maxObservations = maxObservations;
    this.ttlMs = ttlMs;
    this.now = now;
  }

  /** Forget every ref (the document's URL changed: a new identity, design.md §5). Numbers
   *  keep increasing, so an old ref never names a new element. */
  reset() {
    for (const ref of this.byRef.keys()) this.expired.set(ref, 'url');
    this.byRef.clear();
    this.byElement = new WeakMap();
  }

  /** Start a new observation (one snapshot) and drop refs that aged out. */
  observe() {
    this.observation++;
    const t = this.now();
    for (const [ref, entry] of this.byRef) {
      if (this.observation - entry.seenObs >= this.maxObservations) this.expire(ref, 'observations');
      else if (t - entry.seenAt > this.ttlMs) this.expire(ref, 'ttl');
    }
    return this.observation;
  }

  expire(ref, why) {
    this.byRef.delete(ref);
    this.expired.set(ref, why);
    if (this.expired.size > MAX_EXPIRED_REMEMBERED) this.expired.delete(this.expired.keys().next().value);
  }

  /** Ref of `el` (minted on first sight), recorded as seen in the current observation.
   *  `desc` is the semantic descriptor (walker.js descriptor()): no field values. */
  refFor(el, desc) {
    let ref = this.byElement.get(el);
    if (!ref) {
      ref = `e${this.next++}`;
      this.byElement.set(el, ref);
    }
    this.expired.delete(ref);
    this.byRef.set(ref, { node: new WeakRef(el), desc, seenObs: this.observation, seenAt: this.now(), rebinds: 0 });
    return ref;
  }

  /**
   * Ref of `el` when it already has a live entry whose role, name, scope and shadow
   * placement are these: recorded as seen now, its descriptor kept (a snapshot of a page
   * that did not change mints and describes nothing). Otherwise null: call refFor().
   * @param {Element} el @param {string} role @param {string} name
   * @param {{role: string, name: string}|null} scope @param {boolean} closed
   * @returns {string|null}
   */
  seen(el, role, name, scope, closed) {
    const ref = this.byElement.get(el);
    if (!ref) return null;
    const entry = this.byRef.get(ref);
    if (!entry || entry.desc.role !== role || entry.desc.name !== name || !!entry.desc.closed !== !!closed) return null;
    const s = entry.desc.scope;
    if (s !== scope && (!s || !scope || s.role !== scope.role || s.name !== scope.name)) return null;
    if (entry.node.deref() !== el) return null;
    entry.seenObs = this.observation;
    entry.seenAt = this.now();
    entry.rebinds = 0; // seen again: one rebind allowed anew (as refFor)
    this.expired.delete(ref);
    return ref;
  }

  describe(ref) {
    const entry = this.byRef.get(ref);
    return entry ? { role: entry.desc.role, name: entry.desc.name } : null;
  }

  /**
   * The live element behind `ref`.
   * @param {string} ref
   * @param {(desc: object) => Element[]} findEquivalents  elements of this document that
   *        match the descriptor (snapshot.js equivalents()), used only when the original left
   * @returns {{el: Element, resolvedBy: 'original_ref'|'semantic_rebind', rebound: boolean}}
   *          `rebound` is true when this call replaced the original by an equivalent.
   * @throws PageError REF_NOT_FOUND | ELEMENT_TARGET_DETACHED | ELEMENT_TARGET_AMBIGUOUS
   */
  resolve(ref, findEquivalents) {
    const entry = this.byRef.get(ref);
    if (entry && this.now() - entry.seenAt > this.ttlMs) this.expire(ref, 'ttl');
    const live = this.byRef.get(ref);
    if (!live) {
      const why = this.expired.get(ref);
      const message = why === 'ttl'
        ? `Ref ${ref} expired: it was last seen in a snapshot more than 30 minutes ago. Take a new snapshot.`
        : why === 'observations'
          ? `Ref ${ref} expired: it did not appear in the last ${this.maxObservations} snapshots of this page. Take a new snapshot.`
          : why === 'url'
            ? `Ref ${ref} is from before this page changed its URL. Take a new snapshot.`
            : `Ref ${ref} is not known in this frame's document. Take a new snapshot and use its refs.`;
      throw new PageError('REF_NOT_FOUND', message, { ref, expired: why || null });
    }
    const el = live.node.deref();
    if (el && el.isConnected) {
      return { el, resolvedBy: live.rebinds ? 'semantic_rebind' : 'original_ref', rebound: false };
    }
    const { role, name } = live.desc;
    if (live.rebinds >= 1) {
      throw new PageError('ELEMENT_TARGET_DETACHED',
        `The element behind ref ${ref} (${role} "${name}") was replaced again after one rebind. Take a new snapshot.`,
        { ref, role, rebinds: live.rebinds });
    }
    const candidates = findEquivalents(live.desc);
    if (candidates.length > 1) {
      throw new PageError('ELEMENT_TARGET_AMBIGUOUS',
        `The element behind ref ${ref} (${role} "${name}") left the page and ${candidates.length} equivalent ` +
        'elements replaced it; nothing was acted on. Take a new snapshot and pick one.',
        { ref, role, candidates: candidates.length });
    }
    if (candidates.length === 0) {
      throw new PageError('ELEMENT_TARGET_DETACHED',
        `The element behind ref ${ref} (${role} "${name}") left the page. Take a new snapshot.`,
        { ref, role });
    }
    const [found] = candidates;
    live.node = new WeakRef(found);
    live.rebinds++;
    this.byElement.set(found, ref);
    return { el: found, resolvedBy: 'semantic_rebind', rebound: true };
  }
}

/** Identifying attributes of an element for its descriptor (never `value`). */
export function elementAttrs(el) {
  const attrs = {};
  for (const a of MATCH_ATTRS) {
    const v = el.getAttribute(a);
    if (v !== null && v.length <= 300) attrs[a] = v;
  }
  return attrs;
}

/** True when `desc` (a ref's descriptor) and `other` (a candidate's) name the same
 *  kind of element: tag, role, name, identifying attributes and scope all equal. */
export function sameDescriptor(desc, other) {
  if (desc.tag !== other.tag || desc.role !== other.role || desc.name !== other.name) return false;
  if (!!desc.closed !== !!other.closed) return false;
  for (const a of MATCH_ATTRS) if ((desc.attrs[a] ?? null) !== (other.attrs[a] ?? null)) return false;
  const s1 = desc.scope;
  const s2 = other.scope;
  if (!s1 || !s2) return !s1 && !s2;
  return s1.role === s2.role && s1.name === s2.name;
}
