// Hit test of a tab's viewport point across frames (issue 15 item 1, MouseAction).
// NOT BUILT YET: answers that nothing is known at the point.

/**
 * @returns {Promise<{ref: string|null, role: string|null, name: string|null, line: string|null, receiptId?: string}>}
 */
export async function hitTestTab(_api, _tabs, _tabId, _at, _receipt, _top) {
  return { ref: null, role: null, name: null, line: null };
}
