// Unit tests of the start of a whole-tab snapshot (extension/src/background/snapshot.js
// `begin` with page/begin.js), run by tests/extension/test_snapshot_begin_units.py with
// `node --test`. The browser is a stand-in: frames are objects that answer the content
// script's messages (their `snapshotBegin` is the real page/begin.js over their own
// handlers) and log each message, so the tests count round trips to each frame.
import assert from 'node:assert/strict';
import test from 'node:test';

import { snapshotTab } from '../../extension/src/background/snapshot.js';
import { Tabs } from '../../extension/src/background/tabs.js';
import { snapshotBegin } from '../../extension/src/page/begin.js';
import { PageError } from '../../extension/src/page/errors.js';

const TAB = 7;
const noop = { addListener: () => {} };

/** A frame whose walk yields `chunks` in turn (each {lines: [[d, s]], pausedAt?, done?}). */
function frame(frameId, parentFrameId, { chunks, key = null, keyAfter = 0, delayMs = 0, url = 'http://a.test/' } = {}) {
  let identifies = 0;
  let next = 0;
  const chunk = () => {
    const c = chunks[next++];
    return { lines: c.lines.map(([d, s]) => ({ d, s })), walkerId: `w${frameId}`, pausedAt: c.pausedAt || null,
      done: !!c.done, refCount: c.lines.length, nextRef: 100, docId: { token: `t${frameId}`, timeOrigin: 1, url } };
  };
  const handlers = {
    announceFrames: () => ({ count: 0 }),
    // the key arrives (postMessage) only after `keyAfter` identifies
    identify: () => ({ docId: { token: `t${frameId}`, timeOrigin: 1, url }, frameKey: identifies++ >= keyAfter ? key : null,
      isTop: frameId === 0, url, title: `title ${frameId}`, navigating: false }),
    snapshot: (msg) => {
      if (msg.rootRef && msg.docId && msg.docId.token !== `t${frameId}`) {
        throw new PageError('BROWSER_DOCUMENT_CHANGED', 'The page changed.', { reason: 'navigated' });
      }
      return chunk();
    },
    snapshotContinue: () => chunk(),
  };
  handlers.snapshotBegin = (msg) => snapshotBegin(handlers, msg);
  return { frameId, parentFrameId, handlers, delayMs };
}

function browser(frames, { topAnswers = true } = {}) {
  const log = [];
  const api = {
    tabs: {
      onRemoved: noop, onCreated: noop,
      get: async (id) => ({ id, status: 'complete' }),
      sendMessage: async (tabId, msg, { frameId }) => {
        log.push([frameId, msg.op, msg]);
        const f = frames.find((x) => x.frameId === frameId);
        if (!f || (frameId === 0 && !topAnswers)) throw new Error('Could not establish connection.');
        if (f.delayMs) await new Promise((r) => setTimeout(r, f.delayMs));
        try {
          return { ok: true, result: f.handlers[msg.op](msg) };
        } catch (err) {
          return { ok: false, error: err.toWire() };
        }
      },
    },
    webNavigation: {
      onBeforeNavigate: noop, onCommitted: noop, onErrorOccurred: noop,
      getAllFrames: async () => frames.map((f) => ({ frameId: f.frameId, parentFrameId: f.parentFrameId })),
    },
  };
  return { api, tabs: new Tabs(api), log };
}

test('a one-frame tab costs one content-script message: identity and the first chunk together', async () => {
  const top = frame(0, -1, { chunks: [{ lines: [[0, 'heading "A" [ref=e1]'], [1, 'button "B" [ref=e2]']], done: true }] });
  const { api, tabs, log } = browser([top]);
  const res = await snapshotTab(api, tabs, TAB, {});
  assert.equal(res.snapshot, 'heading "A" [ref=e1]\n  button "B" [ref=e2]');
  assert.equal(res.title, 'title 0');
  assert.equal(res.frames, 1);
  assert.deepEqual(log.map(([f, op]) => [f, op]), [[0, 'snapshotBegin']]);
  const msg = log[0][2];
  assert.equal(msg.announce, false); // no child frame to tell its key
  assert.deepEqual(msg.walk, { op: 'snapshot', prefix: '', mode: 'outline', maxChars: 50000, baseDepth: 0, rootRef: null,
    docId: null, refFloor: 1, timeBudgetMs: null, depth: null });
});

