"""When a driver's input reached the page, ahead of its answer (issue 18).

A ``driver.act`` answers only after the driver's own checks that follow the input: a
round trip for a download link or a file chooser after a click (supervisor/watch.py),
2–3 ms on headless Chromium. A request that asked for the page state (``snapshotAfter``,
bridge/executor.py) can have its snapshot taken meanwhile: the bridge arms a signal here,
passes its id as ``notifyDispatched``, and the driver sends ``driver.dispatched {id}``
(bridge/protocol/models.py ``DispatchedEvent``) once the input is all sent and the page
has handled it. The executor starts the snapshot then, and keeps it only when the answer
shows nothing that makes it stale (a dialog, a new tab, another document); otherwise it
takes one after the answer, as without the signal. No I/O here.
"""

from __future__ import annotations

import asyncio
import secrets
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
