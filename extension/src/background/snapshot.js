// Whole-tab snapshots (design.md §5): every frame's content script walks its own document;
// this module stitches child frames under their <iframe> line (matched by frame key, see
// ../page/frames.js), keeps the output within a character budget and hands out a cursor
// for the rest. Modes:
//   snapshot  the outline with refs (default); with `ref`, the subtree of that element
//   read      the visible text of the page (or subtree), same budget and cursor
//   diff      the outline compared with this tab's previous complete snapshot in the same
//             session (diff.js); the new snapshot becomes the baseline
// A snapshot that was cut by the budget does not become the diff baseline unless the
// agent follows its cursor to the end.
// A provisional snapshot (`provisional: id`, the bridge's page state taken while the
// driver still checks its action, issue 18) becomes the baseline only once the bridge
// keeps it (`snapshot.keep {id}`: `keepProvisional`); one the bridge drops never does,
// so no diff is ever made against a snapshot nobody was shown.
// Budgets: `maxChars` (characters of stitched text) and `timeBudgetMs` (ms of walking,
// issue 14 item 6): whichever is spent first ends the page, with a cursor for the rest,
// and the trailer line says which. Under a time budget each frame is asked for chunks of
// at most TIME_CHUNK_CHARS, so the clock is looked at between chunks and across frames
// (the frame's walker also gets the time left, walker.js next()).
// `depth` (outline): lines nested deeper than `depth` below the root (the `ref`'s line,
// or the page's top level) are left out, a CUT_LINE marking each cut, across frames.

import { diffOutline } from './diff.js';
import { PageError } from '../page/errors.js';

const RETRY_MS = 60;
const CURSOR_TTL_MS = 10 * 60 * 1000;
const MAX_CURSORS = 16;
const DIFF_MAX_CHARS = 5_000_000;
const DEFAULT_MAX_CHARS = 50_000;
const NO_FRAME = '(frame content not available)';
const TIME_CHUNK_CHARS = 16_000;
/** Stands for lines left out below the depth limit (the same as page/walker.js CUT_LINE). */
const CUT_LINE = '- …';

/** cursor id → {state, at} */
const cursors = new Map();
/** `${tabId}/${session}` → lines of the last complete outline snapshot */
const baselines = new Map();
/** provisional id → {key, lines, since}: a baseline waiting for the bridge's keep */
const provisionals = new Map();
const MAX_PROVISIONALS = 8;
/** `${tabId}/${session}` → how many times its baseline was set (a kept provisional
 *  snapshot must not replace one set after it began) */
const baselineSets = new Map();

function putBaseline(key, lines) {
  baselines.set(key, lines);
  baselineSets.set(key, (baselineSets.get(key) || 0) + 1);
}

/** Set the baseline `key`, or hold it under `provisional` until `keepProvisional`;
 *  `since`: the count of `key`'s baseline sets when the snapshot began. */
function setBaseline(key, lines, provisional, since) {
  if (!provisional) {
    putBaseline(key, lines);
    return;
  }
  provisionals.set(String(provisional), { key, lines, since });
  while (provisionals.size > MAX_PROVISIONALS) provisionals.delete(provisionals.keys().next().value);
}

/** The bridge showed provisional snapshot `id`: it becomes its session's baseline, unless
 *  another snapshot of that session set the baseline since it began (a client's own
 *  snapshot meanwhile is newer); an unknown id (dropped, evicted) changes nothing. */
export function keepProvisional(id) {
  const held = provisionals.get(String(id));
  if (!held) return;
  provisionals.delete(String(id));
  if ((baselineSets.get(held.key) || 0) === held.since) putBaseline(held.key, held.lines);
}

function randomId() {
  const a = new Uint32Array(2);
  crypto.getRandomValues(a);
  return 'c' + a[0].toString(36) + a[1].toString(36);
}

/** The lowest ref number in a chunk's lines ({s: string}[]), or `floor` when lower. */
function lowestRef(lines, floor) {
  let low = floor;
  for (const line of lines || []) {
    for (const m of String(line.s).matchAll(/\[ref=(?:f\d+)?e(\d+)\]/g)) low = Math.min(low, Number(m[1]));
  }
  return low;
}

async function identifyAll(tabs, tabId, frames) {
  const answers = await Promise.all(frames.map((f) => tabs.toFrame(tabId, f.frameId, { op: 'identify' })
    .catch(() => null))); // a frame without our content script (e.g. about:blank not yet loaded)
  // Ordinals of frames new to the tab go in the browser's frame order, not in the order
  // the answers arrived (a race between renderer processes).
  return answers.map((res, i) => (res ? frameInfo(tabs, tabId, frames[i], res) : null));
}

