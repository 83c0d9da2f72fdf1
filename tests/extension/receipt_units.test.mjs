// Unit tests of extension/src/page/receipt.js's file-input and download signs, run by
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
  dispatch(type, path, { trusted = true, button = 0, atTarget = () => {}, stopped = false, submitter = null, prevented = false } = {}) {
    const event = { type, isTrusted: trusted, button, composedPath: () => path, target: path[0], submitter,
      eventPhase: 1, defaultPrevented: false };
    for (const [t, fn, capture] of this.listeners) if (t === type && capture) fn(event);
    event.eventPhase = 2;
    event.defaultPrevented = prevented;
    atTarget(event);
    if (!stopped) {
      event.eventPhase = 3;
      for (const [t, fn, capture] of this.listeners) if (t === type && !capture) fn(event);
    }
    event.eventPhase = 0; // the dispatch is over
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
  assert.deepEqual(receipts.read(id), { delivered: true, events: pushes[0].events, fileInput: true, download: false, navigates: false });
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

// The download sign (receipt.js header): a trusted `navigate` event with a download
// request since the press marks the receipt.
class FakeEvents {
  constructor() { this.listeners = []; }
  addEventListener(type, fn) { this.listeners.push([type, fn]); }
  fire(type, extra = {}) { for (const [t, fn] of this.listeners) if (t === type) fn({ type, isTrusted: true, ...extra }); }
}

function signSetup({ navigationApi = true } = {}) {
  const win = new FakeWindow();
  if (navigationApi) win.navigation = new FakeEvents();
  const pushes = [];
  const receipts = new Receipts(win, (id, receipt) => pushes.push({ id, ...receipt }));
  return { win, pushes, receipts };
}
const node = (localName, extra = {}) => ({ nodeType: 1, localName, getRootNode: () => doc, ...extra });

test('one push per delivered click: no second push a task later', async () => {
  const { win, pushes, receipts } = signSetup();
  const button = node('button', { type: 'button' });
  const id = receipts.arm(button);
  trustedClick(win, [button, doc, win]);
  await tick();
  await tick();
  assert.deepEqual(pushes.map((p) => [p.id, p.delivered, p.download, 'quiet' in p]), [[id, true, false, false]]);
});

test('an untrusted navigate event gives no download sign', async () => {
  const { win, pushes, receipts } = signSetup();
  const button = node('button', { type: 'button' });
  receipts.arm(button);
  trustedClick(win, [button, doc, win], () => win.navigation.fire('navigate', { isTrusted: false, downloadRequest: 'x' }));
  await tick();
  assert.deepEqual(pushes.map((p) => p.download), [false]);
});

test('no Navigation API: receipts still work, with no download sign', async () => {
  const { win, pushes, receipts } = signSetup({ navigationApi: false });
  const button = node('button', { type: 'button' });
  receipts.arm(button);
  trustedClick(win, [button, doc, win]);
  await tick();
  assert.deepEqual(pushes.map((p) => [p.delivered, p.download]), [[true, false]]);
});

test('download sign: a trusted navigate event with a download request during the click', async () => {
  const { win, pushes, receipts } = signSetup();
  const button = node('button', { type: 'button' });
  const id = receipts.arm(button);
  trustedClick(win, [button, doc, win], () => win.navigation.fire('navigate', { downloadRequest: 'report.txt' }));
  await tick();
  assert.deepEqual(pushes.map((p) => p.download), [true]);
  assert.equal(receipts.read(id).download, true);
  const other = signSetup();
  const plain = node('button', { type: 'button' });
  other.receipts.arm(plain);
  trustedClick(other.win, [plain, doc, other.win], () => other.win.navigation.fire('navigate', { downloadRequest: null }));
  await tick();
  assert.deepEqual(other.pushes.map((p) => p.download), [false]);
});

// The click itself follows a download link (receipt.js header): the innermost <a>/<area>
// with href on its path has `download`, and its default was not prevented; in every
// browser, Navigation API or not.
const html = (localName, attrs = {}) => node(localName, {
  namespaceURI: 'http://www.w3.org/1999/xhtml',
  hasAttribute: (n) => Object.hasOwn(attrs, n), getAttribute: (n) => attrs[n] ?? null,
});

test('download sign: a click that follows a download link, with or without the Navigation API', async () => {
  for (const navigationApi of [true, false]) {
    const { win, pushes, receipts } = signSetup({ navigationApi });
    const link = html('a', { href: 'report.txt', download: '' });
    const inner = html('span');
    const id = receipts.arm(link);
    trustedClick(win, [inner, link, doc, win]); // the press lands on the link's text
    assert.deepEqual(pushes.map((p) => [p.id, p.download]), [[id, true]], `navigationApi ${navigationApi}`);
    assert.equal(receipts.read(id).download, true);
  }
  // A card (the target) around the link: the click still follows it.
  const { win, pushes, receipts } = signSetup();
  const link = html('area', { href: '/x.bin', download: 'x.bin' });
  const card = html('div');
  receipts.arm(card);
  trustedClick(win, [link, card, doc, win]);
  assert.deepEqual(pushes.map((p) => p.download), [true]);
});

test('no download sign: a plain link, a plain link inside a download link, no href, not HTML, a cross-origin URL, an untrusted click', async () => {
  const page = { location: { origin: 'http://127.0.0.1:8000' } };
  const cases = [
    ['plain link', () => [html('a', { href: 'next.html' })]],
    // The innermost link with href decides: a plain one inside a download link's box.
    ['plain link inside a download link', () => [html('a', { href: 'next.html' }), html('a', { href: 'r.txt', download: '' })]],
    ['download without href', () => [html('a', { download: '' })]],
    ['not HTML', () => [node('a', { namespaceURI: 'http://www.w3.org/2000/svg', hasAttribute: () => true })]],
    // A cross-origin link's download attribute is ignored: it navigates (HTML §4.6.5).
    ['cross-origin', () => [{ ...html('a', { href: 'x', download: '' }), href: 'https://cdn.example/report.pdf', ownerDocument: page }]],
  ];
  for (const [name, make] of cases) {
    const { win, pushes, receipts } = signSetup();
    const path = make();
    const id = receipts.arm(path[0]);
    trustedClick(win, [...path, doc, win]);
    assert.deepEqual(pushes.map((p) => p.download), [false], name);
    assert.equal(receipts.read(id).download, false, name);
  }
  // An untrusted click on the link (the page's own dispatchEvent) signs nothing.
  const other = signSetup();
  const own = html('a', { href: 'r.txt', download: '' });
  const otherId = other.receipts.arm(own);
  other.win.dispatch('click', [own, doc, other.win], { trusted: false });
  assert.equal(other.receipts.read(otherId).download, false);
});

test('download sign: same-origin, blob: and data: URLs, a prevented click, a middle click', async () => {
  const page = { location: { origin: 'http://127.0.0.1:8000' } };
  const link = (href) => ({ ...html('a', { href, download: '' }), href, ownerDocument: page });
  for (const href of ['http://127.0.0.1:8000/r.txt', 'blob:http://127.0.0.1:8000/0c8e-11', 'data:text/plain,hi']) {
    const { win, pushes, receipts } = signSetup();
    const target = link(href);
    receipts.arm(target);
    trustedClick(win, [target, doc, win]);
    assert.deepEqual(pushes.map((p) => p.download), [true], href);
  }
  // The page prevented the click's default: it usually starts the download itself
  // (fetch, then a blob link), which Firefox gives no other sign of.
  const { win, pushes, receipts } = signSetup();
  const own = html('a', { href: 'r.txt', download: '' });
  const id = receipts.arm(own);
  for (const type of ['pointerdown', 'mousedown', 'pointerup', 'mouseup']) win.dispatch(type, [own, doc, win]);
  win.dispatch('click', [own, doc, win], { prevented: true });
  assert.deepEqual(pushes.map((p) => p.download), [true]);
  assert.equal(receipts.read(id).download, true);
  // A middle click (auxclick, button 1) follows the link too.
  const mid = signSetup();
  const midLink = html('a', { href: 'r.txt', download: '' });
  const midId = mid.receipts.arm(midLink);
  for (const type of ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'auxclick']) mid.win.dispatch(type, [midLink, doc, mid.win], { button: 1 });
  assert.equal(mid.receipts.read(midId).download, true);
});

