// Whole-tab snapshot: ask every frame for its lines, stitch child frames under their
// <iframe> line (matched by frame key, see ../page/frames.js) and render YAML-like text.

const RETRY_MS = 60;

async function collect(tabs, tabId, frames) {
  return Promise.all(frames.map(async (f) => {
    const ordinal = tabs.ordinalOf(tabId, f.frameId);
    const prefix = ordinal === 0 ? '' : `f${ordinal}`;
    try {
      const res = await tabs.toFrame(tabId, f.frameId, { op: 'snapshot', prefix });
      return { ...res, frameId: f.frameId, parentFrameId: f.parentFrameId, ordinal };
    } catch {
      return null; // a frame without our content script (e.g. about:blank not yet loaded)
    }
  }));
}

/**
 * @returns {Promise<{snapshot: string, url: string, title: string, tabId: number, frames: number, refs: number}>}
 */
export async function snapshotTab(api, tabs, tabId) {
  const frames = await api.webNavigation.getAllFrames({ tabId });
  if (!frames || !frames.length) {
    return { snapshot: '', url: '', title: '', tabId, frames: 0, refs: 0 };
  }
  await Promise.all(frames.map((f) => tabs.toFrame(tabId, f.frameId, { op: 'announceFrames' }).catch(() => null)));
  let results = (await collect(tabs, tabId, frames)).filter(Boolean);
  // A child that has not yet received its key (postMessage is asynchronous): ask once more.
  if (results.some((r) => !r.isTop && !r.frameKey)) {
    await new Promise((r) => setTimeout(r, RETRY_MS));
    results = (await collect(tabs, tabId, frames)).filter(Boolean);
  }
  const st = tabs.tabState(tabId);
  const byKey = new Map();
  let top = null;
  for (const r of results) {
    st.docs.set(r.ordinal, r.docId);
    if (r.frameId === 0) top = r;
    else if (r.frameKey) byKey.set(r.frameKey, r);
  }
  const out = [];
  let refs = 0;
  const placed = new Set();
  const render = (res, base) => {
    placed.add(res.frameId);
    refs += res.refCount;
    for (const line of res.lines) {
      out.push('  '.repeat(base + line.d) + line.s);
      if (line.frameKey) {
        const child = byKey.get(line.frameKey);
        if (child && !placed.has(child.frameId)) render(child, base + line.d + 1);
        else out.push('  '.repeat(base + line.d + 1) + '- text: "(frame content not available)"');
      }
    }
  };
  if (top) render(top, 0);
  return {
    snapshot: out.join('\n'),
    url: top ? top.url : '',
    title: top ? top.title : '',
    tabId,
    frames: placed.size,
    refs,
  };
}
