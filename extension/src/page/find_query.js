// The query side of page.find (find.js): what a role's candidates are, how a name or text
// pattern is tested, and the flat-tree order of matches. Pure functions over the DOM.

import { PageError } from './errors.js';
import { collapse } from './aria.js';
import { clip } from './format.js';

const MAX_TESTED = 10_000; // characters of one text node a pattern is tested against

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

/** Parent in the rendered (flat) tree: a slotted node's slot, a shadow root's host. */
export function flatParent(node) {
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
