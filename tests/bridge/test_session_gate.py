"""SessionGate (bridge/session_gate.py): where sessions meet requests.

Pure tests: a real (I/O-free) RoutingPolicy and TabQueue, a SessionBook on a fake clock,
and a fake extension peer whose ``tabs.list`` answer the test scripts (it records every
call, so a test sees whether the gate asked the browser at all).
"""

from __future__ import annotations

import asyncio

from typing import Any

import pytest

from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.validate import validate_params
from trustbridge.bridge.routing import RoutingPolicy
from trustbridge.bridge.session_gate import CLAIMS, READS, REVEALING, SessionGate
from trustbridge.bridge.sessions import Session, SessionBook
from trustbridge.bridge.tabqueue import TabQueue

DEV = "dev1"
EXT = "ext-peer"


class FakeExtension:
    """The extension's side of ``peer(id).call``: answers ``tabs.list`` from ``tabs``."""

    def __init__(self) -> None:
        self.tabs: list[dict[str, Any]] = []
        self.calls: list[str] = []
        self.error: E.TrustbridgeError | None = None

    async def call(self, method: str, params: dict[str, Any],
                   timeout_s: float) -> dict[str, Any]:
        self.calls.append(method)
        if self.error is not None:
            raise self.error
        assert method == "tabs.list", method
        return {"tabs": [dict(t) for t in self.tabs], "device": DEV}

    def show(self, *tabs: int, active: int | None = None) -> None:
        self.tabs = [{"tabId": t, "url": f"https://t{t}.test/", "title": str(t),
                      "active": t == active} for t in tabs]


class Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


class World:
    """A gate for one device whose extension is :class:`FakeExtension`."""

    def __init__(self, capabilities: dict[str, bool] | None = None) -> None:
        self.clock = Clock()
        self.book = SessionBook(clock=self.clock)
        self.policy = RoutingPolicy()
        self.policy.join(EXT, "extension", DEV, capabilities=capabilities or {})
        self.queue = TabQueue()
        self.ext = FakeExtension()
        self.gate = SessionGate(self.book, self.policy, self.queue, self.peer)

    def peer(self, peer_id: str) -> FakeExtension:
        if peer_id != EXT:
            raise E.DeviceNotConnected(f"no peer {peer_id}")
        return self.ext

    def session(self, label: str) -> Session:
        return self.book.open(f"peer-{label}", label)[0]

    async def admit(self, session: Session, method: str,
                    **params: Any) -> tuple[int | None, Any]:
        parsed = validate_params(method, params)
        return await self.gate.admit(session, method, parsed, DEV), parsed


@pytest.fixture
def world() -> World:
    return World()


@pytest.fixture
def attended() -> World:
    """A device a person may use: the extension said ``attended: true``."""
    return World({"attended": True})


CLICK = {"ref": "e1", "action": {"kind": "click"}}


def test_the_method_sets_are_disjoint_and_cover_actions_and_reads() -> None:
    assert not CLAIMS & READS
    assert {"page.act", "page.batch", "page.navigate", "tabs.select", "tabs.close"} <= CLAIMS
    assert {"page.snapshot", "page.find", "page.wait", "page.screenshot"} <= READS
    assert "tabs.new" not in CLAIMS | READS and "tabs.list" not in CLAIMS | READS


def test_attended_from_extension_or_driver_capabilities() -> None:
    assert not World().gate.attended(DEV)
    assert World({"attended": True}).gate.attended(DEV)
    headed = World({"attended": False})
    headed.policy.join("drv", "driver", DEV, capabilities={"headed": True})
    assert headed.gate.attended(DEV)


# -- admit ------------------------------------------------------------------------------


async def test_admit_fills_tab_id_from_the_current_tab(world: World) -> None:
    a = world.session("agent-a")
    world.book.check(a, DEV, 5, claim=True, attended=False)
    world.queue.learn("tabs.select", DEV, None, {"tabId": 9})  # the browser shows 9
    tab, parsed = await world.admit(a, "page.act", **CLICK)
    assert tab == 5 and parsed.tabId == 5
    tab, parsed = await world.admit(a, "page.snapshot")
    assert tab == 5 and parsed.tabId == 5
    assert world.ext.calls == []


