"""The worker's bridge connection: :class:`RelayClient` sends each request to the parent.

The SDK (:mod:`bridge.sdk`, :mod:`bridge.sdk_sessions`) uses only ``client.call``,
``client.close``, ``client.protocol_version`` and ``client.session``; this class has
them, so ``Browser`` and ``Tab`` in the worker act as the parent's session exactly (its
current tab, its claimed tabs, its refs), and a killed worker leaves no half-open
connection behind.

Messages (one JSON object per line; parent → worker ``>``, worker → parent ``<``)::

    > {"t": "hello", "protocolVersion": 1, "session": {...} | null, "device": str | null}
    < {"t": "ready", "pid": int}
    > {"t": "run", "id": int, "code": str, "tab": {"device", "tabId"} | null}
    < {"t": "out", "s": str}                       # printed text, as it is written
    < {"t": "call", "id": int, "method": str, "params": {...}}
    > {"t": "reply", "id": int, "result": {...}}   # or "error": {code, message, details, nextStep}
    < {"t": "cancel", "id": int}                   # the code stopped waiting for that call
    < {"t": "done", "id": int, "value": str | null, "valueChars": int?, "error": str | null,
       "errorCode": str?, "interrupted": bool?, "systemExit": bool?}

Typed errors cross as their wire form (:meth:`TrustbridgeError.to_payload`) and are
raised again here as the same classes (:func:`bridge.protocol.errors.error_from_payload`).
"""

from __future__ import annotations

import asyncio
import itertools
from typing import TYPE_CHECKING, Any

from ..protocol import errors as E

if TYPE_CHECKING:
    from .worker import Channel


class RelayClient:
    """A ``BridgeClient`` stand-in whose requests the parent process makes.

    Args:
        channel: the worker's protocol channel.
        loop: the worker's event loop (answers arrive on a reader thread).
        protocol_version: the parent's ``BridgeClient.protocol_version``.
        session: the parent's ``session.open`` answer without its secret, or None.
    """

    def __init__(self, channel: Channel, loop: asyncio.AbstractEventLoop,
                 protocol_version: int, session: dict[str, Any] | None) -> None:
        self._channel = channel
        self._loop = loop
        self.protocol_version = protocol_version
        self.session = session
        self.closed = False
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}

    async def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one request through the parent and return its result.

        Raises:
            TrustbridgeError: the error the parent's call raised, as its own class.
            asyncio.CancelledError: the code was interrupted; the parent is told to
                cancel the request (a queued one never runs; a running one finishes at
                the bridge, its answer dropped).
        """
        req_id = next(self._ids)
        fut: asyncio.Future[dict[str, Any]] = self._loop.create_future()
        self._pending[req_id] = fut
        try:
            self._channel.send({"t": "call", "id": req_id, "method": method,
                                "params": dict(params or {})})
            msg = await fut
        except asyncio.CancelledError:
            self._channel.send({"t": "cancel", "id": req_id})
            raise
        finally:
            self._pending.pop(req_id, None)
        if msg.get("error") is not None:
            raise E.error_from_payload(E.ErrorPayload.model_validate(msg["error"]))
        return dict(msg.get("result") or {})

    def answer(self, msg: dict[str, Any]) -> None:
        """A ``reply`` from the parent (on the loop); one nobody waits for is dropped."""
        fut = self._pending.get(msg.get("id"))  # type: ignore[arg-type]
        if fut is not None and not fut.done():
            fut.set_result(msg)

    async def close(self) -> None:
        """Nothing: the connection is the parent's, and outlives this code (``await
        browser.close()`` in code does not end the session)."""
