"""When a driver's input reached the page, ahead of its answer (issue 18).

A ``driver.act`` answers only after the driver's own checks that follow the input: its
read-back of a value, or after a click a round trip that lets the browser's events of
the click (a file chooser, a download, a navigation request) reach it (supervisor/watch.py),
2–4 ms on headless Chromium. A request that asked for the
page state (``snapshotAfter``, bridge/executor.py) has its snapshot taken meanwhile: the
bridge arms a signal here, passes its id as ``notifyDispatched``, and the driver sends
``driver.dispatched {id}`` (bridge/protocol/models.py ``DispatchedEvent``) once the input
is all sent and the page has handled it (its synchronous handlers ran).
:class:`EarlySnapshot` starts the snapshot then, as *provisional*: the extension does not
make it its session's diff baseline (extension/src/background/snapshot.js) and reports no
late tabs with it. Once the answer is in, it is kept only when the answer shows nothing
that makes it stale (:data:`STALE_EARLY_SNAPSHOT`: a dialog, a new tab, another
document); the executor then tells the extension to keep it (``snapshot.keep``) and adds
the late tabs. Otherwise it is dropped unseen, and having set nothing it changes nothing:
the executor takes one after the answer, as without the signal. No I/O here.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import pydantic

from .protocol.models import DispatchedEvent


class DispatchSignals:
    """The armed ``notifyDispatched`` ids, per driver peer."""

    def __init__(self) -> None:
        self._armed: dict[tuple[str, str], asyncio.Event] = {}

    def arm(self, driver: str) -> tuple[str, asyncio.Event]:
        """A fresh id for one ``driver.act`` of ``driver`` and the event its
        ``driver.dispatched`` sets; :meth:`forget` it once the act is answered."""
        note = secrets.token_hex(8)
        fired = asyncio.Event()
        self._armed[(driver, note)] = fired
        return note, fired

    def forget(self, driver: str, note: str) -> None:
        self._armed.pop((driver, note), None)

    def dispatched(self, driver: str, params: Any) -> None:
        """The driver's ``driver.dispatched`` event; one that is malformed, unknown or from
        another driver is dropped."""
        try:
            event = DispatchedEvent.model_validate(params)
        except pydantic.ValidationError:
            return
        fired = self._armed.get((driver, event.id))
        if fired is not None:
            fired.set()


STALE_EARLY_SNAPSHOT = ("dialog", "newTabs", "popups", "postActionDocumentChanged",
                        "transitionPending")
"""Fields of an act's answer after which a snapshot taken at the driver's dispatched
signal may not show the page as the answer leaves it."""


class EarlySnapshot:
    """The provisional snapshot of one ``driver.act``, started at its dispatched signal.

    Args:
        signals: where the signal is armed.
        driver: the driver peer that runs the act.
        take: ``take(provisional_id)`` → ``{snapshotAfter}`` or ``{snapshotAfterError}``
            (the executor's snapshot, asked as provisional).
    """

    def __init__(self, signals: DispatchSignals, driver: str,
                 take: Callable[[str], Awaitable[dict[str, Any]]]) -> None:
        self.note, self.fired = signals.arm(driver)
        self._signals, self._driver = signals, driver
        self._task = asyncio.ensure_future(self._run(take))

    async def _run(self, take: Callable[[str], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
        await self.fired.wait()
        return await take(self.note)

    def forget(self) -> None:
        """The act answered (or failed): its signal is armed no more."""
        self._signals.forget(self._driver, self.note)

    def cancel(self) -> None:
        """Drop it (unseen); an error it ends with is retrieved, never left unread."""
        self._task.cancel()
        self._task.add_done_callback(_retrieve)

    async def outcome(self, answer: dict[str, Any]) -> dict[str, Any] | None:
        """The snapshot to show with ``answer`` (a ``page.snapshot`` result), or None: the
        signal never came, the answer makes it stale, it failed, or no frame answered it
        (an empty page is no page state; then it is dropped and the caller takes one
        after the answer)."""
        if not self.fired.is_set() or any(answer.get(k) for k in STALE_EARLY_SNAPSHOT):
            self.cancel()
            return None
        try:
            got = await self._task
        except Exception:  # noqa: BLE001 - the act's own answer stands; one is taken after
            return None
        snapshot = got.get("snapshotAfter")
        if not isinstance(snapshot, dict) or not snapshot.get("frames"):
            return None  # no frame answered (a document between two): taken after instead
        return snapshot


def _retrieve(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        with contextlib.suppress(Exception):
            task.exception()
