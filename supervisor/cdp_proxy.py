"""The CDP door (issue 19): a token-protected loopback CDP endpoint for a Chromium device.

Playwright owns Chromium's DevTools pipe (``--remote-debugging-pipe``); no debugging port
is opened. :class:`CdpProxy` is a WebSocket server on 127.0.0.1 that gives each client
connection a browser-level CDP session of its own (``browser.new_browser_cdp_session()``)
and translates between the client's flat mode and that session's nested mode
(:class:`~supervisor.cdp_flat.FlatClient`). Playwright's ``chromium.connect_over_cdp``
and Puppeteer's ``connect`` take its URL.

The URL carries a random token (``secrets.token_urlsafe``, one per session label the
bridge names: the endpoint is issued to the calling session):
``ws://127.0.0.1:PORT/devtools/browser/<token>``, and ``http://…/devtools/browser/<token>``
for clients that first read ``/json/version`` under it (Playwright's ``http://`` form).
A request without a known token (compared with ``secrets.compare_digest``) is refused
with HTTP 403 before any handshake, and so is one that carries an ``Origin`` header (a
web page: Chromium refuses those too unless ``--remote-allow-origins``) or a ``Host``
other than loopback (DNS rebinding). The server starts at the first request for an
endpoint and stops with the driver (:meth:`CdpProxy.close`); tokens live as long as it.

A client's ``Browser.close`` ends that client's connection only; when a client leaves
(however: a close, ``Browser.close``, a killed process), the pages and browser contexts
it created are closed, everything it attached is detached and its CDP session dropped.
The few commands that would take the shared browser down are refused
(supervisor/cdp_policy.py). What CDP clients can do
is not limited to the session's tabs, and their actions bypass refs and trusted-input
routing (docs/cdp.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import Callable
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import Browser
from playwright.async_api import Error as PlaywrightError
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from .cdp_flat import ROOT_EVENTS, CdpError, FlatClient, cdp_error_message

log = logging.getLogger("trustbridge.cdp")

HOST = "127.0.0.1"
PATH_PREFIX = "/devtools/browser/"
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""Largest message either way, bytes (a full-page screenshot in base64 fits)."""
CLOSE_BROWSER_GONE = 1001
CLEANUP_S = 15.0
"""Longest a leaving client's cleanup (closing what it created, detaching) may take, s."""


