// Accessibility-style snapshot of one document (DESIGN §5). Pure DOM: no chrome.* calls;
// closed shadow roots are reached through the `shadowRootOf` function the caller passes.
//
// Output: a list of lines {d: depth, s: text, frameKey?: string}. The background stitches
// the lines of child frames under the line of their <iframe> (matched by frameKey) and
// joins everything as YAML-like text, the form agents know from Playwright:
//   - button "Save" [ref=e7]
//   - textbox "Email" [ref=e8]: ada@example.com
// Roles and accessible names come from dom-accessibility-api (WAI-ARIA 1.2, accname 1.2).

import { computeAccessibleName, getRole } from 'dom-accessibility-api';

const SKIP_TAGS = new Set(['script', 'style', 'template', 'noscript', 'head', 'meta', 'link', 'title']);
const FLATTEN_ROLES = new Set(['generic', 'none', 'presentation']);
// Roles whose accessible name is their content: their text is not repeated below them.
const NAME_FROM_CONTENT = new Set([
  'button', 'link', 'heading', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio',
  'option', 'checkbox', 'radio', 'switch', 'treeitem', 'cell', 'gridcell', 'columnheader',
  'rowheader', 'tooltip', 'label', 'legend', 'caption',
]);
const VALUE_ROLES = new Set(['textbox', 'searchbox', 'combobox', 'spinbutton', 'slider']);
const SENSITIVE_NAME = /pass|token|secret|otp|one.?time|cvv|cvc|csc|pin\b|card.?num|cc-?num/i;
const MAX_TEXT = 200;

function clip(text, max = MAX_TEXT) {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > max ? t.slice(0, max - 1) + '…' : t;
}

function quote(text) {
  return JSON.stringify(clip(text));
}

/** True when a field's value must never be printed (passwords, one-time codes, cards). */
export function isSensitive(el) {
  if (!(el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement)) return false;
  if (el.type === 'password') return true;
  const ac = (el.getAttribute('autocomplete') || '').toLowerCase();
  if (ac.includes('one-time-code') || /\bcc-/.test(ac) || ac.includes('password')) return true;
  const hint = `${el.name || ''} ${el.id || ''} ${el.getAttribute('aria-label') || ''}`;
  if (SENSITIVE_NAME.test(hint)) return true;
  for (const label of el.labels || []) if (SENSITIVE_NAME.test(label.textContent || '')) return true;
  return false;
}

function isHidden(el) {
  if (el.hidden || el.getAttribute('aria-hidden') === 'true') return true;
  if (typeof el.checkVisibility === 'function') {
    // display:none anywhere above, or visibility:hidden on the element.
    return !el.checkVisibility({ visibilityProperty: true });
  }
  const style = getComputedStyle(el);
  return style.display === 'none' || style.visibility === 'hidden';
}

function looksClickable(el) {
  if (el.hasAttribute('onclick')) return true;
  const tabindex = el.getAttribute('tabindex');
  if (tabindex !== null && Number(tabindex) >= 0) return true;
  return false;
}

function states(el, role) {
  const out = [];
  const aria = (name) => el.getAttribute(name);
  if (el.disabled || aria('aria-disabled') === 'true') out.push('disabled');
  if (role === 'checkbox' || role === 'radio' || role === 'switch' || role === 'menuitemcheckbox' || role === 'menuitemradio') {
    const checked = el instanceof HTMLInputElement ? (el.indeterminate ? 'mixed' : el.checked) : aria('aria-checked');
    if (checked === true || checked === 'true') out.push('checked');
    else if (checked === 'mixed') out.push('checked=mixed');
  }
  if (aria('aria-expanded') === 'true') out.push('expanded');
  if (aria('aria-selected') === 'true' || (el instanceof HTMLOptionElement && el.selected)) out.push('selected');
  if (aria('aria-pressed') === 'true') out.push('pressed');
  if (el.required || aria('aria-required') === 'true') out.push('required');
  if (el.readOnly || aria('aria-readonly') === 'true') out.push('readonly');
  if (role === 'heading') {
    const m = /^h([1-6])$/.exec(el.localName);
    const level = aria('aria-level') || (m && m[1]);
    if (level) out.push(`level=${level}`);
  }
  return out;
}

