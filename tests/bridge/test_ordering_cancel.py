"""Per-tab order, per-request timeouts, cancellation and the action log of BridgeServer,
over real loopback WebSockets with fake peers (tests/bridge/fakes.py).

The fakes here can hold an answer until the test opens a gate, so "slow" and "never
answers" are states the test controls, not sleeps.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Awaitable
from typing import Any, TypeVar

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from trustbridge.bridge import executor as executor_module
from trustbridge.bridge import server as server_module
from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import (
    MESSAGE_ADAPTER,
    PROTOCOL_VERSION,
    Hello,
    ResolveTarget,
    Request,
    Response,
    Welcome,
)
from trustbridge.bridge.server import BridgeServer

from .fakes import FakeDriver, FakeExtension, wait_until

pytestmark = pytest.mark.timeout(30)

TOKEN = "test-token-0123456789abcdef"
D = "dev1"
STEP_S = 5.0
"""Upper bound, seconds, on any single await in these tests."""

T = TypeVar("T")


async def bounded(aw: Awaitable[T]) -> T:
    return await asyncio.wait_for(aw, STEP_S)


def press(key: str, tab: int = 1, **extra: Any) -> dict[str, Any]:
    """page.act params: press ``key`` on ref e1 of ``tab`` (the key labels the action)."""
    return {"device": D, "tabId": tab, "ref": "e1", "action": {"kind": "press", "key": key}, **extra}


# -- fakes that can hold answers ---------------------------------------------------------------


async def _send(ws: ClientConnection, response: Response) -> None:
    with contextlib.suppress(ConnectionClosed):
        await ws.send(response.model_dump_json(exclude_none=True))


class TabExtension(FakeExtension):
    """Resolves every ref to a frame token naming its tab (``tab<N>``), so the driver can
    tell tabs apart. ``hold[method]``: answers of that method wait until the event is set."""

    def __init__(self, url: str, device: str = D) -> None:
        super().__init__(url, TOKEN, device)
        self.hold: dict[str, asyncio.Event] = {}

    async def _answer(self, ws: ClientConnection, req: Request) -> None:  # type: ignore[override]
        if (gate := self.hold.get(req.method)) is not None:
            await gate.wait()
        if req.method == "page.resolveTarget":
            tab = req.params.get("tabId", 1)
            target = ResolveTarget(frameToken=f"tab{tab}", css="#x", tabId=tab)
            await _send(ws, Response(id=req.id, ok=True, result=target.model_dump(exclude_none=True)))
            return
        await super()._answer(ws, req)


class GatedDriver(FakeDriver):
    """Records each driver.act's key per frame token in arrival order (``keys``); holds
    the actions of a token while ``gates[token]`` is unset; notes in ``overlaps`` any
    action that arrived while another of the same token was still unanswered."""

    def __init__(self, url: str, device: str = D) -> None:
        super().__init__(url, TOKEN, device)
        self.gates: dict[str, asyncio.Event] = {}
        self.keys: dict[str, list[str]] = defaultdict(list)
        self.in_flight: Counter[str] = Counter()
        self.overlaps: list[str] = []

    def hold(self, token: str) -> asyncio.Event:
        """Hold the actions of ``token`` until the returned event is set."""
        self.gates[token] = asyncio.Event()
        return self.gates[token]

    async def _answer(self, ws: ClientConnection, req: Request) -> None:  # type: ignore[override]
        if req.method != "driver.act":
            await super()._answer(ws, req)
            return
        token = req.params["frameToken"]
        self.in_flight[token] += 1
        if self.in_flight[token] > 1:
            self.overlaps.append(token)
        action = req.params["action"]
        self.keys[token].append(action.get("key", action["kind"]))
        try:
            if (gate := self.gates.get(token)) is not None:
                await gate.wait()
        finally:
            self.in_flight[token] -= 1
        await super()._answer(ws, req)  # the scripted result, error or disconnect


# -- fixtures ----------------------------------------------------------------------------------


@pytest.fixture
async def server() -> AsyncIterator[BridgeServer]:
    srv = BridgeServer(TOKEN, host="127.0.0.1", port=0)
    await bounded(srv.start())
    yield srv
    await srv.stop()


@pytest.fixture
async def ext(server: BridgeServer) -> AsyncIterator[TabExtension]:
    fake = TabExtension(server.url)
    await bounded(fake.connect())
    yield fake
    await fake.close()
    assert fake.malformed == []


@pytest.fixture
async def drv(server: BridgeServer, ext: TabExtension) -> AsyncIterator[GatedDriver]:
    fake = GatedDriver(server.url)
    await bounded(fake.connect())
    yield fake
    for gate in fake.gates.values():
        gate.set()
    await fake.close()
    assert fake.malformed == []


@pytest.fixture
async def client(server: BridgeServer) -> AsyncIterator[BridgeClient]:
    c = await bounded(BridgeClient.connect(server.url, TOKEN))
    yield c
    await c.close()


class RawClient:
    """An authenticated role=client socket speaking raw frames, keeping answers by id."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.answers: dict[Any, Response] = {}

    async def send(self, req_id: str, method: str, params: dict[str, Any] | None = None) -> None:
        await self.ws.send(Request(id=req_id, method=method, params=params or {}).model_dump_json())

    async def answer(self, req_id: str) -> Response:
        """The answer to ``req_id``, reading (and keeping) other answers meanwhile."""
        while req_id not in self.answers:
            msg = MESSAGE_ADAPTER.validate_json(await bounded(self.ws.recv()))
            assert isinstance(msg, Response)
            assert msg.id not in self.answers, f"second answer to {msg.id!r}"
            self.answers[msg.id] = msg
        return self.answers[req_id]

    async def round_trip(self, req_id: str) -> None:
        """devices.list and its answer: the bridge has read every earlier frame."""
        await self.send(req_id, "devices.list")
        assert (await self.answer(req_id)).ok


