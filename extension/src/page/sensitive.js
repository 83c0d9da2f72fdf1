// Which form fields hold secrets (design.md §5): their values are never printed, never put in
// a ref's descriptor, an error or a log line. Pure DOM.
//
// A field is sensitive when it is a password input; when its autocomplete names a one-time
// code, a password or any payment-card field (`cc-*`); or when its name, id, title,
// aria-label, placeholder, data-testid, <label> or aria-labelledby text says so (saysSecret):
// password / passcode / PIN / token / secret / OTP / CVV / CVC / security code / card (number)
// / IBAN / SSN / social security / API key / private key, also in German, French, Spanish,
// Portuguese, Dutch, Polish, Swedish, Russian, Chinese, Japanese and Korean. Only the field's
// value is masked: its label and name are printed as they are.
//
// Matching is by word, not substring, so "pinned", "Spinner", "tokenizer" or "Secretary"
// are not secrets: text is split on non-letters and on camelCase; a word matches when it is
// a secret word (trailing digits ignored: `password2`, `cvv2`), starts with an unambiguous
// stem (`passwort…`, `парол…`), holds a long compound stem (`newpassword`, `ccnumber`,
// `kreditkartennummer`, `clientsecret`), or ends in `token`/`secret` (`authToken`); phrases
// match as consecutive words ("api key", "mot de passe", "número de tarjeta"). Scripts
// written without spaces (Chinese, Japanese, Korean) match by substring. Accents are
// ignored ("contrasena" = "contraseña").
//
// Editable regions (contenteditable): an editing host whose aria-label, aria-labelledby,
// title or id says secret is sensitive; its text is added to the scrub set, so it prints
// masked wherever it appears. An editable region without such a label is page text.
//
// Selects are sensitive only by autocomplete (`cc-exp-month`): a "Card type" label alone
// lists public choices.

const SECRET_WORDS = new Set([
  'password', 'passwd', 'pwd', 'passcode', 'passphrase', 'pin', 'pincode', 'token', 'secret', 'otp', 'totp',
  'hotp', 'cvv', 'cvc', 'csc', 'cvn', 'ccv', 'ssn', 'iban', 'mfa', '2fa', 'card', 'cardno', 'ccno',
  'apikey', 'privatekey', 'passwort', 'kennwort', 'geheimzahl', 'motdepasse', 'mdp', 'contrasena',
  'senha', 'cartao', 'tarjeta', 'wachtwoord', 'haslo', 'hasło', 'losenord', 'passord', 'adgangskode',
  'salasana', 'sifre', 'heslo', 'jelszo', 'karta', 'karty', 'пароль', 'карта', 'карты', 'пин',
]);
// A word starting with one of these is a secret ("Passwörter" → "passworter", "паролем").
const SECRET_PREFIXES = ['password', 'passwort', 'passwd', 'kennwort', 'passcode', 'passphrase', 'парол',
  'hasł', 'contrasen', 'senha', 'wachtwoord', 'losenord', 'salasan', 'ccnum', 'cardnum', 'cvv', 'cvc', 'iban'];
// A word holding one of these anywhere is a secret ("newpassword", "bankkartennummer").
const SECRET_INFIXES = ['password', 'passwort', 'kennwort', 'passcode', 'cardnumber', 'ccnumber', 'creditcard',
  'debitcard', 'kreditkart', 'kartennummer', 'apikey', 'apitoken', 'accesstoken', 'accesskey', 'authtoken',
  'secretkey', 'privatekey', 'clientsecret', 'securitycode', 'sicherheitscode', 'sozialversicherung',
  'motdepasse', 'onetimecode'];
// A word ending in one of these is a secret ("authToken" is split, "csrftoken" is not).
const SECRET_SUFFIXES = ['token', 'secret'];
// Consecutive words.
const SECRET_PHRASES = [
  ['one', 'time'], ['security', 'code'], ['verification', 'code'], ['auth', 'code'], ['card', 'number'],
  ['card', 'num'], ['card', 'no'], ['cc', 'number'], ['cc', 'num'], ['cc', 'no'], ['credit', 'card'],
  ['debit', 'card'], ['social', 'security'], ['api', 'key'], ['api', 'token'], ['access', 'key'],
  ['access', 'token'], ['secret', 'key'], ['private', 'key'], ['auth', 'token'], ['mot', 'de', 'passe'],
  ['numero', 'de', 'carte'], ['carte', 'bancaire'], ['carte', 'de', 'credit'], ['code', 'de', 'securite'],
  ['securite', 'sociale'], ['codigo', 'de', 'seguridad'], ['seguro', 'social'], ['numer', 'karty'],
  ['номер', 'карты'],
];
// Scripts without spaces between words: substrings of the whole text.
const SECRET_SUBSTRINGS = ['密码', '密碼', '口令', '验证码', '卡号', '信用卡', '银行卡', '安全码', 'パスワード',
  '暗証番号', 'カード番号', 'セキュリティコード', '비밀번호', '카드번호', '보안코드'];

const AUTOCOMPLETE_SECRET = /(^|\s)(one-time-code|current-password|new-password|cc-[a-z-]+)(\s|$)/;
// Input types whose value is not typed text: never sensitive here.
const NOT_TEXT_TYPES = new Set(['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'file', 'hidden', 'range',
  'color']);
const NAME_ATTRIBUTES = ['name', 'id', 'title', 'aria-label', 'placeholder', 'data-testid'];
const EDITABLE_NAME_ATTRIBUTES = ['id', 'title', 'aria-label', 'data-placeholder', 'data-testid'];
/** Shortest sensitive value scrubbed from names and text (see scrub()). */
export const MIN_SCRUB_LENGTH = 3;

