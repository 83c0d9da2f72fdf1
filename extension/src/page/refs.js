// Ref registry of one document (DESIGN §5). Pure DOM: no chrome.* / browser.* calls.
//
// A ref names an element the agent saw in a snapshot. The same element keeps the same
// ref across snapshots of this document; the registry holds the node weakly, so a page
// that drops the node lets it be collected.

import { PageError } from './errors.js';

export class RefRegistry {
  constructor() {
    /** @type {Map<string, {node: WeakRef<Element>, role: string, name: string}>} */
    this.byRef = new Map();
    /** @type {WeakMap<Element, string>} */
    this.byElement = new WeakMap();
    this.next = 1;
  }

  /** Return the ref of `el`, minting one on first sight. `role`/`name` are the semantic
   *  descriptor (never a field value). */
  refFor(el, role, name) {
    let ref = this.byElement.get(el);
    if (!ref) {
      ref = `e${this.next++}`;
      this.byElement.set(el, ref);
    }
    this.byRef.set(ref, { node: new WeakRef(el), role, name });
    return ref;
  }

  /** The live element behind `ref`.
   *  Throws PageError REF_NOT_FOUND (never seen in this document) or
   *  ELEMENT_TARGET_DETACHED (collected or no longer in the document). */
  resolve(ref) {
    const entry = this.byRef.get(ref);
    if (!entry) {
      throw new PageError('REF_NOT_FOUND',
        `Ref ${ref} is not known in this frame's document. Take a new snapshot and use its refs.`,
        { ref });
    }
    const el = entry.node.deref();
    if (!el || !el.isConnected) {
      throw new PageError('ELEMENT_TARGET_DETACHED',
        `The element behind ref ${ref} (${entry.role} "${entry.name}") left the page. Take a new snapshot.`,
        { ref, role: entry.role });
    }
    return el;
  }

  describe(ref) {
    const entry = this.byRef.get(ref);
    return entry ? { role: entry.role, name: entry.name } : null;
  }
}
