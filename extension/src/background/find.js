// page.find across a tab's frames (issue 14 item 5). Every frame's content script searches
// its own document (../page/find.js) with the ref prefix and floor a snapshot would give
// it; this module puts each child frame's matches at the place of its <iframe> (matched by
// frame key, as background/snapshot.js stitches), cuts the whole at `limit`, records the
// refs' documents (tabs.noteDocument, so page.act resolves them like snapshot refs) and
// renders the matches as one indented outline whose shared ancestors print once.

import { PageError } from '../page/errors.js';

const RETRY_MS = 60;
const GRACE_MS = 500; // a frame's answer may come this long after its own budget ran out
const SETUP_SHARE = 0.25; // at most this part of the budget goes to finding the frames

function sameIdentity(a, b) {
  return !!a && !!b && a.token === b.token && a.timeOrigin === b.timeOrigin && a.url === b.url;
}

async function identifyAll(tabs, tabId, frames) {
  const answers = await Promise.all(frames.map(async (f) => {
    try {
      const res = await tabs.toFrame(tabId, f.frameId, { op: 'identify' });
      return { ...res, frameId: f.frameId, parentFrameId: f.parentFrameId, ordinal: tabs.ordinalOf(tabId, f.frameId) };
    } catch {
      return null; // no content script in that frame (yet)
    }
  }));
  return answers.filter(Boolean);
}

/** The tab's frames that answered, keyed by frame id and by the key their parent gave. */
async function framesOf(api, tabs, tabId) {
  const frames = (await api.webNavigation.getAllFrames({ tabId })) || [];
  tabs.navigations.learn(tabId, frames);
  // Child frames learn the key of their <iframe> from an announcement (one scan of each
  // parent document); a tab with one frame has none to learn.
  if (frames.length > 1) {
    await Promise.all(frames.map((f) => tabs.toFrame(tabId, f.frameId, { op: 'announceFrames' }).catch(() => null)));
  }
  let infos = await identifyAll(tabs, tabId, frames);
  if (infos.some((r) => !r.isTop && !r.frameKey)) {
    await new Promise((r) => setTimeout(r, RETRY_MS)); // postMessage of the key is asynchronous
    infos = await identifyAll(tabs, tabId, frames);
  }
  const byFrame = new Map(infos.map((r) => [r.frameId, r]));
  const byKey = new Map(infos.filter((r) => r.frameKey && r.frameId !== 0).map((r) => [r.frameKey, r]));
  return { byFrame, byKey };
}

/** Frame ids at or below `frameId` (by parentFrameId). */
function subtreeOf(byFrame, frameId) {
  const out = new Set([frameId]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const r of byFrame.values()) {
      if (!out.has(r.frameId) && out.has(r.parentFrameId)) { out.add(r.frameId); grew = true; }
    }
  }
  return out;
}

function timeout(ms) {
  return new Promise((resolve) => setTimeout(() => resolve(null), ms));
}

/**
 * Find elements in tab `tabId` (page.find; models.py FindParams, results.py FindResult).
 * @param {object} api  chrome / browser namespace
 * @param {import('./tabs.js').Tabs} tabs
 * @param {number} tabId
 * @param {{role?: string, name?: string, text?: string, regex?: boolean, within?: string,
 *   limit?: number, timeoutMs?: number}} params
 * @returns {Promise<{matches: Array<{ref: string|null, line: string, ancestry: string[]}>,
 *   text: string, truncated: boolean, url: string, title: string, tabId: number}>}
 * @throws PageError BAD_REQUEST (no criterion, bad regex), REF_NOT_FOUND / BROWSER_DOCUMENT_CHANGED
 *   (`within` unknown, or from a document that is gone)
 */
