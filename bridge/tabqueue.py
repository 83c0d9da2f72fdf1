"""One request at a time per (device, tab), in arrival order (docs/design.md §2.1; the
methods that queue are ``SERIALIZED_METHODS`` in bridge/protocol/methods.py).

A request that names no tab acts on the device's active tab, so it must queue with the
requests that name that tab. The bridge does not ask the browser which tab is active
before every request (that would cost a round trip per action): :class:`TabQueue` learns
it from results (:meth:`TabQueue.learn`) and uses it as a queueing hint. The hint is only
about order, never about where a request runs: the extension still picks the active tab
itself. A tab the user activates by hand is learnt at the next request without ``tabId``.

Each queue is an :class:`asyncio.Lock` (its waiters are woken first come, first served);
a queue nobody holds or waits for is dropped, so memory follows the requests in flight.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from .protocol.methods import CLOSES_TAB, SELECTS_TAB

Key = tuple[str, int | None]
"""(device, tab id); tab None: a request without ``tabId`` before any active tab is known."""


class TabQueue:
    """FIFO queues per (device, tab) and the active tab learnt per device."""

    def __init__(self) -> None:
        self._locks: dict[Key, asyncio.Lock] = {}
        self._users: dict[Key, int] = {}  # holders + waiters per key
        self._active: dict[str, int] = {}  # device → tab id last seen active

    def key(self, device: str, tab: int | None) -> Key:
        """The queue of a request: its tab, or the device's active tab as last seen."""
        return (device, tab if tab is not None else self._active.get(device))

    def active_tab(self, device: str) -> int | None:
        """The tab last seen active on ``device`` (None: not known)."""
        return self._active.get(device)

    @asynccontextmanager
    async def turn(self, device: str, tab: int | None) -> AsyncIterator[None]:
        """Wait for the request's turn on its tab, hold it for the ``async with`` body.

        A task cancelled while waiting leaves the queue without running (the server's
        ``request.cancel`` of a queued request relies on it).
        """
        key = self.key(device, tab)
        lock = self._locks.setdefault(key, asyncio.Lock())
        self._users[key] = self._users.get(key, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self._users[key] -= 1
            if not self._users[key]:
                del self._users[key], self._locks[key]

    def forget(self, device: str, tab: int) -> None:
        """The tab is gone (the extension said it does not exist): it is not the device's
        active tab any more."""
        if self._active.get(device) == tab:
            del self._active[device]

    def forget_device(self, device: str) -> None:
        """A new extension joined for ``device`` (maybe a restarted browser, whose tab ids
        are all new): its active tab is learnt again."""
        self._active.pop(device, None)

    def queued(self) -> int:
        """How many (device, tab) queues have a request running or waiting."""
        return len(self._locks)

    def learn(self, method: str, device: str, asked: int | None, result: dict[str, Any]) -> None:
        """Learn the device's active tab from a result.

        Args:
            method: the request's method.
            asked: the ``tabId`` the request named (None: it ran on the active tab).
            result: its result; its ``tabId`` is the tab it ran on, selected, opened or
                closed.

        The active tab becomes the tab a request without ``tabId`` ran on, or a tab that
        was selected or opened; a closed active tab is forgotten.
        """
        tab_id = result.get("tabId")
        if not isinstance(tab_id, int) or isinstance(tab_id, bool):
            return
        if method in CLOSES_TAB:
            if self._active.get(device) == tab_id:
                del self._active[device]
        elif method in SELECTS_TAB or asked is None:
            self._active[device] = tab_id