async def test_admit_keeps_an_explicit_tab_id(world: World) -> None:
    a = world.session("agent-a")
    world.book.check(a, DEV, 5, claim=True, attended=False)
    tab, parsed = await world.admit(a, "page.act", tabId=6, **CLICK)
    assert tab == 6 and parsed.tabId == 6
    assert world.book.owner(DEV, 6) is a and a.current == {DEV: 5}


async def test_admit_ignores_methods_that_address_no_existing_tab(world: World) -> None:
    a = world.session("agent-a")
    b = world.session("agent-b")
    world.book.check(b, DEV, 1, claim=True, attended=False)
    for method, params in (("tabs.new", {}), ("tabs.list", {}), ("devices.list", {})):
        tab, _ = await world.admit(a, method, **params)
        assert tab is None, method
    assert world.ext.calls == [] and a.tabs == set()


async def test_a_read_of_another_session_s_tab_is_allowed_and_claims_nothing(
        world: World) -> None:
    a = world.session("agent-a")
    b = world.session("agent-b")
    world.book.check(a, DEV, 5, claim=True, attended=False)
    for method in sorted(READS - REVEALING):
        tab, _ = await world.admit(b, method, tabId=5)
        assert tab == 5, method
    for method in sorted(REVEALING):  # can show typed content: the owner's only
        with pytest.raises(E.TabClaimed):
            await world.admit(b, method, tabId=5)
    assert world.book.owner(DEV, 5) is a and b.tabs == set()


async def test_an_action_on_another_session_s_tab_is_tab_claimed(world: World) -> None:
    a = world.session("agent-a")
    b = world.session("agent-b")
    world.book.check(a, DEV, 5, claim=True, attended=False)
    for method, params in (("page.act", CLICK), ("page.navigate", {"url": "https://x.test/"}),
                           ("tabs.select", {}), ("tabs.close", {}),
                           ("page.evaluate", {"expression": "1"})):
        with pytest.raises(E.TabClaimed) as info:
            await world.admit(b, method, tabId=5, **params)
        assert info.value.owner == "agent-a" and info.value.tabId == 5, method
    assert world.book.owner(DEV, 5) is a and b.tabs == set()


async def test_an_action_claims_the_known_active_tab_when_free(world: World) -> None:
    a = world.session("agent-a")
    world.queue.learn("tabs.select", DEV, None, {"tabId": 4})
    tab, parsed = await world.admit(a, "page.act", **CLICK)
    assert tab == 4 and parsed.tabId == 4
    assert world.book.owner(DEV, 4) is a and a.current == {DEV: 4}
    assert world.ext.calls == []


async def test_a_read_of_the_known_active_tab_claims_nothing(world: World) -> None:
    a = world.session("agent-a")
    world.queue.learn("tabs.select", DEV, None, {"tabId": 4})
    tab, parsed = await world.admit(a, "page.snapshot")
    assert tab == 4 and parsed.tabId == 4
    assert a.tabs == set() and a.current == {}


async def test_no_prefetch_while_no_session_owns_a_tab_nor_guesses(world: World) -> None:
    a = world.session("agent-a")
    world.ext.show(1, 2, active=2)
    tab, parsed = await world.admit(a, "page.act", **CLICK)
    assert tab is None and parsed.tabId is None  # answered() claims the tab it ran on
    assert world.ext.calls == [] and a.tabs == set()


async def test_prefetch_when_another_session_owns_a_tab(world: World) -> None:
    a = world.session("agent-a")
    b = world.session("agent-b")
    world.book.check(b, DEV, 1, claim=True, attended=False)
    world.ext.show(1, 2, active=1)
    with pytest.raises(E.TabClaimed) as info:
        await world.admit(a, "page.act", **CLICK)
    assert info.value.owner == "agent-b" and world.ext.calls == ["tabs.list"]
    world.ext.show(1, 2, active=2)
    tab, parsed = await world.admit(a, "page.act", **CLICK)
    assert tab == 2 and parsed.tabId == 2 and world.book.owner(DEV, 2) is a


