// Unit tests of the binding of per-frame ports to documents (extension/src/background/ports.js)
// and of the content script's end (extension/src/page/frameport.js), run by
// tests/extension/test_ports_units.py with `node --test`. The extension API is a stand-in
// whose events the tests fire by hand, in the orders the browser may deliver them.
import assert from 'node:assert/strict';
import test from 'node:test';

const { FramePorts } = await import('../../extension/src/background/ports.js');
const { FramePort, FRAME_PORT_NAME } = await import('../../extension/src/page/frameport.js');

function event() {
  const fns = [];
  return { fns, addListener: (fn) => fns.push(fn), fire: (...a) => fns.forEach((fn) => fn(...a)) };
}

function fakeApi({ current = {} } = {}) {
  const ev = { connect: event(), committed: event(), removed: event() };
  return {
    ev,
    current, // "tab:frame" → documentId getFrame answers
    runtime: { onConnect: ev.connect },
    webNavigation: {
      onCommitted: ev.committed,
      getFrame: async ({ tabId, frameId }) => ({ documentId: current[`${tabId}:${frameId}`] }),
    },
    tabs: { onRemoved: ev.removed },
  };
}

/** A background-side port opened by document `documentId` of frame (tab, frame). */
function fakePort({ tabId = 1, frameId = 0, documentId = 'D1', lifecycle = 'active', name = FRAME_PORT_NAME } = {}) {
  const port = {
    name, sent: [], disconnected: false, throwOnPost: false,
    sender: { tab: { id: tabId }, frameId, documentId, documentLifecycle: lifecycle },
    onMessage: event(), onDisconnect: event(),
    postMessage(m) { if (this.throwOnPost) throw new Error('disconnected port'); this.sent.push(m); },
    disconnect() { this.disconnected = true; },
  };
  return port;
}

const tick = () => new Promise((r) => setTimeout(r, 0));

function setup(navigating = () => false) {
  const api = fakeApi();
  const ports = new FramePorts(api, navigating);
  return { api, ports };
}

test('a port is used only when the last commit of its frame names its document', async () => {
  const { api, ports } = setup();
  const p = fakePort();
  api.ev.connect.fire(p);
  assert.equal(ports.request(1, 0, { op: 'identify' }), null, 'no commit seen and probe not answered');
  api.ev.committed.fire({ tabId: 1, frameId: 0, documentId: 'D1', documentLifecycle: 'active' });
  const answer = ports.request(1, 0, { op: 'identify' });
  assert.ok(answer);
  const [{ id }] = p.sent;
  p.onMessage.fire({ id, reply: { ok: true, result: { x: 1 } } });
  assert.deepEqual(await answer, { ok: true, result: { x: 1 } });
  assert.equal(ports.stats().pending, 0);
});

test('a commit of another document closes the old port and fails what waits on it', async () => {
  const { api, ports } = setup();
  const p = fakePort();
  api.ev.committed.fire({ tabId: 1, frameId: 0, documentId: 'D1', documentLifecycle: 'active' });
  api.ev.connect.fire(p);
  const waiting = ports.request(1, 0, { op: 'snapshot' });
  api.ev.committed.fire({ tabId: 1, frameId: 0, documentId: 'D2', documentLifecycle: 'active' });
  await assert.rejects(waiting);
  assert.ok(p.disconnected);
  // A late answer of the old document is never taken.
  p.onMessage.fire({ id: p.sent[0].id, reply: { ok: true, result: 'stale' } });
  assert.equal(ports.request(1, 0, { op: 'snapshot' }), null);
  // The new document's port, once it connects, is used.
  const q = fakePort({ documentId: 'D2' });
  api.ev.connect.fire(q);
  assert.ok(ports.request(1, 0, { op: 'identify' }));
});

test('a connect from another document before its commit event retires the old port', async () => {
  const { api, ports } = setup();
  const p = fakePort();
  api.ev.committed.fire({ tabId: 1, frameId: 0, documentId: 'D1', documentLifecycle: 'active' });
  api.ev.connect.fire(p);
  const waiting = ports.request(1, 0, { op: 'identify' });
  const q = fakePort({ documentId: 'D2' });
  api.ev.connect.fire(q);
  await assert.rejects(waiting);
  assert.equal(ports.request(1, 0, { op: 'identify' }), null, 'D2 not yet confirmed by its commit');
  api.ev.committed.fire({ tabId: 1, frameId: 0, documentId: 'D2', documentLifecycle: 'active' });
  assert.ok(ports.request(1, 0, { op: 'identify' }));
  assert.equal(q.sent.length, 1);
  assert.equal(p.sent.length, 1);
});