function frameInfo(tabs, tabId, f, identity) {
  return { ...identity, frameId: f.frameId, parentFrameId: f.parentFrameId, ordinal: tabs.ordinalOf(tabId, f.frameId) };
}

/** The ordinal a ref names ("e7" → 0, "f2e7" → 2), or null when it is no ref. */
function ordinalOfRef(ref) {
  const m = /^(?:f(\d+))?e\d+$/.exec(ref);
  return m ? Number(m[1] || 0) : null;
}

/** The content script's message that starts walking `top` (a stack entry). */
function startMessage(state, top, prefix, ask, floor, timeBudgetMs) {
  const depth = state.depth ?? null;
  return {
    op: 'snapshot', prefix, mode: state.walkMode, maxChars: ask, baseDepth: top.baseDepth,
    rootRef: top.rootRef, docId: top.docId, refFloor: floor, timeBudgetMs,
    depth: depth === null ? null : depth - top.baseDepth,
  };
}

/**
 * Take a snapshot of tab `tabId`, or the next page of one (params.cursor).
 * @param {object} api  chrome / browser namespace
 * @param {import('./tabs.js').Tabs} tabs
 * @param {number|null} tabId  null only with a cursor: the cursor's own tab
 * @param {{mode?: 'snapshot'|'read'|'diff', maxChars?: number, ref?: string, cursor?: string, session?: string,
 *   depth?: number, timeBudgetMs?: number}} params  timeBudgetMs: ms for this page (a
 *   cursor's page too); depth: outline only, kept by the cursor
 * @returns {Promise<{snapshot: string, url: string, title: string, tabId: number, mode: string,
 *   frames: number, refs: number, chars: number, truncated: boolean, cursor: string|null,
 *   diff?: {baseline: boolean, added: number, removed: number}}>}
 * @throws PageError BAD_REQUEST (unknown cursor, bad combination), REF_NOT_FOUND,
 *   BROWSER_DOCUMENT_CHANGED (the page navigated since the cursor or ref was given)
 */
export async function snapshotTab(api, tabs, tabId, params = {}) {
  const maxChars = params.maxChars || DEFAULT_MAX_CHARS;
  const budget = { maxChars, timeBudgetMs: params.timeBudgetMs || null };
  pruneCursors();
  if (params.cursor) return continueCursor(tabs, tabId, params.cursor, budget);
  const mode = params.mode || 'snapshot';
  if (mode === 'diff' && params.ref) throw new PageError('BAD_REQUEST', 'A diff covers the whole tab; leave out ref.');
  if (typeof params.depth === 'number' && mode !== 'snapshot') {
    throw new PageError('BAD_REQUEST', 'depth applies to the outline snapshot only; leave it out for read and diff.');
  }
  const walkMode = mode === 'read' ? 'read' : 'outline';
  const depth = typeof params.depth === 'number' ? params.depth : null;
  // The first chunk's size and time, as render() would ask for it (a diff walks unbudgeted).
  const first = mode === 'diff'
    ? { ask: DIFF_MAX_CHARS, timeBudgetMs: null }
    : { ask: budget.timeBudgetMs ? Math.min(maxChars, TIME_CHUNK_CHARS) : maxChars, timeBudgetMs: budget.timeBudgetMs };
  // Counted before the walk: a baseline another snapshot sets while this one walks is
  // newer than a provisional this one may hold (keepProvisional).
  const since = baselineSets.get(`${tabId}/${params.session || 'default'}`) || 0;
  const state = await begin(api, tabs, tabId, { walkMode, ref: params.ref || null, depth, first });
  state.mode = mode;
  state.session = params.session || 'default';
  state.provisional = typeof params.provisional === 'string' ? params.provisional : null;
  state.baselineSince = since;
  // a complete whole-tab outline becomes the baseline
  state.keep = mode !== 'read' && !params.ref && state.depth === null;
  if (!state.top) {
    // No frame answered: a renderer that crashed meanwhile is said, not shown as empty.
    await tabs.throwIfCrashed(tabId);
    // No script answers in a top-level about:blank: its URL and title come from the tab.
    const tab = await api.tabs.get(tabId).catch(() => null);
    return { snapshot: '', url: tab?.url || '', title: tab?.title && tab.title !== tab.url ? tab.title : '', tabId, mode, frames: 0, refs: 0, chars: 0, truncated: false, cursor: null };
  }
  if (mode === 'diff') {
    const page = await render(tabs, state, DIFF_MAX_CHARS);
    if (state.stack.length) {
      throw new PageError('BAD_REQUEST',
        `The page is too large to diff (over ${DIFF_MAX_CHARS} characters). Take a snapshot with a cursor instead.`,
        { maxChars: DIFF_MAX_CHARS });
    }
    state.acc = page.lines;
    const key = `${tabId}/${state.session}`;
    const previous = baselines.get(key);
    setBaseline(key, state.acc, state.provisional, state.baselineSince);
    const { lines, added, removed } = diffOutline(previous || null, state.acc);
    const textState = { kind: 'text', tabId, lines, i: 0, info: state, diff: { baseline: !!previous, added, removed } };
    return pageOfText(textState, maxChars, page.refs);
  }
  // The time budget counts from the walk's first chunk: begin() asked for it while it
  // learned the frames, so its round trip is taken off (the frames' discovery is not).
  return finishPage(state, await render(tabs, state, maxChars, deadlineOf(budget, state.firstWalkMs)), budget);
}

