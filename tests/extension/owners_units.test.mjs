// Unit tests of extension/src/background/owners.js (the action badge and title per owned
// tab) and popup_api.js (what the popup may ask), run by tests/extension/test_owners_units.py
// with `node --test`. The extension API is a stand-in that records the calls.
import assert from 'node:assert/strict';
import test from 'node:test';

const { Owners, badgeText, ownersMap, titleFor } = await import('../../extension/src/background/owners.js');
const { answer } = await import('../../extension/src/background/popup_api.js');

function fakeApi(openTabs = []) {
  const listeners = { updated: [], removed: [] };
  const badge = new Map();
  const title = new Map();
  const sent = [];
  return {
    badge, title, sent, listeners,
    tabs: {
      query: async () => openTabs.map((id) => ({ id })),
      onUpdated: { addListener: (fn) => listeners.updated.push(fn) },
      onRemoved: { addListener: (fn) => listeners.removed.push(fn) },
    },
    action: {
      setBadgeText: async ({ tabId, text }) => { badge.set(tabId, text); },
      setTitle: async ({ tabId, title: t }) => { title.set(tabId, t); },
      setBadgeBackgroundColor: async () => {},
    },
    runtime: { sendMessage: (msg) => { sent.push(msg); return Promise.reject(new Error('no listener')); } },
  };
}

test('badge text: first 3 characters, "AI" for an implicit session', () => {
  assert.equal(badgeText('alpha'), 'alp');
  assert.equal(badgeText('ab'), 'ab');
  assert.equal(badgeText('client-p3'), 'AI');
  assert.equal(titleFor('alpha'), 'Session alpha owns this tab');
  assert.equal(titleFor(null), 'trustbridge'); // the manifest's default_title
});

test('malformed owner rows are skipped', () => {
  const map = ownersMap([{ tabId: 1, label: 'a' }, { tabId: '2', label: 'b' }, { tabId: 3 }, null, { tabId: 4, label: '' }]);
  assert.deepEqual([...map], [[1, 'a']]);
  assert.equal(ownersMap('nope').size, 0);
});

test('owners set badges, clear the ones whose owner left, and sweep every open tab once', async () => {
  const api = fakeApi([1, 2, 9]);
  const owners = new Owners(api);
  await owners.set([{ tabId: 1, label: 'alpha' }, { tabId: 2, label: 'client-p7' }]);
  assert.equal(api.badge.get(1), 'alp');
  assert.equal(api.badge.get(2), 'AI');
  assert.equal(api.badge.get(9), ''); // a stale badge from before a restart is cleared
  assert.equal(api.title.get(1), 'Session alpha owns this tab');
  assert.equal(owners.labelOf(1), 'alpha');
  assert.deepEqual(api.sent, [{ ownersChanged: true }]);
  api.badge.clear();
  await owners.set([{ tabId: 2, label: 'client-p7' }]);
  assert.deepEqual([...api.badge], [[1, '']]); // only the tab whose owner changed
  assert.equal(owners.labelOf(1), null);
  await owners.clear();
  assert.equal(api.badge.get(2), '');
  assert.equal(owners.labelOf(2), null);
});

test('an owned tab that navigates gets its badge again (the browser resets it)', async () => {
  const api = fakeApi([]);
  const owners = new Owners(api);
  await owners.set([{ tabId: 5, label: 'beta' }]);
  api.badge.clear();
  for (const fn of api.listeners.updated) fn(5, { status: 'loading' });
  for (const fn of api.listeners.updated) fn(6, { status: 'loading' }); // not owned: untouched
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual([...api.badge], [[5, 'bet']]);
  for (const fn of api.listeners.removed) fn(5);
  assert.equal(owners.labelOf(5), null);
});

test('popup: owner and stop answers', async () => {
  const api = fakeApi([]);
  const owners = new Owners(api);
  await owners.set([{ tabId: 1, label: 'alpha' }]);
  const events = [];
  const conn = { connected: true, sendEvent: (e, p) => events.push([e, p]) };
  assert.deepEqual(answer(owners, conn, 'owner', { tabId: 1 }), { tabId: 1, label: 'alpha', connected: true });
  assert.deepEqual(answer(owners, conn, 'owner', { tabId: 2 }), { tabId: 2, label: null, connected: true });
  assert.equal(answer(owners, conn, 'stop', { tabId: 1, label: 'other' }).sent, false);
  assert.equal(answer(owners, conn, 'stop', { tabId: 2, label: 'alpha' }).sent, false);
  assert.deepEqual(events, []);
  assert.deepEqual(answer(owners, conn, 'stop', { tabId: 1, label: 'alpha' }), { sent: true });
  assert.deepEqual(events, [['session.stop', { label: 'alpha' }]]);
  const away = { connected: false, sendEvent: () => assert.fail('sent while away') };
  assert.deepEqual(answer(owners, away, 'owner', { tabId: 1 }), { tabId: 1, label: null, connected: false });
  assert.equal(answer(owners, away, 'stop', { tabId: 1, label: 'alpha' }).sent, false);
  assert.equal(answer(owners, null, 'stop', { tabId: 1, label: 'alpha' }).sent, false);
  assert.ok(answer(owners, conn, 'owner', { tabId: 'x' }).error);
  assert.ok(answer(owners, conn, 'what', { tabId: 1 }).error);
});

test('a tab handed to a person shows "YOU" and the reason, then its owner again', async () => {
  const { handedMap, HANDED_BADGE } = await import('../../extension/src/background/owners.js');
  assert.deepEqual([...handedMap([{ tabId: 1, label: 'a', handed: 'Enter the code' },
    { tabId: 2, label: 'b' }, { tabId: 3, label: 'c', handed: 7 }])], [[1, 'Enter the code']]);
  const api = fakeApi([]);
  const owners = new Owners(api);
  await owners.set([{ tabId: 1, label: 'alpha', handed: 'Enter the code' }]);
  assert.equal(api.badge.get(1), HANDED_BADGE);
  assert.match(api.title.get(1), /^Your turn: Enter the code \(session alpha waits/);
  await owners.set([{ tabId: 1, label: 'alpha' }]);
  assert.equal(api.badge.get(1), 'alp');
  assert.equal(api.title.get(1), 'Session alpha owns this tab');
});
