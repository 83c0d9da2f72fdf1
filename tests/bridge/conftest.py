"""Fixtures shared by the MCP tests in tests/bridge: a real BridgeServer on a free
loopback port and fake peers for one device (tests/bridge/fakes.py). A test module that
needs another shape defines its own fixture of the same name."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from trustbridge.bridge.routing import RoutingPolicy
from trustbridge.bridge.server import BridgeServer

from .fakes import FakeExtension, FakePeer, wait_until

DEVICE = "dev1"
"""The device every fake peer of :func:`peers` says hello for."""


@pytest.fixture
async def bridge() -> AsyncIterator[BridgeServer]:
    """A running bridge with a random token and a fresh routing policy."""
    server = BridgeServer(secrets.token_hex(16), port=0, policy=RoutingPolicy())
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
async def peers(bridge: BridgeServer) -> AsyncIterator[Callable[..., Awaitable[FakePeer]]]:
    """``await peers(FakeExtension)``: connect a fake peer of that class for DEVICE and wait
    until the bridge has registered it; every peer is closed at the end of the test."""
    async with contextlib.AsyncExitStack() as stack:
        async def connect(cls: type[FakePeer]) -> FakePeer:
            peer = await stack.enter_async_context(cls(bridge.url, bridge.token, DEVICE))
            await wait_until(lambda: DEVICE in (bridge.policy.extensions
                                                if issubclass(cls, FakeExtension)
                                                else bridge.policy.drivers))
            return peer

        yield connect
