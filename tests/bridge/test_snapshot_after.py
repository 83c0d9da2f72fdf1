"""``snapshotAfter`` (bridge/executor.py ``_snapshot_after``; issue 18): an action, batch or
wait that asks for it gets the page's snapshot in its own result, taken in the same queue
turn, scrubbed of typed secrets, and never when the action opened a dialog or a tab. Real
BridgeServer over loopback, fake peers that record what they were sent."""

# ruff: noqa: F811  (the tests take the imported `server` fixture by name)
from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection

from bridge.client import BridgeClient
from bridge.protocol import errors as E
from bridge.protocol.models import Request
from bridge.server import BridgeServer

from .fakes import FakeExtension
from .test_executor import (  # noqa: F401  (server: the same fixture)
    TOKEN,
    HeldDriver,
    HeldExtension,
    bounded,
    click,
    server,
)

pytestmark = pytest.mark.timeout(30)

D = "dev1"
AFTER = {"session": "mcp-s1", "timeBudgetMs": 1000}
SECRET = "hunter2-secret"


async def _peers(server: BridgeServer, ext_class: type[HeldExtension] = HeldExtension
                 ) -> tuple[HeldExtension, HeldDriver]:
    ext = ext_class(server.url)
    await bounded(ext.connect())
    drv = HeldDriver(server.url)
    await bounded(drv.connect())
    return ext, drv


@pytest.fixture
async def client(server: BridgeServer) -> AsyncIterator[BridgeClient]:
    c = await bounded(BridgeClient.connect(server.url, TOKEN))
    yield c
    await c.close()


async def _close(*peers: Any) -> None:
    for p in peers:
        await p.close()
        assert p.malformed == []


async def test_an_act_brings_its_snapshot_back_in_one_request(
        server: BridgeServer, client: BridgeClient) -> None:
    """The extension gets the resolve, then page.snapshot with the asked session and
    budget, after the driver's act; neither the resolve, the driver nor the snapshot
    request carries snapshotAfter itself."""
    ext, drv = await _peers(server)
    try:
        result = await bounded(client.call("page.act", click(snapshotAfter=AFTER)))
        assert result["done"] is True
        assert result["snapshotAfter"]["snapshot"] == '- button "Save" [ref=e7]'
        assert "snapshotAfterError" not in result
        # (page.receipt: this fake pushes no receipt, so the bridge reads it)
        assert [m for m in ext.methods() if m != "page.receipt"] == [
            "page.resolveTarget", "page.snapshot"]
        snap = next(r for r in ext.requests if r.method == "page.snapshot").params
        assert snap["session"] == "mcp-s1" and snap["timeBudgetMs"] == 1000
        assert snap["tabId"] == 1 and "snapshotAfter" not in snap
        assert all("snapshotAfter" not in r.params for r in ext.requests + drv.requests)
    finally:
        await _close(drv, ext)


async def test_without_a_session_it_uses_the_connection_s_baseline(
        server: BridgeServer, client: BridgeClient) -> None:
    """snapshotAfter without session: the request's session names the baseline, as a
    page.snapshot of the same connection would."""
    ext, drv = await _peers(server)
    try:
        await bounded(client.call("page.act", click(snapshotAfter={})))
        await bounded(client.call("page.snapshot", {"device": D, "tabId": 1}))
        sessions = [r.params.get("session") for r in ext.requests if r.method == "page.snapshot"]
        assert len(sessions) == 2 and sessions[0] == sessions[1] and sessions[0]
    finally:
        await _close(drv, ext)


async def test_no_snapshot_after_an_action_that_opened_a_dialog(
        server: BridgeServer, client: BridgeClient) -> None:
    """The driver's answer names a dialog: the page cannot answer a snapshot; none is
    asked and the result says only the dialog."""
    ext, drv = await _peers(server)
    drv.results["driver.act"] = {"done": True, "action": "click",
                                 "dialog": {"type": "alert", "message": "Hi"}}
    try:
        result = await bounded(client.call("page.act", click(snapshotAfter=AFTER)))
        assert result["dialog"]["type"] == "alert"
        assert "snapshotAfter" not in result and "snapshotAfterError" not in result
        assert "page.snapshot" not in ext.methods()
    finally:
        await _close(drv, ext)


async def test_a_snapshot_that_fails_leaves_the_action_s_result_standing(
        server: BridgeServer, client: BridgeClient) -> None:
    """The act happened: its result is kept, with snapshotAfterError saying why there is
    no snapshot (the client can ask again)."""
    ext, drv = await _peers(server)
    ext.errors["page.snapshot"] = E.Timeout("The snapshot took too long.")
    try:
        result = await bounded(client.call("page.act", click(snapshotAfter=AFTER)))
        assert result["done"] is True and "snapshotAfter" not in result
        assert result["snapshotAfterError"]["code"] == "TIMEOUT"
    finally:
        await _close(drv, ext)


