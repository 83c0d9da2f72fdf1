"""bridge/hang_watch.py (issue 32 item 4): a probe only after a timeout or on a tab
already found stuck; PAGE_UNRESPONSIVE names the tab and the way out."""

from __future__ import annotations

from typing import Any

import pytest

from trustbridge.bridge.hang_watch import HangWatch
from trustbridge.bridge.protocol import errors as E


class _Extension:
    """Answers tabs.probe with ``responsive``; counts the probes."""

    def __init__(self, responsive: bool | None) -> None:
        self.responsive = responsive
        self.probes: list[dict[str, Any]] = []

    async def call(self, method: str, params: dict[str, Any], _timeout: float) -> dict:
        assert method == "tabs.probe"
        self.probes.append(params)
        return {"tabId": params["tabId"], "responsive": self.responsive, "ms": 1500}


async def test_a_stuck_tab_is_named_after_one_timeout_then_answered_at_once() -> None:
    ext = _Extension(responsive=False)
    watch = HangWatch(lambda _peer: ext)
    await watch.before("d1", "x1", 7, "page.snapshot")  # healthy path: nothing asked
    assert ext.probes == []
    timeout = E.Timeout("no answer", timeoutMs=30_000)
    with pytest.raises(E.PageUnresponsive) as caught:
        await watch.after_timeout("d1", "x1", 7, "page.snapshot", timeout)
    assert caught.value.details["tabId"] == 7 and caught.value.details["timeoutMs"] == 30_000
    assert "Close the tab" in caught.value.advice
    with pytest.raises(E.PageUnresponsive) as again:  # probed first, not sent
        await watch.before("d1", "x1", 7, "page.evaluate")
    assert "was not sent" in again.value.message
    await watch.before("d1", "x1", 7, "page.navigate")  # a load is the way out: not refused
    await watch.before("d1", "x1", 8, "page.snapshot")  # another tab: untouched
    assert len(ext.probes) == 2
    ext.responsive = True  # the page runs again: the mark goes
    await watch.before("d1", "x1", 7, "page.snapshot")
    await watch.before("d1", "x1", 7, "page.snapshot")
    assert len(ext.probes) == 3


async def test_a_slow_page_or_an_unknown_probe_keeps_the_timeout() -> None:
    for responsive in (True, None):
        watch = HangWatch(lambda _peer, r=responsive: _Extension(r))
        await watch.after_timeout("d1", "x1", 7, "page.wait", E.Timeout("slow"))  # no raise
        assert watch.hung == set()