async def test_prefetch_for_a_read_pins_the_tab_and_checks_nothing(world: World) -> None:
    a = world.session("agent-a")
    b = world.session("agent-b")
    world.book.check(b, DEV, 1, claim=True, attended=False)
    world.ext.show(1, 2, active=1)
    tab, parsed = await world.admit(a, "page.snapshot")
    assert tab == 1 and parsed.tabId == 1 and a.tabs == set()


async def test_a_second_session_s_first_action_waits_for_the_first_s_answer(
        world: World) -> None:
    """Two sessions' first actions on a fresh device: the first takes the first-action
    slot (its answer names and claims the active tab); the second waits for that answer,
    then looks the tab up and is refused on it — never both unchecked on one tab."""
    a = world.session("agent-a")
    b = world.session("agent-b")
    tab, _ = await world.admit(b, "page.act", **CLICK)
    assert tab is None and world.ext.calls == []  # the only one: nothing to ask
    waiting = asyncio.ensure_future(world.admit(a, "page.act", **CLICK))
    await asyncio.sleep(0.05)
    assert not waiting.done(), "the second first action did not wait"
    world.book.check(b, DEV, 3, claim=True, attended=False)  # b's answer claimed tab 3
    world.ext.show(3, active=3)
    world.gate.settled(b, DEV)
    with pytest.raises(E.TabClaimed) as info:
        await asyncio.wait_for(waiting, 5)
    assert info.value.owner == "agent-b" and world.ext.calls == ["tabs.list"]
    # A session's own first action in flight is no reason for its next one to wait.
    c = world.session("agent-c")
    world.book.release(b, None, None)
    world.ext.calls.clear()
    assert (await world.admit(c, "page.act", **CLICK))[0] is None
    assert (await asyncio.wait_for(world.admit(c, "page.act", **CLICK), 1))[0] is None
    assert world.ext.calls == []


async def test_reads_that_change_the_page_count_as_actions(world: World) -> None:
    """A screenshot of an element (scrolls it), a full-page one (resizes), a PDF (prints)
    and clearing the console or network record (erases the owner's) are refused on
    another session's tab."""
    a = world.session("agent-a")
    b = world.session("agent-b")
    world.book.check(a, DEV, 5, claim=True, attended=False)
    for method, params in (("page.screenshot", {"ref": "e1"}),
                           ("page.screenshot", {"fullPage": True}),
                           ("page.pdf", {}), ("page.console", {"clear": True}),
                           ("page.network", {"clear": True})):
        with pytest.raises(E.TabClaimed):
            await world.admit(b, method, tabId=5, **params)
    assert b.tabs == set()


@pytest.mark.parametrize("failure", ["error", "no extension", "no active tab"])
async def test_a_failed_prefetch_leaves_the_request_to_say_what_is_wrong(
        world: World, failure: str) -> None:
    a = world.session("agent-a")
    b = world.session("agent-b")
    world.book.check(b, DEV, 1, claim=True, attended=False)
    if failure == "error":
        world.ext.error = E.Timeout("slow")
    elif failure == "no extension":
        world.policy.leave(EXT)
        world.policy.join("drv", "driver", DEV)  # the device is still known
    else:
        world.ext.show(1, 2)
    tab, parsed = await world.admit(a, "page.act", **CLICK)
    assert tab is None and parsed.tabId is None and a.tabs == set()


async def test_a_person_s_tab_is_refused_to_an_action_and_open_to_a_read(
        attended: World) -> None:
    a = attended.session("agent-a")
    attended.queue.learn("tabs.select", DEV, None, {"tabId": 4})
    with pytest.raises(E.TabClaimed) as info:
        await attended.admit(a, "page.act", **CLICK)
    assert info.value.person is True and info.value.tabId == 4
    tab, _ = await attended.admit(a, "page.snapshot")
    assert tab == 4 and a.tabs == set()


async def test_a_person_s_active_tab_is_refused_before_any_tab_is_known(
        attended: World) -> None:
    """On an attended device the browser's active tab may be a person's even while no
    session owns anything: an action without tabId learns which tab it is first (one
    tabs.list) and is refused on a person's tab, as it is once the tab is known."""
    a = attended.session("agent-a")
    attended.ext.show(4, active=4)
    with pytest.raises(E.TabClaimed) as info:
        await attended.admit(a, "page.act", **CLICK)
    assert info.value.person is True and info.value.tabId == 4
    assert attended.ext.calls == ["tabs.list"] and a.tabs == set()
    attended.ext.calls.clear()
    tab, _ = await attended.admit(a, "page.snapshot")  # a read needs no tab known
    assert tab is None and attended.ext.calls == []