class CdpProxy:
    """The CDP endpoint of one device's Chromium.

    Args:
        browser_of: the device's Playwright Browser now (a restarted headless browser is
            a new one), or None when it is not running.
        device: the device id, for the answer and the log.
    """

    def __init__(self, browser_of: Callable[[], Browser | None], device: str) -> None:
        self._browser_of = browser_of
        self.device = device
        self._tokens: dict[str, str] = {}  # session label ("" for none) → token
        self._server: Server | None = None
        self._port: int | None = None
        self._lock = asyncio.Lock()
        self._clients: set[ServerConnection] = set()
        self._watched: set[int] = set()  # id() of Browsers whose disconnect is watched

    async def endpoint(self, session: str | None) -> dict[str, Any]:
        """The endpoint issued to ``session`` (its label; None: an in-process caller),
        starting the server if it is not running.

        Returns:
            ``{url: "ws://127.0.0.1:PORT/devtools/browser/<token>", httpUrl, session,
            device}``: the same token for the same label while the server runs.

        Raises:
            CdpError: never; OSError from binding the loopback port propagates.
        """
        async with self._lock:
            if self._server is None:
                self._server = await serve(
                    self._serve, HOST, 0, process_request=self._admit,
                    max_size=MAX_MESSAGE_BYTES, compression=None, ping_interval=None)
                self._port = self._server.sockets[0].getsockname()[1]
                log.info("CDP endpoint of device %s listening on %s:%s", self.device, HOST,
                         self._port)
        label = session or ""
        token = self._tokens.setdefault(label, secrets.token_urlsafe(24))
        path = f"{HOST}:{self._port}{PATH_PREFIX}{token}"
        return {"url": f"ws://{path}", "httpUrl": f"http://{path}", "session": session,
                "device": self.device}

    @property
    def port(self) -> int | None:
        """The listening port, once started."""
        return self._port

    def _label_of(self, token: str) -> str | None:
        found = None
        for label, known in self._tokens.items():  # every token compared, none skipped
            if secrets.compare_digest(known.encode(), token.encode()):
                found = label
        return found

    def _admit(self, connection: ServerConnection, request: Request) -> Response | None:
        """Before the handshake: the token, the Host and the Origin; ``/json/version``."""
        path = urlsplit(request.path).path
        if not path.startswith(PATH_PREFIX):
            return connection.respond(HTTPStatus.NOT_FOUND, "Not found.\n")
        token, _, tail = path[len(PATH_PREFIX):].partition("/")
        if not token or self._label_of(token) is None:
            log.warning("CDP endpoint: refused a connection without a valid token")
            return connection.respond(HTTPStatus.FORBIDDEN,
                                      "Forbidden: this CDP endpoint needs its token "
                                      "(trustbridge cdp prints the URL).\n")
        hosts = request.headers.get_all("Host")  # .get raises on a repeated header
        if len(hosts) != 1:
            return connection.respond(HTTPStatus.BAD_REQUEST,
                                      "Bad request: exactly one Host header.\n")
        host = hosts[0]
        if host not in (f"{HOST}:{self._port}", f"localhost:{self._port}"):
            return connection.respond(HTTPStatus.FORBIDDEN, "Forbidden: loopback only.\n")
        if request.headers.get_all("Origin"):
            return connection.respond(HTTPStatus.FORBIDDEN,
                                      "Forbidden: web pages may not connect.\n")
        if tail.rstrip("/") == "json/version":
            return self._version(connection, f"ws://{host}{PATH_PREFIX}{token}")
        if tail:
            return connection.respond(HTTPStatus.NOT_FOUND, "Not found.\n")
        return None

    def _version(self, connection: ServerConnection, ws_url: str) -> Response:
        browser = self._browser_of()
        body = json.dumps({"Browser": f"Chrome/{browser.version if browser else '?'}",
                           "Protocol-Version": "1.3", "webSocketDebuggerUrl": ws_url})
        response = connection.respond(HTTPStatus.OK, body)
        del response.headers["Content-Type"]
        response.headers["Content-Type"] = "application/json"
        return response

    async def _serve(self, ws: ServerConnection) -> None:
        """One client: its own browser session, translated until either side leaves."""
        browser = self._browser_of()
        if browser is None or not browser.is_connected():
            await ws.close(CLOSE_BROWSER_GONE, "the device's browser is not running")
            return
        self._watch(browser)
        try:
            cdp = await browser.new_browser_cdp_session()
        except PlaywrightError as exc:
            await ws.close(CLOSE_BROWSER_GONE, cdp_error_message(exc)[:120])
            return
        out: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()

        async def send_root(method: str, params: dict[str, Any]) -> dict[str, Any]:
            try:
                return await cdp.send(method, params)
            except PlaywrightError as exc:
                raise CdpError(cdp_error_message(exc)) from exc

        client = FlatClient(send_root, out.put_nowait)
        for name in ROOT_EVENTS:
            cdp.on(name, lambda params, name=name: client.root_event(name, params or {}))
        self._clients.add(ws)
        tasks: set[asyncio.Task[None]] = set()

        async def handle(raw: str | bytes) -> None:
            try:
                await client.command(raw)
            except Exception:  # a bug here must not end the proxy: the client hears it
                log.exception("CDP proxy failed on a client message")
                out.put_nowait({"id": 0, "error": {"code": -32603,
                                                   "message": "Internal proxy error"}})
            if client.closing:
                out.put_nowait(None)

        writer = asyncio.create_task(self._write(ws, out))
        try:
            async for raw in ws:
                task = asyncio.create_task(handle(raw))  # in order: each starts at once
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        except ConnectionClosed:
            pass
        finally:
            self._clients.discard(ws)
            for task in [*tasks, writer]:
                task.cancel()
            with contextlib.suppress(Exception):  # bounded: a dead browser never answers
                await asyncio.wait_for(client.close(), CLEANUP_S)
            with contextlib.suppress(Exception):
                await cdp.detach()
            log.info("CDP client of device %s left", self.device)

    @staticmethod
    async def _write(ws: ServerConnection, out: asyncio.Queue[dict[str, Any] | None]) -> None:
        with contextlib.suppress(ConnectionClosed):
            while (msg := await out.get()) is not None:
                await ws.send(json.dumps(msg))
            await ws.close(1000, "Browser.close: this connection ends; the browser stays")

    def _watch(self, browser: Browser) -> None:
        if id(browser) in self._watched:
            return
        self._watched.add(id(browser))

        def gone(_b: Browser) -> None:
            self._watched.discard(id(browser))
            for ws in list(self._clients):
                asyncio.ensure_future(ws.close(CLOSE_BROWSER_GONE, "the browser closed"))

        browser.on("disconnected", gone)

    async def close(self) -> bool:
        """Stop listening and end every client connection; every URL issued stops
        working (a later :meth:`endpoint` issues new ones). Returns whether it was
        listening."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 5)
        self._tokens.clear()
        return server is not None
