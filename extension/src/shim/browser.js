// The one place that knows which browser runs the extension (Chromium or Firefox /
// Camoufox). Background and content code import `api` and the helpers below instead of
// touching `chrome.*` / `browser.*` differences themselves; page/ code never imports this
// file (it stays pure DOM and receives what it needs, e.g. `shadowRootOf`, as arguments).
//
// Both browsers' MV3 namespaces return promises, so one `api` object serves both:
// Firefox defines `browser` (and `chrome` as an alias), Chromium defines `chrome`.

export const api = globalThis.browser ?? globalThis.chrome;

/** 'gecko' (Firefox, Camoufox) or 'chromium'. runtime.getBrowserInfo exists only in Gecko. */
export const engine = typeof api?.runtime?.getBrowserInfo === 'function' ? 'gecko' : 'chromium';

/**
 * The shadow root of `el`, open or closed, or null. Extensions may see closed roots
 * (design.md §4): Chromium through the function chrome.dom.openOrClosedShadowRoot(el);
 * Firefox through the read-only *property* el.openOrClosedShadowRoot (content scripts
 * only) — not a method: calling it throws "is not a function" (docs/browsers.md).
 */
export function openOrClosedShadowRoot(el) {
  if (el.shadowRoot) return el.shadowRoot;
  try {
    if (api?.dom && typeof api.dom.openOrClosedShadowRoot === 'function') {
      return api.dom.openOrClosedShadowRoot(el) || null;
    }
    if ('openOrClosedShadowRoot' in el) return el.openOrClosedShadowRoot || null;
  } catch {
    /* not a host */
  }
  return null;
}

/**
 * Whether content scripts of this browser can see closed shadow roots. Both APIs above are
 * content-script APIs, not background ones, so this is decided by engine: Chromium ≥ 88
 * has chrome.dom.openOrClosedShadowRoot, Firefox ≥ 63 Element.openOrClosedShadowRoot;
 * the manifest requires Chromium 120 / Firefox 128. The e2e suite checks, in both, that
 * the snapshot shows the closed root's content.
 */
export const closedShadowVisible = true;

/** Capabilities the extension reports in its hello (shown by `trustbridge doctor`). */
export function extensionCapabilities() {
  return { closedShadowVisible, syntheticInput: true };
}

/** A short "name version" of the browser for doctor, e.g. "Firefox 153.8.0". */
export async function browserLabel() {
  if (engine === 'gecko') {
    try {
      const info = await api.runtime.getBrowserInfo();
      return `${info.name} ${info.version}`.slice(0, 64);
    } catch {
      /* fall through */
    }
  }
  const ua = globalThis.navigator?.userAgent || '';
  const m = /(?:Chrome|Chromium)\/([\d.]+)/.exec(ua);
  return (m ? `Chromium ${m[1]}` : ua).slice(0, 64);
}