async def test_page_dialog_without_tab_answers_the_session_s_own_dialog(world: World) -> None:
    a = world.session("agent-a")
    world.book.check(a, DEV, 3, claim=True, attended=False)
    world.book.select(a, DEV, 9)
    first = world.policy.dialogs.opened(DEV, {"dialogId": 1, "type": "alert"})
    first.tabs = frozenset({7})
    mine = world.policy.dialogs.opened(DEV, {"dialogId": 2, "type": "confirm"})
    mine.tabs = frozenset({3})
    tab, parsed = await world.admit(a, "page.dialog", accept=True)
    assert tab == 3 and parsed.tabId == 3


async def test_page_dialog_of_another_session_s_tab_is_tab_claimed(world: World) -> None:
    """Answering a dialog acts on its page: without tabId, the dialog the driver would
    answer (the only open one, on another session's tab) is checked like any action."""
    a = world.session("agent-a")
    b = world.session("agent-b")
    world.book.check(b, DEV, 7, claim=True, attended=False)
    dialog = world.policy.dialogs.opened(DEV, {"dialogId": 1, "type": "confirm"})
    dialog.tabs = frozenset({7})
    with pytest.raises(E.TabClaimed) as info:
        await world.admit(a, "page.dialog", accept=True)
    assert info.value.owner == "agent-b" and info.value.tabId == 7


async def test_page_dialog_without_a_placed_dialog_is_left_to_the_dialog_book(
        world: World) -> None:
    a = world.session("agent-a")
    b = world.session("agent-b")
    world.book.check(b, DEV, 7, claim=True, attended=False)
    world.policy.dialogs.opened(DEV, {"dialogId": 1, "type": "alert"})  # not placed yet
    tab, parsed = await world.admit(a, "page.dialog", accept=True)
    assert tab is None and parsed.tabId is None and world.ext.calls == []


# -- tab_gone ---------------------------------------------------------------------------


def test_tab_gone_follows_a_replaced_tab(world: World) -> None:
    a = world.session("agent-a")
    world.book.check(a, DEV, 5, claim=True, attended=False)
    world.queue.learn("tabs.select", DEV, None, {"tabId": 5})
    err = E.BrowserTabClosed("gone", {"tabId": 5, "replacedBy": 15})
    assert world.gate.tab_gone(a, DEV, err) is True
    assert a.tabs == {(DEV, 15)} and a.current == {DEV: 15}
    assert world.queue.active_tab(DEV) is None


def test_tab_gone_forgets_a_closed_tab(world: World) -> None:
    a = world.session("agent-a")
    world.book.check(a, DEV, 5, claim=True, attended=False)
    world.queue.learn("tabs.select", DEV, None, {"tabId": 5})
    assert world.gate.tab_gone(a, DEV, E.BrowserTabClosed("gone", {"tabId": 5})) is True
    assert a.tabs == set() and a.current == {} and world.queue.active_tab(DEV) is None


def test_tab_gone_forgets_a_current_tab_it_did_not_own(world: World) -> None:
    a = world.session("agent-a")
    b = world.session("agent-b")
    world.book.check(b, DEV, 5, claim=True, attended=False)
    world.book.select(a, DEV, 5)  # current by tabs.select's answer, owned by b
    assert world.gate.tab_gone(a, DEV, E.BrowserTabClosed("gone", {"tabId": 5}))
    assert a.current == {} and b.tabs == set()


def test_tab_gone_without_a_tab_id_changes_nothing(world: World) -> None:
    a = world.session("agent-a")
    world.book.check(a, DEV, 5, claim=True, attended=False)
    assert world.gate.tab_gone(a, DEV, E.BrowserTabClosed("gone")) is False
    assert a.tabs == {(DEV, 5)} and a.current == {DEV: 5}


# -- answered ---------------------------------------------------------------------------