// The submission sign (receipt.js header): a trusted formdata event within the window of
// the press, for a form that navigates this frame, marks the receipt `navigates`, pushed
// again when the first push went out before it (a submit button's activation behaviour).
const form = (attrs = {}, base = null) => ({
  hasAttribute: (n) => Object.hasOwn(attrs, n), getAttribute: (n) => attrs[n] ?? null,
  ownerDocument: { querySelector: () => base },
});
const submitterWith = (attrs) => form(attrs);

test('navigates: a form submitted after the push is pushed again; a named target, an untrusted event or an old press is not', async () => {
  const { win, pushes, receipts } = signSetup();
  const button = node('button', { type: 'submit' });
  const id = receipts.arm(button);
  trustedClick(win, [button, doc, win]);
  const f = form();
  win.dispatch('submit', [f, doc, win], { submitter: button });
  win.dispatch('formdata', [f, doc, win]);
  await tick();
  assert.deepEqual(pushes.map((p) => [p.id, p.navigates]), [[id, false], [id, true]]);
  win.dispatch('formdata', [f, doc, win]); // once
  assert.equal(pushes.length, 2);
  assert.equal(receipts.read(id).navigates, true);
  for (const [make, why] of [
    [() => ({ f: form({ target: 'results' }) }), 'the form targets a named frame'],
    [() => ({ f: form({}, submitterWith({ target: '_blank' })) }), 'the base target is a new window'],
    [() => ({ f: form({ target: '_self' }), submitter: submitterWith({ formtarget: 'other' }) }), "the submitter's formtarget wins"],
    [() => ({ f: form(), trusted: false }), 'an untrusted formdata event'],
  ]) {
    const one = signSetup();
    const b = node('button', { type: 'submit' });
    one.receipts.arm(b);
    trustedClick(one.win, [b, doc, one.win]);
    const { f: theForm, submitter = null, trusted = true } = make();
    if (submitter) one.win.dispatch('submit', [theForm, doc, one.win], { submitter });
    one.win.dispatch('formdata', [theForm, doc, one.win], { trusted });
    await tick();
    assert.deepEqual(one.pushes.map((p) => p.navigates), [false], why);
  }
  for (const target of ['', '_self', '_top', '_PARENT']) {
    assert.ok(Receipts.targetsSelf(form({ target }), null), target);
  }
});

