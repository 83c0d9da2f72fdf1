"""The bridge's WebSocket server: moves messages between peers and the routing policy.

Peers (extension, driver, client) connect to ``ws://127.0.0.1:PORT``; the first frame is
a :class:`~bridge.protocol.Hello` with the bridge token. Client requests are routed by
:class:`~bridge.routing.RoutingPolicy` and executed by :class:`~bridge.executor.Executor`.
The frame loop, the correlation of the bridge's own calls to its peers and what a lost
peer means for them are the shared peer layer (bridge/protocol/peer.py); this module adds
the hello checks, the client requests' lifecycle (queued, running, withdrawn) and the
result check of every answer it sends a client.

Close codes (docs/bridge.md): 1008 policy violation after a bad first frame (wrong
token, other protocol version, malformed or binary hello, no hello in time; the error
response comes first), 4409 a second driver for a device whose driver is online (after
the UNAUTHORIZED response; likewise a second extension for a device whose extension
answers a ping), 1009 message too big (over ``max_message_bytes``), 1007 text frame
that is not UTF-8, 1001 bridge stopping. Web-page origins get HTTP 403 at the handshake.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import itertools
import json
import logging
import os
import secrets
import ssl
import time
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

import pydantic
import pydantic_core
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request as HttpRequest, Response as HttpResponse

from .protocol import errors as E
from .protocol.limits import FRAME_LIMIT_BYTES
from .protocol.methods import CLIENT_INPUT_METHODS
from .protocol.models import (
    PROTOCOL_VERSION,
    CancelParams,
    Event,
    Hello,
    Request,
    Response,
    Welcome,
)
from .executor import Executor
from .live_view import LiveView, is_live
from .device_tokens import DeviceTokens
from .pairing import Pairing, is_pair_request
from .protocol.origins import OriginPolicy
from .protocol.peer import Connection, answer, encode
from .protocol.validate import error_locs, summarise, validate_result
from .routing import RoutingPolicy
from .urls import redact, redact_credentials

log = logging.getLogger("trustbridge.bridge")
action_log = logging.getLogger("trustbridge.actions")

HELLO_TIMEOUT_S = 10.0
EXTENSION_GRACE_S = 5.0
"""How long a supervisor lets its extension reconnect by itself before it restarts the
browser, s (supervisor/runner.py Supervisor.EXTENSION_GRACE_S; the extension retries at
0.25 s doubling, so a cut socket is back well within it)."""
BROWSER_RESTART_S = 15.0
"""What a browser restart is expected to take, s (2-10 s measured on the 2-core dev
machine under load)."""
SWEEP_S = 2.0
"""How often the bridge looks for sessions whose lease ran out, s."""
CLOSE_DRIVER_CONFLICT = 4409
"""Close code for a driver or extension hello refused because the device's peer of that
role is online."""
LIVENESS_PROBE_S = 2.0
"""How long a device's connected extension has to answer the bridge's ping when a second
extension says hello for the device, s: answered, the newcomer is refused; unanswered (a
socket whose close never arrived), the old one is dropped and the newcomer takes over."""
DEFAULT_MAX_MESSAGE_BYTES = FRAME_LIMIT_BYTES
"""32 MiB (bridge/protocol/limits.py): a full-page PNG screenshot in base64 fits. Peers keep
their answers under it (bridge/protocol/peer.py bounded_frame, the extension's
boundedFrame)."""
REMOTE_PING_S = 2.0
"""Ping interval of the TLS listener's connections, s."""
REMOTE_PONG_S = 3.0
"""How long a TLS listener's peer has to answer a ping, s: a device whose link is cut is
dropped within REMOTE_PING_S + REMOTE_PONG_S + REMOTE_CLOSE_S (its requests in flight then answer at once:
input BROWSER_OPERATION_UNCERTAIN, the rest DEVICE_NOT_CONNECTED), before the bridge's own
10 s wait for a target (executor.RESOLVE_TIMEOUT_S) runs out, instead of the 20 + 20 s of
loopback peers (and their 10 s close wait). A link slower than 3 s a round trip is
taken for a cut one."""
REMOTE_CLOSE_S = 1.0
"""How long a TLS listener's connection waits for the closing handshake once it gave up
on a pong before it drops the socket, s (websockets' default, 10 s, would keep a cut
device "connected" for that long)."""