def test_answered_claims_the_tab_a_tab_id_less_action_ran_on(world: World) -> None:
    a = world.session("agent-a")
    world.gate.answered(a, "page.act", DEV, {"tabId": 4, "device": DEV})
    assert world.book.owner(DEV, 4) is a and a.current == {DEV: 4}


def test_answered_claims_nothing_for_a_read_or_another_s_tab(world: World) -> None:
    a = world.session("agent-a")
    b = world.session("agent-b")
    world.gate.answered(a, "page.snapshot", DEV, {"tabId": 4})
    assert a.tabs == set()
    world.book.check(b, DEV, 6, claim=True, attended=False)
    world.gate.answered(a, "page.act", DEV, {"tabId": 6})
    assert world.book.owner(DEV, 6) is b and a.tabs == set()


def test_answered_never_claims_a_person_s_tab(attended: World) -> None:
    a = attended.session("agent-a")
    attended.gate.answered(a, "page.act", DEV, {"tabId": 4})
    assert attended.book.owner(DEV, 4) is None and a.current == {}


def test_answered_claims_nothing_for_a_stopped_session(world: World) -> None:
    a = world.session("agent-a")
    world.book.stop(a, "a test")
    world.gate.answered(a, "page.act", DEV, {"tabId": 4})
    world.gate.answered(a, "tabs.new", DEV, {"tabId": 5})
    assert world.book.owners(DEV) == [] and a.tabs == set()


def test_answered_tabs_new_owns_and_selects(world: World) -> None:
    a = world.session("agent-a")
    world.book.check(a, DEV, 1, claim=True, attended=False)
    world.gate.answered(a, "tabs.new", DEV, {"tabId": 8, "url": "", "title": ""})
    assert a.tabs == {(DEV, 1), (DEV, 8)} and a.current == {DEV: 8}
    b = world.session("agent-b")
    world.book.release(a, DEV, 8)
    world.book.check(b, DEV, 8, claim=True, attended=True)  # no person's tab


def test_answered_tabs_select_and_close(world: World) -> None:
    a = world.session("agent-a")
    world.book.check(a, DEV, 1, claim=True, attended=False)
    world.gate.answered(a, "tabs.select", DEV, {"tabId": 2})
    assert a.tabs == {(DEV, 1), (DEV, 2)} and a.current == {DEV: 2}
    world.gate.answered(a, "tabs.close", DEV, {"tabId": 2})
    assert a.tabs == {(DEV, 1)} and a.current == {}
    world.gate.answered(a, "tabs.close", DEV, {"tabId": 3})  # a free tab: not claimed
    assert world.book.owner(DEV, 3) is None


def test_answered_tabs_list_annotates_rows(attended: World) -> None:
    a = attended.session("agent-a")
    b = attended.session("agent-b")
    attended.book.opened(a, DEV, 1)
    attended.book.claim(b, DEV, 2)
    attended.ext.show(1, 2, 3, active=1)
    result = {"tabs": attended.ext.tabs}
    attended.gate.answered(a, "tabs.list", DEV, result)
    marks = [{k: t[k] for k in ("owner", "mine", "person") if k in t} for t in result["tabs"]]
    assert marks == [{"owner": "agent-a", "mine": True},
                     {"owner": "agent-b", "mine": False}, {"person": True}]


def test_answered_new_tabs_go_to_the_acting_session_whatever_their_opener(
        world: World) -> None:
    """The action's answer named them: the acting session's, even when the browser names
    another session's tab as opener (Chromium names the *active* tab as the opener of a
    popup from a background tab, docs/design.md §9)."""
    a = world.session("agent-a")
    b = world.session("agent-b")
    world.book.check(a, DEV, 1, claim=True, attended=False)
    world.book.check(b, DEV, 2, claim=True, attended=False)
    world.gate.answered(a, "page.act", DEV, {
        "tabId": 1, "newTabs": [{"tabId": 11}, {"tabId": 12, "openerTabId": 2}]})
    assert world.book.owner(DEV, 11) is a and world.book.owner(DEV, 12) is a
    world.gate.answered(a, "page.batch", DEV, {
        "tabId": 1, "completedActions": [{"tabId": 1, "newTabs": [{"tabId": 13}]},
                                         {"newTabs": [{"tabId": 14}, {"tabId": "x"}]}]})
    assert world.book.owner(DEV, 13) is a and world.book.owner(DEV, 14) is a
    assert a.current == {DEV: 1}  # a popup does not move the current tab