@pytest.fixture
async def raw(server: BridgeServer) -> AsyncIterator[RawClient]:
    async with connect(server.url, open_timeout=STEP_S, proxy=None) as ws:
        await ws.send(Hello(role="client", protocolVersion=PROTOCOL_VERSION, token=TOKEN).model_dump_json())
        assert isinstance(MESSAGE_ADAPTER.validate_json(await bounded(ws.recv())), Welcome)
        yield RawClient(ws)


def code(response: Response) -> E.ErrorCode | None:
    return response.error.code if response.error else None


# -- per-tab order -----------------------------------------------------------------------------


async def test_actions_on_one_tab_reach_the_driver_one_at_a_time_in_send_order(
    raw: RawClient, ext: TabExtension, drv: GatedDriver
) -> None:
    """40 actions sent back to back to one tab (all queued behind the first, held one)
    reach the driver in send order, each once, never two at a time, and all answer ok."""
    gate = drv.hold("tab1")
    keys = [f"k{i}" for i in range(40)]
    for key in keys:
        await raw.send(key, "page.act", press(key))
    await wait_until(lambda: drv.keys["tab1"] == ["k0"])
    await raw.round_trip("sync")  # every action is at the bridge, 39 of them queued
    assert drv.keys["tab1"] == ["k0"]
    gate.set()
    for key in keys:
        answer = await raw.answer(key)
        assert answer.ok and answer.result is not None and answer.result["inputPath"] == "trusted"
    assert drv.keys["tab1"] == keys
    assert drv.overlaps == []
    assert ext.methods().count("page.resolveTarget") == 40


async def test_a_held_action_on_one_tab_does_not_block_another_tab(
    client: BridgeClient, ext: TabExtension, drv: GatedDriver
) -> None:
    """While tab 1's action is held at the driver, tab 2's action completes; a second
    tab 1 action waits for the first and then runs after it."""
    gate = drv.hold("tab1")
    first = asyncio.create_task(client.call("page.act", press("a", tab=1)))
    await wait_until(lambda: drv.keys["tab1"] == ["a"])

    result = await bounded(client.call("page.act", press("b", tab=2)))
    assert result["tabId"] == 2 and drv.keys["tab2"] == ["b"]
    assert not first.done() and drv.in_flight["tab1"] == 1

    second = asyncio.create_task(client.call("page.act", press("c", tab=1)))
    await bounded(client.call("devices.list"))  # "c" is at the bridge, queued
    assert drv.keys["tab1"] == ["a"]
    gate.set()
    assert (await bounded(first))["inputPath"] == "trusted"
    assert (await bounded(second))["inputPath"] == "trusted"
    assert drv.keys["tab1"] == ["a", "c"] and drv.overlaps == []


# -- per-request timeouts ----------------------------------------------------------------------