test('a late commit event of an older document makes the port unusable, never the old one usable', () => {
  const { api, ports } = setup();
  api.ev.connect.fire(fakePort({ documentId: 'D2' }));
  api.ev.committed.fire({ tabId: 1, frameId: 0, documentId: 'D1', documentLifecycle: 'active' });
  assert.equal(ports.request(1, 0, { op: 'identify' }), null);
});

test('ports of documents that are not current, and of Firefox, carry pushes only', () => {
  const { api, ports } = setup();
  const pushed = [];
  ports.onPush((m, sender) => pushed.push([m.receiptPushed.receiptId, sender.tab.id]));
  api.ev.committed.fire({ tabId: 1, frameId: 0, documentId: 'D1', documentLifecycle: 'active' });
  const dying = fakePort({ lifecycle: 'pending_deletion' });
  api.ev.connect.fire(dying);
  assert.equal(ports.request(1, 0, { op: 'identify' }), null);
  const gecko = fakePort({ tabId: 2 });
  gecko.sender = { tab: { id: 2 }, frameId: 0 }; // Firefox: no documentId, no lifecycle
  api.ev.connect.fire(gecko);
  assert.equal(ports.request(2, 0, { op: 'identify' }), null);
  gecko.onMessage.fire({ receiptPushed: { receiptId: 'r1' } });
  dying.onMessage.fire({ receiptPushed: { receiptId: 'r2' } });
  assert.deepEqual(pushed, [['r1', 2], ['r2', 1]]);
  assert.equal(ports.stats().ports, 0);
});

test('no port while the frame or an ancestor navigates, and none for ops that change the page', () => {
  let nav = true;
  const { api, ports } = setup(() => nav);
  api.ev.committed.fire({ tabId: 1, frameId: 0, documentId: 'D1', documentLifecycle: 'active' });
  api.ev.connect.fire(fakePort());
  assert.equal(ports.request(1, 0, { op: 'identify' }), null);
  nav = false;
  assert.ok(ports.request(1, 0, { op: 'identify' }));
  assert.equal(ports.request(1, 0, { op: 'act', action: {} }), null);
  assert.equal(ports.request(1, 0, { op: 'historyGo', delta: -1 }), null);
});

test('a disconnect fails the pending requests and forgets the port; a refused post falls back', async () => {
  const { api, ports } = setup();
  api.ev.committed.fire({ tabId: 1, frameId: 0, documentId: 'D1', documentLifecycle: 'active' });
  const p = fakePort();
  api.ev.connect.fire(p);
  const a = ports.request(1, 0, { op: 'waitText' });
  const b = ports.request(1, 0, { op: 'find' });
  p.onDisconnect.fire();
  await assert.rejects(a);
  await assert.rejects(b);
  assert.deepEqual(ports.stats(), { ports: 0, usable: 0, commits: 1, pending: 0 });
  const q = fakePort();
  api.ev.connect.fire(q);
  q.throwOnPost = true;
  assert.equal(ports.request(1, 0, { op: 'identify' }), null);
  assert.equal(ports.request(1, 0, { op: 'identify' }), null, 'marked closed');
});

test('after a background restart the browser is asked once; a commit meanwhile wins', async () => {
  const { api, ports } = setup();
  api.current['1:0'] = 'D1';
  api.ev.connect.fire(fakePort());
  await tick();
  assert.ok(ports.request(1, 0, { op: 'identify' }));
  // The answer says D5 but a commit of D6 arrived first: the commit stands.
  api.current['1:3'] = 'D5';
  api.ev.connect.fire(fakePort({ frameId: 3, documentId: 'D5' }));
  api.ev.committed.fire({ tabId: 1, frameId: 3, documentId: 'D6', documentLifecycle: 'active' });
  await tick();
  assert.equal(ports.request(1, 3, { op: 'identify' }), null);
});

test('prerender commits are not the frame\'s document; closing a tab forgets it', async () => {
  const { api, ports } = setup();
  api.ev.committed.fire({ tabId: 1, frameId: 0, documentId: 'D1', documentLifecycle: 'active' });
  api.ev.connect.fire(fakePort());
  api.ev.committed.fire({ tabId: 1, frameId: 0, documentId: 'P1', documentLifecycle: 'prerender' });
  const waiting = ports.request(1, 0, { op: 'identify' });
  assert.ok(waiting);
  api.ev.removed.fire(1);
  await assert.rejects(waiting);
  assert.deepEqual(ports.stats(), { ports: 0, usable: 0, commits: 0, pending: 0 });
});

