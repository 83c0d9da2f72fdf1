// DOM helpers shared by the walk and ref resolution. Pure DOM: no chrome.* calls.

import { CONTAINER_ROLES } from './aria.js';

// https://dom.spec.whatwg.org/#dom-element-attachshadow: the only elements that can host
// a shadow root.
const SHADOW_HOSTS = new Set(['article', 'aside', 'blockquote', 'body', 'div', 'footer', 'h1', 'h2', 'h3', 'h4',
  'h5', 'h6', 'header', 'main', 'nav', 'p', 'section', 'span']);

/** True when `el` can host a shadow root (a custom element or one of SHADOW_HOSTS). */
export function mayHostShadow(el) {
  return SHADOW_HOSTS.has(el.localName) || el.localName.includes('-');
}

/** Parent in the flat tree of roots: a shadow root's parent is its host. */
export function parentOf(node) {
  if (node instanceof ShadowRoot) return node.host;
  return node.parentNode && node.parentNode.nodeType !== Node.DOCUMENT_NODE ? node.parentNode : null;
}

/**
 * What the ancestors of `el` contribute to a walk that reaches it: {scope, closed,
 * invisible} — the nearest named landmark/group (a ref's descriptor scope), whether it is
 * inside a closed shadow root, whether an ancestor is visibility:hidden.
 */
export function contextOf(el, aria) {
  let scope = null;
  let closed = false;
  for (let cur = parentOf(el); cur; cur = parentOf(cur)) {
    if (cur instanceof ShadowRoot) {
      if (cur.mode === 'closed') closed = true;
      continue;
    }
    if (!scope) {
      const r = aria.role(cur);
      if (r && CONTAINER_ROLES.has(r) && r !== 'row') {
        const n = aria.name(cur);
        if (n) scope = { role: r, name: n };
      }
    }
  }
  // visibility is inherited: the parent's computed value says it for all ancestors.
  let parent = parentOf(el);
  if (parent instanceof ShadowRoot) parent = parent.host;
  return { scope, closed, invisible: !!parent && aria.invisible(parent) };
}
