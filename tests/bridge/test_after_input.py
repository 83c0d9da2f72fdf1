"""AfterInput (bridge/after_input.py) with a scripted in-memory peer: the short waits for a
pushed receipt or tab, and what it then asks the extension (no sockets)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from trustbridge.bridge import after_input
from trustbridge.bridge.after_input import AfterInput
from trustbridge.bridge.protocol import errors as E

pytestmark = pytest.mark.timeout(10)

EXT = "p1"
LISTED = {"tabId": 2, "url": "http://127.0.0.1/new.html", "title": "new", "active": False,
          "openerTabId": 1, "openedAt": 0}


class ScriptedPeer:
    """Answers ``tabs.list`` with ``tabs`` and ``page.receipt`` with ``receipt`` (or
    raises ``error``); records every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.tabs: list[dict[str, Any]] = []
        self.receipt: dict[str, Any] = {"delivered": False, "events": []}
        self.error: E.TrustbridgeError | None = None

    async def call(self, method: str, params: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        self.calls.append((method, params))
        if self.error is not None:
            raise self.error
        return {"tabs": self.tabs} if method == "tabs.list" else self.receipt


@pytest.fixture
def peer() -> ScriptedPeer:
    return ScriptedPeer()


@pytest.fixture
def after(peer: ScriptedPeer) -> AfterInput:
    return AfterInput(lambda _peer_id: peer)


def later(delay_s: float, push: Any) -> asyncio.Task[None]:
    """Call ``push()`` after ``delay_s`` s, as an extension event arriving then."""
    async def run() -> None:
        await asyncio.sleep(delay_s)
        push()
    return asyncio.create_task(run())


async def test_a_receipt_pushed_during_the_wait_is_used_without_asking(
    after: AfterInput, peer: ScriptedPeer
) -> None:
    """A push 20 ms into the wait answers at once; page.receipt is never asked."""
    after.events.expect_receipt(EXT, "r1")
    push = later(0.02, lambda: after.receipt_pushed(
        EXT, {"tabId": 1, "receiptId": "r1", "delivered": True, "events": ["click"]}))
    started = time.monotonic()
    got = await after.delivery(EXT, 1, "e1", "r1")
    await push
    assert got == {"delivered": True, "deliveredEvents": ["click"], "fileInput": False,
                   "download": False, "navigates": False}
    assert time.monotonic() - started < after_input.RECEIPT_PUSH_WAIT_S
    assert peer.calls == []


async def test_without_a_push_the_receipt_is_read_once(after: AfterInput, peer: ScriptedPeer) -> None:
    """No push within the wait: one page.receipt; its verdict, or None when it fails."""
    after.events.expect_receipt(EXT, "r1")
    assert await after.delivery(EXT, 1, "e1", "r1") == {"delivered": False, "deliveredEvents": [],
                                                        "fileInput": False, "download": False,
                                                        "navigates": False}
    assert peer.calls == [("page.receipt", {"tabId": 1, "ref": "e1", "receiptId": "r1"})]
    peer.error = E.BrowserDocumentChanged("gone")
    assert await after.delivery(EXT, 1, "e1", "r1") == {"delivered": None}


async def test_malformed_events_are_dropped(after: AfterInput) -> None:
    """A tab.opened or page.receipt that does not fit its model changes nothing."""
    after.tab_opened(EXT, {"tabId": "two"})
    after.events.expect_receipt(EXT, "r1")
    after.receipt_pushed(EXT, {"receiptId": "r1"})
    assert after.events.opened_since(EXT, 0.0, None) == []
    assert after.events.receipt(EXT, "r1") is None


async def test_nothing_opened_and_no_late_wait_asks_nothing(
    after: AfterInput, peer: ScriptedPeer
) -> None:
    """No popup, no announcement, no late wait: {} at once, no tabs.list."""
    started = time.monotonic()
    assert await after.new_tabs(EXT, 1, started, popups=0, late_from=None) == {}
    assert peer.calls == [] and time.monotonic() - started < 0.02


async def test_a_popup_waits_for_its_announcement(after: AfterInput, peer: ScriptedPeer) -> None:
    """The driver saw a popup; the announcement comes 50 ms later: it is waited for and
    described by tabs.list."""
    peer.tabs = [LISTED]
    started = time.monotonic()
    push = later(0.05, lambda: after.tab_opened(EXT, {"tabId": 2, "openerTabId": 1}))
    assert await after.new_tabs(EXT, 1, started, popups=1, late_from=None) == {"newTabs": [LISTED]}
    await push
    assert time.monotonic() - started < after_input.POPUP_SETTLE_S


async def test_a_popup_never_announced_falls_back_to_the_browser_s_clock(
    after: AfterInput, peer: ScriptedPeer
) -> None:
    """The driver saw a popup the extension never announced: after POPUP_SETTLE_S the tabs
    whose openedAt is since the action started are named, older ones are not."""
    now_ms = time.time() * 1000
    fresh = {**LISTED, "tabId": 3, "openedAt": now_ms}
    old = {**LISTED, "tabId": 4, "openedAt": now_ms - 60_000}
    peer.tabs = [old, fresh]
    started = time.monotonic()
    assert await after.new_tabs(EXT, 1, started, popups=1, late_from=None) == {"newTabs": [fresh]}
    assert time.monotonic() - started >= after_input.POPUP_SETTLE_S


async def test_the_late_wait_ends_when_the_acted_on_tab_opens_one(
    after: AfterInput, peer: ScriptedPeer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a 5 s late window, a tab the acted-on tab announces 50 ms after the answer ends
    the wait then; a tab another tab opens does not count."""
    monkeypatch.setattr(after_input, "LATE_TAB_S", 5.0)
    peer.tabs = [LISTED]
    started = time.monotonic()
    after.tab_opened(EXT, {"tabId": 9, "openerTabId": 7})
    push = later(0.05, lambda: after.tab_opened(EXT, {"tabId": 2, "openerTabId": 1}))
    assert await after.new_tabs(EXT, 1, started, 0, late_from=time.monotonic()) == \
        {"newTabs": [LISTED]}
    await push
    assert time.monotonic() - started < 1.0


async def test_the_late_wait_counts_from_the_answer(
    after: AfterInput, peer: ScriptedPeer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Time already spent since the answer (e.g. on the receipt) is part of the window: an
    answer older than LATE_TAB_S waits no more."""
    monkeypatch.setattr(after_input, "LATE_TAB_S", 0.3)
    started = time.monotonic()
    assert await after.new_tabs(EXT, 1, started, 0, late_from=started - 1.0) == {}
    assert time.monotonic() - started < 0.1
    assert await after.new_tabs(EXT, 1, started, 0, late_from=time.monotonic()) == {}
    assert time.monotonic() - started >= 0.3 and peer.calls == []


async def test_a_new_tab_already_closed_is_named_by_its_announcement(
    after: AfterInput, peer: ScriptedPeer
) -> None:
    """tabs.list no longer has the tab: tabId, opener and URL come from tab.opened."""
    started = time.monotonic()
    after.tab_opened(EXT, {"tabId": 5, "openerTabId": 1, "url": "http://127.0.0.1/x"})
    assert await after.new_tabs(EXT, 1, started, 0, late_from=None) == \
        {"newTabs": [{"tabId": 5, "openerTabId": 1, "url": "http://127.0.0.1/x"}]}


async def test_a_malformed_receipt_push_is_dropped(after: AfterInput) -> None:
    """A push with a field the protocol does not have (a version-3 extension's ``quiet``)
    or a wrong type is dropped: the click then reads its receipt instead."""
    push = {"tabId": 1, "receiptId": "r1", "delivered": True, "events": ["click"]}
    after.events.expect_receipt(EXT, "r1")
    after.receipt_pushed(EXT, {**push, "quiet": True})
    after.receipt_pushed(EXT, {**push, "delivered": [True]})
    assert after.events.receipt(EXT, "r1") is None
    after.receipt_pushed(EXT, push)
    assert after.events.receipt(EXT, "r1") is not None
