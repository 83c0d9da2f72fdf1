// The background's WebSocket to the bridge: hello, request dispatch, reconnect with
// backoff (0.25 s doubling to 5 s), and a keep-alive extension API call every 20 s so
// an MV3 background is not suspended while idle (Chromium: 30 s idle timer; Firefox
// likewise, DESIGN §9).

export const PROTOCOL_VERSION = 1;
const BACKOFF_MIN_MS = 250;
const BACKOFF_MAX_MS = 5000;
const KEEPALIVE_MS = 20000;

export class BridgeConnection {
  /**
   * @param {{bridgeUrl: string, token: string, device: string}} config
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

  start() {
    this.connect();
    setInterval(() => {
      // Any extension API call resets the idle timer of an MV3 background.
      try { this.api.runtime.getPlatformInfo(); } catch { /* ignore */ }
      if (!this.ws || this.ws.readyState === WebSocket.CLOSED) this.connect();
    }, KEEPALIVE_MS);
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
        browser: navigator.userAgent.slice(0, 64),
        capabilities: { closedShadowVisible: true, syntheticInput: true },
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
      const error = err && err.code
        ? { code: err.code, message: err.message, details: err.details || {} }
        : { code: 'INTERNAL_ERROR', message: `Extension failure: ${err && err.message ? err.message : err}`, details: {} };
      this.send({ type: 'response', id: msg.id, ok: false, error });
    }
  }
}
