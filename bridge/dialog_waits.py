"""The executor's waits around JavaScript dialogs (issue 13, item 6; docs/design.md §2.1):
placing a new dialog on its tab, and answering a call early when a dialog blocks the tab
it waits on.

Which tab a dialog blocks is decided in bridge/dialogs.py (no I/O); this module does the
one round trip that needs (``tabs.list`` on the device's extension, answered by its
background while the page is blocked) and wakes the calls that wait on a tab:

- a load (``page.navigate``, ``page.history``, ``tabs.new``) whose page raises a dialog
  answers at once with ``{tabId, transitionPending: true, dialog}``, instead of after its
  30 s load timeout;
- any other call on a tab that a dialog now blocks (a snapshot while the page alerts
  again: an alert loop) answers ``DIALOG_OPEN`` at once, instead of timing out.

The abandoned call finishes later on its own; its answer is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from .dialogs import OpenDialog
from .protocol import errors as E
from .routing import RoutingPolicy

log = logging.getLogger("trustbridge.bridge")

PLACE_TIMEOUT_S = 2.0
"""How long a request waits for the open dialogs of its device to be placed on their
tabs before it is routed, s (one ``tabs.list``: a few ms; past it the unplaced dialog
blocks the whole device, the cautious answer)."""
LIST_TIMEOUT_S = 5.0
"""How long the bridge waits for ``tabs.list`` when it places a dialog, s."""
DISMISS_TIMEOUT_S = 10.0
"""How long the bridge waits for the driver to dismiss a dialog before a load, s."""
NEXT_DIALOG_WAIT_S = 0.75
"""After dismissing the dialog that blocked a tab to load it, how long the bridge waits
for the page to open the next one (a ``confirm()`` loop) before it starts the load, s. A
load started while a dialog is open makes Chromium dismiss that dialog unasked and leaves
the load pending behind the page's next one; waiting lets the load answer with the dialog
really open instead."""

Predicate = Callable[[OpenDialog], bool]


class DialogWaits:
    """Places dialogs and lets calls wait for one.

    Args:
        policy: the routing policy (its ``dialogs`` book and extensions).
        peer: peer id → the live peer (``call(method, params, timeout_s)``).
    """

    def __init__(self, policy: RoutingPolicy, peer: Callable[[str], Any]) -> None:
        self.policy = policy
        self.peer = peer
        self._changed: dict[str, set[asyncio.Event]] = {}
        self._placing: dict[str, set[asyncio.Task[None]]] = {}
        self.pages_seen: dict[str, int] = {}
        """Device → how many ``page.opened`` its driver has sent."""
        self._page_waiters: dict[str, set[asyncio.Event]] = {}

    # -- pages the driver sees -----------------------------------------------------------

    def page_opened(self, device: str) -> None:
        """The driver's ``page.opened``: Playwright has set up a new page of ``device``."""
        self.pages_seen[device] = self.pages_seen.get(device, 0) + 1
        for ev in self._page_waiters.pop(device, set()):
            ev.set()

    async def page_after(self, device: str, seen: int, timeout_s: float) -> bool:
        """Wait until the driver of ``device`` reported more than ``seen`` pages; False
        after ``timeout_s`` s (the caller goes on: this only narrows a race)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while self.pages_seen.get(device, 0) <= seen:
            ev = asyncio.Event()
            self._page_waiters.setdefault(device, set()).add(ev)
            try:
                await asyncio.wait_for(ev.wait(), max(0.0, deadline - loop.time()))
            except TimeoutError:
                return False
            finally:
                self._page_waiters.get(device, set()).discard(ev)
        return True

    # -- placing ---------------------------------------------------------------------

    def opened(self, device: str, dialog: OpenDialog) -> None:
        """A dialog opened on ``device``: place it on its tab in the background."""
        task = asyncio.ensure_future(self._place(device, dialog))
        tasks = self._placing.setdefault(device, set())
        tasks.add(task)
        task.add_done_callback(lambda t: self._placed(device, t))

    async def _place(self, device: str, dialog: OpenDialog) -> None:
        tabs: list[dict[str, Any]] = []
        ext = self.policy.extensions.get(device)
        if ext is not None:
            with contextlib.suppress(E.TrustbridgeError, TimeoutError):
                listed = await self.peer(ext).call("tabs.list", {}, LIST_TIMEOUT_S)
                tabs = [t for t in listed.get("tabs", []) if isinstance(t, dict)]
        if not self.policy.dialogs.place(device, dialog, tabs):
            log.info("a %s dialog on device %r could not be placed on a tab; it blocks "
                     "every tab until answered", dialog.info.get("type"), device)

    def _placed(self, device: str, task: asyncio.Task[None]) -> None:
        self._placing.get(device, set()).discard(task)
        if not self._placing.get(device):
            self._placing.pop(device, None)
        if not task.cancelled() and task.exception() is not None:
            log.error("placing a dialog failed", exc_info=task.exception())
        for ev in self._changed.pop(device, set()):
            ev.set()

    async def settled(self, device: str | None) -> None:
        """Wait (at most PLACE_TIMEOUT_S) until the dialogs ``device`` reported are placed;
        ``device`` None: every device's."""
        tasks = [t for d, ts in self._placing.items() if device in (None, d) for t in ts]
        if tasks:
            await asyncio.wait(tasks, timeout=PLACE_TIMEOUT_S)

    # -- waiting ---------------------------------------------------------------------

    def known(self, device: str) -> set[int]:
        """Identities of the device's open dialogs now (a wait ignores these)."""
        return {id(d) for d in self.policy.dialogs.all(device)}

    async def first(self, device: str, before: set[int], fits: Predicate) -> OpenDialog:
        """Return the first dialog of ``device``, not among ``before``, that was looked up
        and ``fits``; waits as long as the caller lets it (cancel to stop)."""
        while True:
            ev = asyncio.Event()
            self._changed.setdefault(device, set()).add(ev)
            try:
                for d in self.policy.dialogs.all(device):
                    if id(d) not in before and d.looked_up and fits(d):
                        return d
                await ev.wait()
            finally:
                self._changed.get(device, set()).discard(ev)

    async def race(self, device: str, call: Awaitable[dict[str, Any]], before: set[int],
                   fits: Predicate) -> tuple[dict[str, Any] | None, OpenDialog | None]:
        """Await ``call`` unless a new dialog that ``fits`` is placed first.

        Returns:
            ``(result, None)`` when the call answered first, ``(None, dialog)`` when the
            dialog came first (the call goes on and its answer is dropped).

        Raises:
            TrustbridgeError: the call's own error, when it failed first.
        """
        task = asyncio.ensure_future(call)
        waiter = asyncio.ensure_future(self.first(device, before, fits))
        try:
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            # The caller was cancelled: stop waiting for the call too (its answer, if it
            # comes, is dropped), and never leave its error unretrieved.
            task.cancel()
            task.add_done_callback(lambda t: t.cancelled() or t.exception())
            raise
        finally:
            waiter.cancel()
        if task.done():
            return task.result(), None
        task.add_done_callback(lambda t: t.cancelled() or t.exception())  # finishes later
        return None, waiter.result()


    async def dismiss_before_load(self, device: str, tab: int | None
                                  ) -> tuple[dict[str, Any] | None, OpenDialog | None]:
        """Dismiss, through the driver, the dialog that blocks ``tab`` before it loads
        another document (design.md §2.1): the page then gets exactly one answer, false
        (what Chromium would give it unasked when the load starts), and the bridge's record
        agrees with the page.

        Returns:
            ``(dismissed, next)``: ``dismissed`` the dialog answered (``{type, message,
            ...}``; None when none blocked the tab or the browser had already closed it),
            ``next`` a new dialog the page opened on that tab within NEXT_DIALOG_WAIT_S
            (the load must not start then: it answers with ``next``).

        Raises:
            TrustbridgeError: the driver's answer failed otherwise (e.g. it went offline).
        """
        # Only a dialog known to be this tab's alone: one not placed yet, or placed on
        # several tabs showing the same URL, may be another page's (the load then goes
        # on as before and the browser deals with this tab's dialog).
        dialog = next((d for d in self.policy.dialogs.all(device)
                       if tab is not None and d.tabs == frozenset({tab})), None)
        driver = self.policy.drivers.get(device)
        if dialog is None or driver is None:
            return None, None
        shown = dialog.public()
        before = self.known(device)
        params: dict[str, Any] = {"accept": False}
        if dialog.id is not None:
            params["dialogId"] = dialog.id
        dismissed: dict[str, Any] | None = shown
        try:
            await self.peer(driver).call("driver.dialog", params, DISMISS_TIMEOUT_S)
        except E.BadRequest:
            dismissed = None  # already gone (closed by the browser, or no longer known)
        if dialog.id is not None:
            self.policy.dialogs.closed(device, dialog.id)
        else:
            self.policy.dialogs.drop(device, dialog)
        if dismissed is None:
            return None, None
        try:
            nxt = await asyncio.wait_for(self.first(device, before, on_tab(tab)),
                                         NEXT_DIALOG_WAIT_S)
        except TimeoutError:
            nxt = None
        return dismissed, nxt


    async def accept_leave(self, device: str, dialog: OpenDialog) -> dict[str, Any] | None:
        """Accept, through the driver, a beforeunload prompt the agent's own navigation or
        close raised (issue 32 item 5: the agent asked to leave, so the page's "leave this
        page?" is answered yes).

        Returns:
            The prompt as shown (``{type, message, url, tabId?}``), or None when the
            browser had already closed it (nothing was answered then).

        Raises:
            TrustbridgeError: the driver's answer failed otherwise (e.g. it went offline).
        """
        driver = self.policy.drivers.get(device)
        if driver is None:
            return None
        shown = dialog.public()
        params: dict[str, Any] = {"accept": True}
        if dialog.id is not None:
            params["dialogId"] = dialog.id
        answered: dict[str, Any] | None = shown
        try:
            await self.peer(driver).call("driver.dialog", params, DISMISS_TIMEOUT_S)
        except E.BadRequest:
            answered = None  # already gone
        if dialog.id is not None:
            self.policy.dialogs.closed(device, dialog.id)
        else:
            self.policy.dialogs.drop(device, dialog)
        return answered


def on_tab(tab: int | None) -> Predicate:
    """A dialog that blocks ``tab`` (None: the tab is not known; any dialog may be on it)."""
    return lambda d: d.blocks(tab)

