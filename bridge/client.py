"""A client connection to the bridge: the base of the SDK, the CLI and the MCP server.

Speaks only the wire protocol (design.md §10: surfaces never reach into server internals).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from typing import Any

import pydantic
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

from . import config
from .protocol import errors as E
from .protocol.methods import INPUT_METHODS
from .protocol.models import MESSAGE_ADAPTER, PROTOCOL_VERSION, Hello, Request, Response, Welcome



def resolve_endpoint(url: str | None = None, token: str | None = None) -> tuple[str, str]:
    """Return ``(url, token)``: the arguments, else the state directory's files.

    Raises:
        DeviceNotConnected: no URL given and no bridge has recorded its endpoint.
    """
    if url is None:
        info = config.read_endpoint()
        if not info:
            raise E.DeviceNotConnected(
                "No running bridge found. Start one with `trustbridge up`, or pass its URL."
            )
        url = str(info["url"])
    if token is None:
        token = config.load_or_create_token()
    return url, token


class BridgeClient:
    """An authenticated ``role=client`` connection.

    Use ``async with await BridgeClient.connect() as client`` or call :meth:`close`.
    """

    def __init__(self, ws: ClientConnection, welcome: Welcome) -> None:
        self._ws = ws
        self.peer_id = welcome.peerId
        self.protocol_version = welcome.protocolVersion
        """The protocol version the bridge said in its welcome (equal to PROTOCOL_VERSION)."""
        self._ids = itertools.count(1)
        self._pending: dict[str, tuple[asyncio.Future[dict[str, Any]], str]] = {}
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def connect(
        cls, url: str | None = None, token: str | None = None, open_timeout_s: float = 10.0
    ) -> BridgeClient:
        """Connect and say hello.

        Args:
            url: ``ws://127.0.0.1:PORT``; default: the endpoint file of the running bridge.
            token: bridge token; default: the token file.
            open_timeout_s: seconds to wait for the TCP and WebSocket handshake.

        Raises:
            DeviceNotConnected: nothing listens at the URL.
            Unauthorized / ProtocolMismatch / BadRequest: the bridge refused the hello.
        """
        url, token = resolve_endpoint(url, token)
        try:
            # proxy=None: the bridge is on loopback; an HTTP(S)_PROXY in the environment
            # must not receive (or break) the connection and its token.
            ws = await connect(
                url, open_timeout=open_timeout_s, max_size=64 * 1024 * 1024, proxy=None
            )
        except (OSError, InvalidStatus, WebSocketException, TimeoutError) as exc:
            raise E.DeviceNotConnected(
                f"Cannot reach the bridge at {url}: {exc}. Is `trustbridge up` running?"
            ) from exc
        hello = Hello(role="client", protocolVersion=PROTOCOL_VERSION, token=token)
        await ws.send(hello.model_dump_json())
        try:
            msg = MESSAGE_ADAPTER.validate_json(await ws.recv())
        except ConnectionClosed as exc:
            raise E.Unauthorized("The bridge closed the connection during hello.") from exc
        if isinstance(msg, Response) and msg.error is not None:
            await ws.close()
            raise E.error_from_payload(msg.error)
        if not isinstance(msg, Welcome):
            await ws.close()
            raise E.BadRequest(f"Expected welcome, got {msg.type}.")
        return cls(ws, msg)

    @property
    def closed(self) -> bool:
        """True once the connection is gone (closed here, or by the bridge): calls then fail."""
        return self._reader.done()

    async def __aenter__(self) -> BridgeClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the connection; pending calls fail with DeviceNotConnected, pending input
        (:data:`INPUT_METHODS`) with BrowserOperationUncertain."""
        await self._ws.close()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader

    async def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one request and return its result.

        Raises:
            TrustbridgeError: the error the bridge returned, as its own class.
            DeviceNotConnected: the connection closed before the request was sent, or
                before the answer to a request that is not input.
            BrowserOperationUncertain: the connection closed after input
                (:data:`INPUT_METHODS`) was sent and before its answer: it may have
                reached the page.
        """
        req_id = f"c{next(self._ids)}"
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[req_id] = (fut, method)
        try:
            clean = {k: v for k, v in (params or {}).items() if v is not None}
            try:
                await self._ws.send(Request(id=req_id, method=method, params=clean).model_dump_json())
            except ConnectionClosed as exc:
                raise E.DeviceNotConnected("The bridge connection is closed.") from exc
            try:
                return await fut
            except asyncio.CancelledError:
                # Withdraw it at the bridge: a queued request never runs; a running one
                # finishes there (its answer is dropped here).
                with contextlib.suppress(ConnectionClosed):
                    await self._ws.send(Request(id=f"{req_id}x", method="request.cancel",
                                                params={"requestId": req_id}).model_dump_json())
                raise
        finally:
            self._pending.pop(req_id, None)

    async def _read(self) -> None:
        try:
            async for raw in self._ws:
                try:
                    msg = MESSAGE_ADAPTER.validate_json(raw)
                except pydantic.ValidationError:
                    continue
                if not isinstance(msg, Response) or msg.id is None:
                    continue
                fut, _method = self._pending.get(str(msg.id), (None, ""))
                if fut is None or fut.done():
                    continue
                if msg.ok:
                    fut.set_result(msg.result or {})
                else:
                    assert msg.error is not None
                    fut.set_exception(E.error_from_payload(msg.error))
        except ConnectionClosed:
            pass
        finally:
            for fut, method in self._pending.values():
                if fut.done():
                    continue
                if method in INPUT_METHODS:  # rule 7: it may have reached the page
                    fut.set_exception(E.BrowserOperationUncertain(
                        f"The bridge connection closed during {method}; the action may or may "
                        "not have reached the page and was not repeated. Reconnect and take a "
                        "new snapshot to see the page's state.",
                        {"method": method},
                    ))
                else:
                    fut.set_exception(E.DeviceNotConnected("The bridge connection closed."))
