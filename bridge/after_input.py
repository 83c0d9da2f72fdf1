"""What an input action led to: its click receipt and the tabs it opened (docs/design.md
§2.3 delivery receipts; §10 "each room once": both are pushed by the extension alongside
the action instead of asked for).

The executor (bridge/executor.py) runs the action; right after the driver's (or, on the
synthetic path, the extension's) answer it asks :class:`AfterInput` for

- :meth:`AfterInput.delivery`: the receipt pushed while the click ran, or, when none came
  within RECEIPT_PUSH_WAIT_S, the one read from the extension (``page.receipt``);
- :func:`file_chooser`: when the receipt says a file input was clicked (``fileInput``) and
  the driver's answer names no chooser, the one the driver saw open after its answer;
- :func:`awaited_download`: when the receipt says a download started (``download``) and the
  driver's answer names none, the one the driver saw start after its answer;
- :func:`awaited_navigation`: when the receipt says a form is being submitted
  (``navigates``) and the driver's answer says no document change, whether its planned
  navigation reached the driver after the answer;
- :meth:`AfterInput.new_tabs`: the tabs :class:`~bridge.events.ActionEvents` says the
  action opened, waiting briefly for an announcement still on its way (POPUP_SETTLE_S when
  the driver saw a popup, LATE_TAB_S after an action that may open one late), described
  as ``tabs.list`` lists them.

This module only waits and asks; which receipt and which tabs belong to an action is
decided in bridge/events.py, without I/O. It is the one place the bridge reports new tabs
from: the MCP server and the SDK read ``newTabs``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import pydantic

from .events import ActionEvents, Opened
from .protocol import errors as E
from .protocol.models import ReceiptEvent, TabOpenedEvent

POPUP_SETTLE_S = 0.3
"""How long to wait for the extension to announce a tab the driver saw open, s."""
LATE_TAB_S = 0.0
"""How long after the answer to an action that may open a tab (events.may_open_tab) and
opened no known tab to wait for the acted-on tab to open one, s. Off (0) by default: an
action that opens nothing would pay it (measured +16 ms on a 34 ms trusted click at
0.03 s). A tab opened after the result went out is reported instead by the next
``page.snapshot`` or ``page.wait`` on that tab (:meth:`AfterInput.late_tabs`)."""
RECEIPT_PUSH_WAIT_S = 0.1
"""How long after the driver's answer to wait for a pushed delivery receipt before asking
the extension for it (the push is sent from the page's click listener, so it is usually
already here), s."""
READ_TIMEOUT_S = 10.0
"""How long to wait for the extension's ``page.receipt`` and ``tabs.list`` answers, s."""
FILE_CHOOSER_WAIT_MS = 2000
"""How long the driver may wait for a file chooser a click's receipt gave a sign of
(``fileInput``) and the driver's answer did not report yet, ms (:func:`file_chooser`).
Only such a click pays it, and only until the chooser comes (Chromium announces one a
few protocol round trips after the input's click: Playwright resolves its element first).
Its match in the driver is watch.CHOOSER_TAIL_S (how long a late chooser is held)."""
DOWNLOAD_WAIT_MS = 2000
"""How long the driver may wait for a download a click's receipt gave a sign of
(``download``) and the driver's answer did not report, ms (:func:`awaited_download`): only
such a click pays it, and only until the download is announced (a few ms after the click
on Chromium). Its match in the driver is watch.DOWNLOAD_TAIL_S (how long a late download
is kept)."""
NAVIGATION_WAIT_MS = 2000
"""How long the driver may wait for the navigation of a form a click submitted (the
receipt's ``navigates``) when its answer said no document change, ms
(:func:`awaited_navigation`): only such a click pays it, and only until the request comes
(a few ms after the answer on Chromium: the navigation is planned a task after the click).
Its match in the driver is navwatch.LATE_NAVIGATION_S."""
CLOCK_SLACK_S = 0.05
"""Slack between the browser's clock and the bridge's when only ``openedAt`` (the
browser's ms since the epoch) can tell which tabs opened during an action, s."""

T = TypeVar("T")


class PeerCall(Protocol):
    async def call(self, method: str, params: dict[str, Any], timeout_s: float) -> dict[str, Any]: ...


