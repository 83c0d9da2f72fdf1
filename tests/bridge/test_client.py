"""BridgeClient against a scripted stand-in bridge (and the real one) over loopback."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve

from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import (
    MESSAGE_ADAPTER,
    PROTOCOL_VERSION,
    Hello,
    Request,
    Response,
    Welcome,
)
from trustbridge.bridge.server import BridgeServer

pytestmark = pytest.mark.timeout(20)

TOKEN = "test-token-0123456789abcdef"
STEP_S = 5.0


class CuttingBridge:
    """Welcomes a client, records its requests and drops the connection on the first one
    (the bridge process dying mid-call)."""

    def __init__(self) -> None:
        self.received: list[Request] = []
        self.url = ""

    async def handle(self, ws: ServerConnection) -> None:
        hello = Hello.model_validate_json(await ws.recv())
        await ws.send(Welcome(protocolVersion=hello.protocolVersion, peerId="p1").model_dump_json())
        async for raw in ws:
            msg = MESSAGE_ADAPTER.validate_json(raw)
            assert isinstance(msg, Request)
            self.received.append(msg)
            await ws.close(1011, "bridge going down")


@pytest.fixture
async def cutting_bridge() -> AsyncIterator[CuttingBridge]:
    fake = CuttingBridge()
    async with serve(fake.handle, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        fake.url = f"ws://127.0.0.1:{port}"
        yield fake


async def call_once(url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    client = await asyncio.wait_for(BridgeClient.connect(url, TOKEN), STEP_S)
    try:
        return await asyncio.wait_for(client.call(method, params), STEP_S)
    finally:
        await client.close()


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("page.act", {"ref": "e7", "action": {"kind": "click"}}),
        ("page.batch", {"actions": [{"ref": "e7", "action": {"kind": "click"}}]}),
    ],
)
async def test_connection_lost_during_input_is_uncertain(
    cutting_bridge: CuttingBridge, method: str, params: dict[str, Any]
) -> None:
    """Input (page.act, page.batch) that was sent and then lost with the connection
    raises BrowserOperationUncertain (design.md §2 rule 7), not DeviceNotConnected."""
    with pytest.raises(E.BrowserOperationUncertain):
        await call_once(cutting_bridge.url, method, params)
    assert [r.method for r in cutting_bridge.received] == [method]


async def test_connection_lost_during_non_input_is_not_connected(
    cutting_bridge: CuttingBridge,
) -> None:
    """A request that is not input, lost with the connection, raises DeviceNotConnected."""
    with pytest.raises(E.DeviceNotConnected):
        await call_once(cutting_bridge.url, "page.snapshot", {})
    assert [r.method for r in cutting_bridge.received] == ["page.snapshot"]


async def test_close_with_input_in_flight_is_uncertain() -> None:
    """Closing the client while its page.act is unanswered fails that call with
    BrowserOperationUncertain."""
    arrived = asyncio.Event()

    async def silent(ws: ServerConnection) -> None:
        Hello.model_validate_json(await ws.recv())
        await ws.send(Welcome(protocolVersion=PROTOCOL_VERSION, peerId="p1").model_dump_json())
        async for _raw in ws:
            arrived.set()  # never answered

    async with serve(silent, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        client = await asyncio.wait_for(
            BridgeClient.connect(f"ws://127.0.0.1:{port}", TOKEN), STEP_S
        )
        act = asyncio.create_task(
            client.call("page.act", {"action": {"kind": "press", "key": "Enter"}})
        )
        await asyncio.wait_for(arrived.wait(), STEP_S)
        await asyncio.wait_for(client.close(), STEP_S)
        with pytest.raises(E.BrowserOperationUncertain):
            await asyncio.wait_for(act, STEP_S)


async def test_proxy_environment_does_not_capture_the_loopback_bridge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HTTP(S)_PROXY / ALL_PROXY in the environment do not route the bridge connection
    (and its token) through a proxy: the client still reaches the loopback bridge."""
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    for name in (
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
    ):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # nothing listens on the discard port
    async with BridgeServer(TOKEN, port=0) as server:
        assert await call_once(server.url, "devices.list", {}) == {"devices": []}


async def test_refused_hello_raises_the_class_of_its_code() -> None:
    """An error answer to the hello becomes the exception class of its code."""

    async def refuse(ws: ServerConnection) -> None:
        await ws.recv()
        err = E.ProtocolMismatch("Upgrade.", {"peer": 1, "bridge": 2})
        await ws.send(Response(id=None, ok=False, error=err.to_payload()).model_dump_json())
        await ws.close(1008)

    async with serve(refuse, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        with pytest.raises(E.ProtocolMismatch) as info:
            await asyncio.wait_for(BridgeClient.connect(f"ws://127.0.0.1:{port}", TOKEN), STEP_S)
    assert info.value.details == {"peer": 1, "bridge": 2}
