// Which session owns which tab of this browser, as the bridge last said in its
// `sessions.owners` event (bridge/server.py `_tell_owners`, sent whenever owners change),
// shown per tab on the toolbar action: a short badge and the title "Session <label> owns
// this tab". The popup (src/popup/) asks the background for a tab's owner and sends a
// person's Stop through it (main.js). Only labels are known here: the bridge never sends a
// session's secret, and nothing here could show one.
//
// A tab handed to a person (bridge/handover.py: the agent waits for them; issue 37) shows
// the badge "YOU" and the title "Your turn: <reason> ...", from the `handed` field the
// bridge adds to that tab's row while the hand-off lasts.
//
// Per-tab action state is reset when the tab navigates to a new page: Firefox (MDN,
// action.setBadgeText `tabId`) and Chromium (measured: a tab's title was back to the
// manifest's default after a navigation). So an owned tab's badge and title are set again
// as it loads (status and URL changes), and a free tab shows the defaults (no badge, the
// manifest's title), which a navigation cannot make stale.

/** Badge background colour (the browser's default is grey, easy to miss). */
const BADGE_COLOR = '#6a1b9a';
/** Badge of a tab handed to a person (bridge/handover.py): "your turn". */
export const HANDED_BADGE = 'YOU';
const HANDED_COLOR = '#e65100';
/** Prefix of the implicit session a client gets without session.open (bridge/sessions.py). */
const IMPLICIT_PREFIX = 'client-';

/**
 * The badge text for a session label: "AI" for an implicit session (`client-<peerId>`,
 * whose label says nothing to a person), else the label's first 3 characters.
 * @param {string} label
 * @returns {string}
 */
export function badgeText(label) {
  if (label.startsWith(IMPLICIT_PREFIX)) return 'AI';
  return label.trim().slice(0, 3) || 'AI';
}

/** The manifest's `action.default_title`: what a tab no session owns shows. */
export const DEFAULT_TITLE = 'trustbridge';

/**
 * The action's title for a tab (`label` null: no session owns it; `handed`: the reason of
 * the hand-off to a person, or null).
 */
export function titleFor(label, handed = null) {
  if (handed !== null) {
    return `Your turn: ${handed} (session ${label} waits; hand the tab back with Done in ` +
      'the live view the agent gave you)';
  }
  return label === null ? DEFAULT_TITLE : `Session ${label} owns this tab`;
}

/**
 * The tabs handed to a person in a `sessions.owners` event, as a Map tabId → reason
 * (rows with a string `handed`; the bridge adds it while a hand-off lasts).
 * @param {unknown} tabs  [{tabId, label, handed?}]
 * @returns {Map<number, string>}
 */
export function handedMap(tabs) {
  const map = new Map();
  if (!Array.isArray(tabs)) return map;
  for (const row of tabs) {
    if (row && Number.isInteger(row.tabId) && typeof row.handed === 'string' && row.handed) {
      map.set(row.tabId, row.handed.slice(0, 200));
    }
  }
  return map;
}

/**
 * The owner rows of a `sessions.owners` event as a Map tabId → label; malformed rows
 * are skipped (the event comes over the wire).
 * @param {unknown} tabs  [{tabId: number, label: string}]
 * @returns {Map<number, string>}
 */
export function ownersMap(tabs) {
  const map = new Map();
  if (!Array.isArray(tabs)) return map;
  for (const row of tabs) {
    if (row && Number.isInteger(row.tabId) && typeof row.label === 'string' && row.label) {
      map.set(row.tabId, row.label.slice(0, 64));
    }
  }
  return map;
}

export class Owners {
  /**
   * @param {object} api  the extension namespace (shim): tabs, action, runtime
   */
  constructor(api) {
    this.api = api;
    /** tabId → label of the owning session */
    this.byTab = new Map();
    /** tabId → reason, for the tabs handed to a person */
    this.handed = new Map();
    /** Whether every open tab's badge was set once since this background started. */
    this.swept = false;
    // A navigation resets a tab's badge and title: set them again as it loads.
    api.tabs.onUpdated.addListener((tabId, change) => {
      if (this.byTab.has(tabId) && (change.status !== undefined || change.url !== undefined)) {
        this.show(tabId).catch(() => null);
      }
    });
    api.tabs.onRemoved.addListener((tabId) => { this.byTab.delete(tabId); this.handed.delete(tabId); });
  }

  /** The label of the session that owns `tabId`, or null. */
  labelOf(tabId) {
    return this.byTab.get(tabId) ?? null;
  }

  /**
   * Replace what is known with the bridge's event and update the badges of the tabs whose
   * owner changed. The first time after the background started, every open tab's is set
   * (a badge the browser kept from before a restart may be stale).
   * @param {unknown} tabs  the event's `tabs`: [{tabId, label}]
   */
  async set(tabs) {
    const next = ownersMap(tabs);
    const handed = handedMap(tabs);
    const changed = new Set();
    for (const [tabId, label] of next) if (this.byTab.get(tabId) !== label) changed.add(tabId);
    for (const tabId of this.byTab.keys()) if (!next.has(tabId)) changed.add(tabId);
    for (const [tabId, why] of handed) if (this.handed.get(tabId) !== why) changed.add(tabId);
    for (const tabId of this.handed.keys()) if (!handed.has(tabId)) changed.add(tabId);
    // Replaced before any await: a later event is never overwritten by this one's.
    this.byTab = next;
    this.handed = handed;
    if (!this.swept) {
      this.swept = true;
      const open = await this.api.tabs.query({}).catch(() => []);
      for (const t of open) changed.add(t.id);
    }
    await Promise.all([...changed].map((tabId) => this.show(tabId).catch(() => null)));
    this.announce();
  }

  /** Forget every owner (the connection to the bridge is lost: its sessions are unknown). */
  async clear() {
    await this.set([]);
  }

  /** Set the badge and title of one tab from what is known. Rejects when the tab is gone. */
  async show(tabId) {
    const action = this.api.action;
    if (!action) return;
    const label = this.labelOf(tabId);
    const handed = label === null ? null : (this.handed.get(tabId) ?? null);
    const text = label === null ? '' : handed !== null ? HANDED_BADGE : badgeText(label);
    await action.setBadgeText({ tabId, text });
    await action.setTitle({ tabId, title: titleFor(label, handed) });
    if (label !== null) {
      const color = handed !== null ? HANDED_COLOR : BADGE_COLOR;
      await action.setBadgeBackgroundColor({ tabId, color }).catch(() => null);
    }
  }

  /** Tell an open popup that owners changed (nobody listening is fine). */
  announce() {
    try {
      const sent = this.api.runtime.sendMessage({ ownersChanged: true });
      if (sent && typeof sent.catch === 'function') sent.catch(() => null);
    } catch { /* no listener */ }
  }
}