class _Arrivals:
    """Wakes waiters when an extension pushed something (a receipt, an opened tab)."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def notify(self) -> None:
        self._event.set()
        self._event = asyncio.Event()

    async def until(self, ready: Callable[[], T], timeout_s: float) -> T:
        """``ready()`` once it is truthy, or its value after ``timeout_s`` s."""
        deadline = time.monotonic() + timeout_s
        while not (got := ready()):
            left = deadline - time.monotonic()
            if left <= 0:
                return got
            try:
                await asyncio.wait_for(self._event.wait(), left)
            except TimeoutError:
                return ready()
        return got


class AfterInput:
    """Receipts and opened tabs: fed by the extension's events, read after each action.

    Args:
        peer: returns the live peer with that id (looked up at each call).
    """

    def __init__(self, peer: Callable[[str], PeerCall]) -> None:
        self.peer = peer
        self.events = ActionEvents()
        self._arrivals = _Arrivals()

    def tab_opened(self, extension: str, params: dict[str, Any]) -> None:
        """The extension's ``tab.opened`` event (a malformed one is dropped)."""
        try:
            event = TabOpenedEvent.model_validate(params)
        except pydantic.ValidationError:
            return
        self.events.tab_opened(extension, event, time.monotonic())
        self._arrivals.notify()

    def receipt_pushed(self, extension: str, params: dict[str, Any]) -> None:
        """The extension's ``page.receipt`` event; one nobody expects (or malformed) is
        dropped."""
        try:
            receipt = ReceiptEvent.model_validate(params)
        except pydantic.ValidationError:
            return
        if self.events.receipt_pushed(extension, receipt):
            self._arrivals.notify()

    def forget_receipt(self, extension: str, receipt_id: str) -> None:
        """The click that expected ``receipt_id`` ended: a later push is dropped."""
        self.events.forget_receipt(extension, receipt_id)

    async def delivery(self, extension: str, tab_id: int | None, ref: str | None,
                       receipt_id: str, *, pushed: bool = True) -> dict[str, Any]:
        """``{delivered, deliveredEvents}``: the receipt the extension pushed when the click
        reached the target, or, when none came within RECEIPT_PUSH_WAIT_S, the one read from
        the extension (``delivered: false``: the target never got the click). A click is
        the press (pointerdown/mousedown) plus the event its button ends with: ``click``
        (left), ``auxclick`` (middle), ``contextmenu`` or ``auxclick`` (right), per UI
        Events; the extension decides (extension/src/page/receipt.js ``delivered``), so a
        right or middle click is not reported undelivered for lacking a ``click``. A page
        that went away meanwhile (the click navigated) leaves ``delivered`` unknown (None).

        Also ``intercepted: {tag, text}`` when the fast path's press guard stopped the
        press (ReceiptResult.intercepted; the executor raises ELEMENT_OBSCURED), and
        ``fileInput: bool``, for the executor only (not a result field): a file input
        was clicked right after the press, so a file chooser may be announced after the
        driver's answer (bridge/executor.py asks the driver for it); and ``download: bool``
        the same for a download the page started (:func:`awaited_download`).

        ``pushed=False`` reads the receipt without waiting for a push: a multi-click's
        push comes at its first click, before a later press the guard may stop."""
        got = await self._arrivals.until(
            lambda: self.events.receipt(extension, receipt_id),
            RECEIPT_PUSH_WAIT_S) if pushed else None
        if got is not None:
            out = {"delivered": got.delivered, "deliveredEvents": got.events,
                   "fileInput": got.fileInput, "download": got.download,
                   "navigates": got.navigates}
            if got.pressedOn:
                out["pressedOn"] = _control(got.pressedOn)
            return out
        try:
            receipt = await self.peer(extension).call(
                "page.receipt", {"tabId": tab_id, "ref": ref, "receiptId": receipt_id},
                READ_TIMEOUT_S)
        except E.TrustbridgeError:
            return {"delivered": None}
        out = {
            "delivered": None if receipt.get("delivered") is None else bool(receipt["delivered"]),
            "deliveredEvents": receipt.get("events", []),
            "fileInput": receipt.get("fileInput") is True,
            "download": receipt.get("download") is True,
            "navigates": receipt.get("navigates") is True,
        }
        if isinstance(receipt.get("intercepted"), dict):
            out["intercepted"] = receipt["intercepted"]
        if isinstance(receipt.get("pressedOn"), dict):
            out["pressedOn"] = _control(receipt["pressedOn"])
        return out

    async def new_tabs(self, extension: str, acted_on: int | None, started: float,
                       popups: int, late_from: float | None) -> dict[str, Any]:
        """``{newTabs}`` for an input action, or ``{}`` when it opened none the bridge knows of.

        Args:
            acted_on: the tab the action ran on.
            started: when the action started (monotonic s); tabs announced before it are
                not its tabs.
            popups: how many new pages the driver saw it open (0 on the synthetic path).
            late_from: when the action answered (monotonic s), if it may open a tab a
                little later (events.may_open_tab); None: no late wait.

        Returns:
            ``{"newTabs": [...]}``, each tab as ``tabs.list`` lists it (url, title, active,
            openerTabId), or by its announcement (tabId, openerTabId, url) when it is
            already gone; ``{}`` when none opened.
        """
        def enough() -> list[Opened]:
            found = self.events.new_tabs(extension, started, acted_on, popups)
            return found if len(found) >= min(popups, 1) else []

        opened = enough()
        if not opened and popups:
            opened = await self._arrivals.until(enough, POPUP_SETTLE_S)
        elif not opened and late_from is not None:
            opened = await self._arrivals.until(enough, late_from + LATE_TAB_S - time.monotonic())
        if not opened and not popups:
            self.events.input_ran(extension, acted_on, started, [])
            return {}
        tabs = (await self.peer(extension).call("tabs.list", {}, READ_TIMEOUT_S))["tabs"]
        if not opened:
            # The driver saw a page open that the extension never announced (it announces
            # tabs with an opener only): the tabs the browser says opened since the action
            # started, by its own clock.
            since_ms = (time.time() - (time.monotonic() - started) - CLOCK_SLACK_S) * 1000
            found = [t for t in tabs if (t.get("openedAt") or 0) >= since_ms]
            self.events.input_ran(extension, acted_on, started,
                                  [t["tabId"] for t in found if isinstance(t.get("tabId"), int)])
            return {"newTabs": found}
        self.events.input_ran(extension, acted_on, started, [o.tab_id for o in opened])
        return {"newTabs": self._describe(tabs, opened)}

    async def late_tabs(self, extension: str, tab_id: int | None) -> dict[str, Any]:
        """``{newTabs}``: tabs ``tab_id`` opened after its last input action's result went
        out, not reported before (each is reported once); ``{}`` when there are none (no
        request is made then).

        Raises:
            TrustbridgeError: the extension could not list its tabs.
        """
        late = self.events.late_tabs(extension, tab_id)
        if not late:
            return {}
        tabs = (await self.peer(extension).call("tabs.list", {}, READ_TIMEOUT_S))["tabs"]
        return {"newTabs": self._describe(tabs, late)}

    @staticmethod
    def _describe(tabs: list[dict[str, Any]], opened: list[Opened]) -> list[dict[str, Any]]:
        """Each opened tab as ``tabs.list`` lists it, or by its announcement when gone."""
        listed = {t.get("tabId"): t for t in tabs}
        return [listed.get(o.tab_id) or {"tabId": o.tab_id, "openerTabId": o.opener,
                                         "url": o.url} for o in opened]


