// Locator builder (design.md §4): from the live element behind a ref to a CSS locator the
// driver (Playwright) can run. Pure DOM: no chrome.* / browser.* calls.
//
// Shape of the result:
//   document part:  "css:light=html > body > div:nth-of-type(2) > button"  or
//                   "css:light=#unique-id > span:nth-of-type(1)"
//   per open shadow root crossed: " >> :scope > div:nth-of-type(1) > button"
// `css:light=` keeps the document part to standard CSS over the light DOM, so an id
// that a shadow tree repeats cannot match twice (pinned by tests/e2e/test_regressions_frames.py
// ::test_shadow_buttons_with_identical_markup_in_a_frame_resolve_to_one). Inside a shadow
// root, ":scope >" anchors the path at the host (Playwright treats shadow-root
// children as the host's children). Elements in a closed shadow root are refused.

import { PageError } from './errors.js';

function nthOfType(el) {
  let n = 1;
  for (let sib = el.previousElementSibling; sib; sib = sib.previousElementSibling) {
    if (sib.localName === el.localName) n++;
  }
  return n;
}

function segmentFor(el) {
  const tag = CSS.escape(el.localName);
  return `${tag}:nth-of-type(${nthOfType(el)})`;
}

/** Path from `root` (a Document or ShadowRoot) down to `el`, standard CSS. */
function pathWithin(el, root) {
  const parts = [];
  let cur = el;
  const isDoc = root.nodeType === Node.DOCUMENT_NODE;
  while (cur && cur !== root) {
    if (isDoc && cur.id && root.querySelectorAll(`#${CSS.escape(cur.id)}`).length === 1) {
      parts.unshift(`#${CSS.escape(cur.id)}`);
      return parts.join(' > ');
    }
    if (isDoc && cur === root.documentElement) {
      parts.unshift('html');
      return parts.join(' > ');
    }
    parts.unshift(segmentFor(cur));
    const parent = cur.parentNode;
    if (parent === root) break;
    cur = parent;
  }
  return isDoc ? parts.join(' > ') : `:scope > ${parts.join(' > ')}`;
}

/** Hosts from the outermost to `el`'s own root, for diagnostics. */
export function hostChain(el) {
  const chain = [];
  let root = el.getRootNode();
  while (root instanceof ShadowRoot) {
    const host = root.host;
    chain.unshift({ tag: host.localName, id: host.id || undefined, mode: root.mode });
    root = host.getRootNode();
  }
  return chain;
}

/**
 * CSS locator of `el` for the driver.
 * @param {Element} el  the live element behind a ref
 * @param {{role?: string, name?: string}} describe  for the diagnostic only
 * @returns {string}
 * @throws PageError ELEMENT_TARGET_DETACHED | CLOSED_SHADOW_ROOT
 */
export function locatorFor(el, describe = {}) {
  if (!el.isConnected) {
    throw new PageError('ELEMENT_TARGET_DETACHED', 'The element left the document. Take a new snapshot.');
  }
  const segments = [];
  let cur = el;
  for (;;) {
    const root = cur.getRootNode();
    if (root instanceof ShadowRoot) {
      if (root.mode === 'closed') {
        const chain = hostChain(el);
        throw new PageError('CLOSED_SHADOW_ROOT',
          `The target (${describe.role || el.localName} "${describe.name || ''}") is inside a closed shadow root ` +
          `(hosts: ${chain.map((h) => h.tag + (h.id ? '#' + h.id : '') + ' [' + h.mode + ']').join(' > ')}). ` +
          'No locator may reach into it, so no trusted input can be aimed at it by locator. ' +
          'Act on a control outside the closed root, use the keyboard (Tab, then press), or ask the site for an accessible alternative.',
          { hostChain: chain, role: describe.role || null, name: describe.name || null });
      }
      segments.unshift(pathWithin(cur, root));
      cur = root.host;
      continue;
    }
    segments.unshift('css:light=' + pathWithin(cur, root));
    break;
  }
  return segments.join(' >> ');
}
