// Roles, names, states and values of elements, as an accessibility tree exposes them
// (WAI-ARIA 1.2, html-aam, accname 1.2). Pure DOM: no chrome.* / browser.* calls.
//
// Names come from dom-accessibility-api. Its role table is used for most tags, with the
// html-aam rules it leaves out patched here (form/section need a name, scoped header and
// footer are not landmarks, password/date inputs are text boxes, file inputs are buttons,
// invalid explicit roles fall back to the next token). One `AriaContext` lives for one
// snapshot: it caches computed styles, roles and names, so each element's style is read
// once and the name computation of a row, its cells and its controls shares the cache.

import { computeAccessibleName, getRole as libraryRole } from 'dom-accessibility-api';
import { isSensitive } from './sensitive.js';

// https://www.w3.org/TR/wai-aria-1.2/#role_definitions (abstract roles left out).
const ARIA_ROLES = new Set(('alert alertdialog application article banner blockquote button caption cell ' +
  'checkbox code columnheader combobox complementary contentinfo definition deletion dialog directory ' +
  'document emphasis feed figure form generic grid gridcell group heading img insertion link list listbox ' +
  'listitem log main marquee math menu menubar menuitem menuitemcheckbox menuitemradio meter navigation ' +
  'none note option paragraph presentation progressbar radio radiogroup region row rowgroup rowheader ' +
  'scrollbar search searchbox separator slider spinbutton status strong subscript superscript switch tab ' +
  'table tablist tabpanel term textbox time timer toolbar tooltip tree treegrid treeitem').split(' '));

/** Roles an agent acts on: they always get a ref. */
export const WIDGET_ROLES = new Set(['button', 'checkbox', 'combobox', 'gridcell', 'link', 'listbox',
  'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'radio', 'scrollbar', 'searchbox', 'slider',
  'spinbutton', 'switch', 'tab', 'textbox', 'treeitem', 'iframe']);

/** Landmarks, groups, tables and rows: they get a ref, so a target can be scoped "within"
 *  them, hovered or dropped on, and a subtree snapshot can start at them. Other roles
 *  (heading, list item, cell, image, ...) get one only when they look clickable. */
export const CONTAINER_ROLES = new Set(['alert', 'alertdialog', 'application', 'article', 'banner',
  'complementary', 'contentinfo', 'dialog', 'document', 'feed', 'form', 'grid', 'group', 'log', 'main', 'menu',
  'menubar', 'navigation', 'radiogroup', 'region', 'row', 'search', 'status', 'tablist', 'tabpanel', 'table',
  'toolbar', 'tree', 'treegrid']);

/** Roles whose name comes from their content: their text is not repeated below them. */
export const NAME_FROM_CONTENT = new Set(['button', 'cell', 'checkbox', 'columnheader', 'gridcell', 'heading',
  'link', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'radio', 'row', 'rowheader', 'switch',
  'tab', 'tooltip', 'treeitem']);

/** Roles that carry no structure of their own: their children are printed in their place. */
export const FLATTEN_ROLES = new Set(['generic', 'none', 'presentation', 'rowgroup', 'strong',
  'emphasis', 'code', 'deletion', 'insertion', 'subscript', 'superscript', 'time', 'mark', 'blockquote',
  'caption', 'legend', 'label', 'term', 'definition', 'note', 'figure', 'separator', 'math']);

const VALUE_ROLES = new Set(['textbox', 'searchbox', 'combobox', 'spinbutton', 'slider', 'listbox']);
const TEXT_INPUT_TYPES = new Set(['password', 'date', 'datetime-local', 'month', 'time', 'week', 'color']);
const LANDMARK_SCOPES = 'article, aside, main, nav, section, [role=article], [role=complementary], ' +
  '[role=main], [role=navigation], [role=region]';
const MAX_OPTIONS_INLINE = 30;
/** What a sensitive field shows instead of its value (fixed: says nothing of the length). */
export const MASK = '••••••';

// `element.labels` is a live list that Chromium builds by scanning the whole tree the
// first time it is read for an element: a page with N elements and M form fields pays
// O(N·M) on its first snapshot (about 15 s for 2,000 fields among 30,000 elements).
// While an AriaContext is active, the getter answers from one index of the <label>s of
// each tree (label.control is a cheap lookup). The override lives on this content
// script's own prototypes (its isolated world): the page's objects are untouched.
let activeContext = null;
for (const C of [globalThis.HTMLInputElement, globalThis.HTMLSelectElement, globalThis.HTMLTextAreaElement,
  globalThis.HTMLButtonElement, globalThis.HTMLMeterElement, globalThis.HTMLOutputElement, globalThis.HTMLProgressElement]) {
  const desc = C && Object.getOwnPropertyDescriptor(C.prototype, 'labels');
  if (!desc || typeof desc.get !== 'function') continue;
  const native = desc.get;
  Object.defineProperty(C.prototype, 'labels', {
    configurable: true,
    enumerable: desc.enumerable,
    get() {
      return activeContext ? activeContext.labelsOf(this, native) : native.call(this);
    },
  });
}

