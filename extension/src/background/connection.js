// The background's WebSocket to the bridge: hello, request dispatch, reconnect with
// backoff (0.25 s doubling to 5 s), and a keep-alive extension API call every 20 s so
// an MV3 background is not suspended while idle (design.md §9). Chromium: a service worker
// with a 30 s idle timer that extension API calls reset. Firefox: an event page that
// `extensions.background.idle.timeout` (30 s) suspends; every API call the parent process
// serves resets it ("parentapicall" in ext-backgroundPage.js), and
// runtime.getPlatformInfo is served by the parent. An open WebSocket alone keeps
// neither alive. Evidence: docs/browsers.md.

import { browserLabel, extensionCapabilities } from '../shim/browser.js';

import { ERROR_CODES, PROTOCOL_VERSION } from '../generated/protocol.js';

export { PROTOCOL_VERSION };
const BACKOFF_MIN_MS = 250;
const BACKOFF_MAX_MS = 5000;
const KEEPALIVE_MS = 20000;
// The bridge's frame limit (bridge/protocol/limits.py FRAME_LIMIT_BYTES, 32 MiB) less
// room for the envelope: a frame over the limit makes the bridge close this connection
// (issue 32 item 3), so an answer that big goes out as RESULT_TOO_LARGE instead.
export const FRAME_LIMIT_BYTES = 32 * 1024 * 1024;
const FRAME_ROOM_BYTES = FRAME_LIMIT_BYTES - 64 * 1024;

/**
 * The frame to send for `obj`: its JSON, or for a response over the frame limit a
 * RESULT_TOO_LARGE error with the same id (nothing else of it is sent). Sizes are UTF-8
 * bytes, counted only when the text may be near the limit (a UTF-16 unit is 1-3 bytes).
 *
 * @param {object} obj  a protocol message
 * @returns {string}
 */
export function boundedFrame(obj) {
  const text = JSON.stringify(obj);
  if (text.length * 3 <= FRAME_ROOM_BYTES) return text;
  const size = new TextEncoder().encode(text).length;
  if (size <= FRAME_ROOM_BYTES || obj.type !== 'response') return text;
  return JSON.stringify({
    type: 'response', id: obj.id, ok: false,
    error: {
      code: 'RESULT_TOO_LARGE',
      message: `The extension's answer is ${size} bytes, over the bridge's ${FRAME_LIMIT_BYTES}-byte frame limit; it was not sent and nothing else was affected.`,
      details: { bytes: size, limitBytes: FRAME_LIMIT_BYTES },
      nextStep: 'Ask for less: a smaller part of the page (a ref\'s subtree, a lower depth) or a filtered listing.',
    },
  });
}

/**
 * Whether a person may be using this browser (hello capability `attended`).
 *
 * False for a browser the supervisor launched: its extension copy carries the
 * supervisor's config.json (supervisor/extension_copy.py), and the supervisor's driver
 * says `headed: true` for a launch with a window. `config.attended`, when the supervisor
 * writes it, wins. Also false whenever `navigator.webdriver` is true (Firefox under
 * WebDriver BiDi sets it). `navigator.webdriver` alone cannot tell: measured, Chromium's
 * service worker has no `navigator.webdriver` (undefined) and our Chromium launches turn
 * it off in pages (`--disable-blink-features=AutomationControlled`, docs/security.md).
 *
 * @param {object} config  the extension's config
 * @param {boolean} fromSupervisor  the config came from the supervisor's config.json
 * @returns {boolean}
 */
export function attendedOf(config, fromSupervisor) {
  if (globalThis.navigator?.webdriver === true) return false;
  if (typeof config.attended === 'boolean') return config.attended;
  return !fromSupervisor;
}

export class BridgeConnection {
  /**
   * @param {{bridgeUrl: string, token: string, device: string, keepAliveMs?: number}} config
   *   keepAliveMs: interval of the keep-alive API call in ms (default 20000; tests shorten it)
   *   attended: a person may be using this browser (hello capability `attended`; attendedOf)
   * @param {Record<string, (params: object) => Promise<object>>} handlers  method → handler
   * @param {object} api  chrome or browser namespace (for the keep-alive call)
   * @param {{events?: Record<string, (params: object) => void>, onClose?: () => void}} [hooks]
   *   events: bridge event name → listener (one-way notices, e.g. `sessions.owners`);
   *   onClose: called when the connection to the bridge is lost
   */
  constructor(config, handlers, api, { events = {}, onClose = () => {} } = {}) {
    this.config = config;
    this.handlers = handlers;
    this.api = api;
    this.events = events;
    this.onClose = onClose;
    this.backoff = BACKOFF_MIN_MS;
    this.ws = null;
    this.welcomed = false;
  }

