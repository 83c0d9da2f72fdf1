// Unit tests of the extension's DOM-free modules, run by tests/extension/test_page_units.py
// with `node --test`. Elements are stand-ins: the registry only needs identity and
// `isConnected`.
import assert from 'node:assert/strict';
import test from 'node:test';

import { diffOutline } from '../../extension/src/background/diff.js';
import { RefRegistry, sameDescriptor } from '../../extension/src/page/refs.js';

const desc = (name, extra = {}) => ({
  tag: 'input', role: 'textbox', name, attrs: { name: 'email' }, scope: { role: 'form', name: 'Login' }, ...extra,
});
const node = () => ({ isConnected: true });
const codeOf = (fn) => {
  try {
    fn();
  } catch (err) {
    return { code: err.code, details: err.details, message: err.message };
  }
  return null;
};

test('the same element keeps its ref (refFor, and seen() with no new descriptor); new elements get new numbers', () => {
  const refs = new RefRegistry();
  refs.observe();
  const a = node();
  const b = node();
  assert.equal(refs.refFor(a, desc('A')), 'e1');
  assert.equal(refs.refFor(b, desc('B')), 'e2');
  refs.observe();
  assert.equal(refs.refFor(a, desc('A')), 'e1');
  assert.deepEqual(refs.resolve('e1', () => []), { el: a, resolvedBy: 'original_ref', rebound: false });
  {
    // seen(): a known ref is kept without a new descriptor while role, name and scope hold
    const refs = new RefRegistry();
    refs.observe();
    const a = node();
    const d = desc('A');
    assert.equal(refs.seen(a, 'textbox', 'A', d.scope, false), null); // never minted
    assert.equal(refs.refFor(a, d), 'e1');
    for (let i = 0; i < 20; i++) {
      refs.observe();
      assert.equal(refs.seen(a, 'textbox', 'A', { role: 'form', name: 'Login' }, false), 'e1');
    }
    assert.equal(refs.resolve('e1', () => []).el, a); // seen keeps it alive past 16 snapshots
    assert.equal(refs.seen(a, 'textbox', 'B', d.scope, false), null); // renamed: describe anew
    assert.equal(refs.seen(a, 'textbox', 'A', null, false), null); // moved out of its form
    assert.equal(refs.seen(a, 'textbox', 'A', d.scope, true), null); // now in a closed root
  }
});

test('a ref unseen for 16 observations expires; seen within them it lives', () => {
  const refs = new RefRegistry();
  refs.observe();
  const a = node();
  refs.refFor(a, desc('A'));
  for (let i = 0; i < 15; i++) refs.observe();
  assert.equal(refs.resolve('e1', () => []).el, a);
  refs.observe();
  const err = codeOf(() => refs.resolve('e1', () => []));
  assert.equal(err.code, 'REF_NOT_FOUND');
  assert.equal(err.details.expired, 'observations');
});

test('a ref unseen for 30 minutes expires (TTL)', () => {
  let now = 1_000_000;
  const refs = new RefRegistry({ now: () => now });
  refs.observe();
  refs.refFor(node(), desc('A'));
  now += 30 * 60 * 1000;
  assert.ok(refs.resolve('e1', () => []));
  now += 1;
  const err = codeOf(() => refs.resolve('e1', () => []));
  assert.equal(err.code, 'REF_NOT_FOUND');
  assert.equal(err.details.expired, 'ttl');
});

test('a replaced element rebinds once to a unique equivalent', () => {
  const refs = new RefRegistry();
  refs.observe();
  const old = node();
  refs.refFor(old, desc('Email'));
  old.isConnected = false;
  const fresh = node();
  const res = refs.resolve('e1', () => [fresh]);
  assert.deepEqual(res, { el: fresh, resolvedBy: 'semantic_rebind', rebound: true });
  assert.deepEqual(refs.resolve('e1', () => []), { el: fresh, resolvedBy: 'semantic_rebind', rebound: false });
  fresh.isConnected = false;
  const err = codeOf(() => refs.resolve('e1', () => [node()]));
  assert.equal(err.code, 'ELEMENT_TARGET_DETACHED');
});

test('a snapshot that shows the rebound element again allows a new rebind', () => {
  const refs = new RefRegistry();
  refs.observe();
  const old = node();
  refs.refFor(old, desc('Email'));
  old.isConnected = false;
  const fresh = node();
  assert.equal(refs.resolve('e1', () => [fresh]).rebound, true);
  refs.observe();
  assert.equal(refs.refFor(fresh, desc('Email')), 'e1'); // the agent saw it again
  fresh.isConnected = false;
  const third = node();
  assert.deepEqual(refs.resolve('e1', () => [third]), { el: third, resolvedBy: 'semantic_rebind', rebound: true });
});

test('several equivalents: ambiguous, and the ref is not rebound', () => {
  const refs = new RefRegistry();
  refs.observe();
  const old = node();
  refs.refFor(old, desc('Email'));
  old.isConnected = false;
  const err = codeOf(() => refs.resolve('e1', () => [node(), node()]));
  assert.equal(err.code, 'ELEMENT_TARGET_AMBIGUOUS');
  assert.equal(err.details.candidates, 2);
  const one = node();
  assert.equal(refs.resolve('e1', () => [one]).el, one); // the rebind was not used up
});