/** Per-snapshot cache of computed styles, roles, names and label associations. */
export class AriaContext {
  /** @param {Window} win */
  constructor(win) {
    this.win = win;
    this.styles = new Map();
    this.roles = new Map();
    this.names = new Map();
    this.sensitiveValues = null;
    this.getComputedStyle = (el) => {
      let style = this.styles.get(el);
      if (!style) {
        style = win.getComputedStyle(el);
        this.styles.set(el, style);
      }
      return style;
    };
    this.nameOptions = { getComputedStyle: this.getComputedStyle, computedStyleSupportsPseudoElements: false };
    /** @type {Map<Node, Map<Element, HTMLLabelElement[]>>} tree root → control → labels */
    this.labelIndex = new Map();
  }

  /** Run `fn` with `element.labels` answered from this context's index. */
  run(fn) {
    const previous = activeContext;
    activeContext = this;
    try {
      return fn();
    } finally {
      activeContext = previous;
    }
  }

  /** Forget what the DOM may have changed since (between two chunks of a walk). */
  refresh() {
    this.styles.clear();
    this.roles.clear();
    this.names.clear();
    this.labelIndex.clear();
  }

  labelsOf(el, native) {
    if (el instanceof HTMLInputElement && el.type === 'hidden') return native.call(el);
    const root = el.getRootNode();
    let index = this.labelIndex.get(root);
    if (!index) {
      index = new Map();
      if (typeof root.querySelectorAll === 'function') {
        for (const label of root.querySelectorAll('label')) {
          const control = label.control;
          if (!control) continue;
          const list = index.get(control);
          if (list) list.push(label);
          else index.set(control, [label]);
        }
      }
      this.labelIndex.set(root, index);
    }
    return index.get(el) || [];
  }

  /** Computed style of `el` (cached for this snapshot). */
  style(el) {
    return this.getComputedStyle(el);
  }

  /** ARIA role of `el`, or null for an element with no role of its own. */
  role(el) {
    let role = this.roles.get(el);
    if (role === undefined) {
      role = computeRole(el, this);
      this.roles.set(el, role);
    }
    return role;
  }

  /** Accessible name of `el` (accname 1.2), whitespace collapsed. An editing host
   *  (contenteditable) is named like a text field: aria-label / aria-labelledby / title,
   *  then `<label for>`, then its placeholder attributes (editableName). */
  name(el) {
    let name = this.names.get(el);
    if (name === undefined) {
      try {
        name = collapse(computeAccessibleName(el, this.nameOptions));
      } catch {
        name = '';
      }
      if (!name && isEditingHost(el) && this.role(el) === 'textbox') name = editableName(el);
      if (!name) name = placeholderName(el);
      const selfNamed = selfLabelledName(el);
      if (selfNamed) name = selfNamed;
      this.names.set(el, name);
    }
    return name;
  }

  /** True when the element and its subtree are out of the accessibility tree
   *  (display:none, aria-hidden, inert), so the walk skips them. */
  prunes(el) {
    if (el.getAttribute('aria-hidden') === 'true' || el.inert) return true;
    return this.style(el).display === 'none';
  }

  /** True when the element is rendered but its contents are not
   *  (`content-visibility: hidden`, e.g. `hidden=until-found`): its line stays, its
   *  subtree is skipped (CSS Containment 2 §4.1). */
  skipsContents(el) {
    return this.style(el).contentVisibility === 'hidden';
  }

  /** True when the element itself is not rendered visibly (visibility:hidden/collapse);
   *  its children may still be visible. */
  invisible(el) {
    const v = this.style(el).visibility;
    return v === 'hidden' || v === 'collapse';
  }
}

export function collapse(text) {
  return text.replace(/\s+/g, ' ').trim();
}