async def test_a_wait_and_a_batch_bring_their_snapshot_back(
        server: BridgeServer, client: BridgeClient) -> None:
    """page.wait: the wait goes to the extension without snapshotAfter, then the snapshot;
    page.batch: one snapshot after its last action."""
    ext, drv = await _peers(server)
    try:
        waited = await bounded(client.call("page.wait", {"device": D, "tabId": 1, "ms": 0,
                                                         "snapshotAfter": AFTER}))
        assert waited["snapshotAfter"]["tabId"] == 1
        wait_req = next(r for r in ext.requests if r.method == "page.wait").params
        assert "snapshotAfter" not in wait_req
        batch = await bounded(client.call("page.batch", {
            "device": D, "tabId": 1, "snapshotAfter": AFTER,
            "actions": [{"ref": "e1", "action": {"kind": "click"}},
                        {"ref": "e2", "action": {"kind": "click"}}]}))
        assert len(batch["completedActions"]) == 2
        assert batch["snapshotAfter"]["snapshot"] == '- button "Save" [ref=e7]'
        assert ext.methods().count("page.snapshot") == 2  # one per request
    finally:
        await _close(drv, ext)


async def test_the_snapshot_is_scrubbed_of_what_the_action_typed(
        server: BridgeServer, client: BridgeClient) -> None:
    """A fill into a field the resolve called sensitive: the snapshot taken right after
    (which echoes the value) shows the mask, never the value."""
    ext, drv = await _peers(server, SensitiveExtension)
    try:
        result = await bounded(client.call("page.act", {
            "device": D, "tabId": 1, "ref": "e1", "snapshotAfter": AFTER,
            "action": {"kind": "fill", "value": SECRET}}))
        text = result["snapshotAfter"]["snapshot"]
        assert SECRET not in text and "••••••" in text
    finally:
        await _close(drv, ext)


class SensitiveExtension(HeldExtension):
    """Resolves every ref as a sensitive field; its snapshot echoes SECRET outside the
    field (the page printed what was typed)."""

    async def _answer(self, ws: ClientConnection, req: Request) -> None:  # type: ignore[override]
        if req.method == "page.snapshot":
            self.results["page.snapshot"] = {
                "snapshot": f'- textbox "Card": ••••••\n- text "You typed {SECRET}"',
                "url": "http://127.0.0.1/", "title": "t", "tabId": 1, "mode": "snapshot",
                "frames": 1, "refs": 1, "chars": 60, "truncated": False, "cursor": None}
        if req.method == "page.resolveTarget":
            self.results["page.resolveTarget"] = {"frameToken": "tok", "css": "#x",
                                                  "tabId": 1, "sensitive": True}
            await FakeExtension._answer(self, ws, req)
            return
        await super()._answer(ws, req)


class SignallingDriver(HeldDriver):
    """Sends ``driver.dispatched`` for an act that asks, then answers only once the
    extension got the snapshot request (or after ``answer_after_s``)."""

    def __init__(self, url: str, ext: HeldExtension, answer: dict[str, Any] | None = None) -> None:
        super().__init__(url)
        self.ext = ext
        if answer is not None:
            self.results["driver.act"] = answer

    async def _answer(self, ws: ClientConnection, req: Request) -> None:  # type: ignore[override]
        if req.method == "driver.act" and req.params.get("notifyDispatched"):
            await self.send_event("driver.dispatched", {"id": req.params["notifyDispatched"]})
            await self.ext.wait_for_request("page.snapshot")  # taken before the answer
        await super()._answer(ws, req)


async def test_the_snapshot_starts_when_the_driver_says_the_input_was_dispatched(
        server: BridgeServer, client: BridgeClient) -> None:
    """The driver signals dispatched and holds its answer until the extension got the
    snapshot request: the act still answers, with that snapshot, and no second one."""
    ext = HeldExtension(server.url)
    await bounded(ext.connect())
    drv = SignallingDriver(server.url, ext)
    await bounded(drv.connect())
    try:
        result = await bounded(client.call("page.act", click(snapshotAfter=AFTER)))
        assert result["snapshotAfter"]["snapshot"] == '- button "Save" [ref=e7]'
        assert ext.methods().count("page.snapshot") == 1
        assert drv.requests[0].params["notifyDispatched"]
    finally:
        await _close(drv, ext)


@pytest.mark.parametrize("answer", [
    {"done": True, "action": "click", "postActionDocumentChanged": True},
    {"done": True, "action": "click", "dialog": {"type": "alert", "message": "Hi"}}])
async def test_an_early_snapshot_the_answer_makes_stale_is_not_used(
        server: BridgeServer, client: BridgeClient, answer: dict[str, Any]) -> None:
    """The answer says another document started loading: the snapshot taken at the
    signal is dropped and one is taken after the answer; a dialog: none is kept."""
    ext = HeldExtension(server.url)
    await bounded(ext.connect())
    drv = SignallingDriver(server.url, ext, answer)
    await bounded(drv.connect())
    try:
        result = await bounded(client.call("page.act", click(snapshotAfter=AFTER)))
        if answer.get("dialog"):
            assert "snapshotAfter" not in result
        else:
            assert ext.methods().count("page.snapshot") == 2
            assert result["snapshotAfter"]["snapshot"] == '- button "Save" [ref=e7]'
    finally:
        await _close(drv, ext)


async def test_a_signal_from_another_driver_or_malformed_is_ignored(
        server: BridgeServer) -> None:
    """DispatchSignals: only the armed id of the same driver sets the event."""
    from bridge.dispatch_signals import DispatchSignals

    signals = DispatchSignals()
    note, fired = signals.arm("drv-a")
    signals.dispatched("drv-b", {"id": note})
    signals.dispatched("drv-a", {"id": 7})
    signals.dispatched("drv-a", "nonsense")
    assert not fired.is_set()
    signals.dispatched("drv-a", {"id": note})
    assert fired.is_set()
    signals.forget("drv-a", note)
    signals.dispatched("drv-a", {"id": note})  # forgotten: no error
