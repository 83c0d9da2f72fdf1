// The content script's end of its frame's persistent port (background/ports.js): the
// background sends read requests over it ({id, msg} → {id, reply}) and the document
// pushes delivery receipts over it. Pure of chrome.* / browser.*: `runtime` (the
// extension's runtime namespace) is passed in.
//
// The port opens when the document starts. It closes when the background goes away (a
// service worker restart, an extension reload), when the page enters the back/forward
// cache (Chromium closes it), or when the background drops it (another document of the
// frame committed). It is opened again lazily, never in a loop: when a request comes by
// runtime.sendMessage (the background has no port of ours), when a receipt is pushed, and
// when the page comes back from the back/forward cache (pageshow with persisted). A
// runtime.connect that throws (the extension context is gone: reloaded or removed) stops
// every further attempt.

import { onWindow } from './reopen.js';

/** Name of the port every content script opens (background/ports.js accepts it). */
export const FRAME_PORT_NAME = 'trustbridge-frame';

export class FramePort {
  /**
   * @param {object} runtime   the extension's runtime namespace (connect, sendMessage)
   * @param {Window} win       the document's window (pageshow)
   * @param {string} name      the port name the background accepts
   * @param {(msg: object) => Promise<{ok: boolean}>} answer  the reply to a request
   */
  constructor(runtime, win, name, answer) {
    this.runtime = runtime;
    this.name = name;
    this.answer = answer;
    this.port = null;
    this.dead = false; // the extension context is gone: never connect again
    onWindow(win, 'pageshow', (event) => {
      // Chromium closed the port when the page entered the cache; its disconnect event
      // may only run after this one: start a fresh port either way.
      if (event.persisted) this.reconnect();
    });
    this.connect();
  }

  /** Open the port if none is open (and the extension context lives). */
  connect() {
    if (this.port || this.dead) return;
    let port;
    try {
      port = this.runtime.connect({ name: this.name });
    } catch {
      this.dead = true; // "Extension context invalidated"
      return;
    }
    this.port = port;
    port.onMessage.addListener((m) => {
      if (!m || typeof m.id !== 'number' || !m.msg) return;
      this.answer(m.msg).then((reply) => {
        try {
          port.postMessage({ id: m.id, reply });
        } catch { /* closed meanwhile: the background failed the request */ }
      });
    });
    port.onDisconnect.addListener(() => {
      if (this.port === port) this.port = null;
    });
  }

  /** Drop the current port (if any) and open a new one. */
  reconnect() {
    const old = this.port;
    this.port = null;
    if (old) {
      try { old.disconnect(); } catch { /* already closed */ }
    }
    this.connect();
  }

  /** Send a one-way message to the background: over the port when one is open, else by
   *  runtime.sendMessage (and the port is opened for the next one). Never throws. */
  push(message) {
    if (this.port) {
      try {
        this.port.postMessage(message);
        return;
      } catch {
        this.port = null;
      }
    }
    try {
      const sent = this.runtime.sendMessage(message);
      if (sent && typeof sent.catch === 'function') sent.catch(() => {});
    } catch { /* extension context gone */ }
    this.connect();
  }
}
