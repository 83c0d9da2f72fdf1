// The old synthetic action path (design.md §1): used ONLY for devices that never asked for
// trusted input. The bridge labels every result of this path `inputPath: "synthetic"`;
// pages see event.isTrusted === false. Pure DOM.

import { PageError } from './errors.js';

function mouse(el, type, init = {}) {
  const r = el.getBoundingClientRect();
  el.dispatchEvent(new MouseEvent(type, {
    bubbles: true, cancelable: true, composed: true, view: window,
    clientX: r.left + r.width / 2, clientY: r.top + r.height / 2, ...init,
  }));
}

function key(el, type, k) {
  el.dispatchEvent(new KeyboardEvent(type, { key: k, bubbles: true, cancelable: true, composed: true }));
}

/**
 * Perform `action` ({kind, ...} as in the protocol's Action union) on `el` (may be null
 * for a press on the focused element).
 * @returns {{done: true, action: string}}
 */
export function actSynthetic(el, action) {
  switch (action.kind) {
    case 'click': {
      el.scrollIntoView({ block: 'center', inline: 'center' });
      const button = { left: 0, middle: 1, right: 2 }[action.button || 'left'];
      for (let i = 1; i <= (action.clickCount || 1); i++) {
        mouse(el, 'mousedown', { button, detail: i });
        if (typeof el.focus === 'function') el.focus();
        mouse(el, 'mouseup', { button, detail: i });
        mouse(el, button === 2 ? 'contextmenu' : 'click', { button, detail: i });
      }
      if (action.clickCount === 2) mouse(el, 'dblclick', { button, detail: 2 });
      break;
    }
    case 'hover':
      mouse(el, 'mouseover');
      mouse(el, 'mouseenter', { bubbles: false });
      mouse(el, 'mousemove');
      break;
    case 'type': {
      if (!('value' in el) || el.readOnly || el.disabled) {
        throw new PageError('ELEMENT_NOT_EDITABLE', 'The target does not accept text; nothing was typed.');
      }
      el.focus();
      for (const ch of action.text) {
        key(el, 'keydown', ch);
        el.value += ch;
        el.dispatchEvent(new InputEvent('input', { bubbles: true, composed: true, data: ch, inputType: 'insertText' }));
        key(el, 'keyup', ch);
      }
      el.dispatchEvent(new Event('change', { bubbles: true }));
      if (action.submit && el.form) el.form.requestSubmit();
      break;
    }
    case 'press': {
      const target = el || document.activeElement || document.body;
      const last = action.key.split('+').pop();
      key(target, 'keydown', last);
      key(target, 'keyup', last);
      break;
    }
    case 'fill': {
      if (!('value' in el) || el.readOnly || el.disabled) {
        throw new PageError('ELEMENT_NOT_EDITABLE', 'The target does not accept text; nothing was typed.');
      }
      el.focus();
      el.value = action.value;
      el.dispatchEvent(new InputEvent('input', { bubbles: true, composed: true, inputType: 'insertReplacementText' }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
      break;
    }
    case 'check': {
      const now = el instanceof HTMLInputElement ? el.checked : el.getAttribute('aria-checked') === 'true';
      if (now !== action.checked) el.click();
      break;
    }
    case 'select': {
      if (!(el instanceof HTMLSelectElement)) throw new PageError('BAD_REQUEST', 'The target is not a native <select>.');
      for (const o of el.options) o.selected = action.values.includes(o.value) || action.values.includes(o.label);
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
      break;
    }
    case 'focus':
      el.focus();
      break;
    case 'scroll':
      el.scrollBy(action.dx || 0, action.dy || 0);
      break;
    default:
      // drag and upload need the browser's own input (a pointer path, a file chooser).
      throw new PageError('BAD_REQUEST',
        `A ${action.kind} cannot be done on the synthetic path (this browser has no input driver); ` +
        'run it under the trustbridge supervisor for trusted input.');
  }
  return { done: true, action: action.kind };
}
