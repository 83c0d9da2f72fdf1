// The background's global ref counter (tabs.js `refFloor`) kept across restarts of the
// background itself (Chromium stops and restarts an MV3 service worker; Firefox restarts
// the extension after a content-process crash, tests/e2e/test_crash.py). Its documents
// live on: after a restart each one mints from max(floor, its own registry's `next`), so
// it never reuses its own numbers, but a counter back at 1 could hand tab B numbers tab A
// still holds, and a ref of A used on B would name B's element. The last floor is stored
// in IndexedDB (no extra permission; available to service workers and Firefox background
// scripts) and a restart starts above it, with SLACK for mints whose write was lost.

const DB = 'trustbridge-refs';
const STORE = 'floor';
const KEY = 'next';
/** Ref numbers skipped after a restart: covers mints made after the last stored write. */
export const SLACK = 1000;
/** Longest wait for the stored floor at start-up, ms: a slow or broken store never blocks. */
const READ_WAIT_MS = 500;

function open() {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

/** The stored floor (0 when none, or the store is unavailable or slow). */
export async function loadFloor() {
  if (typeof indexedDB === 'undefined') return 0;
  const read = (async () => {
    const db = await open();
    try {
      return await new Promise((resolve, reject) => {
        const req = db.transaction(STORE, 'readonly').objectStore(STORE).get(KEY);
        req.onsuccess = () => resolve(Number(req.result) || 0);
        req.onerror = () => reject(req.error);
      });
    } finally {
      db.close();
    }
  })().catch(() => 0);
  return Promise.race([read, new Promise((r) => setTimeout(() => r(0), READ_WAIT_MS))]);
}

/** A saver that stores the latest floor, one write at a time (later values coalesce). */
export function floorSaver() {
  if (typeof indexedDB === 'undefined') return () => {};
  let pending = null;
  let running = false;
  let dbp = null;
  const run = async () => {
    running = true;
    while (pending !== null) {
      const value = pending;
      pending = null;
      try {
        dbp = dbp || open();
        const db = await dbp;
        await new Promise((resolve, reject) => {
          const tx = db.transaction(STORE, 'readwrite');
          tx.objectStore(STORE).put(value, KEY);
          tx.oncomplete = resolve;
          tx.onerror = () => reject(tx.error);
        });
      } catch {
        dbp = null; // try again with the next value
      }
    }
    running = false;
  };
  return (value) => {
    pending = value;
    if (!running) run();
  };
}