function deadlineOf(budget, spentMs = 0) {
  return budget.timeBudgetMs ? Date.now() + budget.timeBudgetMs - spentMs : null;
}

/**
 * Learn the tab's frames and start the walk. The top frame is asked everything it can
 * answer at once, in one message (content/main.js `snapshotBegin`): announce its child
 * frames' keys (only when the tab has child frames), identify itself, and — when the walk
 * starts there — the walk's first chunk. Child frames announce their own children in the
 * same round; they identify after it (their key is posted by their parent's announcement),
 * asked once more after RETRY_MS when one has no key yet. A one-frame tab thus costs one
 * content-script round trip before render() has its first chunk.
 * @param {{walkMode: 'outline'|'read', ref: string|null, depth: number|null,
 *   first: {ask: number, timeBudgetMs: number|null}}} walk  first: the first chunk's
 *   characters and ms, as render() would ask for them
 * @returns {Promise<object>} the walk state; its root stack entry holds `first`
 *   ({chunk} | {error}) when the first chunk came with the frames
 * @throws PageError as tabs.parseRef, BROWSER_DOCUMENT_CHANGED (the ref's frame is gone)
 */
async function begin(api, tabs, tabId, walk) {
  const { walkMode, ref, depth } = walk;
  const frames = (await api.webNavigation.getAllFrames({ tabId })) || [];
  tabs.navigations.learn(tabId, frames);
  const topFrame = frames.find((f) => f.frameId === 0) || null;
  const children = frames.filter((f) => f.frameId !== 0);
  const start = { frameId: 0, walkerId: null, started: false, baseDepth: 0, rootRef: null, docId: null };
  const state = { tabId, walkMode, depth, byKey: new Map(), byFrame: new Map(), top: null, stack: [], acc: [], pages: 0 };
  // A ref of the top document is parsed first (parseRef reads only this background's
  // records, which identifying frames does not change for ordinal 0); one of a child
  // frame after the frames answered, which gives frames new to this tab their ordinals.
  const refInTop = !!ref && ordinalOfRef(ref) === 0;
  const useRef = (parsed) => Object.assign(start, { frameId: parsed.frameId, rootRef: parsed.local, docId: parsed.docId });
  if (refInTop) useRef(tabs.parseRef(tabId, ref));
  const walkTop = !ref || refInTop;
  let walkMsg = null;
  if (walkTop && topFrame) {
    await tabs.floorReady; // a restarted background starts above its stored floor
    walkMsg = startMessage(state, start, '', walk.first.ask, tabs.refFloor, walk.first.timeBudgetMs);
  }
  const sentAt = Date.now();
  const [topAnswer] = await Promise.all([
    topFrame
      ? tabs.toFrame(tabId, 0, { op: 'snapshotBegin', announce: children.length > 0, walk: walkMsg }).catch(() => null)
      : null,
    ...children.map((f) => tabs.toFrame(tabId, f.frameId, { op: 'announceFrames' }).catch(() => null)),
  ]);
  const walkMs = Date.now() - sentAt;
  if (topAnswer) {
    state.top = frameInfo(tabs, tabId, topFrame, topAnswer.identity);
    state.byFrame.set(0, state.top);
  }
  let infos = (await identifyAll(tabs, tabId, children)).filter(Boolean);
  // A child that has not yet received its key (postMessage is asynchronous): ask once more.
  if (infos.some((r) => !r.isTop && !r.frameKey)) {
    await new Promise((r) => setTimeout(r, RETRY_MS));
    infos = (await identifyAll(tabs, tabId, children)).filter(Boolean);
  }
  for (const r of infos) {
    state.byFrame.set(r.frameId, r);
    if (r.frameKey) state.byKey.set(r.frameKey, r);
  }
  if (ref && !refInTop) {
    useRef(tabs.parseRef(tabId, ref));
  }
  if (ref && !state.byFrame.has(start.frameId)) {
    throw new PageError('BROWSER_DOCUMENT_CHANGED', `The frame of ref ${ref} is gone. Take a new snapshot.`, { ref });
  }
  if (walkMsg && topAnswer) {
    start.started = true;
    start.first = topAnswer.walkError
      ? { error: new PageError(topAnswer.walkError.code, topAnswer.walkError.message, topAnswer.walkError.details) }
      : { chunk: topAnswer.chunk };
    state.firstWalkMs = walkMs;
  }
  if (state.top) state.stack.push(start);
  state.placed = new Set([start.frameId]);
  return state;
}

