"""A hung page named as such (issue 32 item 4): PAGE_UNRESPONSIVE after one timeout.

A page whose main thread never yields (``while (true) {}``, a hung renderer) answers
nothing: its content script cannot snapshot, resolve a ref or read the frame token, and
a load cannot replace it while its old document holds the renderer. Before, every such
request timed out with "retry or wait longer", over and over.

Now, when a request on a tab (:data:`WATCHED`) fails with TIMEOUT, the bridge asks the
extension's background to probe the tab (``tabs.probe``: ``scripting.executeScript`` of
a trivial function, :data:`PROBE_TIMEOUT_MS`). No answer in that time: the page is
stuck, the request answers PAGE_UNRESPONSIVE naming the tab and the way out (close the
tab; a reload works in Firefox, not in Chromium: :data:`NEXT_STEP`), and the tab is remembered as hung (until a probe finds it running or it is closed). The next request on a remembered
tab is probed first (at most PROBE_TIMEOUT_MS) and answers PAGE_UNRESPONSIVE at once
instead of waiting for another timeout; a probe that runs clears the mark. Navigation
and close are never refused up front: they are the way out, and are only named as hung
after their own timeout.

The healthy path costs nothing: no probe unless a request timed out or the tab is marked.
Other tabs are not touched: the probe runs in the background, not in any page.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from .protocol import errors as E

log = logging.getLogger("trustbridge.hang")

PROBE_TIMEOUT_MS = 1500
"""How long a page has to run the probe's trivial script, ms. A busy but healthy page
(a long task) answers well within it; one stuck in a loop never does."""

WATCHED = frozenset({"page.snapshot", "page.evaluate", "page.navigate", "page.history",
                     "page.find", "page.wait", "page.screenshot", "page.console",
                     "page.network"})
"""Requests on a tab whose TIMEOUT is probed. Input (page.act, page.batch) is not: its
timeouts already say nothing was dispatched, and an action's own answer is kept as is."""

WAYS_OUT = frozenset({"page.navigate", "page.history"})
"""Requests that may end the hang (a load replaces the document): never refused up
front on a marked tab."""

NEXT_STEP = ("Close the tab (tabs.close; MCP: browser_tabs action close) — that always "
             "works — and open a new one if you need the page. Reloading it (navigating "
             "to the same site) works in Firefox; in Chromium the stuck page keeps the tab "
             "until it is closed (only a navigation to another site may load). Other tabs "
             "keep working.")
"""The way out, as measured (tests/e2e/test_faults.py): closing the tab always worked; a
reload or a navigation to the same site never committed in headless Chromium (5 s and
15 s tried; the stuck renderer must let the old document go), one to another site (a new
renderer process) did once and not after a pending reload; Firefox ESR loaded the new
page."""


class HangWatch:
    """Probes tabs after a timeout and remembers the hung ones.

    Args:
        peer: returns the live peer with that id (raises DeviceNotConnected).
    """

    def __init__(self, peer: Callable[[str], Any]) -> None:
        self.peer = peer
        self.hung: set[tuple[str, int]] = set()
        """(device, tabId) of tabs a probe found stuck and no later probe found running."""

    async def probe(self, extension: str, tab: int) -> bool | None:
        """Whether ``tab``'s page runs script: True, False (stuck), or None (unknown: the
        page cannot be scripted, or the probe itself failed)."""
        try:
            result = await self.peer(extension).call(
                "tabs.probe", {"tabId": tab, "timeoutMs": PROBE_TIMEOUT_MS},
                PROBE_TIMEOUT_MS / 1000 + 5)
        except E.TrustbridgeError as err:
            log.debug("probe of tab %s failed: %s", tab, err)
            return None
        return result.get("responsive")

    def error(self, device: str, tab: int, method: str, timeout_ms: int | None, *,
              sent: bool = True) -> E.PageUnresponsive:
        """PAGE_UNRESPONSIVE for ``method`` on ``tab`` (``sent``: the request went to the
        page and timed out; otherwise it was not sent, the tab being still stuck)."""
        waited = f" within {timeout_ms / 1000:g} s" if timeout_ms else ""
        what = (f"{method} got no answer{waited}, and the page" if sent else
                f"it was found stuck before and {method} was not sent: the page still")
        return E.PageUnresponsive(
            f"Tab {tab}'s page is not responding: {what} did not run a trivial script "
            f"within {PROBE_TIMEOUT_MS} ms (its main thread is stuck, e.g. a script in an "
            "endless loop). Nothing more will come from it until it is closed (or, in "
            "Firefox, reloaded).",
            next_step=NEXT_STEP, tabId=tab, method=method, timeoutMs=timeout_ms,
            device=device)

    async def before(self, device: str, extension: str, tab: int | None, method: str) -> None:
        """Before ``method`` on a tab marked hung: probe it; still stuck → raise.

        Raises:
            PageUnresponsive: the tab is still stuck (nothing was sent to the page).
        """
        if tab is None or (device, tab) not in self.hung or method in WAYS_OUT:
            return
        if await self.probe(extension, tab) is False:
            raise self.error(device, tab, method, None, sent=False)
        self.hung.discard((device, tab))

    async def after_timeout(self, device: str, extension: str, tab: int | None, method: str,
                            err: E.TrustbridgeError) -> None:
        """``method`` on ``tab`` timed out: probe the page; stuck → raise
        PAGE_UNRESPONSIVE (from ``err``) and mark the tab; otherwise return (the caller
        raises ``err``, the page is only slow).

        Raises:
            PageUnresponsive: the probe found the page stuck.
        """
        if tab is None:
            return
        if await self.probe(extension, tab) is False:
            self.hung.add((device, tab))
            timeout_ms = err.details.get("timeoutMs")
            if timeout_ms is None and isinstance(err.details.get("timeoutS"), int | float):
                timeout_ms = int(err.details["timeoutS"] * 1000)
            raise self.error(device, tab, method, timeout_ms) from err
        self.hung.discard((device, tab))

    def closed(self, device: str, tab: Any) -> None:
        """The tab is gone: forget its mark."""
        if isinstance(tab, int):
            self.hung.discard((device, tab))
