// How element facts become snapshot text: quoting, clipping, URLs. Pure functions.

import { collapse } from './aria.js';

export const MAX_NAME = 200;
const MAX_URL = 500;

/** Name of an element that acts as a control without a role: its label or text, cut at
 *  `max` characters (100 by default; a caller that scrubs secrets cuts after scrubbing). */
export function implicitName(el, max = 100) {
  return clip(collapse(el.getAttribute('aria-label') || el.getAttribute('title') || el.textContent || ''), max);
}

/** `text` cut to `max` characters, with an ellipsis when cut. */
export function clip(text, max) {
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}

/** A YAML-friendly scalar: bare when unambiguous, JSON-quoted otherwise. */
export function scalar(text) {
  if (/^[\p{L}\p{N}(][^\n"]*$/u.test(text) && !/: |\s#|:$|\s$/.test(text)) return text;
  return JSON.stringify(text);
}

/** An item of an inline list (`[options: a, b]`): bare unless it could be misread. */
export function listItem(text) {
  return /^[\p{L}\p{N}][^,\[\]"\n]*$/u.test(text) && !/\s$/.test(text) ? text : JSON.stringify(text);
}

/** The resolved URL of a link (`a.href`), cut at 500 characters; none for javascript:.
 *  A link to the document's own http(s) origin prints from its path on (`/docs?q=1`), as
 *  Playwright MCP prints hrefs: the snapshot's `url` says the origin, and the bytes go to
 *  what differs between links. */
export function urlOf(el) {
  const href = typeof el.href === 'string' ? el.href : (el.href && el.href.baseVal) || '';
  if (!href || href.startsWith('javascript:')) return null;
  let url = href;
  const origin = el.ownerDocument && el.ownerDocument.location ? el.ownerDocument.location.origin : '';
  if (/^https?:\/\//.test(origin) && href.startsWith(origin + '/')) url = href.slice(origin.length);
  return clip(url, MAX_URL).replace(/\]/g, '%5D');
}