/**
 * Produce up to `budget` characters of stitched lines, advancing `state`; with a
 * `deadline` (ms, Date.now() clock), stop once it passed (at least one line is produced).
 * @returns {Promise<{lines: string[], chars: number, refs: number, timedOut: boolean}>}
 */
async function render(tabs, state, budget, deadline = null) {
  const out = [];
  let chars = 0;
  let refs = 0;
  let timedOut = false;
  const page = { ax: {} }; // frame token -> refs of axCandidates (walker.js axCandidate)
  const { tabId } = state;
  const indent = (d) => (state.walkMode === 'read' ? '' : '  '.repeat(d));
  const depth = state.depth ?? null;
  let lastCut = false;
  /** Keep a line at stitched depth `d` (relative to the root), or mark a cut. */
  const emit = (d, s) => {
    if (depth !== null && d > depth) {
      if (lastCut) return;
      d = depth + 1;
      s = CUT_LINE;
    }
    lastCut = s === CUT_LINE;
    const text = indent(d) + s;
    out.push(text);
    chars += text.length + 1;
  };
  while (state.stack.length) {
    const remaining = budget - chars;
    if (remaining <= 0 && out.length) break;
    if (deadline !== null && out.length && Date.now() >= deadline) {
      timedOut = true;
      break;
    }
    const top = state.stack[state.stack.length - 1];
    const info = state.byFrame.get(top.frameId);
    const prefix = info.ordinal === 0 ? '' : `f${info.ordinal}`;
    let res;
    await tabs.floorReady; // a restarted background starts above its stored floor
    const floor = tabs.refFloor;
    const ask = deadline === null ? remaining : Math.min(remaining, TIME_CHUNK_CHARS);
    const timeBudgetMs = deadline === null ? null : Math.max(1, deadline - Date.now());
    try {
      if (top.first) {
        // The root's first chunk, asked by begin() with the same message as below.
        const { chunk, error } = top.first;
        top.first = null;
        if (error) throw error;
        res = chunk;
      } else if (!top.started) {
        top.started = true;
        res = await tabs.toFrame(tabId, top.frameId, startMessage(state, top, prefix, ask, floor, timeBudgetMs));
      } else {
        res = await tabs.toFrame(tabId, top.frameId, {
          op: 'snapshotContinue', walkerId: top.walkerId, maxChars: ask, docId: top.docId, timeBudgetMs,
          refFloor: floor, // used once content/main.js passes it to observer.continue
        });
      }
    } catch (err) {
      if (top.frameId === state.stack[0].frameId) throw err;
      // A child frame that went away or has no content script: say so in its place.
      state.stack.pop();
      emit(top.baseDepth, state.walkMode === 'read' ? NO_FRAME : `- text: "${NO_FRAME}"`);
      continue;
    }
    if (res.docId) top.docId = res.docId;
    // A document older than this background (it restarted) shows refs it minted before,
    // below today's floor: they are its own (numbers were unique then too), so its range
    // starts at the lowest one shown.
    tabs.noteDocument(tabId, info.ordinal, top.docId, lowestRef(res.lines, floor), res.nextRef || floor);
    top.walkerId = res.walkerId;
    refs += res.refCount || 0;
    if (res.ax && res.ax.length) {
      // Issue 30 item 8: elements whose role/name only the browser's accessibility tree
      // knows (ElementInternals); the bridge asks the driver and rewrites their lines.
      // A document walked before its frame token landed (right after load) is asked for
      // it (`locate` with no ref waits for it, content/main.js); without one, no facts.
      let frameToken = res.frameToken;
      if (!frameToken) {
        frameToken = await tabs.toFrame(tabId, top.frameId, { op: 'locate', ref: null, docId: top.docId })
          .then((r) => r && r.frameToken, () => null);
      }
      if (frameToken) (page.ax[frameToken] ||= []).push(...res.ax);
    }
    let lastDepth = 0;
    for (const line of res.lines) {
      emit(top.baseDepth + line.d, line.s);
      lastDepth = line.d;
    }
    if (res.pausedAt) {
      const child = state.byKey.get(res.pausedAt);
      const childDepth = top.baseDepth + lastDepth + 1;
      if (depth !== null && childDepth > depth) {
        emit(childDepth, CUT_LINE); // the frame's content is below the limit: not walked
      } else if (child && !state.placed.has(child.frameId)) {
        state.placed.add(child.frameId);
        state.stack.push({ frameId: child.frameId, walkerId: null, started: false, baseDepth: childDepth, rootRef: null, docId: null });
      } else {
        emit(childDepth, state.walkMode === 'read' ? NO_FRAME : `- text: "${NO_FRAME}"`);
      }
      continue;
    }
    if (res.done) {
      state.stack.pop();
      continue;
    }
    if (ask < remaining) continue; // a time-budget chunk: look at the clock, go on
    break; // budget spent inside this frame
  }
  return { lines: out, chars, refs, timedOut, ax: page.ax };
}

