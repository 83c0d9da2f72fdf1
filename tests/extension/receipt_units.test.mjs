// Unit tests of extension/src/page/receipt.js's file-input sign, run by
// tests/extension/test_receipt_units.py with `node --test`. The window and the elements
// are stand-ins: Receipts only needs addEventListener, composedPath() and a few fields.
import assert from 'node:assert/strict';
import test from 'node:test';

globalThis.ShadowRoot ??= class ShadowRoot {};
const { Receipts, FILE_INPUT_WINDOW_MS } = await import('../../extension/src/page/receipt.js');

class FakeWindow {
  constructor() { this.listeners = []; }
  addEventListener(type, fn, { capture = false } = {}) { this.listeners.push([type, fn, capture]); }
  /** Capture listeners, then `atTarget` (the page's own handlers), then bubble listeners
   *  (skipped when `stopped`: the page called stopPropagation). */
  dispatch(type, path, { trusted = true, button = 0, atTarget = () => {}, stopped = false } = {}) {
    const event = { type, isTrusted: trusted, button, composedPath: () => path };
    for (const [t, fn, capture] of this.listeners) if (t === type && capture) fn(event);
    atTarget();
    if (stopped) return;
    for (const [t, fn, capture] of this.listeners) if (t === type && !capture) fn(event);
  }
}
const doc = { nodeType: 9 };
const element = (localName, extra = {}) => ({ localName, getRootNode: () => doc, ...extra });
const fileInput = (extra = {}) => element('input', { type: 'file', disabled: false, ...extra });

/** A trusted left click on `path[0]`, as Chromium dispatches it; `atTarget` runs as the
 *  page's click handler. */
