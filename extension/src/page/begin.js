// The start of a page.snapshot in one content-script message (background/snapshot.js
// `begin`): what used to be three messages one after another — announce the child frames'
// keys, identify, walk — answered in one round trip. Pure composition of the frame's own
// handlers (content/main.js), so the background sees exactly what the three would say.

import { toWireError } from './errors.js';

/**
 * Announce (when `announce`), identify, then start the walk (when `walk`).
 * @param {{announceFrames: () => object, identify: () => object, snapshot: (msg: object) => object}} handlers
 *   the frame's message handlers
 * @param {{announce?: boolean, walk?: object|null}} msg  walk: a `snapshot` message
 * @returns {{identity: object, chunk?: object, walkError?: {code: string, message: string, details: object}}}
 *   a failed announcement is ignored (as the background ignores a failed announceFrames
 *   message); the walk's error comes back beside the identity, for the background to
 *   throw where the walk's own message would have
 */
export function snapshotBegin(handlers, { announce = false, walk = null } = {}) {
  if (announce) {
    try {
      handlers.announceFrames();
    } catch { /* as a failed announceFrames message */ }
  }
  const out = { identity: handlers.identify() };
  if (walk) {
    try {
      out.chunk = handlers.snapshot(walk);
    } catch (err) {
      out.walkError = toWireError(err);
    }
  }
  return out;
}