def test_late_tabs_a_read_reports_are_nobodys(attended: World) -> None:
    """A snapshot's, wait's or find's ``newTabs`` (tabs the session's tab opened after an
    action's answer) give no owner: nothing ties them to the session's action, and a tab
    a person opens has the active tab as opener. On an attended device they stay the
    person's (tests/e2e/test_person_tabs.py)."""
    a = attended.session("agent-a")
    attended.book.opened(a, DEV, 1)
    for n, method in enumerate(("page.snapshot", "page.wait", "page.find")):
        attended.gate.answered(a, method, DEV, {
            "tabId": 1, "newTabs": [{"tabId": 20 + n, "openerTabId": 1}]})
        assert attended.book.owner(DEV, 20 + n) is None
        with pytest.raises(E.TabClaimed) as info:
            attended.book.check(a, DEV, 20 + n, claim=True, attended=True)
        assert info.value.person is True


def test_answered_recovered_from_crash_moves_the_tab(world: World) -> None:
    a = world.session("agent-a")
    world.book.check(a, DEV, 5, claim=True, attended=False)
    world.gate.answered(a, "page.navigate", DEV,
                        {"tabId": 15, "recoveredFromCrash": True, "crashedTabId": 5})
    assert a.tabs == {(DEV, 15)} and a.current == {DEV: 15}
    assert world.book.owner(DEV, 5) is None


# -- serve ------------------------------------------------------------------------------


async def serve(world: World, peer: str | None, method: str, **params: Any) -> dict[str, Any]:
    return await world.gate.serve(peer, method, validate_params(method, params))


async def test_serve_open_answers_secret_and_heartbeat(world: World) -> None:
    opened = await serve(world, "p1", "session.open", label="agent-a", leaseMs=60_000)
    assert opened["label"] == "agent-a" and opened["leaseMs"] == 60_000
    assert opened["heartbeatMs"] == 20_000 and opened["resumed"] is False
    assert opened["secret"] and opened["tabs"] == []
    listed = await serve(world, "p1", "sessions.list")
    assert listed["sessions"][0]["yours"] is True
    assert opened["secret"] not in str(listed)
    with pytest.raises(E.BadRequest):
        await serve(world, None, "sessions.list")


async def test_serve_claim_checks_the_tab_exists_and_selects_it(attended: World) -> None:
    attended.ext.show(4, active=4)
    with pytest.raises(E.BrowserTabClosed):
        await serve(attended, "p1", "tabs.claim", tabId=5)
    claimed = await serve(attended, "p1", "tabs.claim", tabId=4)
    session = attended.book.for_peer("p1")
    assert claimed == {"label": session.label, "person": True,
                       "tabs": [{"device": DEV, "tabId": 4}]}
    assert session.current == {DEV: 4}


async def test_serve_handoff_and_release(world: World) -> None:
    await serve(world, "p1", "session.open", label="agent-a")
    await serve(world, "p2", "session.open", label="agent-b")
    with pytest.raises(E.BadRequest):
        await serve(world, "p1", "session.handoff", to="agent-b")  # no current tab
    a = world.book.for_peer("p1")
    world.book.check(a, DEV, 1, claim=True, attended=False)
    world.book.check(a, DEV, 2, claim=True, attended=False)
    handed = await serve(world, "p1", "session.handoff", to="agent-b")
    assert handed == {"label": "agent-a", "to": "agent-b",
                      "tabs": [{"device": DEV, "tabId": 1}]}
    released = await serve(world, "p1", "session.release")
    assert released == {"label": "agent-a", "tabs": [{"device": DEV, "tabId": 2}]}