function valueOf(el, role) {
  if (!VALUE_ROLES.has(role)) return null;
  if (el instanceof HTMLSelectElement) {
    return Array.from(el.selectedOptions).map((o) => o.label).join(', ');
  }
  if (!('value' in el) || typeof el.value !== 'string' || el.value === '') return null;
  return isSensitive(el) ? '••••••' : el.value;
}

/**
 * Snapshot of `doc`.
 * @param {Document} doc
 * @param {object} opts
 * @param {string} opts.prefix  ref prefix of this frame ("" for the top frame, "f1" ...)
 * @param {import('./refs.js').RefRegistry} opts.refs
 * @param {(el: Element) => ShadowRoot|null} opts.shadowRootOf  open or closed root of a host
 * @param {(frameEl: Element) => string} opts.frameKeyOf  key announced to a child frame
 * @returns {{lines: Array<{d: number, s: string, frameKey?: string}>, refCount: number}}
 */
export function snapshotDocument(doc, { prefix, refs, shadowRootOf, frameKeyOf }) {
  const lines = [];
  let refCount = 0;
  const activeDeep = deepActiveElement(doc);

  function emit(el, role, name, depth, ctx, extra = '') {
    const ref = refs.refFor(el, role, name);
    refCount++;
    const attrs = states(el, role);
    if (el === activeDeep) attrs.push('focused');
    if (ctx.closed) attrs.push('closed-shadow');
    let s = `- ${role}${name ? ' ' + quote(name) : ''}`;
    for (const a of attrs) s += ` [${a}]`;
    s += ` [ref=${prefix}${ref}]${extra}`;
    const value = valueOf(el, role);
    if (value !== null) s += `: ${quote(value)}`;
    return s;
  }

  function walkChildren(parent, depth, ctx) {
    let children;
    const root = parent.nodeType === Node.ELEMENT_NODE ? shadowRootOf(parent) : null;
    if (root) {
      children = root.childNodes;
      ctx = { ...ctx, closed: ctx.closed || root.mode === 'closed' };
    } else if (parent.localName === 'slot' && typeof parent.assignedNodes === 'function' && parent.assignedNodes().length) {
      children = parent.assignedNodes();
    } else {
      children = parent.childNodes;
    }
    for (const child of children) walk(child, depth, ctx);
  }

  function walk(node, depth, ctx) {
    if (node.nodeType === Node.TEXT_NODE) {
      if (!ctx.text) return;
      const t = clip(node.data);
      if (t) lines.push({ d: depth, s: `- text: ${quote(t)}` });
      return;
    }
    if (node.nodeType !== Node.ELEMENT_NODE) return;
    const el = node;
    if (SKIP_TAGS.has(el.localName) || isHidden(el)) return;

    if (el.localName === 'iframe' || el.localName === 'frame') {
      const name = el.getAttribute('title') || el.getAttribute('name') || '';
      const s = emit(el, 'iframe', name, depth, ctx, ':');
      lines.push({ d: depth, s, frameKey: frameKeyOf(el) });
      return;
    }

    let role = null;
    try { role = getRole(el); } catch { role = null; }
    if (role && !FLATTEN_ROLES.has(role)) {
      let name = '';
      try { name = computeAccessibleName(el); } catch { name = ''; }
      lines.push({ d: depth, s: emit(el, role, name, depth, ctx) });
      const text = !(NAME_FROM_CONTENT.has(role) && name);
      walkChildren(el, depth + 1, { ...ctx, text });
      return;
    }
    if (looksClickable(el)) {
      const name = clip(el.textContent || '', 80);
      lines.push({ d: depth, s: emit(el, 'generic', name, depth, ctx) });
      walkChildren(el, depth + 1, { ...ctx, text: !name });
      return;
    }
    walkChildren(el, depth, ctx);
  }

  if (doc.body) walkChildren(doc.body, 0, { text: true, closed: false });
  return { lines, refCount };
}

function deepActiveElement(doc) {
  let el = doc.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  return el;
}