test('the first chunk is asked as render() would ask: time-budget chunks, diff and read sizes, depth', async () => {
  const cases = [
    [{ timeBudgetMs: 300, maxChars: 90000 }, { maxChars: 16000, timeBudgetMs: 300, mode: 'outline' }],
    [{ timeBudgetMs: 300, maxChars: 900 }, { maxChars: 900, timeBudgetMs: 300 }],
    [{ mode: 'diff', timeBudgetMs: 300 }, { maxChars: 5_000_000, timeBudgetMs: null }],
    [{ mode: 'read' }, { mode: 'read', maxChars: 50000 }],
    [{ depth: 2 }, { depth: 2 }],
  ];
  for (const [params, expected] of cases) {
    const { api, tabs, log } = browser([frame(0, -1, { chunks: [{ lines: [[0, 'x']], done: true }] })]);
    await snapshotTab(api, tabs, TAB, params);
    for (const [k, v] of Object.entries(expected)) assert.equal(log[0][2].walk[k], v, `${JSON.stringify(params)}: ${k}`);
  }
});

test('an error of the walk is thrown as the walk message would throw it; no answer is the empty snapshot', async () => {
  const top = frame(0, -1, { chunks: [{ lines: [[0, 'button "B" [ref=e2]']], done: true }] });
  const { api, tabs, log } = browser([top]);
  await snapshotTab(api, tabs, TAB, {}); // gives e2 to document t0
  tabs.tabState(TAB).docs.get(0)[0].identity = { token: 'older', timeOrigin: 1, url: 'http://a.test/' };
  await assert.rejects(snapshotTab(api, tabs, TAB, { ref: 'e2' }),
    (err) => err instanceof PageError && err.code === 'BROWSER_DOCUMENT_CHANGED' && err.details.reason === 'navigated');
  const gone = browser([top], { topAnswers: false });
  const res = await snapshotTab(gone.api, gone.tabs, TAB, {});
  assert.deepEqual([res.snapshot, res.frames, res.truncated], ['', 0, false]);
  const before = log.length; // a ref no snapshot gave fails before any message
  await assert.rejects(snapshotTab(api, tabs, TAB, { ref: 'e500' }), (err) => err.code === 'REF_NOT_FOUND' && log.length === before);
});

test('child frames: announced beside the top walk, identified after it (once more without a key), stitched in place', async () => {
  const top = frame(0, -1, { chunks: [
    { lines: [[0, 'heading "Top" [ref=e1]'], [0, 'iframe [ref=e2]']], pausedAt: 'k1' },
    { lines: [[0, 'button "After" [ref=e4]']], done: true },
  ] });
  const child = frame(5, 0, { key: 'k1', keyAfter: 1, chunks: [{ lines: [[0, 'button "In" [ref=f1e3]']], done: true }] });
  const { api, tabs, log } = browser([top, child]);
  const res = await snapshotTab(api, tabs, TAB, {});
  assert.equal(res.snapshot, 'heading "Top" [ref=e1]\niframe [ref=e2]\n  button "In" [ref=f1e3]\nbutton "After" [ref=e4]');
  assert.equal(res.frames, 2);
  assert.deepEqual(log.map(([f, op]) => [f, op]), [
    [0, 'snapshotBegin'], [5, 'announceFrames'], [5, 'identify'], [5, 'identify'], [5, 'snapshot'], [0, 'snapshotContinue'],
  ]);
  assert.equal(log[0][2].announce, true);
  assert.equal(log[4][2].prefix, 'f1');
  assert.equal(log[4][2].baseDepth, 1);
});

test('new frames get their ordinals in the browser frame order, whichever answers first', async () => {
  const top = frame(0, -1, { chunks: [{ lines: [[0, 'x']], done: true }] });
  const slow = frame(3, 0, { key: 'a', delayMs: 30, chunks: [] });
  const fast = frame(4, 0, { key: 'b', chunks: [] });
  const { api, tabs } = browser([top, slow, fast]);
  await snapshotTab(api, tabs, TAB, {});
  assert.equal(tabs.ordinalOf(TAB, 3), 1);
  assert.equal(tabs.ordinalOf(TAB, 4), 2);
});

test('a ref of a child frame starts the walk there, after the frames are identified', async () => {
  const top = frame(0, -1, { chunks: [{ lines: [[0, 'iframe [ref=e1]']], pausedAt: 'k1' }, { lines: [], done: true }] });
  const child = frame(5, 0, { key: 'k1', chunks: [
    { lines: [[0, 'group [ref=f1e2]'], [1, 'button "In" [ref=f1e3]']], done: true },
    { lines: [[0, 'button "In" [ref=f1e3]']], done: true },
  ] });
  const { api, tabs, log } = browser([top, child]);
  await snapshotTab(api, tabs, TAB, {});
  log.length = 0;
  const res = await snapshotTab(api, tabs, TAB, { ref: 'f1e3' });
  assert.equal(res.snapshot, 'button "In" [ref=f1e3]');
  assert.deepEqual(log.map(([f, op]) => [f, op]), [[0, 'snapshotBegin'], [5, 'announceFrames'], [5, 'identify'], [5, 'snapshot']]);
  assert.equal(log[0][2].walk, null);
  assert.equal(log[3][2].rootRef, 'e3');
  assert.equal(log[3][2].docId.token, 't5');
});