async def test_serve_stop_withdraws_and_releases(world: World) -> None:
    await serve(world, "p1", "session.open", label="agent-a")
    a = world.book.for_peer("p1")
    world.book.check(a, DEV, 1, claim=True, attended=False)
    withdrawn: list[tuple[str, str]] = []

    def withdraw(peer: str, reason: str) -> tuple[int, int]:
        withdrawn.append((peer, reason))
        return 2, 1

    world.gate.withdraw = withdraw
    with pytest.raises(E.Unauthorized):  # a peer session may not (tests/bridge/test_authority.py)
        await serve(world, "p2", "session.stop", label="agent-a")
    world.gate.operator = lambda peer: peer == "p2"
    stopped = await serve(world, "p2", "session.stop", label="agent-a")
    assert stopped == {"label": "agent-a", "stopped": True, "cancelled": 2, "running": 1,
                       "released": [{"device": DEV, "tabId": 1}]}
    assert withdrawn == [("p1", "session 'agent-a' was stopped by the operator (session "
                                "'client-p2')")]
    with pytest.raises(E.SessionStopped) as info:
        await serve(world, "p1", "session.renew")
    assert info.value.by == "the operator (session 'client-p2')"


@pytest.mark.parametrize("devices", ["two", "none"])
async def test_serve_release_of_every_tab_needs_no_device(world: World, devices: str) -> None:
    """``session.release {}`` frees the session's tabs on every device: it must work with
    several devices connected (no device to pick) and with none left."""
    await serve(world, "p1", "session.open", label="agent-a")
    a = world.book.for_peer("p1")
    world.book.check(a, DEV, 1, claim=True, attended=False)
    world.book.check(a, "dev2", 2, claim=True, attended=False)
    if devices == "two":
        world.policy.join("ext-2", "extension", "dev2")
        with pytest.raises(E.BadRequest):  # one tab needs its device named
            await serve(world, "p1", "session.release", tabId=1)
        one = await serve(world, "p1", "session.release", device="dev2")
        assert one["tabs"] == [{"device": "dev2", "tabId": 2}]
    else:
        world.policy.leave(EXT)
    released = await serve(world, "p1", "session.release")
    expected = [{"device": DEV, "tabId": 1}]
    if devices == "none":
        expected.append({"device": "dev2", "tabId": 2})
    assert released == {"label": "agent-a", "tabs": expected}
    assert a.tabs == set()


def test_an_action_never_reports_or_takes_another_sessions_new_tab(world: World) -> None:
    """issue 32 item 7: a tab another session owns (its tabs.new answered first) is left
    out of the acting session's newTabs and stays the other's; while another session's
    request that may open a tab is in progress, a tab that nothing ties to the acting
    tab (no opener, or another opener) is left out too, and one the acting tab opened is
    kept (before: both were reported and booked for the acting session, and MCP followed
    them: 'Opened tab 19 — now current' for another session's tab)."""
    a = world.session("agent-a")
    b = world.session("agent-b")
    world.book.check(a, DEV, 1, claim=True, attended=False)
    world.book.opened(b, DEV, 30)  # B's tabs.new answered
    result = {"tabId": 1, "newTabs": [{"tabId": 30}, {"tabId": 31, "openerTabId": 1}]}
    world.gate.answered(a, "page.act", DEV, result)
    assert [t["tabId"] for t in result["newTabs"]] == [31]
    assert world.book.owner(DEV, 30) is b and world.book.owner(DEV, 31) is a
    # B's tabs.new still in progress: its tab has no owner yet and no opener.
    assert world.gate.may_open(b, DEV, "tabs.new")
    result = {"tabId": 1, "newTabs": [{"tabId": 40}, {"tabId": 41, "openerTabId": 5},
                                      {"tabId": 42, "openerTabId": 1}]}
    world.gate.answered(a, "page.act", DEV, result)
    assert [t["tabId"] for t in result["newTabs"]] == [42]
    assert world.book.owner(DEV, 40) is None and world.book.owner(DEV, 41) is None
    world.gate.opened_done(b, DEV)
    # Nothing of another session in progress: the acting session's as before.
    assert world.gate.may_open(a, DEV, "page.act")  # its own request does not count
    result = {"tabId": 1, "newTabs": [{"tabId": 50}]}
    world.gate.answered(a, "page.act", DEV, result)
    assert [t["tabId"] for t in result["newTabs"]] == [50]
    world.gate.opened_done(a, DEV)
    assert not world.gate.may_open(a, DEV, "page.snapshot")