export async function findInTab(api, tabs, tabId, params = {}) {
  const started = Date.now();
  const budget = Math.max(10, Number(params.timeoutMs) || 3000);
  const deadline = started + budget;
  const limit = Math.max(1, Math.min(Number(params.limit) || 20, 500));
  if (!params.role && !params.name && !params.text) {
    throw new PageError('BAD_REQUEST', 'page.find needs a role, a name or a text to look for.', {});
  }
  let within = null;
  if (params.within) within = tabs.parseRef(tabId, params.within);
  // Finding the frames is bounded too: a page too busy to say who its frames are within
  // the budget gets a truncated answer that says so, not an error.
  const { byFrame, byKey } = await Promise.race([
    framesOf(api, tabs, tabId),
    timeout(Math.max(budget * SETUP_SHARE, 1000)).then(() => ({ byFrame: null })),
  ]);
  if (!byFrame) {
    return { matches: [], text: render([], { more: false, timedOut: true, limit, budget }), truncated: true,
      url: '', title: '', tabId };
  }
  const startFrame = within ? within.frameId : 0;
  const top = byFrame.get(0);
  if (!byFrame.get(startFrame)) {
    await tabs.throwIfCrashed(tabId);
    if (within) throw new PageError('BROWSER_DOCUMENT_CHANGED', `The frame of ref ${params.within} is gone. Take a new snapshot.`, { ref: params.within });
    throw new PageError('BROWSER_DOCUMENT_CHANGED', 'The page did not answer (it is loading or navigating). Retry in a moment.', { tabId });
  }
  if (within && !sameIdentity(byFrame.get(startFrame).docId, within.docId)) {
    throw new PageError('BROWSER_DOCUMENT_CHANGED',
      `Ref ${params.within} belongs to a document this frame no longer shows. Take a new snapshot.`, { ref: params.within, reason: 'navigated' });
  }
  const wanted = subtreeOf(byFrame, startFrame);
  await tabs.floorReady; // a restarted background starts above its stored floor
  const floor = tabs.refFloor;
  const answers = new Map();
  let timedOut = false;
  await Promise.all([...wanted].map(async (frameId) => {
    const info = byFrame.get(frameId);
    if (!info) return;
    const budgetMs = Math.max(5, deadline - Date.now());
    const msg = {
      op: 'find', role: params.role || null, name: params.name || null, text: params.text || null,
      regex: !!params.regex, limit, budgetMs, prefix: info.ordinal === 0 ? '' : `f${info.ordinal}`,
      refFloor: floor, url: info.docId ? info.docId.url : null,
      within: frameId === startFrame && within ? within.local : null,
    };
    let res;
    try {
      res = await Promise.race([tabs.toFrame(tabId, frameId, msg), timeout(budgetMs + GRACE_MS)]);
    } catch (err) {
      if (frameId === startFrame) throw err;
      return; // a child frame that went away: its matches are not known
    }
    if (!res) {
      timedOut = true;
      return;
    }
    tabs.noteDocument(tabId, info.ordinal, info.docId, floor, res.nextRef || floor);
    answers.set(frameId, res);
  }));
  if (!answers.has(startFrame)) timedOut = true;

  const matches = [];
  let more = false;
  const visit = (frameId, above) => {
    const res = answers.get(frameId);
    const info = byFrame.get(frameId);
    if (!res) return;
    if (res.more) more = true;
    if (res.timedOut) timedOut = true;
    const tag = (entry) => ({ s: entry.s ?? entry.line, ref: entry.ref, key: `${info.ordinal}:${entry.key}` });
    for (const item of res.items) {
      const ancestry = above.concat(item.ancestry.map(tag));
      if (item.frameKey !== undefined) {
        const child = byKey.get(item.frameKey);
        if (child && wanted.has(child.frameId)) visit(child.frameId, ancestry.concat([tag(item)]));
        continue;
      }
      if (matches.length >= limit) { more = true; return; }
      matches.push({ ref: item.ref, line: item.line, key: `${info.ordinal}:${item.key}`, ancestry });
    }
  };
  visit(startFrame, []);
  const truncated = more || timedOut;
  const text = render(matches, { more, timedOut, limit, budget });
  return {
    matches: matches.map((m) => ({ ref: m.ref, line: m.line, ancestry: m.ancestry.map((a) => a.s) })),
    text, truncated, url: top ? top.url : '', title: top ? top.title : '', tabId,
  };
}

/** The matches as one outline: each under its ancestors, a shared ancestor printed once. */
export function render(matches, { more, timedOut, limit, budget }) {
  const out = [];
  let printed = []; // keys of the path printed last
  for (const m of matches) {
    const path = m.ancestry.concat([{ s: m.line, key: m.key }]);
    let same = 0;
    while (same < path.length && same < printed.length && path[same].key === printed[same]) same++;
    for (let d = same; d < path.length; d++) out.push('  '.repeat(d) + path[d].s);
    printed = path.map((p) => p.key);
  }
  if (more) out.push(`# more matches than the limit of ${limit}: narrow the query (role, name, within) or raise limit`);
  if (timedOut) out.push(`# the ${budget} ms time budget ran out before the whole page was searched: narrow the query or raise the budget`);
  return out.join('\n');
}
