"""``snapshotAfter`` (bridge/executor.py ``_snapshot_after``; issue 18): an action, batch or
wait that asks for it gets the page's snapshot in its own result, taken right after it,
scrubbed of typed secrets, and never when the action opened a dialog or a tab or a batch
stopped at a failure (a snapshot nobody is shown must not become the next diff's
baseline). Real BridgeServer over loopback, fake peers that record what they were sent."""

# ruff: noqa: F811  (the tests take the imported `server` fixture by name)
from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection

from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import Request
from trustbridge.bridge.server import BridgeServer

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

    snapshot_tabs: list[dict[str, Any]] | None = None
    """``newTabs`` its snapshots report (tabs opened late), when set."""

    async def _answer(self, ws: ClientConnection, req: Request) -> None:  # type: ignore[override]
        if req.method == "page.snapshot":
            self.results["page.snapshot"] = {
                "snapshot": f'- textbox "Card": ••••••\n- text "You typed {SECRET}"',
                "url": "http://127.0.0.1/", "title": "t", "tabId": 1, "mode": "snapshot",
                "frames": 1, "refs": 1, "chars": 60, "truncated": False, "cursor": None,
                **({"newTabs": self.snapshot_tabs} if self.snapshot_tabs else {})}
        if req.method == "page.resolveTarget":
            self.results["page.resolveTarget"] = {"frameToken": "tok", "css": "#x",
                                                  "tabId": 1, "sensitive": True}
            await FakeExtension._answer(self, ws, req)
            return
        await super()._answer(ws, req)


async def test_no_snapshot_after_a_batch_that_stopped_at_a_failure(
        server: BridgeServer, client: BridgeClient) -> None:
    """The second action fails: the result names it and carries no snapshot, and none
    was asked (it would have become the session's diff baseline unseen)."""
    ext, drv = await _peers(server)
    drv.errors["driver.act"] = E.ElementObscured("Covered.")
    try:
        batch = await bounded(client.call("page.batch", {
            "device": D, "tabId": 1, "snapshotAfter": AFTER,
            "actions": [{"ref": "e1", "action": {"kind": "click"}}]}))
        assert batch["interruptedAction"]["index"] == 0
        assert "snapshotAfter" not in batch and "snapshotAfterError" not in batch
        assert "page.snapshot" not in ext.methods()
    finally:
        await _close(drv, ext)


async def test_the_late_tabs_a_snapshot_reports_are_masked_too(
        server: BridgeServer, client: BridgeClient) -> None:
    """A tab the snapshot reports opened late whose URL carries what was typed into a
    sensitive field shows the mask there as well (bridge/secrets.py scrub_tabs)."""
    ext, drv = await _peers(server, SensitiveExtension)
    try:
        await bounded(client.call("page.act", {
            "device": D, "tabId": 1, "ref": "e1",
            "action": {"kind": "fill", "value": SECRET}}))
        ext.snapshot_tabs = [{"tabId": 5, "url": f"http://127.0.0.1/verify?code={SECRET}",
                              "title": "Verify", "active": False, "openerTabId": 1}]
        snap = await bounded(client.call("page.snapshot", {"device": D, "tabId": 1}))
        shown = [t["url"] for t in snap.get("newTabs") or []]
        assert shown and all(SECRET not in u for u in shown), snap
    finally:
        await _close(drv, ext)


async def test_a_cancelled_race_cancels_the_call_it_waited_for() -> None:
    """DialogWaits.race cancelled by its caller: the extension call it awaited is
    cancelled too, not left pending (bridge/dialog_waits.py)."""
    import asyncio

    from trustbridge.bridge.dialog_waits import DialogWaits
    from trustbridge.bridge.routing import RoutingPolicy

    waits = DialogWaits(RoutingPolicy(), lambda _peer: None)  # type: ignore[arg-type,return-value]
    started = asyncio.Event()

    async def call() -> dict[str, Any]:
        started.set()
        await asyncio.Event().wait()  # never answers
        return {}

    racing = asyncio.ensure_future(waits.race(D, call(), set(), lambda _d: True))
    await bounded(started.wait())
    inner = next(t for t in asyncio.all_tasks() if t is not racing
                 and t.get_coro().__qualname__.endswith("call"))  # type: ignore[union-attr]
    racing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await racing
    await asyncio.sleep(0)
    assert inner.cancelled()


