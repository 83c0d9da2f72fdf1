"""Fake peers for server tests: a fake extension and a fake input driver.

Each fake opens a real loopback WebSocket to a running :class:`~bridge.server.BridgeServer`,
says hello with the bridge token, records every request it receives (method + params, in
arrival order) in :attr:`FakePeer.requests`, and answers from a per-method script: a result,
an error, a delay before answering, or a disconnect instead of an answer. The fakes speak
through the same peer layer as the real peers (bridge/protocol/peer.py), and every scripted
result is checked against its method's result model when it is set (:class:`Results`), so a
fake answers only with shapes the real extension and driver send.

These are helpers, not tests.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from pydantic import BaseModel
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol import results as R
from trustbridge.bridge.protocol.models import (
    PROTOCOL_VERSION,
    DriverActResult,
    Event,
    Hello,
    Request,
    ResolveTarget,
    Response,
)
from trustbridge.bridge.protocol.peer import Connection, encode, handshake
from trustbridge.bridge.protocol.validate import validate_result

STEP_TIMEOUT_S = 5.0
"""Upper bound, seconds, on any single wait inside the fakes (connect, hello, wait_for_*)."""


@dataclass(frozen=True)
class Received:
    """One request as the fake peer received it."""

    method: str
    params: dict[str, Any]


async def wait_until(predicate: Callable[[], bool], timeout_s: float = STEP_TIMEOUT_S) -> None:
    """Poll ``predicate`` every 5 ms until it is true; TimeoutError after ``timeout_s`` s."""

    async def poll() -> None:
        while not predicate():
            await asyncio.sleep(0.005)

    await asyncio.wait_for(poll(), timeout_s)


class FakePeer:
    """A scripted extension or driver connection.

    Args:
        url: the bridge's ``ws://127.0.0.1:PORT``.
        token: the bridge token to put in the hello.
        device: the device id this peer serves.
        protocol_version: version to announce (change it to provoke PROTOCOL_MISMATCH).
        origin: the ``Origin`` header of the WebSocket handshake, or None for no header.
        ssl_context: for a ``wss://`` url (the bridge's TLS listener).

    Script (per method name, set before or after :meth:`connect`):
        results: answer ``ok`` with this result dict.
        errors: answer with this error (its code, message and details go on the wire).
        delays: seconds to wait before answering.
        disconnect_on: close the connection instead of answering (after recording).
    """

    role: ClassVar[str]
    default_results: ClassVar[dict[str, dict[str, Any]]] = {}

    def __init__(
        self,
        url: str,
        token: str,
        device: str,
        *,
        protocol_version: int = PROTOCOL_VERSION,
        origin: str | None = None,
        ssl_context: Any = None,
    ) -> None:
        self.url = url
        self.ssl_context = ssl_context
        self.token = token
        self.device = device
        self.protocol_version = protocol_version
        self.origin = origin
        self.requests: list[Received] = []
        self.results = Results()
        for method, result in self.default_results.items():
            self.results[method] = dict(result)
        self.errors: dict[str, E.TrustbridgeError] = {}
        self.delays: dict[str, float] = {}
        self.disconnect_on: set[str] = set()
        self.peer_id: str | None = None
        self._ws: ClientConnection | None = None
        self._conn: Connection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._answers: set[asyncio.Task[None]] = set()
        self.malformed: list[str | bytes] = []
        """Frames from the bridge that did not fit the protocol models (should stay empty)."""
        self.events: list[Event] = []
        """One-way events the bridge sent this peer, in order."""

    # -- lifecycle --------------------------------------------------------------------

    async def connect(self) -> Self:
        """Open the socket and say hello; returns self once welcomed.

        Raises:
            TrustbridgeError: the bridge refused the hello (as the class of its code).
        """
        ws = await connect(
            self.url,
            origin=self.origin,  # type: ignore[arg-type]
            open_timeout=STEP_TIMEOUT_S,
            proxy=None,
            **({"ssl": self.ssl_context} if self.ssl_context is not None else {}),
        )
        hello = Hello(
            role=self.role,  # type: ignore[arg-type]
            device=self.device,
            protocolVersion=self.protocol_version,
            token=self.token,
            browser=f"fake-{self.role}",
        )
        welcome = await handshake(ws, hello, STEP_TIMEOUT_S)
        self.peer_id = welcome.peerId
        self._ws = ws
        self._conn = Connection(ws, "bridge", id_prefix="f")
        self._reader = asyncio.create_task(self._conn.serve(
            on_request=self._on_request, on_event=self._on_event,
            on_malformed=self._on_malformed))
        return self

    async def close(self) -> None:
        """Close the connection (normal close, code 1000) and stop answering."""
        if self._ws is not None:
            await self._ws.close()
        for task in [*self._answers, *([self._reader] if self._reader else [])]:
            task.cancel()
        for task in [*self._answers, *([self._reader] if self._reader else [])]:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    @property
    def closed(self) -> bool:
        """True once the connection has been closed by either side."""
        return self._ws is None or self._ws.close_code is not None

    async def __aenter__(self) -> Self:
        return await self.connect()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def send_event(self, event: str, params: dict[str, Any]) -> None:
        """Send a one-way event (e.g. the driver's ``dialog.opened``) to the bridge."""
        assert self._conn is not None, "not connected"
        await self._conn.send(Event(event=event, params=params))

    # -- observing --------------------------------------------------------------------

    def methods(self) -> list[str]:
        """Methods received so far, in order."""
        return [r.method for r in self.requests]

    async def wait_for_request(self, method: str, timeout_s: float = STEP_TIMEOUT_S) -> Received:
        """Return the first recorded request of ``method``, waiting for it if needed."""
        await wait_until(lambda: method in self.methods(), timeout_s)
        return next(r for r in self.requests if r.method == method)

    # -- answering --------------------------------------------------------------------

    async def _on_event(self, event: Event) -> None:
        self.events.append(event)

    async def _on_malformed(self, raw: str | bytes, _exc: object) -> None:
        self.malformed.append(raw)

    async def _on_request(self, req: Request) -> None:
        self.requests.append(Received(req.method, dict(req.params)))
        assert self._ws is not None
        task = asyncio.create_task(self._answer(self._ws, req))
        self._answers.add(task)
        task.add_done_callback(self._answers.discard)

    async def _answer(self, ws: ClientConnection, req: Request) -> None:
        if req.method in self.delays:
            await asyncio.sleep(self.delays[req.method])
        if req.method in self.disconnect_on:
            await ws.close(1001, "fake peer leaves mid-request")
            return
        if req.method in self.errors:
            response = Response(id=req.id, ok=False, error=self.errors[req.method].to_payload())
        elif req.method in self.results:
            response = Response(id=req.id, ok=True, result=self.results[req.method])
        else:
            err = E.BadRequest(f"fake {self.role} has no answer for {req.method!r}")
            response = Response(id=req.id, ok=False, error=err.to_payload())
        with contextlib.suppress(ConnectionClosed):
            await ws.send(encode(response))


class Results(dict[str, dict[str, Any]]):
    """Scripted answers, method → result, each checked against the method's result model
    (bridge/protocol/methods.py) when it is set: a fake cannot answer with a shape the
    real peer never sends.

    Raises:
        InternalError: (on assignment) the result does not fit its method's model.
    """

    def __setitem__(self, method: str, result: dict[str, Any]) -> None:
        super().__setitem__(method, validate_result(method, result, sender="The fake"))


def answer_of(model: BaseModel) -> dict[str, Any]:
    """A scripted answer built through its result model, as the peer's JSON would be."""
    return model.model_dump(mode="json", exclude_none=True)


class FakeExtension(FakePeer):
    """A fake browser extension: answers page methods with canned results.

    Connects with a ``chrome-extension://`` Origin, as the real extension does.
    """

    role = "extension"
    FRAME_TOKEN = "tok-frame-1"
    CSS = "#save"
    default_results: ClassVar[dict[str, dict[str, Any]]] = {
        "page.resolveTarget": answer_of(ResolveTarget(frameToken=FRAME_TOKEN, css=CSS, tabId=1)),
        "page.act": answer_of(R.ActResult(done=True, action="click", tabId=1,
                                          postActionDocumentChanged=False)),
        "page.wait": answer_of(R.WaitResult(tabId=1, waitedMs=0)),
        "page.snapshot": answer_of(R.SnapshotResult(
            snapshot='- button "Save" [ref=e7]', url="", title="",
            tabId=1, mode="snapshot", frames=1, refs=1, chars=24, truncated=False,
            cursor=None)) | {"cursor": None},
        "page.navigate": answer_of(R.NavigateResult(url="http://127.0.0.1/", tabId=1,
                                                    title="")),
        "tabs.list": answer_of(R.TabsListResult(tabs=[R.TabInfo(
            tabId=1, url="http://127.0.0.1/", title="", active=True)])),
    }

    def __init__(self, url: str, token: str, device: str, **kwargs: Any) -> None:
        kwargs.setdefault("origin", "chrome-extension://fakeextensionidfakeextensionid")
        super().__init__(url, token, device, **kwargs)


class FakeDriver(FakePeer):
    """A fake input driver: answers ``driver.act`` with ``{"done": true}``."""

    role = "driver"
    default_results: ClassVar[dict[str, dict[str, Any]]] = {
        "driver.act": answer_of(DriverActResult(done=True, action="click",
                                                frameUrl="http://127.0.0.1/",
                                                postActionDocumentChanged=False)),
    }


async def serve_with_fakes(stack: contextlib.AsyncExitStack, token: str, device: str,
                           timeout_s: float = STEP_TIMEOUT_S, operator_token: str | None = None
                           ) -> tuple[Any, FakeExtension, FakeDriver]:
    """A real BridgeServer on a free loopback port with a connected fake extension and
    fake driver for ``device``; all three stop when ``stack`` closes.

    Returns:
        ``(server, extension, driver)``.
    """
    from trustbridge.bridge.server import BridgeServer  # the fakes serve tests of the server too

    server = BridgeServer(token, host="127.0.0.1", port=0, operator_token=operator_token)
    await asyncio.wait_for(server.start(), timeout_s)
    stack.push_async_callback(server.stop)
    ext, drv = FakeExtension(server.url, token, device), FakeDriver(server.url, token, device)
    for fake in (ext, drv):
        await asyncio.wait_for(fake.connect(), timeout_s)
        stack.push_async_callback(fake.close)
    return server, ext, drv


@dataclass
class ClientBridge:
    """A real bridge with a fake extension and driver for one device (:func:`client_bridge`);
    ``client(operator=None)`` connects a BridgeClient (with the operator credential when
    given) that is closed with the bridge."""

    server: Any
    ext: FakeExtension
    drv: FakeDriver
    client: Callable[..., Any]

    def sent(self) -> int:
        """Requests both fake peers have received so far."""
        return len(self.ext.requests) + len(self.drv.requests)


@contextlib.asynccontextmanager
async def client_bridge(token: str, device: str,
                        timeout_s: float = STEP_TIMEOUT_S) -> AsyncIterator[ClientBridge]:
    """:func:`serve_with_fakes` plus a ``client()`` factory; on exit, asserts neither fake
    peer received a malformed message."""
    from trustbridge.bridge.client import BridgeClient

    async with contextlib.AsyncExitStack() as stack:
        server, ext, drv = await serve_with_fakes(stack, token, device, timeout_s)

        async def client(operator: str | None = None) -> BridgeClient:
            c = await asyncio.wait_for(
                BridgeClient.connect(server.url, token, operator=operator), timeout_s)
            stack.push_async_callback(c.close)
            return c

        yield ClientBridge(server, ext, drv, client)
        assert ext.malformed == [] and drv.malformed == []


@contextlib.asynccontextmanager
async def cli_bridge(tmp_path: Any, monkeypatch: Any, device: str,
                     timeout_s: float = STEP_TIMEOUT_S
                     ) -> AsyncIterator[tuple[Any, FakeExtension, FakeDriver]]:
    """:func:`serve_with_fakes` as the CLI finds it: the token in a private state directory
    (``TRUSTBRIDGE_HOME=tmp_path``, where the CLI reads it). On exit, neither fake may have
    received a malformed message."""
    from trustbridge.bridge import config

    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    token = config.load_or_create_token()
    async with contextlib.AsyncExitStack() as stack:
        server, ext, drv = await serve_with_fakes(
            stack, token, device, timeout_s,
            operator_token=config.load_or_create_operator_token())
        yield server, ext, drv
        assert ext.malformed == [] and drv.malformed == []

