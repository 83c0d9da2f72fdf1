// Unit tests of provisional snapshots (extension/src/background/snapshot.js `provisional`,
// `keepProvisional`; issue 18: the bridge's page state taken while the driver still
// checks its action), run by tests/extension/test_snapshot_provisional_units.py with
// `node --test`. One stand-in frame whose outline the test changes between snapshots;
// whether a snapshot became the session's baseline shows in the next diff.
import assert from 'node:assert/strict';
import test from 'node:test';

import { keepProvisional, snapshotTab } from '../../extension/src/background/snapshot.js';
import { Tabs } from '../../extension/src/background/tabs.js';
import { snapshotBegin } from '../../extension/src/page/begin.js';

const noop = { addListener: () => {} };
let nextTab = 100;

/** A one-frame tab whose outline is `page.lines` at each walk. */
function browser() {
  const page = { lines: ['button "A" [ref=e1]'] };
  const chunk = () => ({ lines: page.lines.map((s) => ({ d: 0, s })), walkerId: 'w', pausedAt: null, done: true,
    refCount: page.lines.length, nextRef: 100, docId: { token: 't', timeOrigin: 1, url: 'http://a.test/' } });
  const handlers = {
    announceFrames: () => ({ count: 0 }),
    identify: () => ({ docId: { token: 't', timeOrigin: 1, url: 'http://a.test/' }, frameKey: null, isTop: true,
      url: 'http://a.test/', title: 'a', navigating: false }),
    snapshot: () => chunk(),
    snapshotContinue: () => chunk(),
  };
  handlers.snapshotBegin = (msg) => snapshotBegin(handlers, msg);
  const api = {
    runtime: { onConnect: noop, onMessage: noop },
    tabs: {
      onRemoved: noop, onCreated: noop, onUpdated: noop,
      get: async (id) => ({ id, status: 'complete' }),
      sendMessage: async (_tab, msg) => ({ ok: true, result: handlers[msg.op](msg) }),
    },
    webNavigation: {
      onBeforeNavigate: noop, onCommitted: noop, onErrorOccurred: noop, onCompleted: noop,
      getAllFrames: async () => [{ frameId: 0, parentFrameId: -1 }],
      getFrame: async () => ({ frameId: 0, parentFrameId: -1 }),
    },
  };
  return { api, tabs: new Tabs(api), page, tab: nextTab++ };
}

test('a provisional snapshot is no baseline until kept', async () => {
  const { api, tabs, page, tab } = browser();
  await snapshotTab(api, tabs, tab, { session: 's' }); // shown: the baseline
  page.lines = ['button "A" [ref=e1]', 'button "B" [ref=e2]'];
  const held = await snapshotTab(api, tabs, tab, { session: 's', provisional: 'p1' });
  assert.match(held.snapshot, /"B"/);
  // Dropped (never kept): the next diff still compares with the shown snapshot.
  const diff = await snapshotTab(api, tabs, tab, { session: 's', mode: 'diff' });
  assert.deepEqual(diff.diff, { baseline: true, added: 1, removed: 0 });
});

test('a kept provisional snapshot is the baseline; keeping twice or an unknown id changes nothing', async () => {
  const { api, tabs, page, tab } = browser();
  await snapshotTab(api, tabs, tab, { session: 's' });
  page.lines = ['button "A" [ref=e1]', 'button "B" [ref=e2]'];
  await snapshotTab(api, tabs, tab, { session: 's', provisional: 'p2' });
  keepProvisional('p2');
  keepProvisional('p2');
  keepProvisional('nope');
  const diff = await snapshotTab(api, tabs, tab, { session: 's', mode: 'diff' });
  assert.deepEqual(diff.diff, { baseline: true, added: 0, removed: 0 });
});

test('a provisional diff compares with the baseline and, kept, replaces it', async () => {
  const { api, tabs, page, tab } = browser();
  await snapshotTab(api, tabs, tab, { session: 's' });
  page.lines = ['button "C" [ref=e3]'];
  const first = await snapshotTab(api, tabs, tab, { session: 's', mode: 'diff', provisional: 'p3' });
  assert.deepEqual(first.diff, { baseline: true, added: 1, removed: 1 });
  const again = await snapshotTab(api, tabs, tab, { session: 's', mode: 'diff', provisional: 'p4' });
  assert.deepEqual(again.diff, { baseline: true, added: 1, removed: 1 }); // p3 was not kept
  keepProvisional('p4');
  const after = await snapshotTab(api, tabs, tab, { session: 's', mode: 'diff' });
  assert.deepEqual(after.diff, { baseline: true, added: 0, removed: 0 });
});

test('a kept provisional snapshot never replaces a baseline set after it began', async () => {
  const { api, tabs, page, tab } = browser();
  await snapshotTab(api, tabs, tab, { session: 's' });
  page.lines = ['button "A" [ref=e1]', 'button "B" [ref=e2]'];
  await snapshotTab(api, tabs, tab, { session: 's', provisional: 'p5' });
  page.lines = ['button "A" [ref=e1]', 'button "B" [ref=e2]', 'button "C" [ref=e3]'];
  await snapshotTab(api, tabs, tab, { session: 's' }); // the client's own, newer, shown
  keepProvisional('p5'); // arrives after it: ignored
  const diff = await snapshotTab(api, tabs, tab, { session: 's', mode: 'diff' });
  assert.deepEqual(diff.diff, { baseline: true, added: 0, removed: 0 });
});