function finishPage(state, page, budget) {
  state.pages++;
  // one by one: spreading a page of 200,000+ lines into push() overflows the call stack
  if (state.keep) for (const line of page.lines) state.acc.push(line);
  const truncated = state.stack.length > 0;
  let cursor = null;
  const lines = page.lines;
  if (truncated) {
    cursor = randomId();
    cursors.set(cursor, { state, at: Date.now() });
    const why = page.timedOut ? `after the time budget of ${budget.timeBudgetMs} ms` : `at ${budget.maxChars} characters`;
    lines.push(`# truncated ${why} (page ${state.pages}); call page.snapshot with cursor "${cursor}" for the rest`);
  } else if (state.keep) {
    setBaseline(`${state.tabId}/${state.session}`, state.acc, state.provisional, state.baselineSince);
  }
  return {
    snapshot: lines.join('\n'), url: state.top.url, title: state.top.title, tabId: state.tabId, mode: state.mode,
    frames: state.placed.size, refs: page.refs, chars: page.chars, truncated, cursor,
    ...(Object.keys(page.ax || {}).length ? { axCandidates: page.ax } : {}),
  };
}

/** A page of a precomputed text (a diff), cut at line boundaries. */
function pageOfText(textState, maxChars, refs) {
  const out = [];
  let chars = 0;
  while (textState.i < textState.lines.length) {
    const line = textState.lines[textState.i];
    if (out.length && chars + line.length + 1 > maxChars) break;
    out.push(line);
    chars += line.length + 1;
    textState.i++;
  }
  const truncated = textState.i < textState.lines.length;
  let cursor = null;
  if (truncated) {
    cursor = randomId();
    cursors.set(cursor, { text: textState, at: Date.now() });
    out.push(`# truncated at ${maxChars} characters; call page.snapshot with cursor "${cursor}" for the rest`);
  }
  const info = textState.info;
  return {
    snapshot: out.join('\n'), url: info.top.url, title: info.top.title, tabId: textState.tabId, mode: 'diff',
    frames: info.placed.size, refs, chars, truncated, cursor, diff: textState.diff,
  };
}

async function continueCursor(tabs, tabId, id, budget) {
  const entry = cursors.get(id);
  cursors.delete(id);
  if (!entry) {
    throw new PageError('BAD_REQUEST',
      `Cursor ${JSON.stringify(id).slice(0, 40)} is unknown or expired (cursors live 10 minutes and are used once). Take a new snapshot.`,
      {});
  }
  const owner = entry.state ? entry.state.tabId : entry.text.tabId;
  if (tabId !== null && owner !== tabId) throw new PageError('BAD_REQUEST', 'This cursor belongs to another tab.', { tabId: owner });
  if (entry.text) return pageOfText(entry.text, budget.maxChars, 0);
  // A cursor was shown (it is in a page someone read): its end is the baseline at once.
  entry.state.provisional = null;
  return finishPage(entry.state, await render(tabs, entry.state, budget.maxChars, deadlineOf(budget)), budget);
}

function pruneCursors() {
  const now = Date.now();
  for (const [id, entry] of cursors) if (now - entry.at > CURSOR_TTL_MS) cursors.delete(id);
  while (cursors.size > MAX_CURSORS) cursors.delete(cursors.keys().next().value);
}