function trustedClick(win, path, atTarget = () => {}, { stopped = false } = {}) {
  for (const type of ['pointerdown', 'mousedown', 'pointerup', 'mouseup']) win.dispatch(type, path);
  win.dispatch('click', path, { atTarget, stopped });
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

function setup() {
  const win = new FakeWindow();
  const pushes = [];
  const receipts = new Receipts(win, (id, receipt) => pushes.push({ id, ...receipt }));
  return { win, pushes, receipts };
}

test('a button whose handler calls input.click(): one push, at the dispatch end, with fileInput', async () => {
  const { win, pushes, receipts } = setup();
  const button = element('button');
  const input = fileInput();
  const id = receipts.arm(button);
  trustedClick(win, [button, doc, win], () => {
    assert.equal(pushes.length, 0); // not pushed from the capture listener
    win.dispatch('click', [input, doc, win], { trusted: false });
  });
  assert.deepEqual(pushes.map((p) => [p.id, p.fileInput]), [[id, true]]);
  assert.equal(pushes[0].delivered, true);
  assert.deepEqual(pushes[0].events, ['click', 'mousedown', 'mouseup', 'pointerdown', 'pointerup']);
  await tick(); // the fallback timer was cleared: no second push
  win.dispatch('click', [input, doc, win], { trusted: false }); // once only
  assert.equal(pushes.length, 1);
  assert.deepEqual(receipts.read(id), { delivered: true, events: pushes[0].events, fileInput: true, download: false });
});

test('a handler that clicks the input in a later task: pushed, then pushed again with fileInput', async () => {
  const { win, pushes, receipts } = setup();
  const button = element('button');
  const id = receipts.arm(button);
  trustedClick(win, [button, doc, win]);
  assert.deepEqual(pushes.map((p) => [p.id, p.fileInput]), [[id, false]]);
  await tick();
  win.dispatch('click', [fileInput(), doc, win], { trusted: false });
  assert.deepEqual(pushes.map((p) => [p.id, p.fileInput]), [[id, false], [id, true]]);
});

test('a page that stops the click\'s propagation: pushed by the 0 ms timer, once', async () => {
  const { win, pushes, receipts } = setup();
  const button = element('button');
  const id = receipts.arm(button);
  trustedClick(win, [button, doc, win], () => win.dispatch('click', [fileInput(), doc, win], { trusted: false }),
    { stopped: true });
  assert.equal(pushes.length, 0);
  await tick();
  assert.deepEqual(pushes.map((p) => [p.id, p.fileInput]), [[id, true]]);
  await tick();
  assert.equal(pushes.length, 1);
});

test('a trusted click on the file input itself is pushed once, with the flag', () => {
  const { win, pushes, receipts } = setup();
  const input = fileInput({ type: 'FILE' });
  const id = receipts.arm(input);
  trustedClick(win, [input, doc, win]);
  assert.deepEqual(pushes.map((p) => [p.id, p.fileInput]), [[id, true]]);
});

test('no sign: another element, a disabled or other input, no press, or a press too long ago', () => {
  const { win, pushes, receipts } = setup();
  const button = element('button');
  const id = receipts.arm(button);
  win.dispatch('click', [fileInput(), doc, win], { trusted: false }); // before any press
  trustedClick(win, [button, doc, win], () => {
    win.dispatch('click', [fileInput({ disabled: true }), doc, win], { trusted: false });
    win.dispatch('click', [element('input', { type: 'text' }), doc, win], { trusted: false });
    win.dispatch('mousedown', [fileInput(), doc, win], { trusted: false }); // not a click
  });
  assert.deepEqual(pushes.map((p) => p.fileInput), [false]);
  const realNow = Date.now;
  try {
    const later = realNow() + FILE_INPUT_WINDOW_MS + 50;
    Date.now = () => later;
    win.dispatch('click', [fileInput(), doc, win], { trusted: false });
  } finally {
    Date.now = realNow;
  }
  assert.deepEqual(pushes.map((p) => p.fileInput), [false]);
  assert.equal(receipts.read(id).fileInput, false);
});

test('an undelivered click still reads the sign (the bridge asks when no push came)', () => {
  const { win, pushes, receipts } = setup();
  const button = element('button');
  const other = element('div');
  const id = receipts.arm(button);
  win.dispatch('pointerdown', [button, doc, win]);
  win.dispatch('mousedown', [button, doc, win]);
  win.dispatch('click', [other, doc, win]); // the click landed elsewhere
  win.dispatch('click', [fileInput(), doc, win], { trusted: false });
  assert.equal(pushes.length, 0);
  const read = receipts.read(id);
  assert.equal(read.delivered, false);
  assert.equal(read.fileInput, true);
});

// The quiet sign (issue 18; receipt.js header, page/activation.js): a second push, one
// task after the dispatch's end, says quiet.
class FakeEvents {
  constructor() { this.listeners = []; }
  addEventListener(type, fn) { this.listeners.push([type, fn]); }
  fire(type, extra = {}) { for (const [t, fn] of this.listeners) if (t === type) fn({ type, isTrusted: true, ...extra }); }
}

function quietSetup({ navigationApi = true, top = true } = {}) {
  const win = new FakeWindow();
  win.navigator = { userActivation: { isActive: true } };
  if (navigationApi) win.navigation = new FakeEvents();
  win.top = top ? win : {};
  const pushes = [];
  const receipts = new Receipts(win, (id, receipt) => pushes.push({ id, ...receipt }));
  return { win, pushes, receipts };
}
const node = (localName, { attrs = {}, parentNode = null, ...extra } = {}) => ({
  nodeType: 1, localName, parentNode, getRootNode: () => doc,
  hasAttribute: (name) => Object.hasOwn(attrs, name), ...extra,
});
const quietOf = (pushes) => pushes.map((p) => p.quiet);

test('quiet: a plain button in the top frame whose click started nothing, told a task later', async () => {
  const { win, pushes, receipts } = quietSetup();
  const button = node('button', { type: 'submit', form: null });
  const id = receipts.arm(button);
  trustedClick(win, [button, doc, win]);
  assert.deepEqual(quietOf(pushes), [false]); // the delivery, at the dispatch's end
  await tick();
  assert.deepEqual(quietOf(pushes), [false, true]);
  assert.deepEqual(pushes.map((p) => p.id), [id, id]);
  await tick();
  assert.equal(pushes.length, 2); // once
});

test('not quiet: a navigation, a form submission or a consumed activation, during the click or a task after', async () => {
  for (const during of [
    (win) => win.navigation.fire('navigate'),
    (win) => win.dispatch('formdata', [doc, win]),
    (win) => { win.navigator.userActivation.isActive = false; },
  ]) {
    for (const later of [false, true]) {
      const { win, pushes, receipts } = quietSetup();
      const button = node('button', { type: 'button' });
      receipts.arm(button);
      // later: the handler's effect comes in a task it queued (a timer, a planned
      // form navigation), which runs before the sign's own 0 ms timer.
      trustedClick(win, [button, doc, win], () => (later ? setTimeout(() => during(win), 0) : during(win)));
      await tick();
      assert.deepEqual(pushes.map((p) => [p.delivered, p.quiet]), [[true, false]], String(during) + later);
    }
  }
});

test('untrusted navigate and formdata events start nothing', async () => {
  const { win, pushes, receipts } = quietSetup();
  const button = node('button', { type: 'button' });
  receipts.arm(button);
  trustedClick(win, [button, doc, win], () => {
    win.navigation.fire('navigate', { isTrusted: false, downloadRequest: 'x' });
    win.dispatch('formdata', [doc, win], { trusted: false });
  });
  await tick();
  assert.deepEqual(pushes.map((p) => [p.quiet, p.download]), [[false, false], [true, false]]);
});

test('not quiet: a window listener the page added after the content script navigates', async () => {
  const { win, pushes, receipts } = quietSetup();
  win.addEventListener('click', () => win.navigation.fire('navigate')); // bubble, the page's
  const button = node('button', { type: 'button' });
  receipts.arm(button);
  trustedClick(win, [button, doc, win]);
  await tick();
  assert.deepEqual(quietOf(pushes), [false]);
});

test('not quiet: activation behaviour on the path, a child frame, no Navigation API, a file input', async () => {
  const form = {};
  const link = () => node('a', { attrs: { href: '' } });
  const cases = [
    [() => { const el = node('span', { parentNode: link() }); return [el, [el, doc]]; }, {}],
    [() => { const el = node('button', { type: 'submit', form }); return [el, [el, doc]]; }, {}],
    [() => { const el = node('input', { type: 'checkbox' }); return [el, [el, doc]]; }, {}],
    [() => { const el = node('span', { parentNode: node('label') }); return [el, [el, doc]]; }, {}],
    [() => { const el = node('button', { type: 'button', attrs: { popovertarget: 'p' } }); return [el, [el, doc]]; }, {}],
    // the element hit is a link inside the target (a div button wrapping it)
    [() => { const el = node('div'); return [el, [link(), el, doc]]; }, {}],
    // an SVG link by xlink:href
    [() => { const el = node('a', { hasAttributeNS: (ns, name) => name === 'href' }); return [el, [el, doc]]; }, {}],
    [() => { const el = node('button', { type: 'button' }); return [el, [el, doc]]; }, { top: false }],
    [() => { const el = node('button', { type: 'button' }); return [el, [el, doc]]; }, { navigationApi: false }],
  ];
  for (const [make, options] of cases) {
    const { win, pushes, receipts } = quietSetup(options);
    const [el, path] = make();
    receipts.arm(el);
    trustedClick(win, [...path, win]);
    await tick();
    assert.deepEqual(pushes.map((p) => [p.delivered, p.quiet]), [[true, false]], JSON.stringify(options) + make);
  }
  const { win, pushes, receipts } = quietSetup();
  const button = node('button', { type: 'button' });
  receipts.arm(button);
  trustedClick(win, [button, doc, win], () => win.dispatch('click', [fileInput(), doc, win], { trusted: false }));
  await tick();
  assert.deepEqual(pushes.map((p) => [p.fileInput, p.quiet]), [[true, false]]);
});

test('download sign: a trusted navigate event with a download request during the click', async () => {
  const { win, pushes, receipts } = quietSetup();
  const button = node('button', { type: 'button' });
  const id = receipts.arm(button);
  trustedClick(win, [button, doc, win], () => win.navigation.fire('navigate', { downloadRequest: 'report.txt' }));
  await tick();
  assert.deepEqual(pushes.map((p) => [p.download, p.quiet]), [[true, false]]);
  assert.equal(receipts.read(id).download, true);
  const other = quietSetup();
  const plain = node('button', { type: 'button' });
  other.receipts.arm(plain);
  trustedClick(other.win, [plain, doc, other.win], () => other.win.navigation.fire('navigate', { downloadRequest: null }));
  await tick();
  assert.deepEqual(other.pushes.map((p) => [p.download, p.quiet]), [[false, false]]);
});
