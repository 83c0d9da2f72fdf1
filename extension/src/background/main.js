// Background entry: reads config.json (written by the supervisor into its copy of the
// extension), connects to the bridge and serves the dispatch table below. Only the
// methods named here are callable (allow-list).

import { BridgeConnection } from './connection.js';
import { snapshotTab } from './snapshot.js';
import { ExtError, Tabs } from './tabs.js';

const api = globalThis.browser ?? globalThis.chrome;
const tabs = new Tabs(api);

function waitForLoad(tabId, timeoutMs) {
  return new Promise((resolve, reject) => {
    const done = (fn, arg) => {
      clearTimeout(timer);
      api.webNavigation.onCompleted.removeListener(onCompleted);
      api.webNavigation.onErrorOccurred.removeListener(onError);
      api.tabs.onRemoved.removeListener(onRemoved);
      fn(arg);
    };
    const onCompleted = (d) => { if (d.tabId === tabId && d.frameId === 0) done(resolve); };
    const onError = (d) => {
      if (d.tabId === tabId && d.frameId === 0) done(reject, new ExtError('BAD_REQUEST', `Navigation failed: ${d.error}.`, { error: d.error }));
    };
    const onRemoved = (id) => { if (id === tabId) done(reject, new ExtError('BROWSER_TAB_CLOSED', 'The tab closed during navigation.', { tabId })); };
    const timer = setTimeout(() => done(reject, new ExtError('TIMEOUT', `The page did not finish loading within ${timeoutMs} ms.`, { timeoutMs })), timeoutMs);
    api.webNavigation.onCompleted.addListener(onCompleted);
    api.webNavigation.onErrorOccurred.addListener(onError);
    api.tabs.onRemoved.addListener(onRemoved);
  });
}

async function frameHasText(tabId, text) {
  const frames = await api.webNavigation.getAllFrames({ tabId });
  const answers = await Promise.all(frames.map((f) => tabs.toFrame(tabId, f.frameId, { op: 'hasText', text }).catch(() => ({ found: false }))));
  return answers.some((a) => a.found);
}

const handlers = {
  async 'tabs.list'() {
    return { tabs: await tabs.list() };
  },

  async 'page.navigate'({ tabId, url, timeoutMs = 30000 }) {
    const id = await tabs.resolveTab(tabId);
    const loaded = waitForLoad(id, timeoutMs);
    await api.tabs.update(id, { url });
    await loaded;
    const tab = await api.tabs.get(id);
    return { tabId: id, url: tab.url || url, title: tab.title || '' };
  },

  async 'page.snapshot'({ tabId }) {
    const id = await tabs.resolveTab(tabId);
    return snapshotTab(api, tabs, id);
  },

  async 'page.jugglerTarget'({ tabId, ref }) {
    const id = await tabs.resolveTab(tabId);
    if (!ref) {
      const res = await tabs.toFrame(id, 0, { op: 'locate', ref: null });
      return { ...res, tabId: id };
    }
    const { frameId, local, docId } = tabs.parseRef(id, ref);
    const res = await tabs.toFrame(id, frameId, { op: 'locate', ref: local, docId });
    return { ...res, tabId: id };
  },

  // Synthetic path: only for devices that never asked for trusted input (the bridge
  // decides and labels the result inputPath: "synthetic").
  async 'page.act'({ tabId, ref, action }) {
    const id = await tabs.resolveTab(tabId);
    if (!ref) {
      const res = await tabs.toFrame(id, 0, { op: 'act', ref: null, action });
      return { ...res, tabId: id };
    }
    const { frameId, local, docId } = tabs.parseRef(id, ref);
    const res = await tabs.toFrame(id, frameId, { op: 'act', ref: local, docId, action });
    return { ...res, tabId: id };
  },

  async 'page.wait'({ tabId, ms, text, timeoutMs = 10000 }) {
    const id = await tabs.resolveTab(tabId);
    if (ms !== undefined && ms !== null) {
      await new Promise((r) => setTimeout(r, ms));
      return { tabId: id, waitedMs: ms };
    }
    if (!text) throw new ExtError('BAD_REQUEST', 'Give ms or text to wait for.');
    const start = Date.now();
    while (Date.now() - start < timeoutMs) {
      if (await frameHasText(id, text)) return { tabId: id, found: true, waitedMs: Date.now() - start };
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new ExtError('TIMEOUT', `The text did not appear within ${timeoutMs} ms.`, { timeoutMs });
  },
};

async function main() {
  const response = await fetch(api.runtime.getURL('config.json'));
  const config = await response.json();
  new BridgeConnection(config, handlers, api).start();
}

main();
