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

export class BridgeConnection {
  /**
   * @param {{bridgeUrl: string, token: string, device: string, keepAliveMs?: number}} config
   *   keepAliveMs: interval of the keep-alive API call in ms (default 20000; tests shorten it)
   * @param {Record<string, (params: object) => Promise<object>>} handlers  method → handler
   * @param {object} api  chrome or browser namespace (for the keep-alive call)
   */
  constructor(config, handlers, api) {
    this.config = config;
    this.handlers = handlers;
    this.api = api;
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
        capabilities: { ...extensionCapabilities(), requiresTrustedInput: !!this.config.requiresTrustedInput },
      }));
    };
    ws.onmessage = (event) => this.onMessage(event.data);
    ws.onclose = () => {
      if (this.ws === ws) {
        this.ws = null;
        this.welcomed = false;
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

  send(obj) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(obj));
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
        ? { code: err.code, message: err.message, details: err.details || {} }
        : { code: 'INTERNAL_ERROR', message: `Extension failure: ${err && err.message ? err.message : err}`, details: {} };
      this.send({ type: 'response', id: msg.id, ok: false, error });
    }
  }
}
