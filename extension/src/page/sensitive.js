// Which form fields hold secrets (design.md §5): their values are never printed, never put in
// a ref's descriptor, an error or a log line. Pure DOM.
//
// A field is sensitive when it is a password input; when its autocomplete names a one-time
// code, a password or any payment-card field (`cc-*`); or when its name, id, aria-label,
// placeholder or label says password, passcode, PIN, token, secret, OTP/TOTP, CVV/CVC/CSC,
// security code or card number. Words are split on non-letters and camelCase, so
// `otpCode` and `user_pin` match and `passenger` or `shipping` do not.

const SECRET_WORDS = new Set(['password', 'passwd', 'pwd', 'passcode', 'passphrase', 'pin', 'token', 'secret',
  'otp', 'totp', 'hotp', 'cvv', 'cvv2', 'cvc', 'cvc2', 'csc', 'cvn', 'ccv', 'ssn', 'iban', 'mfa', '2fa']);
const SECRET_PAIRS = [['one', 'time'], ['security', 'code'], ['card', 'number'], ['card', 'num'], ['cc', 'number'],
  ['cc', 'num'], ['credit', 'card'], ['verification', 'code'], ['auth', 'code']];
// Input types whose value is not typed text: never sensitive here.
const NOT_TEXT_TYPES = new Set(['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'file', 'hidden', 'range',
  'color']);
/** Shortest sensitive value scrubbed from names and text (see scrub()). */
export const MIN_SCRUB_LENGTH = 3;

function words(text) {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

function saysSecret(text) {
  if (!text) return false;
  const w = words(text);
  for (const word of w) if (SECRET_WORDS.has(word)) return true;
  for (let i = 0; i + 1 < w.length; i++) {
    for (const [a, b] of SECRET_PAIRS) if (w[i] === a && w[i + 1] === b) return true;
  }
  return false;
}

/** True when `el` is a form field whose value must never be printed. */
export function isSensitive(el) {
  if (!(el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement)) return false;
  if (el instanceof HTMLInputElement) {
    if (el.type === 'password') return true;
    if (NOT_TEXT_TYPES.has(el.type)) return false;
  }
  const ac = ` ${(el.getAttribute('autocomplete') || '').toLowerCase()} `;
  if (/\s(one-time-code|current-password|new-password|cc-[a-z-]+)\s/.test(ac)) return true;
  for (const attr of ['name', 'id', 'aria-label', 'placeholder', 'data-testid']) {
    if (saysSecret(el.getAttribute(attr))) return true;
  }
  if (el.labels) {
    for (const label of el.labels) if (saysSecret(label.textContent)) return true;
  }
  const labelledby = el.getAttribute('aria-labelledby');
  if (labelledby) {
    const root = el.getRootNode();
    for (const id of labelledby.split(/\s+/)) {
      const ref = root.getElementById ? root.getElementById(id) : null;
      if (ref && saysSecret(ref.textContent)) return true;
    }
  }
  return false;
}

/** Add to `out` the values of the sensitive fields in `root` (a document or one shadow
 *  root, not descending into nested shadow roots), at least MIN_SCRUB_LENGTH long. */
export function collectSensitiveValues(root, out) {
  for (const el of root.querySelectorAll('input, textarea')) {
    if (el.value.length >= MIN_SCRUB_LENGTH && isSensitive(el)) out.add(el.value);
  }
  return out;
}

/**
 * `text` with every occurrence of a sensitive value replaced by a mask. Accessible names
 * can embed a field's value (accname 2E: a text box inside a label), and pages may echo
 * what was typed; the scrub keeps both out of snapshots. Values shorter than
 * MIN_SCRUB_LENGTH characters are not scrubbed (they would mask unrelated text).
 */
export function scrub(text, values) {
  if (!values || !values.size || !text) return text;
  let out = text;
  for (const v of values) if (out.includes(v)) out = out.split(v).join('••••••'); // aria.js MASK
  return out;
}