class SignallingDriver(HeldDriver):
    """Sends ``driver.dispatched`` for the act's ``notifyDispatched`` before its answer,
    as supervisor/driver.py does once the input reached the page."""

    async def _answer(self, ws: ClientConnection, req: Request) -> None:  # type: ignore[override]
        note = req.params.get("notifyDispatched") if req.method == "driver.act" else None
        if note:
            await self.send_event("driver.dispatched", {"id": note})
            # The snapshot starts while the driver still checks its action.
            await self.wait_snapshot
        await super()._answer(ws, req)

    def __init__(self, url: str, ext: HeldExtension) -> None:
        super().__init__(url)
        self.ext = ext

    @property
    def wait_snapshot(self) -> Any:
        return self.ext.wait_for_request("page.snapshot")


async def _signalled(server: BridgeServer) -> tuple[HeldExtension, SignallingDriver]:
    ext = HeldExtension(server.url)
    await bounded(ext.connect())
    drv = SignallingDriver(server.url, ext)
    await bounded(drv.connect())
    return ext, drv


async def test_a_snapshot_taken_while_the_driver_checks_is_kept_once_shown(
        server: BridgeServer, client: BridgeClient) -> None:
    """At the driver's dispatched signal the snapshot is asked as provisional; the answer
    makes nothing stale, so the result shows it and the extension is told to keep it (its
    session's next diff baseline), before the answer; one snapshot in all."""
    ext, drv = await _signalled(server)
    try:
        result = await bounded(client.call("page.act", click(snapshotAfter=AFTER)))
        assert result["snapshotAfter"]["snapshot"] == '- button "Save" [ref=e7]'
        snaps = [r.params for r in ext.requests if r.method == "page.snapshot"]
        assert len(snaps) == 1 and snaps[0]["provisional"]
        assert snaps[0]["provisional"] == next(
            r for r in drv.requests if r.method == "driver.act").params["notifyDispatched"]
        assert [(e.event, e.params) for e in ext.events if e.event == "snapshot.keep"] == [
            ("snapshot.keep", {"id": snaps[0]["provisional"]})]
    finally:
        await _close(drv, ext)


@pytest.mark.parametrize("answer", [
    {"postActionDocumentChanged": True},  # another document: the snapshot shows the old
    {"popups": [{"url": "http://127.0.0.1/new.html"}]},  # a tab the client may follow
])
async def test_a_provisional_snapshot_the_answer_makes_stale_is_never_kept(
        server: BridgeServer, client: BridgeClient, answer: dict[str, Any]) -> None:
    """The answer names another document or a new page: the provisional snapshot is not
    shown and never kept (no snapshot.keep), so it never becomes a diff baseline; what
    the result shows is a plain snapshot taken after the answer (after a document change
    once the tab loaded; after a popup this fake extension never announced as a tab)."""
    ext, drv = await _signalled(server)
    drv.results["driver.act"] = {"done": True, "action": "click",
                                 "postActionDocumentChanged": False, **answer}
    try:
        result = await bounded(client.call("page.act", click(snapshotAfter=AFTER)))
        snaps = [r.params for r in ext.requests if r.method == "page.snapshot"]
        assert [e for e in ext.events if e.event == "snapshot.keep"] == []
        assert snaps[0]["provisional"]
        assert len(snaps) == 2 and "provisional" not in snaps[1]
        assert result["snapshotAfter"]["snapshot"] == '- button "Save" [ref=e7]'
    finally:
        await _close(drv, ext)


async def test_an_empty_provisional_snapshot_is_dropped(
        server: BridgeServer, client: BridgeClient) -> None:
    """A provisional snapshot no frame answered (frames 0: the page was between two
    documents) is no page state: not kept, and the snapshot is taken after the answer."""
    ext, drv = await _signalled(server)
    ext.results["page.snapshot"] = {"snapshot": "", "url": "", "title": "", "tabId": 1,
                                    "mode": "snapshot", "frames": 0, "refs": 0, "chars": 0,
                                    "truncated": False, "cursor": None}
    try:
        await bounded(client.call("page.act", click(snapshotAfter=AFTER)))
        snaps = [r.params for r in ext.requests if r.method == "page.snapshot"]
        assert len(snaps) == 2 and snaps[0]["provisional"] and "provisional" not in snaps[1]
        assert [e for e in ext.events if e.event == "snapshot.keep"] == []
    finally:
        await _close(drv, ext)
