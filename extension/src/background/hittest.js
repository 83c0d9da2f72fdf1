// Hit test of a tab's viewport point across frames (issue 15 item 1, MouseAction).
//
// The top frame's content script finds the element at the point (page/hittest.js); an
// <iframe> there answers its frame key and the point in the child's viewport, and the
// child frame is asked next, down to the element. Its ref is recorded for its frame's
// document as a snapshot's refs are (tabs.noteDocument), so page.act and page.receipt
// accept it.

/** Frames descended into at one point at most. */
const MAX_FRAME_DEPTH = 8;
/** A child frame that has not yet received the key its parent just posted: asked once
 *  more after this long, ms (the key travels by postMessage; background/snapshot.js). */
const KEY_RETRY_MS = 60;

const NOTHING = Object.freeze({ ref: null, role: null, name: null, line: null });

/**
 * Name the element at `at` (CSS px of the tab's top-level viewport).
 * @param {object} api  chrome / browser namespace
 * @param {import('./tabs.js').Tabs} tabs
 * @param {number} tabId
 * @param {{x: number, y: number}} at
 * @param {boolean} receipt  arm a delivery receipt on the element found; its id is put on
 *   `top` (the resolveTarget answer) as `receiptId`
 * @param {object} top  the top frame's `locate` answer, returned to the bridge
 * @returns {Promise<{ref: string|null, role: string|null, name: string|null, line: string|null,
 *   tag?: string, frame?: number}>}  null fields: nothing but the page itself is there
 * @throws PageError BAD_REQUEST (outside the viewport), BROWSER_DOCUMENT_CHANGED (the top
 *   frame went away)
 */
export async function hitTestTab(api, tabs, tabId, at, receipt, top) {
  let frameId = 0;
  let point = { x: at.x, y: at.y };
  for (let depth = 0; depth <= MAX_FRAME_DEPTH; depth++) {
    const ordinal = tabs.ordinalOf(tabId, frameId);
    await tabs.floorReady; // a restarted background starts above its stored floor
    const floor = tabs.refFloor;
    const msg = {
      op: 'hitTest', ...point, top: depth === 0, receipt, prefix: ordinal ? `f${ordinal}` : '', refFloor: floor,
      noDescend: depth === MAX_FRAME_DEPTH,
    };
    let res = await tabs.toFrame(tabId, frameId, msg);
    if (res.frame) {
      const child = await childFrame(api, tabs, tabId, frameId, res.frame.key);
      if (child !== null) {
        frameId = child;
        point = { x: res.frame.x, y: res.frame.y };
        continue;
      }
      // Its document has no content script (yet): the <iframe> itself is what is known.
      // No receipt: events inside the child never reach the parent's element.
      res = await tabs.toFrame(tabId, frameId, { ...msg, receipt: false, noDescend: true });
    }
    if (!res.ref) return { ...NOTHING };
    const who = await tabs.toFrame(tabId, frameId, { op: 'identify' });
    tabs.noteDocument(tabId, ordinal, who.docId, floor, res.nextRef || floor);
    if (res.receiptId) top.receiptId = res.receiptId;
    const hit = { ref: res.ref, role: res.role, name: res.name, line: res.line, tag: res.tag };
    if (ordinal) hit.frame = ordinal;
    return hit;
  }
  return { ...NOTHING };
}

/** The frame id of the child of `parentFrameId` whose parent announced it `key`, or null. */
async function childFrame(api, tabs, tabId, parentFrameId, key) {
  for (let attempt = 0; attempt < 2; attempt++) {
    if (attempt) await new Promise((r) => setTimeout(r, KEY_RETRY_MS));
    const frames = ((await api.webNavigation.getAllFrames({ tabId })) || [])
      .filter((f) => f.parentFrameId === parentFrameId);
    const keys = await Promise.all(frames.map((f) => tabs.toFrame(tabId, f.frameId, { op: 'identify' })
      .then((r) => r.frameKey, () => null)));
    const i = keys.indexOf(key);
    if (i >= 0) return frames[i].frameId;
  }
  return null;
}
