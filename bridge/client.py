"""A client connection to the bridge: the base of the SDK, the CLI and the MCP server.

Speaks only the wire protocol (design.md §10: surfaces never reach into server internals).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

from . import config
from .protocol import errors as E
from .protocol.models import PROTOCOL_VERSION, Hello, Request, Welcome
from .protocol.peer import Connection, handshake


def resolve_endpoint(url: str | None = None, token: str | None = None) -> tuple[str, str]:
    """Return ``(url, token)``: the arguments, else the state directory's files.

    The state directory's token goes only to the endpoint the local bridge recorded or
    to a loopback ``url`` (:func:`bridge.config.token_refusal`); for any other ``url``
    the caller passes that bridge's ``token`` itself.

    Raises:
        DeviceNotConnected: no URL given and no bridge has recorded its endpoint.
        Unauthorized: ``url`` is given, is not loopback and no ``token`` was passed;
            nothing was sent.
    """
    if url is not None and token is None \
            and (reason := config.token_refusal(url, token_named=False)) is not None:
        raise E.Unauthorized(f"Not sending the token: {reason}.", next_step=(
            "Pass that bridge's token explicitly (over wss://), or use a bridge on this "
            "machine."))
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
        self._conn = Connection(ws, "bridge", id_prefix="c")
        self.peer_id = welcome.peerId
        self.protocol_version = welcome.protocolVersion
        """The protocol version the bridge said in its welcome (equal to PROTOCOL_VERSION)."""
        self._reader = asyncio.create_task(self._conn.serve())

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
        try:
            welcome = await handshake(ws, hello)
        except ConnectionClosed as exc:
            raise E.Unauthorized("The bridge closed the connection during hello.") from exc
        return cls(ws, welcome)

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
        (:data:`~bridge.protocol.methods.INPUT_METHODS`) with BrowserOperationUncertain."""
        await self._conn.ws.close()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader

    async def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one request and return its result.

        Raises:
            TrustbridgeError: the error the bridge returned, as its own class.
            DeviceNotConnected: the connection was already closed (nothing was sent), or
                it closed before the answer to a request that is not input.
            BrowserOperationUncertain: the connection closed while input
                (:data:`~bridge.protocol.methods.INPUT_METHODS`) was being sent or awaited:
                it may have reached the page.
            InternalError: the bridge's answer does not fit the method's result model.
        """
        req_id = self._conn.next_id()
        clean = {k: v for k, v in (params or {}).items() if v is not None}
        try:
            return await self._conn.call(method, clean, req_id=req_id)
        except asyncio.CancelledError:
            # Withdraw it at the bridge: a queued request never runs; a running one
            # finishes there (its answer is dropped here).
            with contextlib.suppress(ConnectionClosed):
                await self._conn.send(Request(id=f"{req_id}x", method="request.cancel",
                                              params={"requestId": req_id}))
            raise
