"""How long the bridge waits for the driver (docs/design.md §2 rule 7, docs/bridge.md
"Limits": the action's ``timeoutMs`` + 5 s, and 25 ms more per typed character because
``timeoutMs`` bounds reaching the target, not typing), pinned by behaviour through a real
BridgeServer and a fake driver that answers late, and by the documented numbers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.executor import driver_timeout_s
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import ActParams
from trustbridge.bridge.server import BridgeServer

from .fakes import FakeDriver, FakeExtension

pytestmark = pytest.mark.timeout(60)

TOKEN = "test-token-0123456789abcdef"
D = "dev1"
DRIVER_LATE_S = 6.0
"""The fake driver answers driver.act this long after it got it: past 1 ms + the 5 s
margin, well within the time 200 typed characters are allowed."""


@pytest.fixture
async def late_driver() -> AsyncIterator[tuple[BridgeClient, FakeExtension, FakeDriver]]:
    server = BridgeServer(TOKEN, host="127.0.0.1", port=0)
    await server.start()
    ext = await FakeExtension(server.url, TOKEN, D).connect()
    drv = FakeDriver(server.url, TOKEN, D)
    drv.delays["driver.act"] = DRIVER_LATE_S
    await drv.connect()
    client = await BridgeClient.connect(server.url, TOKEN)
    try:
        yield client, ext, drv
    finally:
        await client.close()
        await drv.close()
        await ext.close()
        await server.stop()


def act(tab: int, action: dict[str, Any]) -> dict[str, Any]:
    return {"device": D, "tabId": tab, "ref": "e1", "action": action, "timeoutMs": 1}


async def timed(client: BridgeClient, params: dict[str, Any]) -> tuple[float, Any]:
    """(seconds until the answer, the result or the error raised)."""
    started = time.monotonic()
    try:
        outcome: Any = await client.call("page.act", params)
    except E.TrustbridgeError as err:
        outcome = err
    return time.monotonic() - started, outcome


async def test_a_late_driver_is_uncertain_after_the_margin_but_long_typing_is_waited_for(
    late_driver: tuple[BridgeClient, FakeExtension, FakeDriver],
) -> None:
    """With timeoutMs 1 and a driver that answers after 6 s: a click and a 20-character
    text are BROWSER_OPERATION_UNCERTAIN after about 5 s (never Timeout: the input may have
    reached the page), while 200 typed or filled characters get their answer, ok."""
    client, _, drv = late_driver
    click, short, typed, filled = await asyncio.gather(
        timed(client, act(1, {"kind": "click"})),
        timed(client, act(2, {"kind": "type", "text": "x" * 20})),
        timed(client, act(3, {"kind": "type", "text": "x" * 200})),
        timed(client, act(4, {"kind": "fill", "value": "x" * 200})),
    )
    for waited, outcome in (click, short):
        assert isinstance(outcome, E.BrowserOperationUncertain), outcome
        assert outcome.details["method"] == "driver.act"
        assert 4.9 <= waited < DRIVER_LATE_S
    assert click[0] < short[0]  # the 20 characters bought a little time, not a second
    for waited, outcome in (typed, filled):
        assert isinstance(outcome, dict) and outcome["inputPath"] == "trusted", outcome
        assert waited >= DRIVER_LATE_S - 0.1
    assert drv.methods().count("driver.act") == 4  # each sent once, none re-sent


def test_the_bridge_waits_the_action_timeout_plus_five_seconds() -> None:
    """docs/bridge.md: the bridge waits timeoutMs + 5 s for the driver (2 s → 7 s; the
    default 10 s → 15 s); a click has no text to add time for."""
    two_s = ActParams.model_validate({"ref": "e1", "action": {"kind": "click"}, "timeoutMs": 2_000})
    default = ActParams.model_validate({"ref": "e1", "action": {"kind": "press", "key": "Enter"}})
    assert driver_timeout_s(two_s) == pytest.approx(7.0)
    assert driver_timeout_s(default) == pytest.approx(15.0)


def test_a_very_long_text_is_not_cut_by_a_short_timeout() -> None:
    """docs/design.md §2 rule 7: 25 ms more per typed character, so 10,000 characters with
    a 2 s timeout are waited for 2 + 5 + 250 = 257 s, not 7 s; typing and filling alike."""
    text = "x" * 10_000
    for action in ({"kind": "type", "text": text}, {"kind": "fill", "value": text}):
        params = ActParams.model_validate({"ref": "e1", "action": action, "timeoutMs": 2_000})
        assert driver_timeout_s(params) == pytest.approx(257.0)
