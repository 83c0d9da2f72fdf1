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

test('the same element keeps its ref; new elements get new numbers', () => {
  const refs = new RefRegistry();
  refs.observe();
  const a = node();
  const b = node();
  assert.equal(refs.refFor(a, desc('A')), 'e1');
  assert.equal(refs.refFor(b, desc('B')), 'e2');
  refs.observe();
  assert.equal(refs.refFor(a, desc('A')), 'e1');
  assert.deepEqual(refs.resolve('e1', () => []), { el: a, resolvedBy: 'original_ref', rebound: false });
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
