"""The async SDK's input verbs (bridge/sdk.py) against a real BridgeServer with a fake
extension and a fake input driver (tests/bridge/fakes.py) over loopback: which protocol
action each verb builds, and that a bad action is refused before anything is sent."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from trustbridge.bridge import sdk
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import BatchItem, ClickAction, FillAction, PressAction
from trustbridge.bridge.server import BridgeServer

from .fakes import FakeDriver, FakeExtension

pytestmark = pytest.mark.timeout(20)

TOKEN = "test-token-0123456789abcdef"
D = "dev1"
STEP_S = 5.0
"""Upper bound, seconds, on any single await in these tests."""


@dataclass
class Bridge:
    tab: sdk.Tab
    ext: FakeExtension
    drv: FakeDriver

    def driver_actions(self) -> list[dict[str, Any]]:
        """The ``action`` of every ``driver.act`` the fake driver received, in order."""
        return [r.params["action"] for r in self.drv.requests if r.method == "driver.act"]


@pytest.fixture
async def bridge() -> AsyncIterator[Bridge]:
    """A real bridge with a fake extension and driver for ``dev1``, and an SDK tab on it."""
    async with contextlib.AsyncExitStack() as stack:
        server = BridgeServer(TOKEN, host="127.0.0.1", port=0)
        await asyncio.wait_for(server.start(), STEP_S)
        stack.push_async_callback(server.stop)
        ext = FakeExtension(server.url, TOKEN, D)
        drv = FakeDriver(server.url, TOKEN, D)
        for fake in (ext, drv):
            await asyncio.wait_for(fake.connect(), STEP_S)
            stack.push_async_callback(fake.close)
        browser = await sdk.Browser.connect(server.url, TOKEN, device=D)
        stack.push_async_callback(browser.close)
        yield Bridge(await browser.tab(), ext, drv)
        assert ext.malformed == [] and drv.malformed == []


CLICK = {"kind": "click", "button": "left", "clickCount": 1, "modifiers": [],
         "position": None}
VERBS: list[tuple[str, Callable[[sdk.Tab], Awaitable[Any]], dict[str, Any]]] = [
    ("click", lambda t: t.click("e7"), CLICK),
    ("click right+Shift", lambda t: t.click("e7", button="right", modifiers=["Shift"]),
     {**CLICK, "button": "right", "modifiers": ["Shift"]}),
    ("dblclick", lambda t: t.dblclick("e7"), {**CLICK, "clickCount": 2}),
    ("click_at", lambda t: t.click_at("e7", 3, 4.5),
     {**CLICK, "position": {"x": 3.0, "y": 4.5}}),
    ("hover", lambda t: t.hover("e7"), {"kind": "hover"}),
    ("type", lambda t: t.type("e7", "ab"), {"kind": "type", "text": "ab", "submit": False}),
    ("type submit", lambda t: t.type("e7", "ab", submit=True),
     {"kind": "type", "text": "ab", "submit": True}),
    ("fill", lambda t: t.fill("e7", "new"), {"kind": "fill", "value": "new"}),
    ("press", lambda t: t.press("Control+A", "e7"), {"kind": "press", "key": "Control+A"}),
    ("select", lambda t: t.select("e7", ["a", "b"]), {"kind": "select", "values": ["a", "b"]}),
    ("check", lambda t: t.check("e7"), {"kind": "check", "checked": True}),
    ("uncheck", lambda t: t.uncheck("e7"), {"kind": "check", "checked": False}),
    ("drag", lambda t: t.drag("e7", "e8"), {"kind": "drag", "to": "e8", "steps": 12}),
    ("scroll", lambda t: t.scroll("e7", dy=300), {"kind": "scroll", "dx": 0.0, "dy": 300.0}),
    ("upload", lambda t: t.upload("e7", ["/tmp/a.txt"]),
     {"kind": "upload", "files": ["/tmp/a.txt"]}),
    ("focus", lambda t: t.focus("e7"), {"kind": "focus"}),
]


@pytest.mark.parametrize(("verb", "call", "action"), VERBS, ids=[v[0] for v in VERBS])
async def test_each_verb_sends_its_protocol_action(
        bridge: Bridge, verb: str, call: Callable[[sdk.Tab], Awaitable[Any]],
        action: dict[str, Any]) -> None:
    """Each verb reaches the driver as exactly the action model it names (key by key for
    type, one edit for fill), on the ref it was given, with trusted input."""
    result = await asyncio.wait_for(call(bridge.tab), STEP_S)
    assert result["inputPath"] == "trusted"
    assert bridge.driver_actions() == [action]
    resolved = [r.params for r in bridge.ext.requests if r.method == "page.resolveTarget"]
    assert resolved[0]["ref"] == "e7"


async def test_act_takes_a_model_or_the_same_dict(bridge: Bridge) -> None:
    """act(ClickAction(...)) and act({"kind": "click", ...}) send the same action."""
    await bridge.tab.act(ClickAction(clickCount=2), "e7")
    await bridge.tab.act({"kind": "click", "clickCount": 2}, "e7")
    first, second = bridge.driver_actions()
    assert first == second and first["clickCount"] == 2


@pytest.mark.parametrize(("action", "ref", "where"), [
    ({"kind": "clik"}, "e7", "action"),
    ({"kind": "click", "clickCount": 9}, "e7", "action.click.clickCount"),
    ({"kind": "fill"}, "e7", "action.fill.value"),
    (PressAction(key="Enter"), "not-a-ref", "ref"),
])
async def test_a_bad_action_is_bad_request_before_anything_is_sent(
        bridge: Bridge, action: Any, ref: str, where: str) -> None:
    """An action (or ref) the protocol refuses raises BadRequest naming the field, says
    nothing was sent, and neither the extension nor the driver received anything."""
    with pytest.raises(E.BadRequest) as info:
        await bridge.tab.act(action, ref)
    assert where in info.value.details["errors"]
    assert "Nothing was sent" in info.value.message
    assert (bridge.ext.requests, bridge.drv.requests) == ([], [])


async def test_a_bad_verb_argument_is_bad_request_before_anything_is_sent(
        bridge: Bridge) -> None:
    """A verb argument out of the model's bounds (click_count 5) is BadRequest, not a
    pydantic error, and nothing is sent."""
    with pytest.raises(E.BadRequest) as info:
        await bridge.tab.click("e7", click_count=5)
    assert info.value.details["errors"] == ["clickCount"]
    assert (bridge.ext.requests, bridge.drv.requests) == ([], [])


async def test_batch_takes_models_and_dicts(bridge: Bridge) -> None:
    """batch sends BatchItem models and dict items alike, in order, in one request."""
    answer = await bridge.tab.batch([
        BatchItem(ref="e7", action=FillAction(value="x")),
        {"ref": "e7", "action": {"kind": "press", "key": "Enter"}},
    ])
    assert [a["index"] for a in answer["completedActions"]] == [0, 1]
    assert answer["interruptedAction"] is None
    assert bridge.driver_actions() == [{"kind": "fill", "value": "x"},
                                       {"kind": "press", "key": "Enter"}]


async def test_a_bad_batch_item_sends_nothing(bridge: Bridge) -> None:
    """One invalid item refuses the whole batch client-side: no action runs."""
    with pytest.raises(E.BadRequest) as info:
        await bridge.tab.batch([{"ref": "e7", "action": {"kind": "fill", "value": "x"}},
                                {"ref": "e7", "action": {"kind": "type"}}])
    assert "actions.1.action.type.text" in info.value.details["errors"]
    assert (bridge.ext.requests, bridge.drv.requests) == ([], [])
