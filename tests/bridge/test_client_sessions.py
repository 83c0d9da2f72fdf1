"""BridgeClient.open_session (bridge/client.py) against a real BridgeServer with a fake
extension and driver (tests/bridge/fakes.py): the session it opens owns the tab it acts
on, another client is refused there before anything reaches the peers, the heartbeat
keeps a short lease alive past its first end and stops with the session or the
connection, and a kept session is resumed with its secret. No browser."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest

from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.server import SWEEP_S

from .fakes import ClientBridge, client_bridge, wait_until

pytestmark = pytest.mark.timeout(30)

TOKEN = "test-token-0123456789abcdef"
D = "dev1"
STEP_S = 5.0
"""Upper bound, seconds, on any single await in these tests."""
URL = "http://127.0.0.1/"


Bridge = ClientBridge


@pytest.fixture
async def bridge() -> AsyncIterator[Bridge]:
    """A real bridge with a fake extension and driver for ``dev1`` (fakes.client_bridge)."""
    async with client_bridge(TOKEN, D, STEP_S) as b:
        yield b


async def call(client: BridgeClient, method: str, params: dict | None = None) -> dict:
    return await asyncio.wait_for(client.call(method, params), STEP_S)


async def test_open_session_answers_its_facts(bridge: Bridge) -> None:
    a = await bridge.client()
    opened = await asyncio.wait_for(a.open_session("agent-a", lease_ms=9_000), STEP_S)
    assert opened["label"] == "agent-a" and opened["leaseMs"] == 9_000
    assert opened["heartbeatMs"] == 3_000 and opened["resumed"] is False
    assert opened["tabs"] == [] and len(opened["secret"]) >= 16
    assert a.session == opened


async def test_another_session_is_refused_on_the_tab_before_anything_is_sent(
        bridge: Bridge) -> None:
    a, b = await bridge.client(), await bridge.client()
    await a.open_session("agent-a")
    await b.open_session("agent-b")
    await call(a, "page.navigate", {"tabId": 1, "url": URL})  # acting claims the tab
    ext_before, drv_before = len(bridge.ext.requests), len(bridge.drv.requests)

    for method, params in (("page.navigate", {"tabId": 1, "url": URL}),
                           ("page.act", {"tabId": 1, "ref": "e7", "action": {"kind": "click"}}),
                           ("page.evaluate", {"tabId": 1, "expression": "1"})):
        with pytest.raises(E.TabClaimed) as info:
            await call(b, method, params)
        assert info.value.owner == "agent-a" and info.value.tabId == 1
        assert "secret" not in str(info.value.to_payload().model_dump()).lower()
    assert len(bridge.ext.requests) == ext_before and len(bridge.drv.requests) == drv_before

    await call(a, "page.act", {"tabId": 1, "ref": "e7", "action": {"kind": "click"}})
    assert bridge.drv.methods().count("driver.act") == 1  # A still works there


async def test_heartbeat_keeps_a_short_lease_alive(bridge: Bridge) -> None:
    a = await bridge.client()
    observer = await asyncio.wait_for(BridgeClient.connect(  # an operator lists them all
        bridge.server.url, TOKEN, operator=bridge.server.operator_token), STEP_S)
    await a.open_session("beating", lease_ms=5_000)  # renewed every 1.666 s when idle
    book = bridge.server.executor.sessions
    session = book.find("beating")
    assert session is not None
    first_end = session.expires_at

    await wait_until(lambda: session.expires_at > first_end, STEP_S)  # a renew came
    # Past the first lease's end and a sweep of the bridge, it is still alive.
    await wait_until(lambda: book.clock() > first_end + SWEEP_S + 0.5, 12.0)
    assert not session.stopped
    rows = (await call(observer, "sessions.list"))["sessions"]
    row = next(r for r in rows if r["label"] == "beating")
    assert row["connected"] is True
    assert row["expiresInMs"] is None or row["expiresInMs"] > 0
    await observer.close()


async def test_heartbeat_stops_when_the_session_is_stopped(
        bridge: Bridge, caplog: pytest.LogCaptureFixture) -> None:
    a = await bridge.client()
    b = await asyncio.wait_for(BridgeClient.connect(
        bridge.server.url, TOKEN, operator=bridge.server.operator_token), STEP_S)
    await a.open_session("doomed", lease_ms=5_000)
    stopped = await call(b, "session.stop", {"label": "doomed"})  # an operator's
    await b.close()
    assert stopped["stopped"] is True
    heartbeat = a._heartbeat
    assert heartbeat is not None
    with caplog.at_level(logging.WARNING, logger="trustbridge.bridge.client"):
        await wait_until(heartbeat.done, STEP_S)  # its next renew was SESSION_STOPPED
    assert heartbeat.exception() is None  # logged, never raised
    assert any("stopped" in r.getMessage() for r in caplog.records)
    with pytest.raises(E.SessionStopped):
        await call(a, "tabs.list")


async def test_heartbeat_stops_on_close(bridge: Bridge) -> None:
    a = await bridge.client()
    await a.open_session("short", lease_ms=5_000)
    heartbeat = a._heartbeat
    assert heartbeat is not None and not heartbeat.done()
    await asyncio.wait_for(a.close(), STEP_S)
    assert heartbeat.done() and a.closed


async def test_a_kept_session_is_resumed_with_its_secret(bridge: Bridge) -> None:
    a = await bridge.client()
    opened = await a.open_session("kept", on_disconnect="keep")
    await call(a, "page.navigate", {"tabId": 1, "url": URL})
    await a.close()

    b = await bridge.client()
    with pytest.raises(E.BadRequest):  # the label is live and b has no secret
        await call(b, "session.open", {"label": "kept"})
    c = await bridge.client()
    resumed = await c.open_session("kept", on_disconnect="keep", secret=opened["secret"])
    assert resumed["resumed"] is True and resumed["sessionId"] == opened["sessionId"]
    assert resumed["tabs"] == [{"device": D, "tabId": 1}]

    # Once it is stopped, its secret opens a new session of that label.
    await call(c, "session.stop")
    d = await bridge.client()
    fresh = await d.open_session("kept", secret=opened["secret"])
    assert fresh["resumed"] is False and fresh["sessionId"] != opened["sessionId"]