test('navigates: a submission during the click is in the first push', async () => {
  const { win, pushes, receipts } = signSetup();
  const button = node('button', { type: 'button' });
  receipts.arm(button);
  trustedClick(win, [button, doc, win], () => win.dispatch('formdata', [form(), doc, win])); // form.submit() in the handler
  await tick();
  assert.deepEqual(pushes.map((p) => p.navigates), [true]);
});

test('navigates: not for a FormData built in a submit handler, a cancelled submit, method=dialog or a javascript: action', async () => {
  const cases = [
    // the app form: preventDefault, then new FormData(this) inside the handler
    [(win, f, b) => win.dispatch('submit', [f, doc, win], { submitter: b, prevented: true,
      atTarget: () => win.dispatch('formdata', [f, doc, win]) }), 'FormData in the handler'],
    [(win, f, b) => win.dispatch('formdata', [form({ method: 'dialog' }), doc, win]), 'method=dialog'],
    [(win, f, b) => win.dispatch('formdata', [form({ action: ' JavaScript:void(0)' }), doc, win]), 'javascript: action'],
    [(win, f, b) => win.dispatch('formdata', [form(), doc, win]) || null, null],
  ];
  for (const [run, why] of cases) {
    const { win, pushes, receipts } = signSetup();
    const b = node('button', { type: 'submit' });
    receipts.arm(b);
    trustedClick(win, [b, doc, win]);
    run(win, form(), submitterWith({}));
    await tick();
    assert.deepEqual(pushes.map((p) => p.navigates), why === null ? [false, true] : [false], String(why));
  }
  // A cancelled submit's submitter (formtarget=_self) does not count for a later
  // form.submit() of a form whose own target is a new window.
  const { win, pushes, receipts } = signSetup();
  const b = node('button', { type: 'submit' });
  receipts.arm(b);
  trustedClick(win, [b, doc, win]);
  const blank = form({ target: '_blank' });
  win.dispatch('submit', [blank, doc, win], { submitter: submitterWith({ formtarget: '_self' }), prevented: true });
  win.dispatch('formdata', [blank, doc, win]); // form.submit() later
  await tick();
  assert.deepEqual(pushes.map((p) => p.navigates), [false]);
});

