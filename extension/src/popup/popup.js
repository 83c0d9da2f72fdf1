// The toolbar action's popup: which session owns the active tab (or "No session owns this
// tab"), and a Stop button that stops that session through the background (runtime message
// → background/popup_api.js → bridge event `session.stop {label}`). It shows session labels
// only: the background never has a session's secret.
//
// The tab shown is the active tab of the popup's window; `popup.html?tabId=N` names one
// (the page opened in a tab of its own, e.g. by tests/e2e/test_session_popup.py).

import { api } from '../shim/browser.js';

const ownerLine = document.getElementById('owner');
const stopButton = document.getElementById('stop');
const note = document.getElementById('note');
/** The label shown now (what Stop stops), or null. */
let shown = null;
/** The label a Stop was sent for (its end is reported when the owners change). */
let stopRequested = null;
let tabId = null;

async function targetTab() {
  const asked = new URLSearchParams(location.search).get('tabId');
  if (asked !== null && /^\d+$/.test(asked)) return Number(asked);
  const [tab] = await api.tabs.query({ active: true, currentWindow: true });
  return tab ? tab.id : null;
}

async function ask(popup, extra = {}) {
  return api.runtime.sendMessage({ popup, tabId, ...extra });
}

async function refresh() {
  if (tabId === null) {
    ownerLine.textContent = 'No tab.';
    stopButton.disabled = true;
    return;
  }
  const answer = await ask('owner');
  const before = shown;
  shown = answer && typeof answer.label === 'string' ? answer.label : null;
  if (answer && answer.connected === false) ownerLine.textContent = 'Not connected to the bridge.';
  else ownerLine.textContent = shown === null ? 'No session owns this tab' : `Session ${shown} owns this tab`;
  stopButton.disabled = shown === null;
  if (before !== null && shown !== before && stopRequested === before) note.textContent = `Session ${before} stopped.`;
}

stopButton.addEventListener('click', async () => {
  if (shown === null) return;
  stopButton.disabled = true;
  const label = shown;
  const answer = await ask('stop', { label });
  if (answer && answer.sent) {
    stopRequested = label;
    note.textContent = `Stopping session ${label}…`;
  } else {
    note.textContent = (answer && (answer.reason || answer.error)) || 'The background did not answer.';
    await refresh();
  }
});

// The background says when owners change (background/owners.js `announce`).
api.runtime.onMessage.addListener((msg) => {
  if (msg && msg.ownersChanged) refresh().catch(() => null);
  return false;
});

(async () => {
  tabId = await targetTab();
  await refresh();
})().catch((err) => { ownerLine.textContent = `Error: ${err && err.message ? err.message : err}`; });