function computeRole(el, ctx) {
  const explicit = el.getAttribute('role');
  if (explicit) {
    for (const token of explicit.trim().toLowerCase().split(/\s+/)) {
      if (!ARIA_ROLES.has(token)) continue;
      if ((token === 'none' || token === 'presentation') && isFocusable(el)) break; // presentational conflict
      return token;
    }
  }
  const tag = el.localName;
  // Issue 14 item 3: an editing host is a text field wherever it sits (a bare
  // <span contenteditable> included); its editable descendants are its content.
  if (isEditingHost(el) && tag !== 'input' && tag !== 'textarea') return 'textbox';
  switch (tag) {
    case 'form':
    case 'section':
      // html-aam: a landmark only with an accessible name.
      return ctx.name(el) ? (tag === 'form' ? 'form' : 'region') : null;
    case 'header':
    case 'footer':
      return el.parentElement && el.parentElement.closest(LANDMARK_SCOPES) ? null : (tag === 'header' ? 'banner' : 'contentinfo');
    case 'aside':
      return el.parentElement && el.parentElement.closest('article, section, aside, nav') && !ctx.name(el) ? null : 'complementary';
    case 'search':
      return 'search';
    case 'p':
      return 'paragraph';
    case 'th': {
      const scope = (el.getAttribute('scope') || '').toLowerCase();
      if (scope === 'row' || scope === 'rowgroup') return 'rowheader';
      return 'columnheader';
    }
    case 'td': {
      const table = el.closest('table');
      if (!table) return null;
      const tableRole = (table.getAttribute('role') || '').trim().toLowerCase();
      return tableRole === 'grid' || tableRole === 'treegrid' ? 'gridcell' : 'cell';
    }
    case 'img':
      if (el.getAttribute('alt') === '' && !el.hasAttribute('aria-label') && !el.hasAttribute('aria-labelledby')) return null;
      return 'img';
    case 'svg':
      return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') || el.querySelector(':scope > title') ? 'img' : null;
    case 'input': {
      const type = (el.getAttribute('type') || 'text').toLowerCase();
      if (type === 'hidden') return null;
      if (type === 'file') return 'button';
      if (TEXT_INPUT_TYPES.has(type)) return 'textbox';
      break;
    }
    case 'iframe':
    case 'frame':
      return 'iframe';
    default:
      break;
  }
  let role = null;
  try {
    role = libraryRole(el);
  } catch {
    role = null;
  }
  if (tag === 'input' && role === null) return 'textbox'; // unknown input types render as text fields
  return role;
}

/**
 * True when `el` is a contenteditable editing host: editable (`true` / `plaintext-only`,
 * as `isContentEditable` says, inherited) while its parent in the flat tree is not
 * (HTML §6.8.1 "editing host"). Only the host gets a line; what it holds is its value.
 */
export function isEditingHost(el) {
  if (!el.isContentEditable) return false;
  // In a designMode document the editing host is the root element (HTML §6.8.1), which the
  // walk never prints: its body stands for it (what a click focuses, where editors type).
  if (el.ownerDocument.designMode === 'on' && el === el.ownerDocument.body) return true;
  let parent = el.parentElement;
  if (!parent) {
    const root = el.getRootNode();
    parent = root instanceof ShadowRoot ? root.host : null;
  }
  return !parent || !parent.isContentEditable;
}

/** Name of an editing host with no author name: `<label for=id>` text, then
 *  aria-placeholder, data-placeholder, placeholder (the attributes editors use). */
function editableName(el) {
  if (el.id) {
    const root = el.getRootNode();
    if (typeof root.querySelectorAll === 'function') {
      const text = Array.from(root.querySelectorAll('label[for]'))
        .filter((l) => l.htmlFor === el.id).map((l) => collapse(l.textContent || '')).join(' ');
      if (text) return text;
    }
  }
  for (const attr of ['aria-placeholder', 'data-placeholder', 'placeholder']) {
    const v = collapse(el.getAttribute(attr) || '');
    if (v) return v;
  }
  return '';
}

/** The name of an element whose aria-labelledby lists its own id among others
 *  (`aria-labelledby="label-id self-id"`, as Headless UI and Reach name a listbox button:
 *  "Assignee Wade"): accname 1.2 step 2B takes each referenced node's text in order, the
 *  element's own content included (in a labelledby traversal it is named from content).
 *  dom-accessibility-api leaves the element itself out when a `<label for>` also labels it
 *  ("Assignee"), where Chromium's
 *  accessibility tree and Playwright keep it (the differential corpus's agreement check,
 *  docs/benchmarks/corpus.md, page lib:headless_listbox). '' when the rule does not apply. */
function selfLabelledName(el) {
  const ids = (el.getAttribute('aria-labelledby') || '').trim().split(/\s+/);
  if (!el.id || ids.length < 2 || !ids.includes(el.id)) return '';
  const root = el.getRootNode();
  const byId = (id) => (typeof root.getElementById === 'function' ? root.getElementById(id) : null)
    || el.ownerDocument.getElementById(id);
  return collapse(ids.map((id) => {
    const node = byId(id);
    if (!node) return '';
    return node === el ? (el.innerText || el.textContent || '') : (node.textContent || '');
  }).join(' '));
}