test('remembered commits are bounded', () => {
  const { api, ports } = setup();
  for (let f = 0; f < 2000; f++) api.ev.committed.fire({ tabId: 1, frameId: f, documentId: `D${f}`, documentLifecycle: 'active' });
  assert.ok(ports.stats().commits <= 512);
});

test('content end: answers over the port, reconnects lazily, stops when the context is gone', async () => {
  const connects = [];
  const sent = [];
  let invalid = false;
  const runtime = {
    connect: ({ name }) => {
      if (invalid) throw new Error('Extension context invalidated.');
      const port = {
        name, posted: [], onMessage: event(), onDisconnect: event(), closed: false,
        postMessage(m) { this.posted.push(m); }, disconnect() { this.closed = true; },
      };
      connects.push(port);
      return port;
    },
    sendMessage: (m) => { sent.push(m); return Promise.resolve(); },
  };
  const win = { listeners: {}, addEventListener(type, fn) { this.listeners[type] = fn; } };
  const fp = new FramePort(runtime, win, FRAME_PORT_NAME, async (msg) => ({ ok: true, result: msg.op }));
  assert.equal(connects.length, 1);
  connects[0].onMessage.fire({ id: 7, msg: { op: 'identify' } });
  await tick();
  assert.deepEqual(connects[0].posted, [{ id: 7, reply: { ok: true, result: 'identify' } }]);
  fp.push({ receiptPushed: { receiptId: 'r1' } });
  assert.equal(connects[0].posted.length, 2);
  // The background went away: no reconnect until something needs the port.
  connects[0].onDisconnect.fire();
  assert.equal(connects.length, 1);
  fp.push({ receiptPushed: { receiptId: 'r2' } });
  assert.deepEqual(sent, [{ receiptPushed: { receiptId: 'r2' } }]);
  assert.equal(connects.length, 2);
  fp.connect(); // already open: nothing
  assert.equal(connects.length, 2);
  // Back from the back/forward cache: a fresh port, and the old one's late disconnect
  // does not drop it.
  win.listeners.pageshow({ persisted: true });
  assert.equal(connects.length, 3);
  assert.ok(connects[1].closed);
  connects[1].onDisconnect.fire();
  assert.equal(fp.port, connects[2]);
  win.listeners.pageshow({ persisted: false });
  assert.equal(connects.length, 3);
  // The extension was reloaded: one failed connect, then never again.
  connects[2].onDisconnect.fire();
  invalid = true;
  fp.connect();
  fp.connect();
  fp.push({ receiptPushed: { receiptId: 'r3' } });
  assert.equal(fp.dead, true);
  assert.equal(connects.length, 3);
});

test('a port with many unanswered requests sends the next ones by sendMessage', () => {
  const { api, ports } = setup();
  api.ev.committed.fire({ tabId: 1, frameId: 0, documentId: 'D1', documentLifecycle: 'active' });
  api.ev.connect.fire(fakePort());
  let taken = 0;
  for (let i = 0; i < 100; i++) if (ports.request(1, 0, { op: 'waitText' })) taken++;
  assert.equal(taken, 64);
  assert.equal(ports.stats().pending, 64);
});

test('a frame whose commit was forgotten is asked for once, then its port serves again', async () => {
  const { api, ports } = setup();
  let asked = 0;
  const getFrame = api.webNavigation.getFrame;
  api.webNavigation.getFrame = (q) => { asked++; return getFrame(q); };
  api.ev.committed.fire({ tabId: 1, frameId: 0, documentId: 'D1', documentLifecycle: 'active' });
  api.ev.connect.fire(fakePort());
  for (let f = 1; f <= 600; f++) api.ev.committed.fire({ tabId: 2, frameId: f, documentId: `E${f}`, documentLifecycle: 'active' });
  api.current['1:0'] = 'D1';
  assert.equal(ports.request(1, 0, { op: 'identify' }), null);
  assert.equal(ports.request(1, 0, { op: 'identify' }), null);
  await tick();
  assert.equal(asked, 1);
  assert.ok(ports.request(1, 0, { op: 'identify' }));
});
