"""The executor's handlers (bridge/executor.py, with bridge/after_input.py) through a real
BridgeServer over loopback WebSockets: receipts, new tabs, driver methods and batches,
with fake peers whose answers the test holds until it has pushed the events it wants the
bridge to see."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable
from typing import Any, TypeVar

import pytest
from websockets.asyncio.client import ClientConnection

from trustbridge.bridge import after_input
from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import Request
from trustbridge.bridge.protocol.origins import OriginPolicy, parse_origin_list
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


class HeldExtension(FakeExtension):
    """Answers ``hold[method]`` only once that event is set; ``page.resolveTarget`` arms a
    receipt ``r1`` when asked for one."""

    def __init__(self, url: str, device: str = D) -> None:
        super().__init__(url, TOKEN, device)
        self.hold: dict[str, asyncio.Event] = {}
        self.tabs = [{"tabId": 1, "url": "http://127.0.0.1/", "title": "home", "active": True}]

    async def _answer(self, ws: ClientConnection, req: Request) -> None:  # type: ignore[override]
        if (gate := self.hold.get(req.method)) is not None:
            await gate.wait()
        if req.method == "page.resolveTarget":
            target = {"frameToken": "tok", "css": "#x", "tabId": req.params.get("tabId", 1)}
            if req.params.get("receipt"):
                target["receiptId"] = "r1"
            self.results["page.resolveTarget"] = target
        self.results["tabs.list"] = {"tabs": self.tabs}
        await super()._answer(ws, req)


class HeldDriver(FakeDriver):
    """Answers ``driver.act`` only once ``release`` is set; ``answered`` is set after."""

    def __init__(self, url: str, device: str = D) -> None:
        super().__init__(url, TOKEN, device)
        self.release = asyncio.Event()
        self.release.set()
        self.answered = asyncio.Event()
        self.results.update({
            "driver.screenshot": {"png": "iVBOR", "width": 2, "height": 2, "scale": 1.0,
                                  "clip": {"x": 0, "y": 0, "width": 2, "height": 2}},
            "driver.dialog": {"type": "alert", "message": "Saved!", "accepted": True}})

    async def _answer(self, ws: ClientConnection, req: Request) -> None:  # type: ignore[override]
        if req.method == "driver.act":
            await self.release.wait()
        await super()._answer(ws, req)
        if req.method == "driver.act":
            self.answered.set()


@pytest.fixture
async def server() -> AsyncIterator[BridgeServer]:
    srv = BridgeServer(TOKEN, host="127.0.0.1", port=0)
    await bounded(srv.start())
    yield srv
    await srv.stop()


@pytest.fixture
async def ext(server: BridgeServer) -> AsyncIterator[HeldExtension]:
    fake = HeldExtension(server.url)
    await bounded(fake.connect())
    yield fake
    for gate in fake.hold.values():
        gate.set()
    await fake.close()
    assert fake.malformed == []


@pytest.fixture
async def drv(server: BridgeServer, ext: HeldExtension) -> AsyncIterator[HeldDriver]:
    fake = HeldDriver(server.url)
    await bounded(fake.connect())
    yield fake
    fake.release.set()
    await fake.close()
    assert fake.malformed == []


@pytest.fixture
async def client(server: BridgeServer) -> AsyncIterator[BridgeClient]:
    c = await bounded(BridgeClient.connect(server.url, TOKEN))
    yield c
    await c.close()


@pytest.fixture
def no_late_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """Clicks do not wait for a tab opened late (the tests that are not about it)."""
    monkeypatch.setattr(after_input, "LATE_TAB_S", 0.0)


def click(tab: int = 1, **extra: Any) -> dict[str, Any]:
    return {"device": D, "tabId": tab, "ref": "e1", "action": {"kind": "click"}, **extra}


def new_tab(tab: int, opener: int) -> dict[str, Any]:
    return {"tabId": tab, "url": "http://127.0.0.1/new.html", "title": "new", "active": False,
            "openerTabId": opener}


async def during_the_action(drv: HeldDriver, *events: tuple[FakeExtension, str, dict[str, Any]]) -> None:
    """Once driver.act arrived (held), push ``events``, then let the driver answer."""
    await drv.wait_for_request("driver.act")
    for peer, name, params in events:
        await peer.send_event(name, params)
    await asyncio.sleep(0.05)  # the bridge has read the events before the answer
    drv.release.set()


# -- receipts ----------------------------------------------------------------------------------


@pytest.mark.usefixtures("no_late_wait")
async def test_a_pushed_receipt_says_delivered_without_asking_the_extension(
    client: BridgeClient, ext: HeldExtension, drv: HeldDriver
) -> None:
    """The receipt pushed while the driver clicks is the result's delivered/deliveredEvents;
    the bridge never sends page.receipt."""
    drv.release.clear()
    pushed = {"tabId": 1, "receiptId": "r1", "delivered": True, "events": ["click", "pointerdown"]}
    act = asyncio.create_task(client.call("page.act", click()))
    await bounded(during_the_action(drv, (ext, "page.receipt", pushed)))
    result = await bounded(act)
    assert result["delivered"] is True and result["deliveredEvents"] == ["click", "pointerdown"]
    assert result["inputPath"] == "trusted" and "page.receipt" not in ext.methods()


@pytest.mark.usefixtures("no_late_wait")
async def test_no_push_means_the_receipt_is_read_and_a_miss_is_reported(
    client: BridgeClient, ext: HeldExtension, drv: HeldDriver
) -> None:
    """Without a push the bridge reads the receipt once; delivered: false is reported, not
    success. A receipt of another id pushed meanwhile does not count."""
    drv.release.clear()
    ext.results["page.receipt"] = {"delivered": False, "events": ["pointerdown"]}
    other = {"tabId": 1, "receiptId": "r9", "delivered": True, "events": ["click"]}
    act = asyncio.create_task(client.call("page.act", click()))
    await bounded(during_the_action(drv, (ext, "page.receipt", other)))
    result = await bounded(act)
    assert result["delivered"] is False and result["deliveredEvents"] == ["pointerdown"]
    [read] = [r for r in ext.requests if r.method == "page.receipt"]
    assert read.params == {"tabId": 1, "ref": "e1", "receiptId": "r1"}


@pytest.mark.usefixtures("no_late_wait")
async def test_a_receipt_that_cannot_be_read_leaves_delivered_unknown(
    client: BridgeClient, ext: HeldExtension, drv: HeldDriver
) -> None:
    """The page went away (the extension cannot read the receipt): delivered is None,
    never true."""
    ext.errors["page.receipt"] = E.BrowserDocumentChanged("the page navigated")
    result = await bounded(client.call("page.act", click()))
    assert result["delivered"] is None and result["inputPath"] == "trusted"


# -- new tabs ----------------------------------------------------------------------------------


@pytest.mark.usefixtures("no_late_wait")
async def test_a_tab_the_acted_on_tab_opened_is_reported_as_tabs_list_shows_it(
    client: BridgeClient, ext: HeldExtension, drv: HeldDriver
) -> None:
    """tab.opened with the acted-on tab as opener during the click → newTabs, described by
    tabs.list (url, title, opener)."""
    drv.release.clear()
    ext.tabs.append(new_tab(2, opener=1))
    act = asyncio.create_task(client.call("page.act", click()))
    await bounded(during_the_action(drv, (ext, "tab.opened", {"tabId": 2, "openerTabId": 1})))
    result = await bounded(act)
    assert result["newTabs"] == [new_tab(2, opener=1)]


@pytest.mark.usefixtures("no_late_wait")
async def test_a_tab_gone_before_it_is_listed_is_described_by_its_announcement(
    client: BridgeClient, ext: HeldExtension, drv: HeldDriver
) -> None:
    """A new tab already closed again (not in tabs.list) is still named, with the opener
    and URL the extension announced."""
    drv.release.clear()
    announced = {"tabId": 2, "openerTabId": 1, "url": "http://127.0.0.1/gone.html"}
    act = asyncio.create_task(client.call("page.act", click()))
    await bounded(during_the_action(drv, (ext, "tab.opened", announced)))
    assert (await bounded(act))["newTabs"] == [announced]


@pytest.mark.usefixtures("no_late_wait")
async def test_another_tab_s_new_tab_is_not_claimed_without_a_popup(
    client: BridgeClient, ext: HeldExtension, drv: HeldDriver
) -> None:
    """A tab opened by another tab during the click, and a tab announced before the click
    started, are not the click's: no newTabs, no tabs.list."""
    await ext.send_event("tab.opened", {"tabId": 5, "openerTabId": 1})
    await bounded(client.call("devices.list"))
    await asyncio.sleep(0.05)
    drv.release.clear()
    act = asyncio.create_task(client.call("page.act", click()))
    await bounded(during_the_action(drv, (ext, "tab.opened", {"tabId": 6, "openerTabId": 3})))
    result = await bounded(act)
    assert "newTabs" not in result and "tabs.list" not in ext.methods()


