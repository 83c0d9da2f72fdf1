// What the popup (src/popup/popup.js) may ask the background, over runtime messages
// `{popup: 'owner' | 'stop', tabId, label?}`:
//   owner → {tabId, label: string | null, connected}: the session that owns the tab, as the
//           bridge last said (background/owners.js);
//   stop  → {sent: true} once the extension→bridge event `session.stop {label}` went out
//           (the bridge stops that session: bridge/server.py `_on_event`), or
//           {sent: false, reason} when the owner changed meanwhile or the bridge is away.
// Only the extension's own popup page is answered: content scripts run in pages that
// must never stop a session, and their sender URL is the page's, never the extension's.

export const POPUP_PAGE = 'popup.html';

/**
 * Register the listener.
 * @param {object} api  the extension namespace (shim)
 * @param {import('./owners.js').Owners} owners
 * @param {() => (import('./connection.js').BridgeConnection | null)} connection  the live one
 */
export function servePopup(api, owners, connection) {
  const page = api.runtime.getURL(POPUP_PAGE);
  api.runtime.onMessage.addListener((msg, sender, sendResponse) => {
    const ask = msg && msg.popup;
    if (typeof ask !== 'string' || sender.id !== api.runtime.id
        || typeof sender.url !== 'string' || !sender.url.startsWith(page)) return false;
    sendResponse(answer(owners, connection(), ask, msg));
    return false;
  });
}

/** The answer to one popup message (pure: no I/O but the event sent on `stop`). */
export function answer(owners, conn, ask, { tabId, label } = {}) {
  if (!Number.isInteger(tabId)) return { error: 'tabId must be an integer.' };
  const connected = !!(conn && conn.connected);
  const owner = connected ? owners.labelOf(tabId) : null;
  if (ask === 'owner') return { tabId, label: owner, connected };
  if (ask === 'stop') {
    if (!connected) return { sent: false, reason: 'Not connected to the bridge: nothing to stop.' };
    if (owner === null || owner !== label) {
      return { sent: false, reason: owner === null ? 'No session owns this tab now.' : `Session ${owner} owns this tab now; look again.` };
    }
    conn.sendEvent('session.stop', { label });
    return { sent: true };
  }
  return { error: `Unknown popup request ${ask}.` };
}
