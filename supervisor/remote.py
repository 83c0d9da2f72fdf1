"""A supervisor on another machine than its bridge: ``wss://`` and the extension's relay.

A remote device (``trustbridge device``, docs/deploy.md) reaches its bridge over TLS.
The driver (Python) connects to the ``wss://`` URL itself, checking the bridge's
certificate against the CA file the user names (:func:`client_ssl_context`). The
extension cannot be told which CA to trust (a browser trusts its own store, and Firefox
upgrades nothing but refuses an unknown issuer), so it keeps talking plain ``ws://`` to
loopback, as on the bridge's own machine, and this module's :class:`Relay` carries each
of its connections over a ``wss://`` connection of its own, checked the same way. The
relay adds nothing: the hello (with the device credential from the extension's private
``config.json``) and every frame pass as they are, in both directions.

Faults: a relayed connection ends on both sides when either side ends (the bridge's close
code is passed on, so a refused credential reads as such in the extension); the
extension then reconnects with its backoff, and the relay opens a new upstream
connection for it. Upstream connections are pinged every :data:`PING_S`, so a cut link
is noticed within about twice that rather than when TCP gives up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from http import HTTPStatus

from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException
from websockets.http11 import Request as HttpRequest, Response as HttpResponse

log = logging.getLogger("trustbridge.remote")

PING_S = 2.0
"""Ping interval of a device's ``wss://`` connections, s (as the bridge's TLS listener,
bridge/server.py ``REMOTE_PING_S``)."""
PONG_S = 3.0
"""How long the bridge has to answer a ping, s (bridge/server.py ``REMOTE_PONG_S``)."""
CLOSE_S = 1.0
"""How long a connection that gave up on a pong waits for the closing handshake, s
(bridge/server.py ``REMOTE_CLOSE_S``)."""
OPEN_TIMEOUT_S = 5.0
"""How long opening a ``wss://`` connection (TCP, TLS, upgrade) may take, s."""
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
CLOSE_UNREACHABLE = 1011
"""Close code the relay gives the extension when the bridge cannot be reached."""


def is_remote_url(url: str) -> bool:
    """True for a ``wss://`` bridge URL (a remote device's)."""
    return url.lower().startswith("wss://")


def client_ssl_context(ca_file: str | None) -> ssl.SSLContext:
    """The TLS context a device checks its bridge with: the certificate must chain to
    ``ca_file`` (PEM; None: the system's trust store) and name the host in the URL.

    Raises:
        OSError / ssl.SSLError: ``ca_file`` cannot be read or holds no certificate.
    """
    ctx = ssl.create_default_context(cafile=ca_file)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    return ctx


class Relay:
    """Loopback ``ws://`` for the extension, carried to the bridge's ``wss://`` URL.

    Args:
        upstream: the bridge's ``wss://`` URL.
        ssl_context: from :func:`client_ssl_context`.

    Attributes:
        url: ``ws://127.0.0.1:PORT`` once started (what the extension's config names).
        relayed: connections carried so far (each extension reconnect is one more).
    """

    def __init__(self, upstream: str, ssl_context: ssl.SSLContext) -> None:
        self.upstream = upstream
        self.ssl_context = ssl_context
        self.relayed = 0
        self._server: Server | None = None
        self.port: int | None = None

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    async def start(self) -> None:
        """Listen on a free loopback port."""
        self._server = await serve(self._handle, "127.0.0.1", 0,
                                   process_request=self._check_origin,
                                   max_size=MAX_MESSAGE_BYTES, compression=None)
        self.port = next(iter(self._server.sockets)).getsockname()[1]

    async def stop(self) -> None:
        """Stop listening and end every relayed connection."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    @staticmethod
    def _check_origin(conn: ServerConnection, request: HttpRequest) -> HttpResponse | None:
        """Only the extension may use the relay: a page on this machine could otherwise
        reach the bridge through it (the credential still guards the hello, but the
        bridge's own Origin check, bridge/server.py, would be bypassed)."""
        origin = (request.headers.get("Origin") or "").lower()
        if not origin.startswith(("chrome-extension://", "moz-extension://")):
            return conn.respond(HTTPStatus.FORBIDDEN, "Only the extension may connect.\n")
        return None

    async def _handle(self, down: ServerConnection) -> None:
        self.relayed += 1
        try:
            up = await connect(self.upstream, ssl=self.ssl_context,
                               open_timeout=OPEN_TIMEOUT_S, max_size=MAX_MESSAGE_BYTES,
                               ping_interval=PING_S, ping_timeout=PONG_S,
                               close_timeout=CLOSE_S,
                               compression=None, proxy=None)
        except (OSError, TimeoutError, InvalidStatus, WebSocketException, ssl.SSLError) as exc:
            log.warning("relay: cannot reach the bridge at %s: %s", self.upstream, exc)
            with contextlib.suppress(ConnectionClosed):
                await down.close(CLOSE_UNREACHABLE, "bridge unreachable")
            return
        try:
            await _pipe(down, up)
        finally:
            with contextlib.suppress(Exception):
                await up.close()


async def _pipe(down: ServerConnection, up: ClientConnection) -> None:
    """Frames both ways until one side ends; the other is then closed with its code."""

    async def carry(src: ServerConnection | ClientConnection,
                    dst: ServerConnection | ClientConnection) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for message in src:
                await dst.send(message)

    tasks = [asyncio.create_task(carry(down, up)), asyncio.create_task(carry(up, down))]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
    for src, dst in ((up, down), (down, up)):
        code = src.close_code
        if code is not None:
            reason = src.close_reason or ""
            # 1005/1006 are not sendable; a lost peer reads as "going away".
            with contextlib.suppress(Exception):
                await dst.close(code if code not in (1005, 1006, 1015) else 1001, reason)
            return
    with contextlib.suppress(Exception):
        await down.close(1001, "relay ended")