/** Lower case, accents (combining diacritics) removed, camelCase split; NFC again so kana
 *  with dakuten stay whole. */
function normalise(text) {
  return text
    .replace(/(\p{Ll})(\p{Lu})/gu, '$1 $2')
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .normalize('NFC')
    .toLowerCase();
}

function wordIsSecret(word) {
  const bare = word.replace(/\d+$/, '') || word;
  if (SECRET_WORDS.has(word) || SECRET_WORDS.has(bare)) return true;
  for (const p of SECRET_PREFIXES) if (word.startsWith(p)) return true;
  for (const s of SECRET_SUFFIXES) if (bare.length > s.length && bare.endsWith(s)) return true;
  for (const i of SECRET_INFIXES) if (word.includes(i)) return true;
  return false;
}

/**
 * True when a field's name or label text says it holds a secret (see the module comment).
 * @param {string|null|undefined} text  an attribute value or label text
 */
export function saysSecret(text) {
  if (!text) return false;
  const norm = normalise(text);
  for (const s of SECRET_SUBSTRINGS) if (norm.includes(s)) return true;
  const w = norm.split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  for (const word of w) if (wordIsSecret(word)) return true;
  for (let i = 0; i < w.length; i++) {
    for (const phrase of SECRET_PHRASES) {
      if (phrase.every((p, k) => w[i + k] === p)) return true;
    }
  }
  return false;
}

/** True when an autocomplete attribute value names card data, a password or a one-time
 *  code (https://html.spec.whatwg.org/multipage/form-control-infrastructure.html#autofill). */
export function autocompleteSecret(value) {
  return !!value && AUTOCOMPLETE_SECRET.test(value.toLowerCase());
}

function labelledBySecret(el) {
  const labelledby = el.getAttribute('aria-labelledby');
  if (!labelledby) return false;
  const root = el.getRootNode();
  for (const id of labelledby.split(/\s+/)) {
    const ref = root.getElementById ? root.getElementById(id) : null;
    if (ref && saysSecret(ref.textContent)) return true;
  }
  return false;
}

/** The host of an editable region (contenteditable), not a node inside one. */
function isEditingHost(el) {
  return el instanceof HTMLElement && el.isContentEditable &&
    !(el.parentElement && el.parentElement.isContentEditable);
}

/** True when `el` is a form field (or editable region) whose value must never be printed. */
export function isSensitive(el) {
  if (el instanceof HTMLSelectElement) return autocompleteSecret(el.getAttribute('autocomplete'));
  if (!(el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement)) {
    if (!isEditingHost(el)) return false;
    for (const attr of EDITABLE_NAME_ATTRIBUTES) if (saysSecret(el.getAttribute(attr))) return true;
    return labelledBySecret(el);
  }
  if (el instanceof HTMLInputElement) {
    if (el.type === 'password') return true;
    if (NOT_TEXT_TYPES.has(el.type)) return false;
  }
  if (autocompleteSecret(el.getAttribute('autocomplete'))) return true;
  for (const attr of NAME_ATTRIBUTES) if (saysSecret(el.getAttribute(attr))) return true;
  if (el.labels) {
    for (const label of el.labels) if (saysSecret(label.textContent)) return true;
  }
  return labelledBySecret(el);
}

function addValue(out, text) {
  const v = text.replace(/\s+/g, ' ').trim(); // as printed (aria.js collapse)
  if (v.length < MIN_SCRUB_LENGTH) return;
  out.add(v);
  // As a page would put it in a link (`?k=` + encodeURIComponent), printed in [url=…].
  const encoded = encodeURIComponent(v);
  if (encoded !== v) out.add(encoded);
}

/** Add to `out` the values of the sensitive fields in `root` (a document or one shadow
 *  root, not descending into nested shadow roots), at least MIN_SCRUB_LENGTH long: field
 *  values as they are, whitespace-collapsed and URI-encoded; the text of a secret editable
 *  region whole and per text node. */
export function collectSensitiveValues(root, out) {
  for (const el of root.querySelectorAll('input, textarea, select')) {
    if (!isSensitive(el)) continue;
    if (el instanceof HTMLSelectElement) {
      for (const o of el.selectedOptions) addValue(out, o.label);
    } else if (el.value.length >= MIN_SCRUB_LENGTH) {
      out.add(el.value); // as typed, and collapsed as a text line prints it
      addValue(out, el.value);
    }
  }
  for (const el of root.querySelectorAll('[contenteditable]')) {
    if (!isSensitive(el)) continue;
    addValue(out, el.textContent);
    const walker = el.ownerDocument.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) addValue(out, n.data);
  }
  return out;
}

/**
 * `text` with every occurrence of a sensitive value replaced by a mask. Accessible names
 * can embed a field's value (accname 2E: a text box inside a label), and pages may echo
 * what was typed; the scrub keeps both out of snapshots. Longer values are replaced first
 * (a value inside another is not left half shown). Values shorter than MIN_SCRUB_LENGTH
 * characters are not scrubbed (they would mask unrelated text).
 */
export function scrub(text, values) {
  if (!values || !values.size || !text) return text;
  let out = text;
  const longestFirst = Array.from(values).sort((a, b) => b.length - a.length);
  for (const v of longestFirst) if (out.includes(v)) out = out.split(v).join('••••••'); // aria.js MASK
  return out;
}
