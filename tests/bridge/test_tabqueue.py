"""TabQueue (bridge/tabqueue.py): FIFO per (device, tab) and the active tab it learns."""

from __future__ import annotations

import asyncio

import pytest

from trustbridge.bridge.tabqueue import TabQueue

pytestmark = pytest.mark.timeout(10)

D = "dev1"


async def _settle() -> None:
    """Let every runnable task take its next step."""
    for _ in range(5):
        await asyncio.sleep(0)


async def test_requests_on_one_tab_run_one_at_a_time_in_arrival_order() -> None:
    """Ten requests queued on one tab run in the order they asked, never two at once."""
    queue = TabQueue()
    ran: list[int] = []
    inside = 0
    overlap = False

    async def request(n: int) -> None:
        nonlocal inside, overlap
        async with queue.turn(D, 1):
            inside += 1
            overlap = overlap or inside > 1
            await asyncio.sleep(0)
            ran.append(n)
            inside -= 1

    tasks = []
    for n in range(10):
        tasks.append(asyncio.create_task(request(n)))
        await asyncio.sleep(0)  # each task reaches the queue before the next starts
    await asyncio.gather(*tasks)
    assert ran == list(range(10)) and not overlap


async def test_another_tab_or_device_does_not_wait() -> None:
    """While tab 1 of dev1 is held, tab 2 and dev2's tab 1 get their turn at once."""
    queue = TabQueue()
    release = asyncio.Event()

    async def hold() -> None:
        async with queue.turn(D, 1):
            await release.wait()

    holder = asyncio.create_task(hold())
    await _settle()
    for device, tab in ((D, 2), ("dev2", 1)):
        async with asyncio.timeout(1):
            async with queue.turn(device, tab):
                pass
    release.set()
    await holder


async def test_a_request_without_tab_queues_with_the_learnt_active_tab() -> None:
    """Once a request without tabId ran on tab 5, the next one without tabId waits for a
    held request that names tab 5."""
    queue = TabQueue()
    queue.learn("page.act", D, None, {"tabId": 5})
    assert queue.key(D, None) == (D, 5)
    release = asyncio.Event()
    order: list[str] = []

    async def named() -> None:
        async with queue.turn(D, 5):
            order.append("named")
            await release.wait()

    async def unnamed() -> None:
        async with queue.turn(D, None):
            order.append("unnamed")

    first = asyncio.create_task(named())
    await _settle()
    second = asyncio.create_task(unnamed())
    await _settle()
    assert order == ["named"]
    release.set()
    await asyncio.gather(first, second)
    assert order == ["named", "unnamed"]


def test_learning_the_active_tab() -> None:
    """Selected and new tabs become active, so does the tab a request without tabId ran
    on; a request naming its tab teaches nothing; closing the active tab forgets it."""
    queue = TabQueue()
    assert queue.active_tab(D) is None and queue.key(D, None) == (D, None)
    queue.learn("page.act", D, 3, {"tabId": 3})
    assert queue.active_tab(D) is None
    queue.learn("tabs.new", D, None, {"tabId": 4})
    assert queue.active_tab(D) == 4
    queue.learn("tabs.select", D, 6, {"tabId": 6})
    assert queue.active_tab(D) == 6
    queue.learn("tabs.close", D, 4, {"tabId": 4})  # not the active one
    assert queue.active_tab(D) == 6
    queue.learn("tabs.close", D, 6, {"tabId": 6})
    assert queue.active_tab(D) is None
    queue.learn("page.snapshot", D, None, {"tabId": 8})
    assert queue.active_tab(D) == 8 and queue.active_tab("dev2") is None


def test_results_without_a_tab_id_teach_nothing() -> None:
    """A result without an integer tabId (a batch, true, a string) leaves the hint alone."""
    queue = TabQueue()
    queue.learn("tabs.select", D, 2, {"tabId": 2})
    for result in ({}, {"tabId": True}, {"tabId": "3"}, {"tabId": None}):
        queue.learn("tabs.select", D, None, result)
    assert queue.active_tab(D) == 2


async def test_a_cancelled_waiter_never_runs_and_queues_are_dropped_when_idle() -> None:
    """A request cancelled while waiting does not run; the next one still runs after the
    holder; once nothing holds or waits, no queue is kept."""
    queue = TabQueue()
    release = asyncio.Event()
    ran: list[str] = []

    async def request(name: str, wait: bool = False) -> None:
        async with queue.turn(D, 1):
            ran.append(name)
            if wait:
                await release.wait()

    holder = asyncio.create_task(request("a", wait=True))
    await _settle()
    cancelled = asyncio.create_task(request("b"))
    after = asyncio.create_task(request("c"))
    await _settle()
    assert queue.queued() == 1
    cancelled.cancel()
    await _settle()
    release.set()
    await asyncio.gather(holder, after)
    assert cancelled.cancelled() and ran == ["a", "c"]
    assert queue.queued() == 0
