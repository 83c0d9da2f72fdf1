// The options page of a person's own browser: trades the one-time code `trustbridge pair`
// printed for this device's credential (bridge/pairing.py), over a WebSocket to the bridge,
// stores {bridgeUrl, credential, device} (options/store.js) and tells the background to
// connect with it. A refused code (wrong, used, expired) stores nothing.

import { api } from '../shim/browser.js';
import { PROTOCOL_VERSION } from '../generated/protocol.js';
import {
  clearPairing, loadCdpConsent, loadPairing, saveCdpConsent, savePairing,
} from './store.js';

/** bridge/config.py DEFAULT_PORT: where `trustbridge up` / `mcp` listen by default. */
const DEFAULT_URL = 'ws://127.0.0.1:17831';
/** Longest wait for the bridge's answer to a pair request, ms. */
const EXCHANGE_TIMEOUT_MS = 10000;

const $ = (id) => document.getElementById(id);

function say(state, text) {
  const el = $('status');
  el.dataset.state = state;
  el.textContent = text;
}

/**
 * Why the code may not be sent to `url`, or null when it may: ws:// only to this machine
 * (127.0.0.0/8, localhost, [::1]); wss:// (TLS) anywhere. The same rule as the bridge
 * token's (bridge/config.py token_refusal): the code and the credential never travel in
 * plain text beyond loopback.
 */
export function urlRefusal(url) {
  let parsed;
  try { parsed = new URL(url); } catch { return `${url} is not a URL`; }
  if (parsed.protocol === 'wss:') return null;
  if (parsed.protocol !== 'ws:') return `${url} is not a ws:// or wss:// URL`;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)) return null;
  return `${host} is not this machine and ws:// is not encrypted; use wss:// for a bridge elsewhere`;
}

/**
 * One pairing exchange: `{type: pair, code}` as the first frame; resolves
 * `{device, credential}` on `paired`, rejects with the bridge's message otherwise.
 */
export function exchange(url, code) {
  return new Promise((resolve, reject) => {
    let ws;
    try { ws = new WebSocket(url); } catch (err) { reject(new Error(`Cannot connect to ${url}: ${err.message || err}`)); return; }
    let settled = false;
    const finish = (fn, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      try { ws.close(); } catch { /* already closed */ }
      fn(value);
    };
    const timer = setTimeout(() => finish(reject, new Error(`No answer from ${url} within ${EXCHANGE_TIMEOUT_MS / 1000} s.`)), EXCHANGE_TIMEOUT_MS);
    ws.onopen = () => ws.send(JSON.stringify({
      type: 'pair', code, protocolVersion: PROTOCOL_VERSION, browser: navigator.userAgent.slice(0, 64),
    }));
    ws.onmessage = (event) => {
      let msg;
      try { msg = JSON.parse(event.data); } catch { finish(reject, new Error('The bridge sent something that is not JSON.')); return; }
      if (msg && msg.type === 'paired' && typeof msg.credential === 'string' && typeof msg.device === 'string') {
        finish(resolve, { device: msg.device, credential: msg.credential });
      } else if (msg && msg.type === 'response' && msg.ok === false && msg.error) {
        finish(reject, new Error(`${msg.error.code}: ${msg.error.message}`));
      } else {
        finish(reject, new Error('Unexpected answer from the bridge.'));
      }
    };
    ws.onclose = () => finish(reject, new Error(`${url} closed the connection without an answer (is a trustbridge bridge running there?).`));
  });
}

async function showCurrent() {
  const current = await loadPairing();
  $('current').textContent = current
    ? `Paired as device "${current.device}" with ${current.bridgeUrl}.`
    : 'Not paired: this extension connects to nothing.';
  $('forget').disabled = !current;
  if (!$('url').value) $('url').value = current ? current.bridgeUrl : DEFAULT_URL;
  return current;
}

async function pair(event) {
  event.preventDefault();
  const url = $('url').value.trim() || DEFAULT_URL;
  const code = $('code').value.trim();
  if (!code) { say('error', 'Type the code `trustbridge pair` printed.'); return; }
  const refusal = urlRefusal(url);
  if (refusal) { say('error', `Not sent: ${refusal}.`); return; }
  $('submit').disabled = true;
  say('working', 'Pairing…');
  try {
    const { device, credential } = await exchange(url, code);
    await savePairing({ bridgeUrl: url, credential, device });
    $('code').value = '';
    // The background connects with the stored pairing now (background/main.js).
    await api.runtime.sendMessage({ pairingChanged: true }).catch(() => null);
    say('paired', `Paired as device "${device}". The extension now connects to ${url}.`);
  } catch (err) {
    say('error', `Not paired: ${err.message || err}`);
  } finally {
    $('submit').disabled = false;
    await showCurrent();
  }
}

async function forget() {
  await clearPairing();
  say('idle', 'Pairing forgotten; the extension restarts unpaired.');
  await showCurrent();
  // A restart drops the live connection; unpaired, the new background connects nowhere.
  setTimeout(() => api.runtime.reload(), 300);
}

async function showCdpConsent() {
  const allowed = await loadCdpConsent();
  $('cdp').checked = allowed;
  $('cdp-status').dataset.state = allowed ? 'on' : 'off';
  $('cdp-status').textContent = allowed
    ? 'The CDP door is allowed on this browser.'
    : 'The CDP door is refused on this browser.';
}

async function setCdpConsent() {
  $('cdp').disabled = true;
  try {
    await saveCdpConsent($('cdp').checked);
    // The background tells the bridge now (background/main.js, event consent.cdp).
    await api.runtime.sendMessage({ cdpConsentChanged: true }).catch(() => null);
  } finally {
    $('cdp').disabled = false;
    await showCdpConsent();
  }
}

if (typeof document !== 'undefined' && document.getElementById('pair')) {
  $('pair').addEventListener('submit', pair);
  $('forget').addEventListener('click', forget);
  $('cdp').addEventListener('change', setCdpConsent);
  showCurrent();
  showCdpConsent();
}