@dataclass(frozen=True)
class TlsListener:
    """The bridge's second, network-facing listener (docs/deploy.md): ``wss://`` only.

    Args:
        host: address to bind (``0.0.0.0``, a LAN or container address).
        port: TCP port (0: any free one; :attr:`BridgeServer.remote_url` tells).
        certfile: PEM certificate chain the bridge presents.
        keyfile: PEM private key of that certificate.
    """

    host: str
    port: int
    certfile: str
    keyfile: str

    def context(self) -> ssl.SSLContext:
        """The server-side TLS context (TLS 1.2 or newer).

        Raises:
            OSError / ssl.SSLError: the certificate or key cannot be read or do not match.
        """
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.load_cert_chain(self.certfile, self.keyfile)
        return ctx


@dataclass
class _Running:
    """A client request in progress: queued behind its tab's lock, or running."""

    task: asyncio.Task[None]
    running: bool = False
    started: bool = False
    """The task has taken its first step (a task cancelled before that never runs a line,
    so it could not answer; a withdrawn request that has not started answers on start)."""
    withdrawn: bool = False
    reason: str | None = None
    """Why it was withdrawn, when not by the client's own request.cancel."""


@dataclass(eq=False)
class Peer:
    """One connection after its hello: its :class:`~bridge.protocol.peer.Connection`
    (the bridge's calls to it, correlated there) and the client requests it has running."""

    id: str
    role: str
    device: str | None
    conn: Connection
    operator: bool = False
    """The hello carried the operator credential (docs/security.md)."""
    remote: bool = False
    """It came through the TLS listener (another machine, docs/deploy.md)."""
    host: str | None = None
    """The address it connected from."""
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    requests: dict[str, _Running] = field(default_factory=dict)

    @property
    def ws(self) -> ServerConnection:
        """The peer's WebSocket."""
        return self.conn.ws  # type: ignore[return-value]

    async def send(self, message: Welcome | Request | Response | Event) -> None:
        await self.conn.send(message)

    async def call(self, method: str, params: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """Send a request to this peer and wait for its (validated) result.

        Raises:
            TrustbridgeError: the peer's error, re-raised as its class.
            Timeout: no answer in ``timeout_s`` seconds (methods that are not input).
            BrowserOperationUncertain: no answer in ``timeout_s`` seconds to input
                (``methods.INPUT_METHODS``), or the peer left before answering it.
            DeviceNotConnected: the peer left before answering anything else.
            InternalError: the answer does not fit the method's result model.
        """
        return await self.conn.call(method, params, timeout_s)


class BridgeServer:
    """The hub every peer connects to.

    Args:
        token: the secret every hello must carry.
        host: address to bind; 127.0.0.1 unless explicitly told otherwise.
        port: TCP port; 0 picks a free one (see :attr:`url`).
        policy: routing policy; a new one seeded with nothing if omitted.
        max_message_bytes: largest accepted frame, bytes; larger ones close with 1009.
        origins: the origin lists the browser enforces; navigation to an origin they
            block is refused before it is sent (bridge/urls.py).
        operator_token: the operator credential: a client whose hello carries it may
            stop other sessions and sees their labels (docs/security.md "Who may do
            what"). Default: a random one only this object knows (:attr:`operator_token`);
            the embedded bridge passes the state directory's ``operator-token``.
        tls: a second, ``wss://`` listener for remote devices and clients
            (:class:`TlsListener`); None: loopback only. Its peers are pinged every
            :data:`REMOTE_PING_S`.
        device_tokens: the remote devices' credentials (default: the state directory's
            ``device-tokens.json``, bridge/device_tokens.py).
    """

    def __init__(
        self,
        token: str,
        host: str = "127.0.0.1",
        port: int = 0,
        policy: RoutingPolicy | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        allow_file_urls: bool | None = None,
        origins: OriginPolicy | None = None,
        operator_token: str | None = None,
        tls: TlsListener | None = None,
        device_tokens: DeviceTokens | None = None,
    ) -> None:
        self.token = token
        self.operator_token = operator_token or secrets.token_hex(32)
        self.host = host
        self.port = port
        self.policy = policy or RoutingPolicy()
        self.max_message_bytes = max_message_bytes
        self.peers: dict[str, Peer] = {}
        self.new_browser: set[str] = set()
        """Devices whose next extension hello comes from a browser started again (its
        supervisor's ``device.recovering {newBrowser: true}``, or the embedded owner
        restarting a dead supervisor): that hello frees every tab owner of the device
        (SessionBook.browser_replaced; tab ids of a new browser may repeat old ones)."""
        self._server: Server | None = None
        self._peer_ids = itertools.count(1)
        if allow_file_urls is None:
            allow_file_urls = os.environ.get("TRUSTBRIDGE_ALLOW_FILE_URLS", "") == "1"
        self.executor = Executor(self.policy, self._peer, allow_file_urls=allow_file_urls,
                                 origins=origins)
        self.executor.gate.withdraw = self._withdraw
        self.executor.gate.operator = self._is_operator
        self._sweeper: asyncio.Task[None] | None = None
        self.closing = False
        """Set by :meth:`begin_shutdown`: every later hello is refused (issue 32 item 1)."""
        self.pairing = Pairing()  # codes and paired devices' credentials (bridge/pairing.py)
        # The live view of tabs handed to a person (issue 37, bridge/live_view.py).
        self.live = LiveView(self.executor.handovers, self.executor,
                             lambda: (self.host, self.port))
        self.executor.base_url = lambda: f"http://{self.host}:{self.port}"
        self.executor.handovers.on_change = self._handover_changed
        self.tls = tls
        self.device_tokens = device_tokens or DeviceTokens()
        self._remote_server: Server | None = None
        self.remote_port: int | None = None
        self.executor.links = self._links

    @property
    def url(self) -> str:
        """``ws://host:port`` once started."""
        return f"ws://{self.host}:{self.port}"

    async def start(self) -> None:
        """Bind and start accepting connections.

        Raises:
            OSError: the loopback port cannot be bound.
            BadRequest: the TLS listener cannot be opened (its port, its certificate or
                key); nothing listens then.
        """
        self._server = await serve(
            self._handle,
            self.host,
            self.port,
            process_request=self._process_request,
            max_size=self.max_message_bytes,
            ping_interval=20,
            ping_timeout=20,
            # Peers are on this machine (loopback, the default bind) or the local network
            # (--host): deflating each message costs CPU on both ends and saves nothing
            # worth it (issue 18: 0.5-1 ms a trusted click, same-run A/B; a page state of
            # a few KB per MCP action).
            compression=None,
        )
        sock = next(iter(self._server.sockets))
        self.port = sock.getsockname()[1]
        if self.tls is not None:
            try:
                self._remote_server = await serve(
                    lambda ws: self._handle(ws, remote=True),
                    self.tls.host, self.tls.port, ssl=self.tls.context(),
                    process_request=self._check_origin, max_size=self.max_message_bytes,
                    ping_interval=REMOTE_PING_S, ping_timeout=REMOTE_PONG_S,
                    close_timeout=REMOTE_CLOSE_S, compression=None)
            except BaseException as exc:
                self._server.close()
                await self._server.wait_closed()
                self._server = None
                if isinstance(exc, OSError):  # ssl.SSLError is one: a bad certificate or key
                    raise E.BadRequest(
                        f"Cannot open the wss:// listener on {self.tls.host}:{self.tls.port}: "
                        f"{exc}.", {"host": self.tls.host, "port": self.tls.port}) from exc
                raise
            self.remote_port = next(iter(self._remote_server.sockets)).getsockname()[1]
            log.info("bridge listening for remote peers on %s", self.remote_url)
        self._sweeper = asyncio.create_task(self._sweep_sessions())
        log.info("bridge listening on %s", self.url)

    @property
    def remote_url(self) -> str | None:
        """``wss://host:port`` of the TLS listener once started (None: there is none)."""
        if self.tls is None or self.remote_port is None:
            return None
        host = f"[{self.tls.host}]" if ":" in self.tls.host else self.tls.host
        return f"wss://{host}:{self.remote_port}"

    async def begin_shutdown(self) -> None:
        """Announce that this bridge is going away (issue 32 item 1): every later hello is
        refused with DEVICE_NOT_CONNECTED (``details.shuttingDown: true``), and every
        client connected now is closed (code 1001, "going away"), so an MCP server on it
        reconnects at its next call, finds no bridge, and starts its own instead of
        waiting on one whose browser is being stopped. Extension and driver peers stay
        until :meth:`stop` (the browser is being closed under them)."""
        self.closing = True
        clients = [p for p in self.peers.values() if p.role == "client"]
        for peer in clients:
            with contextlib.suppress(Exception):
                await peer.ws.close(1001, "bridge shutting down")

    async def stop(self) -> None:
        """Close every connection and stop listening."""
        self.closing = True
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        for server in (self._remote_server, self._server):
            if server is not None:
                server.close()
                await server.wait_closed()
        self._server = self._remote_server = None

    async def __aenter__(self) -> BridgeServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- handshake ----------------------------------------------------------------

    def _process_request(self, conn: ServerConnection,
                         request: HttpRequest) -> HttpResponse | None:
        """The live view's page and socket (``/live/...``: their own checks, in
        bridge/live_view.py); every other request is a peer's handshake."""
        if is_live(request.path):
            return self.live.http(conn, request)
        return self._check_origin(conn, request)

    @staticmethod
    def _check_origin(conn: ServerConnection, request: HttpRequest) -> HttpResponse | None:
        """Refuse handshakes from web pages (design.md §8) with an allow-list: no ``Origin``
        (Python peers, the driver, CLI, MCP server) or an extension's own origin
        (``chrome-extension:``, ``moz-extension:``). Everything a page can produce
        (``http:``, ``https:``, ``null`` from sandboxed frames and ``file:`` pages, ``data:``)
        gets HTTP 403 before any message is read; the token still guards the rest."""
        origin = request.headers.get("Origin")
        if origin is not None and not origin.lower().startswith(
                ("chrome-extension://", "moz-extension://")):
            log.warning("refused a WebSocket handshake from origin %r", origin)
            return conn.respond(HTTPStatus.FORBIDDEN, "Web page origins may not connect.\n")
        return None

    async def _read_hello(self, ws: ServerConnection) -> Hello:
        try:
            raw = await asyncio.wait_for(ws.recv(), HELLO_TIMEOUT_S)
        except TimeoutError as exc:
            raise E.BadRequest(f"No hello within {HELLO_TIMEOUT_S:g} s.") from exc
        if isinstance(raw, bytes):
            raise E.BadRequest("Binary frames are not part of the protocol; send JSON text.")
        if is_pair_request(raw):  # a pairing code exchange: answered, then closed (raises)
            await self.pairing.exchange(ws, raw)
        try:
            hello = Hello.model_validate_json(raw)
        except pydantic.ValidationError as exc:
            raise E.BadRequest(
                "The first message must be a hello: " + summarise(exc),
                {"errors": error_locs(exc)},
            ) from exc
        master = hmac.compare_digest(hello.token.encode(), self.token.encode())
        # Else a paired extension's credential, or a remote device's (its driver or
        # extension, bridge/device_tokens.py).
        if not self.pairing.admits(hello, master, ws) \
                and not self.device_tokens.admits(hello, ws):
            raise E.Unauthorized(
                "Wrong or missing bridge token. Read it from the token file in the state "
                "directory (see docs/security.md)."
            )
        if hello.operator is not None and (hello.role != "client" or not hmac.compare_digest(
                hello.operator.encode(), self.operator_token.encode())):
            raise E.Unauthorized(
                "Wrong operator credential (or one sent by a peer that is no client). The "
                "operator credential is the operator-token file of the state directory "
                "(docs/security.md); connect without it to work as an agent session.")
        if hello.protocolVersion != PROTOCOL_VERSION:
            raise E.ProtocolMismatch(
                f"Peer speaks protocol {hello.protocolVersion}, bridge speaks {PROTOCOL_VERSION}.",
                {"peer": hello.protocolVersion, "bridge": PROTOCOL_VERSION},
            )
        return hello

    async def _handle(self, ws: ServerConnection, remote: bool = False) -> None:
        if ws.request is not None and is_live(ws.request.path):
            await self.live.serve(ws)  # a person's live view, claimed in _process_request
            return
        try:
            hello = await self._read_hello(ws)
            if self.closing:
                raise E.DeviceNotConnected(
                    "This bridge is shutting down; it takes no new connections.",
                    {"shuttingDown": True},
                    next_step="Connect again in a moment: a new bridge (or this server's own "
                    "embedded one) takes its place.")
            if hello.role == "extension" and hello.device is not None:
                await self._refuse_a_second_extension(hello.device)
            peer_id = f"p{next(self._peer_ids)}"
            name = f"{hello.role} of device {hello.device!r}"
            peer = Peer(peer_id, hello.role, hello.device,
                        Connection(ws, name, id_prefix="b", details={"device": hello.device}),
                        operator=hello.operator is not None, remote=remote,
                        host=_address(ws))
            self.policy.join(peer.id, hello.role, hello.device, hello.browser,
                             hello.capabilities)
        except E.TrustbridgeError as err:
            code, reason = 1008, err.code.value
            conflict = (err.details or {}).get("reason")
            if conflict in ("driverAlreadyConnected", "extensionAlreadyConnected"):
                role = "driver" if conflict == "driverAlreadyConnected" else "extension"
                code, reason = CLOSE_DRIVER_CONFLICT, f"{reason}: {role} already connected"
                log.warning("refused a second %s for device %r", role, hello.device)
            with contextlib.suppress(ConnectionClosed):
                await ws.send(encode(Response(id=None, ok=False, error=err.to_payload())))
                await ws.close(code, reason)
            return
        except ConnectionClosed:
            return
        self.peers[peer.id] = peer
        log.info("peer %s joined: role=%s device=%s", peer.id, peer.role, peer.device)
        try:
            await peer.send(Welcome(protocolVersion=PROTOCOL_VERSION, peerId=peer.id))
            if peer.role == "extension" and peer.device is not None:
                # A new extension may be a restarted browser: its active tab is to learn.
                self.executor.queue.forget_device(peer.device)
                if peer.device in self.new_browser:
                    # It is one (its supervisor said so): the old tabs' owners go.
                    self.new_browser.discard(peer.device)
                    freed = self.executor.sessions.browser_replaced(peer.device)
                    log.info("device %r has a new browser: %d tab owners from before "
                             "forgotten", peer.device, len(freed))
                self._extension_changed(peer.device, joined=True)
            if peer.role == "extension" and peer.device is not None \
                    and self.executor.sessions.owners(peer.device):
                # A restarted background shows the owners it would otherwise miss.
                self.executor.sessions.changed.add(peer.device)
                self._tell_owners()
            await peer.conn.serve(
                on_request=lambda req: self._on_request(peer, req),
                on_event=lambda ev: self._on_event(peer, ev),
                on_malformed=lambda raw, exc: self._on_malformed(peer, raw, exc),
                on_other=lambda msg: self._reply_error(
                    peer, None, E.BadRequest(f"Unexpected {msg.type} message.")),
            )
        except ConnectionClosed:
            pass
        finally:
            self._drop(peer)

    async def _refuse_a_second_extension(self, device: str) -> None:
        """One live extension per device, as one driver (routing.join): whoever holds the
        token could otherwise take the real extension's place, receive the agents'
        snapshots and resolveTarget requests and answer them with a forged page. The
        connected one is asked for a pong (LIVENESS_PROBE_S); a half-closed socket left
        by a killed service worker answers none, and is dropped for the newcomer.

        Raises:
            Unauthorized: the device's extension answered (``details.reason``:
                ``extensionAlreadyConnected``).
        """
        old = self.peers.get(self.policy.extensions.get(device, ""))
        if old is None:
            return
        try:
            pong = await old.ws.ping()
            await asyncio.wait_for(pong, LIVENESS_PROBE_S)
        except (ConnectionClosed, TimeoutError, RuntimeError):
            log.warning("extension %s of device %r answered no ping: replaced by a new "
                        "one", old.id, device)
            old.ws.transport.abort()  # its handler ends and drops it
            return
        raise E.Unauthorized(
            f"Device {device!r} already has its extension connected (it answered now); a "
            "second one is refused. Close the other first (a restarted browser's old "
            "connection is replaced once it stops answering).",
            {"device": device, "reason": "extensionAlreadyConnected"})

    def _drop(self, peer: Peer) -> None:
        self.peers.pop(peer.id, None)
        self.policy.leave(peer.id)
        if peer.role == "extension" and peer.device is not None \
                and peer.device not in self.policy.extensions:
            self._extension_changed(peer.device, joined=False)
        peer.conn.fail_pending()  # each pending call fails at once (docs/bridge.md)
        for task in peer.tasks:
            task.cancel()
        if peer.role == "client":
            self.executor.sessions.disconnected(peer.id)  # its tabs become free
            self._tell_owners()
        log.info("peer %s left: role=%s device=%s", peer.id, peer.role, peer.device)

    def _extension_changed(self, device: str, *, joined: bool) -> None:
        """Tell the device's driver that its extension left or came back
        (``extension.left`` / ``extension.joined``), so its supervisor can bring a missing
        extension back (issue 32 item 2). A driver that says it does
        (``capabilities.watchesExtension``) makes the gap's answers name that recovery
        and its wait (RoutingPolicy.recovering)."""
        driver = self.peers.get(self.policy.drivers.get(device, ""))
        if driver is None:
            return
        if not joined and self.policy.driver_capabilities(device).get("watchesExtension"):
            self.policy.recovering[device] = {
                "part": "extension", "since": time.monotonic(), "needsDriver": False,
                "action": f"waiting up to {EXTENSION_GRACE_S:g} s for it to reconnect, then "
                "its supervisor restarts the browser; the tabs and refs from before are then "
                "gone", "expectedWaitS": EXTENSION_GRACE_S + BROWSER_RESTART_S}
        event = "extension.joined" if joined else "extension.left"
        task = asyncio.ensure_future(self._notify(driver, event, {"device": device}))
        driver.tasks.add(task)
        task.add_done_callback(driver.tasks.discard)

    # -- messages -----------------------------------------------------------------

    async def _on_malformed(self, peer: Peer, raw: str | bytes,
                            exc: pydantic.ValidationError | None) -> None:
        if exc is None:
            await self._reply_error(peer, None, E.BadRequest("Binary frames are not accepted."))
            return
        assert isinstance(raw, str)
        await self._reply_error(
            peer,
            _guess_id(raw),
            E.BadRequest("Malformed message: " + summarise(exc), {"errors": error_locs(exc)}),
        )

    async def _on_request(self, peer: Peer, msg: Request) -> None:
        if peer.role != "client":
            await self._reply_error(
                peer, msg.id, E.BadRequest(f"A {peer.role} peer may not send requests.")
            )
            return
        if msg.method == "request.cancel":
            await self._cancel(peer, msg)
            return
        if msg.method == "pairing.create":  # answered here (bridge/pairing.py)
            online = set(self.policy.extensions) | set(self.policy.drivers)
            with contextlib.suppress(ConnectionClosed):
                await peer.send(self.pairing.serve(msg, online))
            return
        if str(msg.id) in peer.requests:  # cancel addresses requests by id
            await self._reply_error(peer, msg.id, E.BadRequest(
                f"Request id {msg.id!r} is already in use by a request in progress on "
                "this connection; use a new id.", {"id": msg.id}))
            return
        task = asyncio.create_task(self._serve_request(peer, msg))
        peer.tasks.add(task)
        task.add_done_callback(peer.tasks.discard)
        key = str(msg.id)
        peer.requests[key] = _Running(task)
        task.add_done_callback(lambda _t: peer.requests.pop(key, None))

    def _spawn_close_door(self, peer: Peer, device: str) -> None:
        """The person withdrew their consent: the device's driver closes its CDP door,
        so the URLs already issued stop working too (docs/cdp.md)."""
        driver = self.executor.policy.drivers.get(device)
        if driver is None:
            return  # no driver, no door (it closes with its driver)

        async def close() -> None:
            try:
                await self.executor.peer(driver).call("driver.cdpClose", {}, 10.0)
            except Exception as err:  # noqa: BLE001 - logged; the door stays refused
                log.warning("device %r: closing its CDP door failed: %s", device, err)

        task = asyncio.ensure_future(close())
        peer.tasks.add(task)
        task.add_done_callback(peer.tasks.discard)

    async def _on_event(self, peer: Peer, msg: Event) -> None:
        if msg.event == "device.recovering" and peer.role == "driver" \
                and peer.device is not None and isinstance(msg.params, dict):
            # The supervisor started a recovery of a part of its device (its browser
            # restart after the extension stayed away): the gap's answers say so.
            wait = msg.params.get("expectedWaitS")
            self.policy.recovering[peer.device] = {
                "part": str(msg.params.get("part") or "browser")[:40],
                "action": str(msg.params.get("action") or "being recovered")[:200],
                "expectedWaitS": float(wait) if isinstance(wait, (int, float)) else 20.0,
                "since": time.monotonic(), "needsDriver": False}
            if msg.params.get("newBrowser") is True:
                self.new_browser.add(peer.device)
            self.policy.recovered(peer.device)  # already back: nothing to announce
            return
        if msg.event == "page.receipt" and peer.role == "extension":
            self.executor.receipt_pushed(peer.id, msg.params)
            return
        if msg.event == "tab.opened" and peer.role == "extension":
            self.executor.tab_opened(peer.id, msg.params)
            return
        if msg.event == "consent.cdp" and peer.role == "extension":
            # The person turned the CDP door on or off in the extension's options page
            # (docs/cdp.md "A person's own browser").
            allowed = msg.params.get("allowed") if isinstance(msg.params, dict) else None
            if self.executor.policy.consent_cdp(peer.id, allowed):
                log.info("device %r: the person %s the CDP door", peer.device,
                         "allowed" if allowed else "refused")
                if allowed is False and peer.device is not None:
                    self._spawn_close_door(peer, peer.device)
            return
        if msg.event == "session.stop" and peer.role == "extension":
            # A person pressed Stop in the browser for the session owning a tab. Only the
            # extension of a device the session holds a tab on speaks for that person: a
            # token holder saying hello as the extension of some other device stops
            # nothing (tests/bridge/test_authority.py).
            label = msg.params.get("label") if isinstance(msg.params, dict) else None
            session = self.executor.sessions.find(label) if isinstance(label, str) else None
            if session is not None and not any(d == peer.device for d, _ in session.tabs):
                log.warning("extension of device %r sent Stop for session %r, which holds "
                            "no tab there: ignored", peer.device, label)
                session = None
            if session is not None:
                self.executor.gate.stop(session, "a person (the browser's Stop button)")
                log.info("session %r stopped from the browser", label)
                self._tell_owners()
            return
        if msg.event == "live.frame" and peer.role == "driver":
            if isinstance(msg.params, dict):
                self.live.frame(msg.params)  # to the hand-off's live view, if any
            return
        if msg.event == "driver.dispatched" and peer.role == "driver":
            self.executor.input_dispatched(peer.id, msg.params)
            return
        if msg.event == "page.opened" and peer.role == "driver" and peer.device is not None:
            self.executor.page_opened(peer.device)
            return
        dialog = self.policy.dialog_event(peer.id, msg.event, msg.params)
        if dialog is not None and peer.device is not None:
            self.executor.dialog_opened(peer.device, dialog)

    async def _reply_error(self, peer: Peer, req_id: Any, err: E.TrustbridgeError) -> None:
        with contextlib.suppress(ConnectionClosed):
            await peer.send(Response(id=req_id, ok=False, error=err.to_payload()))

    async def _cancel(self, peer: Peer, req: Request) -> None:
        """``request.cancel {requestId}``: a request still queued behind its tab's lock is
        withdrawn and answers CANCELLED (it never runs); one already running is left to
        finish and report what it did (nothing that may have reached the page is undone)."""
        try:
            target = str(CancelParams.model_validate(req.params).requestId)
        except pydantic.ValidationError as exc:
            await self._reply_error(peer, req.id, E.BadRequest(
                "request.cancel needs {requestId}: " + summarise(exc)))
            return
        entry = peer.requests.get(target)
        if entry is None:
            result = {"requestId": target, "cancelled": False, "state": "unknown"}
        elif entry.running:
            result = {"requestId": target, "cancelled": False, "state": "running"}
        else:
            entry.withdrawn = True
            if entry.started:  # waiting for its tab: wake it with CancelledError
                entry.task.cancel()
            result = {"requestId": target, "cancelled": True, "state": "queued"}
        with contextlib.suppress(ConnectionClosed):
            await peer.send(Response(id=req.id, ok=True, result=result))

    async def _serve_request(self, peer: Peer, req: Request) -> None:
        started = time.perf_counter()
        entry = peer.requests.get(str(req.id))

        def on_start() -> None:
            if entry is not None:
                entry.running = True

        if entry is not None:
            entry.started = True

        async def work() -> dict[str, Any]:
            try:
                if entry is not None and entry.withdrawn:
                    raise asyncio.CancelledError
                result = await self.executor.dispatch(req.method, req.params, on_start,
                                                      peer=peer.id)
            except asyncio.CancelledError:
                if entry is None or entry.running or peer.ws.state.name != "OPEN":
                    raise
                if entry.reason is not None:
                    raise E.Cancelled(f"Cancelled before it ran: {entry.reason}; nothing was "
                                      "sent.")
                raise E.Cancelled("Cancelled by the client before it ran; nothing was sent.")
            try:
                return validate_result(req.method, result, sender="The bridge")
            except E.InternalError:
                # A bridge or peer bug (version drift): never sent on as a good answer.
                log.error("answer to %s does not fit its result model", req.method,
                          exc_info=True)
                raise

        response = _redacted(await answer(req, work(), "The bridge failed", log))
        self._tell_owners()
        if req.method in CLIENT_INPUT_METHODS:
            _log_action(req, response, (time.perf_counter() - started) * 1000)
        with contextlib.suppress(ConnectionClosed):
            await peer.send(response)

    # -- sessions ---------------------------------------------------------------------

    def _withdraw(self, peer_id: str, reason: str) -> tuple[int, int]:
        """Withdraw connection ``peer_id``'s queued requests (each answers CANCELLED and
        never runs); returns (withdrawn, still running)."""
        peer = self.peers.get(peer_id)
        if peer is None:
            return 0, 0
        withdrawn = running = 0
        for entry in list(peer.requests.values()):
            if entry.task is asyncio.current_task():
                continue  # the session.stop asking for it
            if entry.running:
                running += 1
                continue
            entry.withdrawn, entry.reason = True, reason
            withdrawn += 1
            if entry.started:
                entry.task.cancel()
        return withdrawn, running

    def _handover_changed(self, device: str) -> None:
        """A hand-off to a person started or ended: the extension's badge shows it."""
        self.executor.sessions.changed.add(device)
        self._tell_owners()

    def _tell_owners(self) -> None:
        """Tell each extension whose tabs changed owner (its badge and popup show it); a
        tab handed to a person carries ``handed``: the reason (bridge/handover.py)."""
        book = self.executor.sessions
        while book.changed:
            device = book.changed.pop()
            ext = self.peers.get(self.policy.extensions.get(device, ""))
            if ext is not None:
                handed = self.executor.handovers.reasons(device)
                rows = [{**row, "handed": handed[row["tabId"]]}
                        if row.get("tabId") in handed else row for row in book.owners(device)]
                task = asyncio.ensure_future(self._notify(ext, "sessions.owners",
                                                          {"tabs": rows}))
                ext.tasks.add(task)
                task.add_done_callback(ext.tasks.discard)

    @staticmethod
    async def _notify(peer: Peer, event: str, params: dict[str, Any]) -> None:
        with contextlib.suppress(ConnectionClosed):
            await peer.conn.notify(event, params)

    async def _sweep_sessions(self) -> None:
        """Stop sessions whose lease ran out (a kept CLI session nobody resumed, a client
        that hangs without closing its connection), every SWEEP_S."""
        while True:
            await asyncio.sleep(SWEEP_S)
            self.device_tokens.sweep()  # revoked device credentials: connections closed
            for session in self.executor.sessions.sweep():
                log.info("session %r stopped: its lease ran out", session.label)
            self._tell_owners()

    async def _links(self) -> dict[str, dict[str, Any]]:
        """Device → ``{"host", "remote", "latencyMs"}`` for ``devices.list``: where its
        driver (else its extension) connected from, whether through the TLS listener, and
        the round trip of the last keep-alive ping to it, in ms (websockets measures it
        with every ping: every :data:`REMOTE_PING_S` on the TLS listener, 20 s on
        loopback; None before the first pong). Nothing is sent here, so a slow or dead
        device never delays the list."""
        chosen: dict[str, Peer] = {}
        for table in (self.policy.extensions, self.policy.drivers):  # the driver wins
            for device, peer_id in table.items():
                if (peer := self.peers.get(peer_id)) is not None:
                    chosen[device] = peer
        links = {}
        for device, peer in chosen.items():
            latency = getattr(peer.ws, "latency", 0.0) or 0.0
            links[device] = {"host": peer.host, "remote": peer.remote,
                             "latencyMs": round(latency * 1000, 2) if latency > 0 else None}
        return links

    def _is_operator(self, peer_id: str) -> bool:
        peer = self.peers.get(peer_id)
        return peer is not None and peer.operator

    def _peer(self, peer_id: str) -> Peer:
        peer = self.peers.get(peer_id)
        if peer is None:
            raise E.DeviceNotConnected("That peer has just disconnected; retry shortly.")
        return peer


def _redacted(response: Response) -> Response:
    """The answer with the credentials of every URL in it (result, error message and
    details) replaced (bridge/urls.py redact_credentials): navigate results, tab lists,
    snapshots' URL lines and error texts never carry ``user:password@``."""
    if response.result is not None:
        result = redact(response.result)
        if result is not response.result:
            response = response.model_copy(update={"result": result})
    if response.error is not None:
        message = redact_credentials(response.error.message)
        details = redact(response.error.details)
        if message is not response.error.message or details is not response.error.details:
            response = response.model_copy(update={"error": response.error.model_copy(
                update={"message": message, "details": details})})
    return response


def _log_action(req: Request, response: Response, ms: float) -> None:
    """One structured line per routed action: never page content or typed values."""
    params = req.params if isinstance(req.params, dict) else {}
    action = params.get("action") if isinstance(params.get("action"), dict) else {}
    result = response.result or {}
    line = {
        "device": result.get("device", params.get("device")),
        "tab": result.get("tabId", params.get("tabId")),
        "action": action.get("kind"),
        "inputPath": result.get("inputPath"),
        "outcome": "ok" if response.ok else (response.error.code.value if response.error else "?"),
        "ms": round(ms, 2),
    }
    action_log.info(json.dumps(line, default=str))


def _address(ws: ServerConnection) -> str | None:
    """The peer's IP address (no port), or None when the transport does not say."""
    try:
        addr = ws.remote_address
    except Exception:  # noqa: BLE001 - a transport without a peer name
        return None
    return str(addr[0]) if isinstance(addr, tuple) and addr else None


def _guess_id(raw: str) -> str | int | None:
    """Echo a request id back on a malformed request when one can be read safely."""
    try:
        # Not json.loads: a deeply nested frame ("[[[[…") raises RecursionError there,
        # which is not a ValueError and took the connection down. pydantic_core's parser
        # stops at a fixed depth with ValueError.
        obj = pydantic_core.from_json(raw)
    except ValueError:
        return None
    rid = obj.get("id") if isinstance(obj, dict) else None
    if isinstance(rid, int) and not isinstance(rid, bool) and rid >= 0:
        return rid
    if isinstance(rid, str) and 0 < len(rid) <= 64:
        return rid
    return None