async def _after_answer(driver: PeerCall, method: str, frame_token: str,
                        timeout_ms: int) -> dict[str, Any]:
    """``method`` (``driver.fileChooser`` / ``driver.download``) for the page of
    ``frame_token``, waiting up to ``timeout_ms`` there; ``{}`` when the driver could not
    tell (then nothing is claimed, which is true: nothing was seen)."""
    try:
        return await driver.call(method, {"frameToken": frame_token, "timeoutMs": timeout_ms},
                                 timeout_ms / 1000 + READ_TIMEOUT_S)
    except E.TrustbridgeError:
        return {}


async def file_chooser(driver: PeerCall, frame_token: str) -> dict[str, Any]:
    """``{fileChooser: {multiple}}``: the chooser a click opened on the page of
    ``frame_token`` after the driver's answer (``driver.fileChooser``, waiting up to
    FILE_CHOOSER_WAIT_MS), or ``{}`` when none came or the driver could not tell (the
    result then claims no chooser, which is true: none was seen)."""
    got = await _after_answer(driver, "driver.fileChooser", frame_token, FILE_CHOOSER_WAIT_MS)
    chooser = got.get("fileChooser")
    return {"fileChooser": chooser} if isinstance(chooser, dict) else {}


async def awaited_download(driver: PeerCall, frame_token: str) -> dict[str, Any]:
    """``{downloads: [...]}``: the downloads a click started on the page of ``frame_token``
    that the browser announced after the driver's answer (``driver.download``, waiting up
    to DOWNLOAD_WAIT_MS for the first), or ``{}`` when none came or the driver could not
    tell (the result then claims none, which is true: none was seen; one that comes later
    is reported by the next action, as late)."""
    got = await _after_answer(driver, "driver.download", frame_token, DOWNLOAD_WAIT_MS)
    downloads = got.get("downloads")
    return {"downloads": downloads} if isinstance(downloads, list) and downloads else {}


async def awaited_navigation(driver: PeerCall, watch: str) -> bool:
    """Whether the navigation a click's form submission planned changed its frame's
    document after the driver's answer (``driver.navigation`` for the answer's
    ``lateNavigation`` watch, waiting up to NAVIGATION_WAIT_MS; asked when the receipt says
    ``navigates`` and the answer said no document change). False when none came, it ended
    without a commit, or the driver could not tell: the result then claims none, which is
    what was seen."""
    try:
        got = await driver.call("driver.navigation",
                                {"watch": watch, "timeoutMs": NAVIGATION_WAIT_MS},
                                NAVIGATION_WAIT_MS / 1000 + READ_TIMEOUT_S)
    except E.TrustbridgeError:
        return False
    return got.get("postActionDocumentChanged") is True


def _control(got: dict[str, Any]) -> dict[str, str]:
    """``{tag, text}`` of a receipt's ``pressedOn``, bounded (the page wrote the text)."""
    return {"tag": str(got.get("tag") or "")[:64], "text": str(got.get("text") or "")[:80]}