@pytest.mark.usefixtures("no_late_wait")
async def test_a_popup_the_driver_saw_from_a_background_tab_is_the_one_announced(
    client: BridgeClient, ext: HeldExtension, drv: HeldDriver
) -> None:
    """The driver saw a popup; Chromium named the active tab (3) as its opener, not the
    acted-on tab (1): the tab announced during the click is reported."""
    drv.results["driver.act"] = {"done": True, "popups": [{"url": "http://127.0.0.1/p.html"}]}
    drv.release.clear()
    ext.tabs.append(new_tab(7, opener=3))
    act = asyncio.create_task(client.call("page.act", click()))
    await bounded(during_the_action(drv, (ext, "tab.opened", {"tabId": 7, "openerTabId": 3})))
    assert (await bounded(act))["newTabs"] == [new_tab(7, opener=3)]


@pytest.mark.usefixtures("no_late_wait")
async def test_a_popup_announced_after_the_driver_answered_is_waited_for(
    client: BridgeClient, ext: HeldExtension, drv: HeldDriver
) -> None:
    """The driver saw a popup the extension announces only after the driver's answer:
    the bridge waits for it (POPUP_SETTLE_S) and reports it."""
    drv.results["driver.act"] = {"done": True, "popups": [{"url": "http://127.0.0.1/p.html"}]}
    ext.tabs.append(new_tab(8, opener=1))
    act = asyncio.create_task(client.call("page.act", click()))
    await bounded(drv.answered.wait())
    await ext.send_event("tab.opened", {"tabId": 8, "openerTabId": 1})
    assert (await bounded(act))["newTabs"] == [new_tab(8, opener=1)]