  async start() {
    this.browser = await browserLabel();
    this.connect();
    setInterval(() => {
      // Any extension API call resets the idle timer of an MV3 background.
      try { this.api.runtime.getPlatformInfo().catch(() => {}); } catch { /* ignore */ }
      if (!this.ws || this.ws.readyState === WebSocket.CLOSED) this.connect();
    }, this.config.keepAliveMs || KEEPALIVE_MS);
  }

  connect() {
    let ws;
    try {
      ws = new WebSocket(this.config.bridgeUrl);
    } catch {
      this.scheduleReconnect();
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      ws.send(JSON.stringify({
        type: 'hello', role: 'extension', device: this.config.device,
        protocolVersion: PROTOCOL_VERSION, token: this.config.token,
        browser: this.browser || navigator.userAgent.slice(0, 64),
        // requiresTrustedInput: the supervisor runs a driver for this device; a bridge
        // that restarted learns the promise from us before the driver is back.
        // attended: a person may use this browser, so the bridge never claims a tab no
        // session opened without tabs.claim (docs/sessions.md).
        capabilities: {
          ...extensionCapabilities(), requiresTrustedInput: !!this.config.requiresTrustedInput,
          attended: !!this.config.attended,
          // cdpAllowed: the person allowed the CDP door in the options page (default
          // off); the bridge refuses it on an attended browser without (docs/cdp.md).
          cdpAllowed: !!this.config.cdpAllowed,
        },
      }));
    };
    ws.onmessage = (event) => this.onMessage(event.data);
    ws.onclose = () => {
      if (this.ws === ws) {
        this.ws = null;
        this.welcomed = false;
        try { this.onClose(); } catch { /* a listener's bug must not stop reconnecting */ }
        this.scheduleReconnect();
      }
    };
    ws.onerror = () => { /* onclose follows */ };
  }

  scheduleReconnect() {
    const delay = this.backoff;
    this.backoff = Math.min(this.backoff * 2, BACKOFF_MAX_MS);
    setTimeout(() => { if (!this.ws) this.connect(); }, delay);
  }

  /** True while the bridge has welcomed this connection (events sent now are delivered). */
  get connected() {
    return this.welcomed && !!this.ws && this.ws.readyState === WebSocket.OPEN;
  }

  send(obj) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(boundedFrame(obj));
  }

  /** A one-way event to the bridge (dropped while disconnected). */
  sendEvent(event, params) {
    this.send({ type: 'event', event, params });
  }

  async onMessage(data) {
    let msg;
    try { msg = JSON.parse(data); } catch { return; }
    if (msg.type === 'welcome') {
      this.welcomed = true;
      this.backoff = BACKOFF_MIN_MS;
      return;
    }
    if (msg.type === 'event') {
      const listener = typeof msg.event === 'string' && Object.hasOwn(this.events, msg.event)
        ? this.events[msg.event] : null;
      if (listener) {
        try { listener(msg.params && typeof msg.params === 'object' ? msg.params : {}); } catch { /* ignore */ }
      }
      return;
    }
    if (msg.type !== 'request') return;
    const handler = Object.hasOwn(this.handlers, msg.method) ? this.handlers[msg.method] : null;
    if (!handler) {
      this.send({ type: 'response', id: msg.id, ok: false, error: { code: 'BAD_REQUEST', message: `The extension does not handle ${msg.method}.`, details: {} } });
      return;
    }
    try {
      const result = await handler(msg.params || {});
      this.send({ type: 'response', id: msg.id, ok: true, result });
    } catch (err) {
      // Only wire codes the protocol defines (generated from bridge/protocol) go out.
      const error = err && ERROR_CODES.has(err.code)
        ? { code: err.code, message: err.message, details: err.details || {}, ...(err.nextStep ? { nextStep: String(err.nextStep) } : {}) }
        : { code: 'INTERNAL_ERROR', message: `Extension failure: ${err && err.message ? err.message : err}`, details: {} };
      this.send({ type: 'response', id: msg.id, ok: false, error });
    }
  }
}