@pytest.fixture
def short_margin(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bridge waits an action's timeoutMs + 50 ms (not + 5 s) for its answer."""
    monkeypatch.setattr(executor_module, "DRIVER_MARGIN_S", 0.05)


@pytest.fixture
def short_resolve(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bridge waits 100 ms (not 10 s) for a ref to resolve."""
    monkeypatch.setattr(executor_module, "RESOLVE_TIMEOUT_S", 0.1)


@pytest.mark.usefixtures("short_margin")
async def test_driver_that_never_answers_gives_uncertain_and_nothing_is_resent(
    client: BridgeClient, ext: TabExtension, drv: GatedDriver
) -> None:
    """Rule 7: driver.act was sent and not answered in time → BrowserOperationUncertain
    (it may have reached the page), not Timeout. No synthetic fallback; its late answer is
    dropped; the tab is free again and the next action is the only one sent after it."""
    gate = drv.hold("tab1")
    with pytest.raises(E.BrowserOperationUncertain) as info:
        await bounded(client.call("page.act", press("a", timeoutMs=100)))
    assert info.value.details["method"] == "driver.act"
    assert drv.keys["tab1"] == ["a"]
    assert ext.methods() == ["page.resolveTarget"]

    gate.set()  # the late answer to "a" arrives and is dropped
    await wait_until(lambda: drv.in_flight["tab1"] == 0)
    assert (await bounded(client.call("page.act", press("b"))))["inputPath"] == "trusted"
    assert drv.keys["tab1"] == ["a", "b"]
    assert ext.methods() == ["page.resolveTarget", "page.resolveTarget"]


@pytest.mark.usefixtures("short_resolve")
async def test_extension_that_never_resolves_gives_timeout_and_the_driver_gets_nothing(
    client: BridgeClient, ext: TabExtension, drv: GatedDriver
) -> None:
    """A resolve (page.resolveTarget) not answered in time → Timeout: nothing reached the
    page, and the driver received nothing."""
    ext.hold["page.resolveTarget"] = asyncio.Event()
    with pytest.raises(E.Timeout) as info:
        await bounded(client.call("page.act", press("a")))
    assert info.value.details["method"] == "page.resolveTarget"
    assert drv.requests == []
    ext.hold["page.resolveTarget"].set()


@pytest.mark.usefixtures("short_margin")
async def test_synthetic_action_not_answered_in_time_is_uncertain(
    client: BridgeClient, ext: TabExtension
) -> None:
    """On a device without a driver, page.act sent to the extension and not answered in
    time → BrowserOperationUncertain, after exactly one page.act."""
    ext.hold["page.act"] = asyncio.Event()
    with pytest.raises(E.BrowserOperationUncertain) as info:
        await bounded(client.call("page.act", press("a", timeoutMs=100)))
    assert info.value.details["method"] == "page.act"
    assert ext.methods() == ["page.act"]
    ext.hold["page.act"].set()


@pytest.mark.usefixtures("short_margin")
async def test_wait_not_answered_in_time_is_timeout(client: BridgeClient, ext: TabExtension) -> None:
    """page.wait is not input (rule 6): no answer in time → Timeout."""
    ext.hold["page.wait"] = asyncio.Event()
    with pytest.raises(E.Timeout):
        await bounded(client.call("page.wait", {"device": D, "text": "x", "timeoutMs": 100}))
    ext.hold["page.wait"].set()


async def test_no_hello_in_time_gets_bad_request_and_close_1008(
    server: BridgeServer, client: BridgeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A connection that says nothing gets BAD_REQUEST and a 1008 close once the hello
    timeout passes; other connections keep working."""
    monkeypatch.setattr(server_module, "HELLO_TIMEOUT_S", 0.2)
    async with connect(server.url, open_timeout=STEP_S, proxy=None) as ws:
        answer = MESSAGE_ADAPTER.validate_json(await bounded(ws.recv()))
        assert isinstance(answer, Response) and code(answer) is E.ErrorCode.BAD_REQUEST
        with pytest.raises(ConnectionClosed) as closed:
            await bounded(ws.recv())
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
    assert (await bounded(client.call("devices.list")))["devices"] == []


# -- cancellation ------------------------------------------------------------------------------


@pytest.mark.parametrize("settled", [False, True], ids=["cancel-right-behind", "cancel-after-round-trip"])
async def test_queued_request_cancelled_answers_cancelled_and_never_runs(
    settled: bool, raw: RawClient, ext: TabExtension, drv: GatedDriver
) -> None:
    """An action queued behind a held one and then cancelled answers CANCELLED (its cancel
    answers {cancelled: true, state: queued}); it is never resolved nor sent to the
    driver, whether the cancel arrives right behind it or after it waited for the tab."""
    gate = drv.hold("tab1")
    await raw.send("a", "page.act", press("a"))
    await wait_until(lambda: drv.keys["tab1"] == ["a"])
    await raw.send("b", "page.act", press("b"))
    if settled:
        await raw.round_trip("sync")
    await raw.send("cancel-b", "request.cancel", {"requestId": "b"})

    cancel = await raw.answer("cancel-b")
    assert cancel.ok and cancel.result == {"requestId": "b", "cancelled": True, "state": "queued"}
    assert code(await raw.answer("b")) is E.ErrorCode.CANCELLED
    gate.set()
    assert (await raw.answer("a")).ok
    await raw.send("c", "page.act", press("c"))
    assert (await raw.answer("c")).ok
    assert drv.keys["tab1"] == ["a", "c"]
    assert ext.methods().count("page.resolveTarget") == 2


async def test_running_request_is_not_cancelled_and_reports_what_it_did(
    raw: RawClient, ext: TabExtension, drv: GatedDriver
) -> None:
    """Cancelling an action the driver is performing answers {cancelled: false, state:
    running}; the action finishes and reports its trusted result."""
    gate = drv.hold("tab1")
    await raw.send("a", "page.act", press("a"))
    await wait_until(lambda: drv.keys["tab1"] == ["a"])
    await raw.send("cancel-a", "request.cancel", {"requestId": "a"})
    cancel = await raw.answer("cancel-a")
    assert cancel.ok and cancel.result == {"requestId": "a", "cancelled": False, "state": "running"}
    gate.set()
    answer = await raw.answer("a")
    assert answer.ok and answer.result is not None and answer.result["inputPath"] == "trusted"
    assert drv.keys["tab1"] == ["a"]


async def test_cancel_of_an_unknown_or_finished_request_changes_nothing(
    raw: RawClient, ext: TabExtension, drv: GatedDriver
) -> None:
    """request.cancel for an id never seen, or already answered, says state unknown; a
    cancel without requestId gets BAD_REQUEST."""
    await raw.send("a", "page.act", press("a"))
    assert (await raw.answer("a")).ok
    for target in ("a", "nope"):
        await raw.send(f"cancel-{target}", "request.cancel", {"requestId": target})
        result = (await raw.answer(f"cancel-{target}")).result
        assert result == {"requestId": target, "cancelled": False, "state": "unknown"}
    await raw.send("bad", "request.cancel", {})
    assert code(await raw.answer("bad")) is E.ErrorCode.BAD_REQUEST
    assert drv.keys["tab1"] == ["a"]


async def test_request_id_already_in_progress_is_refused(
    raw: RawClient, ext: TabExtension, drv: GatedDriver
) -> None:
    """A second request with the id of one still in progress gets BAD_REQUEST (cancel
    addresses requests by id) and is not run; the first finishes normally."""
    gate = drv.hold("tab1")
    await raw.send("a", "page.act", press("a"))
    await wait_until(lambda: drv.keys["tab1"] == ["a"])
    await raw.ws.send(Request(id="a", method="page.act", params=press("a2")).model_dump_json())
    duplicate = MESSAGE_ADAPTER.validate_json(await bounded(raw.ws.recv()))
    assert isinstance(duplicate, Response) and duplicate.id == "a"
    assert code(duplicate) is E.ErrorCode.BAD_REQUEST
    gate.set()
    second = MESSAGE_ADAPTER.validate_json(await bounded(raw.ws.recv()))
    assert isinstance(second, Response) and second.id == "a" and second.ok
    assert drv.keys["tab1"] == ["a"]


async def test_cancelling_the_awaiting_task_withdraws_a_queued_action(
    client: BridgeClient, ext: TabExtension, drv: GatedDriver, caplog: pytest.LogCaptureFixture
) -> None:
    """asyncio cancellation of BridgeClient.call on a queued action sends request.cancel:
    the action never reaches the driver (the bridge logs it CANCELLED) and the connection
    keeps working."""
    caplog.set_level(logging.INFO, logger="trustbridge.actions")
    gate = drv.hold("tab1")
    first = asyncio.create_task(client.call("page.act", press("a")))
    await wait_until(lambda: drv.keys["tab1"] == ["a"])
    queued = asyncio.create_task(client.call("page.act", press("b")))
    await bounded(client.call("devices.list"))  # "b" is at the bridge, queued
    queued.cancel()
    with pytest.raises(asyncio.CancelledError):
        await queued
    await wait_until(lambda: "CANCELLED" in outcomes(caplog))
    gate.set()
    assert (await bounded(first))["inputPath"] == "trusted"
    assert (await bounded(client.call("page.act", press("c"))))["inputPath"] == "trusted"
    assert drv.keys["tab1"] == ["a", "c"]
    assert sorted(outcomes(caplog)) == ["CANCELLED", "ok", "ok"]


async def test_cancelling_the_awaiting_task_of_a_running_action_lets_it_finish(
    client: BridgeClient, ext: TabExtension, drv: GatedDriver, caplog: pytest.LogCaptureFixture
) -> None:
    """asyncio cancellation of BridgeClient.call while the driver performs the action:
    the caller gets CancelledError at once; the bridge lets the action finish (logged ok,
    sent once) and the connection keeps working."""
    caplog.set_level(logging.INFO, logger="trustbridge.actions")
    gate = drv.hold("tab1")
    running = asyncio.create_task(client.call("page.act", press("a")))
    await wait_until(lambda: drv.keys["tab1"] == ["a"])
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    gate.set()
    await wait_until(lambda: outcomes(caplog) == ["ok"])
    assert (await bounded(client.call("page.act", press("b"))))["inputPath"] == "trusted"
    assert drv.keys["tab1"] == ["a", "b"]


# -- the action log ----------------------------------------------------------------------------


def action_lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [json.loads(r.getMessage()) for r in caplog.records if r.name == "trustbridge.actions"]


def outcomes(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [line["outcome"] for line in action_lines(caplog)]


async def test_action_log_has_one_structured_line_per_action_and_never_the_typed_text(
    server: BridgeServer, client: BridgeClient, ext: TabExtension, drv: GatedDriver,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Each routed action logs one JSON line {device, tab, action, inputPath, outcome, ms}
    — trusted, synthetic and failed alike — and no trustbridge log record at any level
    contains the text typed or filled, nor the error message a peer sent."""
    secret = "hunter2-Sekret-\u00e9-4111111111111111"
    caplog.set_level(logging.DEBUG, logger="trustbridge")
    other = TabExtension(server.url, device="dev2")  # no driver: synthetic input
    other.results["page.act"] = {"done": True, "tabId": 3}
    await bounded(other.connect())
    try:
        await bounded(client.call("page.act", {"device": D, "tabId": 1, "ref": "e1",
                                               "action": {"kind": "type", "text": secret}}))
        await bounded(client.call("page.act", {"device": D, "tabId": 1, "ref": "e1",
                                               "action": {"kind": "fill", "value": secret}}))
        await bounded(client.call("page.act", {"device": "dev2", "tabId": 3, "ref": "e1",
                                               "action": {"kind": "type", "text": secret}}))
        drv.errors["driver.act"] = E.ElementNotEditable(f"field holds {secret}", {})
        with pytest.raises(E.ElementNotEditable):
            await bounded(client.call("page.act", {"device": D, "tabId": 1, "ref": "e1",
                                                   "action": {"kind": "type", "text": secret}}))
    finally:
        await other.close()

    lines = action_lines(caplog)
    assert [{k: v for k, v in line.items() if k != "ms"} for line in lines] == [
        {"device": D, "tab": 1, "action": "type", "inputPath": "trusted", "outcome": "ok"},
        {"device": D, "tab": 1, "action": "fill", "inputPath": "trusted", "outcome": "ok"},
        {"device": "dev2", "tab": 3, "action": "type", "inputPath": "synthetic", "outcome": "ok"},
        {"device": D, "tab": 1, "action": "type", "inputPath": None,
         "outcome": "ELEMENT_NOT_EDITABLE"},
    ]
    assert all(isinstance(line["ms"], float) and line["ms"] >= 0 for line in lines)
    assert drv.methods().count("driver.act") == 3  # the secret really travelled
    logged = [r for r in caplog.records if r.name.startswith("trustbridge")]
    assert logged
    for record in logged:
        assert secret not in record.getMessage() and "hunter2" not in record.getMessage()
        assert "hunter2" not in repr(record.args)


async def test_an_action_without_tab_id_queues_behind_one_naming_the_active_tab(
    client: BridgeClient, ext: TabExtension, drv: GatedDriver
) -> None:
    """Once the bridge has seen which tab is active (tab 1), an action with no tabId
    waits for a held action that names tab 1 instead of running beside it."""
    await bounded(client.call("page.act", press("warm", tab=None)))  # runs on tab 1
    gate = drv.hold("tab1")
    first = asyncio.create_task(client.call("page.act", press("a", tab=1)))
    await wait_until(lambda: drv.keys["tab1"] == ["warm", "a"])
    second = asyncio.create_task(client.call("page.act", press("b", tab=None)))
    await bounded(client.call("devices.list"))  # "b" is at the bridge
    await asyncio.sleep(0.3)  # time for "b" to be resolved and reach the driver if it could
    assert drv.keys["tab1"] == ["warm", "a"], "the action without tabId ran beside tab 1's"
    assert ext.methods().count("page.resolveTarget") == 2
    gate.set()
    await bounded(first)
    await bounded(second)
    assert drv.keys["tab1"] == ["warm", "a", "b"] and drv.overlaps == []