async def test_a_tab_the_acted_on_tab_opens_just_after_the_click_returned_is_reported(
    client: BridgeClient, ext: HeldExtension, drv: HeldDriver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Neither the driver nor the extension saw a tab by the driver's answer; the acted-on
    tab opens one a moment later: the click's result names it, and the wait for it ends
    when it comes, not at the end of LATE_TAB_S."""
    monkeypatch.setattr(after_input, "LATE_TAB_S", 4.0)
    ext.tabs.append(new_tab(9, opener=1))
    drv.release.clear()
    started = time.monotonic()
    act = asyncio.create_task(client.call("page.act", click()))
    pushed = {"tabId": 1, "receiptId": "r1", "delivered": True, "events": ["click"]}
    await bounded(during_the_action(drv, (ext, "page.receipt", pushed)))  # no receipt wait
    await bounded(drv.answered.wait())
    await asyncio.sleep(0.05)
    await ext.send_event("tab.opened", {"tabId": 9, "openerTabId": 1})
    assert (await bounded(act))["newTabs"] == [new_tab(9, opener=1)]
    assert time.monotonic() - started < 3.0


@pytest.mark.usefixtures("no_late_wait")
async def test_a_tab_opened_after_the_click_s_result_is_reported_once_by_the_next_snapshot(
    client: BridgeClient, ext: HeldExtension, drv: HeldDriver
) -> None:
    """The click answers without newTabs; the clicked tab then opens tab 12: the next
    page.snapshot of that tab reports it, the one after does not, and a snapshot of
    another tab never does."""
    ext.tabs.append(new_tab(12, opener=1))
    result = await bounded(client.call("page.act", click()))
    assert "newTabs" not in result
    await ext.send_event("tab.opened", {"tabId": 12, "openerTabId": 1})
    await asyncio.sleep(0.05)  # the bridge has read the event
    ext.results["page.snapshot"] = {**ext.results["page.snapshot"], "tabId": 2}
    assert "newTabs" not in await bounded(client.call("page.snapshot", {"device": D, "tabId": 2}))
    ext.results["page.snapshot"] = {**ext.results["page.snapshot"], "tabId": 1}
    snap = await bounded(client.call("page.snapshot", {"device": D, "tabId": 1}))
    assert snap["newTabs"] == [new_tab(12, opener=1)]
    assert "newTabs" not in await bounded(client.call("page.snapshot", {"device": D, "tabId": 1}))


@pytest.mark.usefixtures("no_late_wait")
async def test_a_tab_the_click_s_result_reported_is_not_reported_again_by_a_snapshot(
    client: BridgeClient, ext: HeldExtension, drv: HeldDriver
) -> None:
    """A tab announced during the click is in the click's newTabs, and only there."""
    drv.release.clear()
    ext.tabs.append(new_tab(13, opener=1))
    act = asyncio.create_task(client.call("page.act", click()))
    await bounded(during_the_action(drv, (ext, "tab.opened", {"tabId": 13, "openerTabId": 1})))
    assert (await bounded(act))["newTabs"] == [new_tab(13, opener=1)]
    assert "newTabs" not in await bounded(client.call("page.snapshot", {"device": D, "tabId": 1}))


async def test_only_clicks_and_activating_keys_wait_for_a_late_tab(
    client: BridgeClient, ext: HeldExtension, drv: HeldDriver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fill or a press of "a" does not wait for a tab at all; a click that opens nothing
    waits LATE_TAB_S and reports no newTabs."""
    monkeypatch.setattr(after_input, "LATE_TAB_S", 0.5)
    for action in ({"kind": "fill", "value": "x"}, {"kind": "press", "key": "a"}):
        started = time.monotonic()
        result = await bounded(client.call("page.act", {"device": D, "tabId": 1, "ref": "e1",
                                                        "action": action}))
        assert time.monotonic() - started < 0.45 and "newTabs" not in result
    ext.errors["page.receipt"] = E.BrowserDocumentChanged("gone")
    started = time.monotonic()
    result = await bounded(client.call("page.act", click()))
    assert time.monotonic() - started >= 0.5 and "newTabs" not in result


async def test_synthetic_input_reports_the_tab_it_opened(server: BridgeServer, client: BridgeClient) -> None:
    """On a device without a driver, a tab the acted-on tab opened during page.act is in
    the synthetic result's newTabs too."""
    ext = HeldExtension(server.url)
    ext.hold["page.act"] = asyncio.Event()
    ext.tabs.append(new_tab(4, opener=1))
    await bounded(ext.connect())
    try:
        act = asyncio.create_task(client.call("page.act", click()))
        await bounded(ext.wait_for_request("page.act"))
        await ext.send_event("tab.opened", {"tabId": 4, "openerTabId": 1})
        await asyncio.sleep(0.05)
        ext.hold["page.act"].set()
        result = await bounded(act)
    finally:
        await ext.close()
    assert result["inputPath"] == "synthetic" and result["newTabs"] == [new_tab(4, opener=1)]


@pytest.mark.usefixtures("no_late_wait")
async def test_a_crash_the_driver_reports_names_the_tab_it_resolved(
    client: BridgeClient, ext: HeldExtension, drv: HeldDriver
) -> None:
    """The driver knows the crashed page, not the tab id: the client's BROWSER_CRASHED
    names the tab the ref was resolved on, with what crashed and the next step."""
    drv.errors["driver.act"] = E.BrowserCrashed("The renderer crashed.", what="renderer")
    with pytest.raises(E.BrowserCrashed) as err:
        await bounded(client.call("page.act", click(tab=1)))
    assert (err.value.tabId, err.value.what) == (1, "renderer")
    assert "Reload or navigate" in err.value.advice


# -- driver methods and batches ----------------------------------------------------------------


async def test_driver_methods_go_to_the_driver_s_own_method(
    client: BridgeClient, ext: HeldExtension, drv: HeldDriver
) -> None:
    """page.screenshot resolves the tab's frame then calls driver.screenshot with it;
    page.dialog goes straight to driver.dialog (a blocked page cannot resolve)."""
    shot = await bounded(client.call("page.screenshot", {"device": D, "tabId": 1}))
    assert shot["png"] == "iVBOR" and shot["tabId"] == 1 and shot["device"] == D
    sent = await drv.wait_for_request("driver.screenshot")
    assert sent.params["frameToken"] == "tok"
    resolves = ext.methods().count("page.resolveTarget")
    answered = await bounded(client.call("page.dialog", {"device": D, "accept": True}))
    assert answered["type"] == "alert" and answered["device"] == D
    assert drv.methods()[-1] == "driver.dialog"
    assert ext.methods().count("page.resolveTarget") == resolves


@pytest.mark.usefixtures("no_late_wait")
async def test_a_batch_stops_when_the_driver_leaves_and_sends_nothing_synthetic(
    server: BridgeServer, client: BridgeClient, ext: HeldExtension, drv: HeldDriver
) -> None:
    """The driver leaves between two batch actions: the next one is
    TRUSTED_INPUT_UNAVAILABLE (rule 4), the extension gets no page.act (no synthetic
    fallback), and the done action is reported."""
    drv.release.clear()
    batch = asyncio.create_task(client.call("page.batch", {"device": D, "tabId": 1, "actions": [
        {"ref": "e1", "action": {"kind": "fill", "value": "a"}},
        {"ref": "e2", "action": {"kind": "fill", "value": "b"}}]}))
    await drv.wait_for_request("driver.act")
    ext.hold["page.resolveTarget"] = asyncio.Event()  # the second action waits here
    drv.release.set()
    await wait_until(lambda: ext.methods().count("page.resolveTarget") == 2)
    await drv.close()
    await wait_until(lambda: D not in server.policy.drivers)
    ext.hold["page.resolveTarget"].set()
    result = await bounded(batch)
    assert [a["index"] for a in result["completedActions"]] == [0]
    assert result["completedActions"][0]["inputPath"] == "trusted"
    interrupted = result["interruptedAction"]
    assert interrupted["index"] == 1 and interrupted["error"]["code"] == "TRUSTED_INPUT_UNAVAILABLE"
    assert "page.act" not in ext.methods() and drv.methods() == ["driver.act"]


# -- typed secrets (bridge/secrets.py) ----------------------------------------------------------


def _snapshot(text: str, title: str = "t") -> dict[str, Any]:
    return {"snapshot": text, "url": "http://127.0.0.1/", "title": title, "tabId": 1,
            "mode": "snapshot", "frames": 1, "refs": 2, "chars": len(text),
            "truncated": False, "cursor": None}


async def test_a_value_typed_into_a_masked_field_is_masked_where_the_page_echoes_it(
        ext: HeldExtension, drv: HeldDriver, client: BridgeClient) -> None:
    """type into e2 (its line shows the mask) and e3 (plain): later snapshots mask e2's
    value in text and title, even once the field is gone, and keep e3's; chars follows."""
    for ref, text in (("e2", "7391-Quux"), ("e3", "Blue Falcon"), ("e3", "abc")):
        await bounded(client.call("page.act", {"device": D, "tabId": 1, "ref": ref,
                                               "action": {"kind": "type", "text": text}}))
    ext.results["page.snapshot"] = _snapshot(
        '- textbox "PIN" [ref=e2]: ••••••\n- textbox "Nick" [ref=e3]: Blue Falcon\n'
        "- text: Saved 7391-Quux for Blue Falcon abc")
    first = await bounded(client.call("page.snapshot", {"device": D, "tabId": 1}))
    assert first["snapshot"].endswith("- text: Saved •••••• for Blue Falcon abc")
    assert first["chars"] == len(first["snapshot"])
    ext.results["page.snapshot"] = _snapshot("- text: Thanks, 7391-Quux", title="7391-Quux")
    later = await bounded(client.call("page.snapshot", {"device": D, "tabId": 1}))
    assert (later["snapshot"], later["title"]) == ("- text: Thanks, ••••••", "••••••")


async def test_a_value_typed_into_a_field_never_seen_masked_is_left_alone(
        ext: HeldExtension, drv: HeldDriver, client: BridgeClient) -> None:
    """Without the mask on its field's line (or sensitive from the resolve) a typed value
    is page text like any other."""
    await bounded(client.call("page.act", {"device": D, "tabId": 1, "ref": "e2",
                                           "action": {"kind": "fill", "value": "hello world"}}))
    ext.results["page.snapshot"] = _snapshot('- textbox "Q" [ref=e2]: hello world')
    got = await bounded(client.call("page.snapshot", {"device": D, "tabId": 1}))
    assert got["snapshot"] == '- textbox "Q" [ref=e2]: hello world'


# -- dialogs per tab (bridge/dialogs.py, bridge/dialog_waits.py) -------------------------------


async def _alert_on(server: BridgeServer, drv: HeldDriver, dialog_id: int, url: str) -> None:
    """The driver reports an alert on the page at ``url``; wait until it is placed."""
    await drv.send_event("dialog.opened", {"dialogId": dialog_id, "type": "alert",
                                           "message": f"m{dialog_id}", "url": url})
    await wait_until(lambda: any(d.id == dialog_id and d.looked_up
                                 for d in server.policy.dialogs.all(D)))


async def test_page_dialog_answers_the_named_tabs_dialog_by_id(
        server: BridgeServer, client: BridgeClient, ext: HeldExtension, drv: HeldDriver) -> None:
    """Alerts on tabs 1 and 2: page.dialog {tabId: 2} sends dialogId 2; tab 1 still blocks,
    tab 2 is free at once (before any dialog.closed)."""
    ext.tabs = [{"tabId": 1, "url": "http://a/", "title": "", "active": True},
                {"tabId": 2, "url": "http://b/", "title": "", "active": False}]
    await _alert_on(server, drv, 1, "http://a/")
    await _alert_on(server, drv, 2, "http://b/")
    await bounded(client.call("page.dialog", {"device": D, "tabId": 2, "accept": True}))
    assert (await drv.wait_for_request("driver.dialog")).params["dialogId"] == 2
    assert [d.id for d in server.policy.dialogs.all(D)] == [1]
    with pytest.raises(E.DialogOpen):
        await bounded(client.call("page.snapshot", {"device": D, "tabId": 1}))
    await bounded(client.call("page.snapshot", {"device": D, "tabId": 2}))


async def test_a_snapshot_held_by_a_dialog_on_its_tab_answers_dialog_open_at_once(
        server: BridgeServer, client: BridgeClient, ext: HeldExtension, drv: HeldDriver) -> None:
    """The page alerts while a snapshot of it is in flight (an alert loop): DIALOG_OPEN
    as soon as the dialog is placed, not the extension's timeout."""
    ext.hold["page.snapshot"] = asyncio.Event()
    pending = asyncio.ensure_future(client.call("page.snapshot", {"device": D, "tabId": 1}))
    await ext.wait_for_request("page.snapshot")
    await _alert_on(server, drv, 7, "http://127.0.0.1/")
    with pytest.raises(E.DialogOpen) as blocked:
        await bounded(pending)
    assert blocked.value.details["tabId"] == 1


@pytest.mark.usefixtures("no_late_wait")
async def test_a_click_position_with_allow_coordinates_is_refused_before_anything_is_sent(
    client: BridgeClient, ext: HeldExtension, drv: HeldDriver
) -> None:
    """allowCoordinates with a ClickAction position: BAD_REQUEST naming both, and neither
    the extension nor the driver is asked anything; each alone still acts."""
    sent = (len(ext.requests), len(drv.requests))
    both = click(allowCoordinates=True, action={"kind": "click", "position": {"x": 3, "y": 4}})
    with pytest.raises(E.BadRequest, match="position and allowCoordinates cannot be combined"):
        await bounded(client.call("page.act", both))
    assert (len(ext.requests), len(drv.requests)) == sent
    await bounded(client.call("page.act", click(allowCoordinates=True)))
    await bounded(client.call("page.act", click(action={"kind": "click",
                                                        "position": {"x": 3, "y": 4}})))
    assert [r.method for r in drv.requests].count("driver.act") == 2


async def test_navigation_to_a_blocked_origin_is_refused_before_anything_is_sent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A bridge given origin lists refuses page.navigate and tabs.new to a blocked origin
    with the policy's reason (logged too) and sends the extension nothing; an allowed
    origin still navigates."""
    rules = OriginPolicy(blocked=parse_origin_list("http://localhost:*"))
    srv = BridgeServer(TOKEN, host="127.0.0.1", port=0, origins=rules)
    await bounded(srv.start())
    fake = HeldExtension(srv.url)
    try:
        await bounded(fake.connect())
        c = await bounded(BridgeClient.connect(srv.url, TOKEN))
        try:
            for method, params in (("page.navigate", {"url": "http://localhost:9/x"}),
                                   ("tabs.new", {"url": "http://localhost:9/"})):
                with pytest.raises(E.BadRequest) as info:
                    await bounded(c.call(method, {"device": D, **params}))
                assert info.value.details["reason"] == rules.refusal(params["url"])
                assert "--blocked-origins" in info.value.to_payload().nextStep
            assert fake.requests == []
            assert "blocked a navigation to http://localhost:9/x" in caplog.text
            await bounded(c.call("page.navigate", {"device": D, "url": "http://127.0.0.1/"}))
            assert fake.methods() == ["page.navigate"]
        finally:
            await c.close()
    finally:
        await fake.close()
        await srv.stop()
