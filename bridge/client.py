"""A client connection to the bridge: the base of the SDK, the CLI and the MCP server.

Speaks only the wire protocol (design.md §10: surfaces never reach into server internals).
"""

from __future__ import annotations

import asyncio
import ssl
import contextlib
import logging
from typing import Any, Literal, Self

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

from . import config
from .protocol import errors as E
from .protocol.models import PROTOCOL_VERSION, Hello, Request, Welcome
from .protocol.peer import Connection, handshake

log = logging.getLogger(__name__)


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
    Its requests belong to one session (docs/sessions.md): the one :meth:`open_session`
    names, else an implicit one the bridge makes at the first request.
    """

    def __init__(self, ws: ClientConnection, welcome: Welcome) -> None:
        self._conn = Connection(ws, "bridge", id_prefix="c")
        self.peer_id = welcome.peerId
        self.protocol_version = welcome.protocolVersion
        """The protocol version the bridge said in its welcome (equal to PROTOCOL_VERSION)."""
        self.session: dict[str, Any] | None = None
        """The ``session.open`` answer once :meth:`open_session` succeeded (``{sessionId,
        label, leaseMs, heartbeatMs, secret, resumed, tabs}``), else None."""
        self._reader = asyncio.create_task(self._conn.serve())
        self._heartbeat: asyncio.Task[None] | None = None
        self._idle_since = asyncio.get_running_loop().time()
        """Loop time of the last request sent or answered: every request renews the
        lease, so the heartbeat only speaks after ``heartbeatMs`` of silence."""

    @classmethod
    async def connect(
        cls, url: str | None = None, token: str | None = None, open_timeout_s: float = 10.0,
        operator: str | None = None, ca_file: str | None = None,
    ) -> BridgeClient:
        """Connect and say hello.

        Args:
            url: ``ws://127.0.0.1:PORT``; default: the endpoint file of the running bridge.
            token: bridge token; default: the token file.
            open_timeout_s: seconds to wait for the TCP and WebSocket handshake.
            operator: the operator credential (:func:`bridge.config.read_operator_token`):
                this connection may stop other sessions and sees their labels
                (docs/security.md "Who may do what"). Default: an agent's connection.
            ca_file: for a ``wss://`` URL: the PEM CA the bridge's certificate must chain
                to (default: the system's trust store; docs/deploy.md).

        Raises:
            DeviceNotConnected: nothing listens at the URL (or its certificate was refused).
            Unauthorized / ProtocolMismatch / BadRequest: the bridge refused the hello.
        """
        url, token = resolve_endpoint(url, token)
        try:
            # proxy=None: the bridge is on loopback; an HTTP(S)_PROXY in the environment
            # must not receive (or break) the connection and its token.
            tls = {"ssl": ssl.create_default_context(cafile=ca_file)} if ca_file else {}
            ws = await connect(
                url, open_timeout=open_timeout_s, max_size=64 * 1024 * 1024, proxy=None,
                compression=None,  # loopback: deflate costs CPU and saves nothing
                **tls,
            )
        except (OSError, InvalidStatus, WebSocketException, TimeoutError) as exc:
            raise E.DeviceNotConnected(
                f"Cannot reach the bridge at {url}: {exc}. Is `trustbridge up` running?"
            ) from exc
        hello = Hello(role="client", protocolVersion=PROTOCOL_VERSION, token=token,
                      operator=operator)
        try:
            welcome = await handshake(ws, hello)
        except ConnectionClosed as exc:
            raise E.Unauthorized("The bridge closed the connection during hello.") from exc
        return cls(ws, welcome)

    @property
    def closed(self) -> bool:
        """True once the connection is gone (closed here, or by the bridge): calls then fail."""
        return self._reader.done()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def open_session(
        self, label: str, *, lease_ms: int = 120_000,
        on_disconnect: Literal["stop", "keep"] = "stop", secret: str | None = None,
    ) -> dict[str, Any]:
        """Open (or resume) the session this connection's requests belong to, and keep its
        lease alive: while the connection is open, a heartbeat sends ``session.renew``
        after every ``heartbeatMs`` (``leaseMs / 3``) without a request. The heartbeat
        stops when the connection closes or the session is stopped; a failed renew is
        logged (logger ``bridge.client``), never raised.

        Must come before any other request of this connection (the bridge gives a
        connection that sent one an implicit session; docs/sessions.md).

        Args:
            label: what people and other sessions see (1-64 of ``A-Za-z0-9_.:@-`` and
                inner spaces); TAB_CLAIMED errors of others name it.
            lease_ms: how long the session lives without a request or renew, ms
                (5,000-3,600,000).
            on_disconnect: ``"stop"``: the session stops when this connection closes;
                ``"keep"``: it waits ``lease_ms`` for a connection that resumes it with
                ``label`` and ``secret``.
            secret: the ``secret`` of an earlier open of this kept session, to resume it
                (its tabs and current tab). A secret of a session that is gone opens a
                new one (``resumed`` false).

        Returns:
            ``{sessionId, label, leaseMs, heartbeatMs, secret, resumed, tabs:[{device,
            tabId}]}`` (``secret``: show it to nobody).

        Raises:
            BadRequest: this connection has a session already; ``label`` belongs to a
                live session and ``secret`` does not match (or it is attached to another
                connection); a bad label or lease.
            DeviceNotConnected: the connection is closed.
        """
        result = await self.call("session.open", {
            "label": label, "leaseMs": lease_ms, "onDisconnect": on_disconnect,
            "secret": secret})
        self.session = result
        if self._heartbeat is None:
            self._heartbeat = asyncio.create_task(
                self._keep_alive(int(result["heartbeatMs"]) / 1000))
        return result

    async def _keep_alive(self, every_s: float) -> None:
        loop = asyncio.get_running_loop()
        while not self.closed:
            wait = self._idle_since + every_s - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
                continue  # a request may have renewed it meanwhile
            try:
                await self.call("session.renew")
            except E.SessionStopped as err:
                log.warning("session %s stopped (%s); no more heartbeats",
                            (self.session or {}).get("label"), err.message)
                return
            except E.DeviceNotConnected:
                return  # the connection is gone: nothing to renew
            except Exception as err:  # noqa: BLE001 - a heartbeat must never crash
                # Logged, never raised: the next request (or renew) tries again.
                log.warning("session.renew failed: %s", err)
                self._idle_since = loop.time()

    async def close(self) -> None:
        """Close the connection (and stop the heartbeat); pending calls fail with
        DeviceNotConnected, pending input (:data:`~bridge.protocol.methods.INPUT_METHODS`)
        with BrowserOperationUncertain."""
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._heartbeat
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
        loop = asyncio.get_running_loop()
        self._idle_since = loop.time()
        try:
            return await self._conn.call(method, clean, req_id=req_id)
        except asyncio.CancelledError:
            # Withdraw it at the bridge: a queued request never runs; a running one
            # finishes there (its answer is dropped here).
            with contextlib.suppress(ConnectionClosed):
                await self._conn.send(Request(id=f"{req_id}x", method="request.cancel",
                                              params={"requestId": req_id}))
            raise
        finally:
            # The bridge renews the lease at each request; one that ran a long time
            # leaves it renewed from when it was sent, so count silence from its answer.
            self._idle_since = loop.time()
