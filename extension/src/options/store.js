// Where a person's own browser keeps its pairing with a bridge: {bridgeUrl, credential,
// device}, written by the options page after a good code exchange (bridge/pairing.py) and
// read by the background at start-up when there is no config.json (the file only a
// supervisor writes, into its private copy). IndexedDB of the extension's origin: the
// options page and the background share it, and it needs no extra permission (as
// background/reffloor.js). Only this extension's pages can read it; web pages cannot.

const DB = 'trustbridge-pairing';
const STORE = 'pairing';
const KEY = 'current';

function open() {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function run(mode, work) {
  const db = await open();
  try {
    return await new Promise((resolve, reject) => {
      const tx = db.transaction(STORE, mode);
      const req = work(tx.objectStore(STORE));
      tx.oncomplete = () => resolve(req.result);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error);
    });
  } finally {
    db.close();
  }
}

/** True for a stored pairing with every field the background needs. */
export function isPairing(value) {
  return !!value && typeof value === 'object' && typeof value.bridgeUrl === 'string'
    && typeof value.credential === 'string' && typeof value.device === 'string'
    && value.bridgeUrl !== '' && value.credential !== '' && value.device !== '';
}

/** The stored pairing, or null (none, incomplete, or the store is unavailable). */
export async function loadPairing() {
  if (typeof indexedDB === 'undefined') return null;
  try {
    const value = await run('readonly', (store) => store.get(KEY));
    return isPairing(value) ? { bridgeUrl: value.bridgeUrl, credential: value.credential, device: value.device } : null;
  } catch {
    return null;
  }
}

/** Store `{bridgeUrl, credential, device}` (replaces any earlier pairing). */
export async function savePairing({ bridgeUrl, credential, device }) {
  const value = { bridgeUrl, credential, device, pairedAt: Date.now() };
  if (!isPairing(value)) throw new Error('incomplete pairing');
  await run('readwrite', (store) => store.put(value, KEY));
}

/** Forget the pairing: the extension connects to nothing after its next start. */
export async function clearPairing() {
  await run('readwrite', (store) => store.delete(KEY));
}

/** The background's config from a stored pairing: the credential is its hello token. */
export function configOf(pairing) {
  return pairing ? { bridgeUrl: pairing.bridgeUrl, token: pairing.credential, device: pairing.device } : null;
}

/**
 * Whether the person allows the CDP door (`trustbridge cdp`) on this browser: false until
 * they turn it on in the options page (docs/cdp.md "A person's own browser"). Kept in the
 * same IndexedDB as the pairing (no `storage` permission is needed; only this extension's
 * pages can read or change it, web pages cannot).
 */
const CDP_KEY = 'cdpAllowed';

/** The person's CDP-door consent (false: never given, or the store is unavailable). */
export async function loadCdpConsent() {
  if (typeof indexedDB === 'undefined') return false;
  try {
    return (await run('readonly', (store) => store.get(CDP_KEY))) === true;
  } catch {
    return false;
  }
}

/** Store the person's CDP-door consent (a boolean). */
export async function saveCdpConsent(allowed) {
  await run('readwrite', (store) => store.put(allowed === true, CDP_KEY));
}
