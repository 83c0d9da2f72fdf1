"""Restarts recover without a manual step, in a real browser: the bridge restarting on the
same port, the input driver restarting, and the extension's socket being cut. After each,
a trusted click works again and the page records it (``event.isTrusted``).

Runs once per browser (the ``browser`` fixture, tests/e2e/conftest.py). Every wait is
bounded: peers reconnect with backoff capped at 5 s (extension: 0.25 s doubling; driver:
0.1 s doubling), so RECONNECT_BOUND_S leaves room for a capped retry plus a slow start.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.routing import RoutingPolicy
from trustbridge.bridge.server import BridgeServer
from trustbridge.supervisor.runner import Supervisor

from .conftest import Origins, ref_of, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]

RECONNECT_BOUND_S = 12.0
"""Upper bound, seconds, on a peer coming back: one capped backoff (5 s) plus margin."""
DOWN_S = 1.5
"""How long the bridge stays down in the restart test, s: long enough for several
reconnect attempts of each peer to fail first."""


@dataclass
class Rig:
    """A bridge and a supervised browser for one device; the bridge can be replaced."""

    server: BridgeServer
    supervisor: Supervisor
    token: str
    device: str

    def online(self) -> bool:
        """The device's extension and driver are both connected to the current bridge."""
        policy = self.server.policy
        return self.device in policy.extensions and self.device in policy.drivers

    @contextlib.asynccontextmanager
    async def client(self) -> AsyncIterator[BridgeClient]:
        client = await asyncio.wait_for(BridgeClient.connect(self.server.url, self.token), 10)
        try:
            yield client
        finally:
            await client.close()

    async def trusted_click(self, origins: Origins) -> None:
        """Open the test page, click "Main button" through the bridge, and check the page
        recorded exactly that click, trusted."""
        page = self.supervisor.context.pages[0]
        async with self.client() as client:
            await client.call("page.navigate", {"url": f"{origins.main}/index.html"})
            snap = (await client.call("page.snapshot", {}))["snapshot"]
            result = await client.call("page.act", {"ref": ref_of(snap, "button", "Main button"),
                                                    "action": {"kind": "click"}})
        assert result["inputPath"] == "trusted"
        clicks = [e for e in await page.evaluate("window.__events") if e["type"] == "click"]
        assert clicks == [{"where": "main", "type": "click", "trusted": True,
                           "target": "main-btn", "key": None}]

    async def devices(self) -> dict[str, dict]:
        async with self.client() as client:
            return {d["device"]: d for d in (await client.call("devices.list"))["devices"]}


@pytest.fixture
async def rig(browser: str) -> AsyncIterator[Rig]:
    token = secrets.token_hex(16)
    device = f"{browser}-restart"
    server = BridgeServer(token, port=0, policy=RoutingPolicy())
    await server.start()
    rig = Rig(server, Supervisor(server.url, token, device, browser=browser), token, device)
    try:
        await rig.supervisor.start()
        await wait_until(rig.online)
        yield rig
    finally:
        await rig.supervisor.stop()
        await rig.server.stop()


async def reconnect_time(predicate, bound_s: float = RECONNECT_BOUND_S) -> float:
    """Seconds until ``predicate`` holds; fails after ``bound_s``."""
    started = time.monotonic()
    await wait_until(predicate, bound_s)
    return time.monotonic() - started


async def test_bridge_restart_on_the_same_port_every_peer_comes_back(
    rig: Rig, origins: Origins
) -> None:
    """The bridge stops (all sockets close) and a new one starts on the same port 1.5 s
    later: the extension and the driver reconnect by themselves, the driver's hello makes
    the trusted-input promise again on the new bridge, and a trusted click works."""
    await rig.trusted_click(origins)
    port = rig.server.port
    await rig.server.stop()
    await asyncio.sleep(DOWN_S)  # the bridge is down; both peers keep retrying

    rig.server = BridgeServer(rig.token, port=port, policy=RoutingPolicy())
    await rig.server.start()
    assert rig.server.port == port
    await reconnect_time(rig.online)

    info = (await rig.devices())[rig.device]
    assert (info["extension"], info["driver"], info["requiresTrustedInput"]) == (True, True, True)
    await rig.trusted_click(origins)


async def test_driver_restart_makes_the_device_usable_again(rig: Rig, origins: Origins) -> None:
    """With the driver stopped, input fails with TRUSTED_INPUT_UNAVAILABLE and the page sees
    nothing; Supervisor.start_driver() brings it back and a trusted click works."""
    await rig.supervisor.stop_driver()
    await wait_until(lambda: rig.device not in rig.server.policy.drivers, RECONNECT_BOUND_S)
    page = rig.supervisor.context.pages[0]
    async with rig.client() as client:
        await client.call("page.navigate", {"url": f"{origins.main}/index.html"})
        snap = (await client.call("page.snapshot", {}))["snapshot"]
        with pytest.raises(E.TrustedInputUnavailable):
            await client.call("page.act", {"ref": ref_of(snap, "button", "Main button"),
                                           "action": {"kind": "click"}})
    assert [e for e in await page.evaluate("window.__events") if e["type"] == "click"] == []

    await rig.supervisor.start_driver()
    await reconnect_time(rig.online)
    await rig.trusted_click(origins)


async def test_extension_socket_cut_by_the_bridge_comes_back(rig: Rig, origins: Origins) -> None:
    """The bridge closes the extension's socket, first with a close frame, then by dropping
    the TCP connection without one: each time the extension reconnects by itself within
    its backoff and a trusted click works; the driver's connection is never touched."""
    await rig.trusted_click(origins)
    driver = rig.server.policy.drivers[rig.device]
    for cut in ("close", "abort"):
        old = rig.server.policy.extensions[rig.device]
        ws = rig.server.peers[old].ws
        if cut == "close":
            await ws.close(1011, "test cuts the extension")
        else:
            ws.transport.abort()

        def back(old: str = old) -> bool:
            current = rig.server.policy.extensions.get(rig.device)
            return current is not None and current != old

        await reconnect_time(back)
        assert rig.server.policy.drivers[rig.device] == driver
        await rig.trusted_click(origins)
