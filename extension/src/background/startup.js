// Firefox under Playwright's WebDriver BiDi: Playwright opens its own window for the
// pages it drives, and Firefox's start-up window stays open beside it with one tab no
// driver knows (no frame tokens; it would show in tabs.list and count as a second active
// tab). The supervisor loads a marker URL there (the `browser.startup.homepage` pref) and
// names it in config.json; this closes tabs showing exactly that URL, but only once
// another window exists, since closing the last window would quit Firefox. The background
// waits for it before saying hello, so no client ever lists the start-up tab.
// Evidence: docs/browsers.md ("Playwright opens its own window").

/**
 * @param {object} api  the extension namespace (shim)
 * @param {string} marker  the exact start-up URL to close
 * @param {number} timeoutMs  give up after this long (ms)
 * @returns {Promise<number>} how many tabs were closed (0 on timeout)
 */
export async function closeStartupTabs(api, marker, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let closed = 0;
  while (Date.now() < deadline) {
    const [tabs, windows] = await Promise.all([api.tabs.query({}), api.windows.getAll()]);
    const marked = tabs.filter((t) => t.url === marker);
    const others = windows.filter((w) => !marked.some((t) => t.windowId === w.id));
    if (marked.length && others.length) {
      await api.tabs.remove(marked.map((t) => t.id)).catch(() => null);
      closed += marked.length;
      return closed;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return closed;
}
