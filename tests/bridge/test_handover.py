"""The hand-off book (bridge/handover.py) without a browser: what a handed tab refuses,
how a hand-off ends, and the live view's HTTP refusals (bridge/live_view.py) on a real
bridge socket. The whole flow with a browser: tests/e2e/test_live_view.py."""

from __future__ import annotations

import asyncio
import secrets
import urllib.error
import urllib.request

import pytest

from trustbridge.bridge.handover import HandoverBook
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.server import BridgeServer
from trustbridge.bridge.sessions import SessionBook


def test_a_handed_tab_refuses_every_page_method_and_lets_tab_listing_through() -> None:
    book = HandoverBook()
    hand = book.create("dev", 3, "Enter the code", None, 60_000, {"url": "u", "title": "t"})
    for method in ("page.act", "page.batch", "page.snapshot", "page.navigate",
                   "page.screenshot", "page.evaluate", "tabs.close", "human.request"):
        with pytest.raises(E.HandedToPerson) as refused:
            book.refuse(method, "dev", 3)
        assert refused.value.tabId == 3 and refused.value.handoverId == hand.id
        assert "Enter the code" in refused.value.message
    for method in ("tabs.list", "tabs.new", "tabs.select", "devices.list", "human.wait"):
        book.refuse(method, "dev", 3)
    book.refuse("page.act", "dev", 4)  # another tab
    book.refuse("page.act", "other", 3)  # another device
    assert book.end(hand, "handedBack") is True
    assert book.end(hand, "cancelled") is False  # the first end stands
    assert hand.state == "handedBack" and hand.done.is_set()
    book.refuse("page.act", "dev", 3)  # over: the tab takes requests again


def test_a_session_that_ends_ends_its_hand_offs_as_stopped() -> None:
    sessions, book = SessionBook(), HandoverBook()
    sessions.on_end = book.session_ended
    mine = sessions.for_peer("p1")
    other = sessions.for_peer("p2")
    a = book.create("dev", 1, "r", mine, 60_000, {})
    b = book.create("dev", 2, "r", other, 60_000, {})
    sessions.disconnected("p1")
    assert a.state == "stopped" and b.active


async def test_a_hand_off_times_out_by_itself() -> None:
    book = HandoverBook()
    hand = book.create("dev", 1, "r", None, 1_000, {})
    await asyncio.wait_for(hand.done.wait(), 5)
    assert hand.state == "timedOut"


def _get(url: str, **headers: str) -> int:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as err:
        return err.code


async def test_the_live_view_page_is_served_once_per_link_and_refuses_other_hosts() -> None:
    async with BridgeServer(secrets.token_hex(16), port=0) as server:
        book = server.executor.handovers
        hand = book.create("dev", 1, "r", None, 60_000, {})
        base = f"http://127.0.0.1:{server.port}/live/"
        loop = asyncio.get_running_loop()

        async def get(url: str, **headers: str) -> int:
            return await loop.run_in_executor(None, lambda: _get(url, **headers))

        assert await get(base + hand.secret) == 200
        assert await get(base + hand.secret, Host=f"evil.example:{server.port}") == 403
        assert await get(base + hand.secret, Origin="http://evil.example") == 403
        assert await get(base + "x" + hand.secret) == 404
        hand.opener = object()  # a live view's WebSocket claimed it
        assert await get(base + hand.secret) == 409
        book.end(hand, "handedBack")
        assert await get(base + hand.secret) == 410