test('no equivalent: detached', () => {
  const refs = new RefRegistry();
  refs.observe();
  const old = node();
  refs.refFor(old, desc('Email'));
  old.isConnected = false;
  assert.equal(codeOf(() => refs.resolve('e1', () => [])).code, 'ELEMENT_TARGET_DETACHED');
});

test('unknown refs and refs from before a URL change', () => {
  const refs = new RefRegistry();
  refs.observe();
  const a = node();
  refs.refFor(a, desc('A'));
  assert.equal(codeOf(() => refs.resolve('e9', () => [])).code, 'REF_NOT_FOUND');
  refs.reset();
  const err = codeOf(() => refs.resolve('e1', () => [a]));
  assert.equal(err.code, 'REF_NOT_FOUND');
  assert.equal(err.details.expired, 'url');
  assert.equal(refs.refFor(a, desc('A')), 'e2'); // numbers are never reused
});

test('descriptors match on tag, role, name, attributes and scope', () => {
  assert.ok(sameDescriptor(desc('Email'), desc('Email')));
  assert.ok(!sameDescriptor(desc('Email'), desc('Mail')));
  assert.ok(!sameDescriptor(desc('Email'), desc('Email', { attrs: { name: 'other' } })));
  assert.ok(!sameDescriptor(desc('Email'), desc('Email', { scope: { role: 'form', name: 'Signup' } })));
  assert.ok(!sameDescriptor(desc('Email'), desc('Email', { scope: null })));
  assert.ok(!sameDescriptor(desc('Email'), desc('Email', { closed: true })));
});