// The press guard (receipt.js header, "Press guard"): a new arm ends the guards of the
// actions before it (the bridge runs one action per tab at a time), unless one is stopping
// a press right now.
test('press guard: a new arm lapses older guards; one stopping a press keeps stopping it', () => {
  const win = new FakeWindow();
  const cover = { localName: 'div', getAttribute: () => null, textContent: 'Card' };
  const gdoc = { nodeType: 9, elementFromPoint: () => cover };
  const target = (name) => ({ localName: 'button', getRootNode: () => gdoc, ownerDocument: gdoc, isConnected: true, name });
  const press = (x, y, path) => {
    const ev = { type: 'pointerdown', isTrusted: true, button: 0, clientX: x, clientY: y, composedPath: () => path,
      prevented: false, preventDefault() { this.prevented = true; }, stopImmediatePropagation() {} };
    receipts.observe(ev);
    return ev.prevented;
  };
  const receipts = new Receipts(win, () => {});
  // Armed alone, a guard stops a press at its point that something else took.
  const first = target('first');
  receipts.arm(first, { x: 10, y: 10 });
  assert.equal(press(10, 10, [cover, gdoc, win]), true);
  assert.equal(press(10, 10, [cover, gdoc, win]), true); // still blocking: the rest of that click
  receipts.arm(target('second'), { x: 50, y: 50 }); // the next action: the block stands
  assert.equal(press(10, 10, [cover, gdoc, win]), true);
  // A guard that let its press through lapses at the next arm: a press at its point is
  // no longer its to check.
  const other = new Receipts(new FakeWindow(), () => {});
  const a = target('a');
  const gdocA = gdoc;
  a.ownerDocument = gdocA;
  other.arm(a, { x: 10, y: 10 });
  const observe = (x, y, path) => {
    const ev = { type: 'pointerdown', isTrusted: true, button: 0, clientX: x, clientY: y, composedPath: () => path,
      prevented: false, preventDefault() { this.prevented = true; }, stopImmediatePropagation() {} };
    other.observe(ev);
    return ev.prevented;
  };
  assert.equal(observe(10, 10, [a, gdoc, win]), false); // its own press: let through
  other.arm(target('b'), { x: 50, y: 50 });
  assert.equal(observe(10, 10, [cover, gdoc, win]), false); // a's guard lapsed
  // Without the new arm the same press would have been stopped (the check is live).
  const control = new Receipts(new FakeWindow(), () => {});
  const c = target('c');
  control.arm(c, { x: 10, y: 10 });
  const ev = { type: 'pointerdown', isTrusted: true, button: 0, clientX: 10, clientY: 10, composedPath: () => [c, gdoc, win],
    prevented: false, preventDefault() { this.prevented = true; }, stopImmediatePropagation() {} };
  control.observe(ev);
  const ev2 = { ...ev, composedPath: () => [cover, gdoc, win], prevented: false };
  control.observe(ev2);
  assert.equal(ev2.prevented, true);
});