const NO_PLACEHOLDER_TYPES = new Set(['button', 'submit', 'reset', 'image', 'checkbox', 'radio',
  'range', 'color', 'file', 'hidden']);

/** The last step of a text field's name when nothing else names it: its `placeholder`,
 *  then `aria-placeholder` (HTML-AAM "input type=text… accessible name computation" step 5,
 *  as Chromium's accessibility tree and Playwright name it). Found by the differential
 *  corpus (docs/benchmarks/corpus.md, page placeholder_input): a field named only by its
 *  placeholder was listed unnamed, so a client looking it up by name found nothing. */
function placeholderName(el) {
  const tag = el.localName;
  if (tag === 'input' && NO_PLACEHOLDER_TYPES.has((el.type || '').toLowerCase())) return '';
  if (tag !== 'input' && tag !== 'textarea' && !el.hasAttribute('aria-placeholder')) return '';
  return collapse(el.getAttribute('placeholder') || el.getAttribute('aria-placeholder') || '');
}

function isFocusable(el) {
  return el.tabIndex >= 0 && !el.disabled;
}

/** States as `[name]` / `[name=value]` strings, in a fixed order. */
export function statesOf(el, role, focusedEl) {
  const out = [];
  const aria = (name) => el.getAttribute(name);
  // :disabled also covers controls inside a disabled <fieldset>.
  if (aria('aria-disabled') === 'true' || ('disabled' in el && el.matches(':disabled'))) out.push('disabled');
  if (role === 'checkbox' || role === 'radio' || role === 'switch' || role === 'menuitemcheckbox' || role === 'menuitemradio' || role === 'treeitem') {
    let checked;
    if (el instanceof HTMLInputElement && (el.type === 'checkbox' || el.type === 'radio')) {
      checked = el.indeterminate ? 'mixed' : el.checked;
    } else {
      checked = aria('aria-checked');
    }
    if (checked === true || checked === 'true') out.push('checked');
    else if (checked === 'mixed') out.push('checked=mixed');
  }
  const expanded = aria('aria-expanded');
  if (expanded === 'true' || (el instanceof HTMLDetailsElement && el.open)) out.push('expanded');
  else if (el.localName === 'summary' && el.parentElement instanceof HTMLDetailsElement && el.parentElement.open) out.push('expanded');
  if (aria('aria-selected') === 'true' || (el instanceof HTMLOptionElement && el.selected)) out.push('selected');
  const pressed = aria('aria-pressed');
  if (pressed === 'true') out.push('pressed');
  else if (pressed === 'mixed') out.push('pressed=mixed');
  if (el.required || aria('aria-required') === 'true') out.push('required');
  if (el.readOnly || aria('aria-readonly') === 'true') out.push('readonly');
  if (role === 'heading') {
    const m = /^h([1-6])$/.exec(el.localName);
    const level = aria('aria-level') || (m && m[1]) || '2';
    out.push(`level=${level}`);
  }
  if (el === focusedEl) out.push('focused');
  return out;
}

/**
 * Value shown after the line (`: "value"`), or null. Sensitive fields (sensitive.js)
 * print a fixed mask, never their value or its length.
 */
export function valueOf(el, role) {
  if (!VALUE_ROLES.has(role)) return null;
  if (el instanceof HTMLSelectElement) {
    const chosen = Array.from(el.selectedOptions, (o) => collapse(o.label)).join(', ');
    return chosen && isSensitive(el) ? MASK : chosen;
  }
  if (role === 'slider' || role === 'spinbutton') {
    const text = el.getAttribute('aria-valuetext') || el.getAttribute('aria-valuenow');
    if (text) return text;
  }
  if (!(el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement)) {
    // An editing host's value is its text; a secret one (sensitive.js) shows the mask.
    if (!el.isContentEditable) return null;
    // innerText: the text as rendered, blocks apart ("First" / "Second", not "FirstSecond")
    const text = collapse((typeof el.innerText === 'string' ? el.innerText : el.textContent) || '');
    return text && isSensitive(el) ? MASK : text;
  }
  if (el.value === '') return null;
  return isSensitive(el) ? MASK : el.value;
}

/** Labels of a native select's options, for the line (`[options: "A", "B"]`). */
export function optionsOf(el, all = false) {
  if (!(el instanceof HTMLSelectElement)) return null;
  const labels = [];
  for (const o of el.options) {
    if (!all && labels.length === MAX_OPTIONS_INLINE) break;
    labels.push(collapse(o.label));
  }
  const more = el.options.length - labels.length;
  return { labels, more };
}