test('diff: no baseline gives the full snapshot', () => {
  const res = diffOutline(null, ['- button "A" [ref=e1]']);
  assert.match(res.lines[0], /^# no previous snapshot/);
  assert.deepEqual(res.lines.slice(1), ['- button "A" [ref=e1]']);
});

test('diff: changed lines with their ancestors as context', () => {
  const before = ['- main [ref=e1]', '  - form "Login" [ref=e2]', '    - button "Save" [ref=e3]', '  - text: idle'];
  const after = ['- main [ref=e1]', '  - form "Login" [ref=e2]', '    - button "Save" [disabled] [ref=e3]', '  - text: idle'];
  const res = diffOutline(before, after);
  assert.equal(res.added, 1);
  assert.equal(res.removed, 1);
  assert.deepEqual(res.lines.slice(1), [
    '  - main [ref=e1]',
    '    - form "Login" [ref=e2]',
    '-     - button "Save" [ref=e3]',
    '+     - button "Save" [disabled] [ref=e3]',
  ]);
  assert.match(diffOutline(after, after).lines[0], /^# no changes/);
});

// -- sensitive fields (extension/src/page/sensitive.js) -----------------------------------
// isSensitive() asks `instanceof HTMLInputElement` etc.; these stand-ins give it just the
// attributes, type, labels and editing state it reads.
class FakeElement {
  constructor(attrs = {}, { labels = [], editable = false, parentEditable = false } = {}) {
    this.attrs = attrs;
    this.labels = labels.map((textContent) => ({ textContent }));
    this.isContentEditable = editable;
    this.parentElement = { isContentEditable: parentEditable };
    this.textContent = '';
  }
  getAttribute(name) { return Object.hasOwn(this.attrs, name) ? this.attrs[name] : null; }
  getRootNode() { return { getElementById: () => null }; }
}
class FakeInput extends FakeElement {
  get type() { return (this.attrs.type || 'text').toLowerCase(); }
}
class FakeTextArea extends FakeElement {}
class FakeSelect extends FakeElement {}
Object.assign(globalThis, {
  HTMLElement: FakeElement, HTMLInputElement: FakeInput, HTMLTextAreaElement: FakeTextArea,
  HTMLSelectElement: FakeSelect,
});
const sensitive = await import('../../extension/src/page/sensitive.js');

const SECRET_LABELS = [
  'ccnum', 'cc-num', 'ccNumber', 'CCNumber', 'cardnumber', 'card_number', 'Card number', 'Card', 'Credit card',
  'creditCardNo', 'cvc', 'CVV2', 'cvv', 'Security code', 'iban', 'IBAN', 'ssn', 'SSN', 'Social Security Number',
  'social-security', 'api key', 'API key', 'api-key', 'apiKey', 'API_KEY', 'x-api-key', 'secret', 'Client secret',
  'client_secret', 'clientSecret', 'token', 'Access token', 'authToken', 'password', 'Password', 'newPassword',
  'confirm_password', 'password2', 'userpassword', 'passcode', 'PIN', 'pin', 'PIN-Code', 'Passwort',
  'Passwort wiederholen', 'Neues Passwort', 'Kennwort', 'mot de passe', 'Mot de passe', 'motdepasse',
  'contraseña', 'Contraseña', 'contrasena', 'senha', 'Senha', 'пароль', 'Пароль', 'Введите пароль', 'паролем',
  '密码', '请输入密码', '密碼', 'パスワード', 'パスワードを入力', '비밀번호', 'karta', 'Kartennummer',
  'Kreditkartennummer', 'numéro de carte', 'Numéro de carte', 'número de tarjeta', 'Número de tarjeta',
  'wachtwoord', 'hasło', 'One-time code', 'otp', '2FA code', 'Verification code', 'カード番号',
];
const PLAIN_LABELS = [
  'Name', 'Full name', 'name', 'fullname', 'Email', 'Username', 'pinned', 'Pinned items', 'Spinner', 'tokenizer',
  'Tokenizer docs', 'tokens', 'Secretary', 'Passenger', 'passage', 'Shipping address', 'Discard', 'Scorecard',
  'Cards', 'cardigan', 'Postcode', 'Promo code', 'Search', 'Keyword', 'Key', 'Monkey', 'Description', 'Comment',
  'Carte du restaurant', 'Opinion', 'Ticket', 'Company', 'Nombre', 'Vorname', 'Nachname', 'Kommentar', 'Имя',
  '名前', '姓名', 'City', 'Phone', 'Spin', 'Pinterest handle', 'Account name', 'Topic', '',
];

test('sensitive: labels and names that say card, CVC, IBAN, SSN, API key, secret, token, password, PIN (several languages)', () => {
  const missed = SECRET_LABELS.filter((t) => !sensitive.saysSecret(t));
  assert.deepEqual(missed, []);
});

test('sensitive: ordinary labels, and words that only contain a secret word, are not secret', () => {
  const flagged = PLAIN_LABELS.filter((t) => sensitive.saysSecret(t));
  assert.deepEqual(flagged, []);
});

test('sensitive: autocomplete tokens cc-*, one-time-code, current-password and new-password', () => {
  for (const ac of ['cc-number', 'cc-csc', 'cc-exp', 'cc-exp-month', 'cc-name', 'cc-type', 'billing cc-number',
    'section-a shipping cc-csc', 'one-time-code', 'current-password', 'new-password', 'CC-Number']) {
    assert.ok(sensitive.autocompleteSecret(ac), ac);
  }
  for (const ac of ['name', 'email', 'username', 'off', 'on', 'street-address', 'tel', 'cc', 'webauthn', '', null]) {
    assert.ok(!sensitive.autocompleteSecret(ac), String(ac));
  }
});

test('sensitive: which fields are masked (inputs, text areas, selects, editable regions)', () => {
  const { isSensitive } = sensitive;
  assert.ok(isSensitive(new FakeInput({ type: 'password' })));
  assert.ok(isSensitive(new FakeInput({ name: 'ccnum' })));
  assert.ok(isSensitive(new FakeInput({ id: 'f1' }, { labels: ['Passwort'] })));
  assert.ok(isSensitive(new FakeInput({ placeholder: 'Social Security Number' })));
  assert.ok(isSensitive(new FakeInput({ title: 'API key' })));
  assert.ok(isSensitive(new FakeInput({ type: 'number', autocomplete: 'cc-csc' })));
  assert.ok(isSensitive(new FakeTextArea({ 'aria-label': 'Private key' })));
  assert.ok(!isSensitive(new FakeInput({ name: 'fullname' }, { labels: ['Name'] })));
  assert.ok(!isSensitive(new FakeInput({ name: 'q' }, { labels: ['Search tokenizer docs'] })));
  assert.ok(!isSensitive(new FakeInput({ type: 'checkbox', name: 'remember_password' })));
  assert.ok(!isSensitive(new FakeInput({ type: 'hidden', name: 'csrf_token' })));
  // A select shows its choice unless autocomplete says it is card data (its label alone
  // does not: "Card type" lists public choices).
  assert.ok(isSensitive(new FakeSelect({ autocomplete: 'cc-exp-month' })));
  assert.ok(!isSensitive(new FakeSelect({ name: 'card_type' }, { labels: ['Card type'] })));
  // An editing host (contenteditable) labelled as a secret is masked; its inner nodes are
  // not hosts themselves; an unlabelled editable region is ordinary text.
  assert.ok(isSensitive(new FakeElement({ 'aria-label': 'API key', contenteditable: '' }, { editable: true })));
  assert.ok(!isSensitive(new FakeElement({ 'aria-label': 'API key' }, { editable: true, parentEditable: true })));
  assert.ok(!isSensitive(new FakeElement({ 'aria-label': 'Notes', contenteditable: '' }, { editable: true })));
  assert.ok(!isSensitive(new FakeElement({ 'aria-label': 'API key' })));
});

test('sensitive: scrub masks every occurrence of a collected value and leaves other text alone', () => {
  const values = new Set(['sk_live_abc']);
  assert.equal(sensitive.scrub('key sk_live_abc saved; again sk_live_abc', values), 'key •••••• saved; again ••••••');
  assert.equal(sensitive.scrub('key sk_live_ab saved', values), 'key sk_live_ab saved');
  assert.equal(sensitive.scrub('key sk_live_abc', new Set()), 'key sk_live_abc');
});
