"""SessionBook (bridge/sessions.py): who owns which tab, leases, stop, handoff, views.

Pure tests: no I/O, a fake monotonic clock (seconds) passed as ``SessionBook(clock=...)``.
The rules tested are the ones docs/sessions.md states.
"""

from __future__ import annotations

import json

import pytest

from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.sessions import DEFAULT_LEASE_MS, STOPPED_KEEP, Session, SessionBook

DEV = "dev1"


class Clock:
    """A monotonic clock the test moves by hand (seconds)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def book(clock: Clock) -> SessionBook:
    return SessionBook(clock=clock)


def payload(err: E.TrustbridgeError) -> str:
    """The error as the wire carries it (to look for leaked secrets)."""
    return json.dumps(err.to_payload().model_dump(mode="json"))


def acted(book: SessionBook, session: Session, tab: int, *, attended: bool = False) -> None:
    """``session`` acts on ``tab`` (a claiming check)."""
    book.check(session, DEV, tab, claim=True, attended=attended)


# -- open / resume ----------------------------------------------------------------------


def test_open_gives_a_new_session_with_a_secret_and_lease(book: SessionBook,
                                                          clock: Clock) -> None:
    session, resumed = book.open("p1", "agent-a", lease_ms=30_000)
    assert not resumed
    assert session.label == "agent-a" and session.peer == "p1"
    assert session.lease_s == 30.0 and session.expires_at == clock.now + 30.0
    assert len(session.secret) >= 24 and session.on_disconnect == "stop"
    assert book.for_peer("p1") is session and book.find("agent-a") is session


def test_resume_a_kept_session_with_its_secret(book: SessionBook, clock: Clock) -> None:
    session, _ = book.open("p1", "agent-a", on_disconnect="keep")
    acted(book, session, 7)
    assert book.disconnected("p1") is None  # kept, not stopped
    assert session.peer is None and not session.stopped
    clock.advance(10)
    again, resumed = book.open("p2", "agent-a", secret=session.secret)
    assert resumed and again is session
    assert session.peer == "p2" and session.tabs == {(DEV, 7)}
    assert session.current == {DEV: 7}
    assert session.expires_at == clock.now + session.lease_s  # the lease runs from now
    assert book.for_peer("p2") is session


def test_resume_with_a_wrong_or_missing_secret_is_refused(book: SessionBook) -> None:
    session, _ = book.open("p1", "agent-a", on_disconnect="keep")
    book.disconnected("p1")
    for secret in (None, "wrong", session.secret[:-1]):
        with pytest.raises(E.BadRequest) as info:
            book.open("p2", "agent-a", secret=secret)
        assert info.value.details == {"label": "agent-a"}
        assert "in use" in info.value.message
        assert session.secret not in payload(info.value)
    assert session.peer is None  # nothing attached it
    assert "p2" not in book._by_peer  # nor left a half-open session behind


def test_resume_of_a_session_attached_elsewhere_is_refused(book: SessionBook) -> None:
    session, _ = book.open("p1", "agent-a", on_disconnect="keep")
    with pytest.raises(E.BadRequest) as info:
        book.open("p2", "agent-a", secret=session.secret)
    assert "another connection" in info.value.message
    assert session.peer == "p1" and book.for_peer("p1") is session


def test_a_label_in_use_is_refused_without_a_secret(book: SessionBook) -> None:
    book.open("p1", "agent-a")
    with pytest.raises(E.BadRequest) as info:
        book.open("p2", "agent-a")
    assert info.value.details == {"label": "agent-a"}


def test_a_stopped_session_s_label_is_free_again(book: SessionBook) -> None:
    first, _ = book.open("p1", "agent-a")
    book.stop(first, "a test")
    second, resumed = book.open("p2", "agent-a")
    assert not resumed and second is not first and second.secret != first.secret


def test_a_second_open_on_a_connection_is_refused(book: SessionBook) -> None:
    book.open("p1", "agent-a")
    with pytest.raises(E.BadRequest) as info:
        book.open("p1", "agent-b")
    assert info.value.details == {"label": "agent-a"}
    assert book.find("agent-b") is None


def test_an_unused_implicit_session_gives_way_to_a_named_one(book: SessionBook) -> None:
    implicit = book.for_peer("p1")
    assert implicit.implicit and implicit.label == "client-p1"
    named, resumed = book.open("p1", "agent-a")
    assert not resumed and named is not implicit
    assert book.for_peer("p1") is named
    assert book.find("client-p1") is None
    assert implicit.stopped
    assert [row["label"] for row in book.listing(named)] == ["agent-a"]


def test_an_implicit_session_never_takes_a_named_session_s_label(book: SessionBook) -> None:
    """Peer ids are predictable (p1, p2…): a session.open may pick ``client-p2`` before
    connection p2 sends its first request. Both keep a label of their own."""
    named, _ = book.open("p1", "client-p2", on_disconnect="keep")
    other, _ = book.open("p3", "client-p2-2")
    implicit = book.for_peer("p2")
    assert implicit.label == "client-p2-3"
    assert book.find("client-p2") is named and book.find("client-p2-2") is other
    assert book.find("client-p2-3") is implicit
    assert book.for_peer("p4").label == "client-p4"
    labels = [row["label"] for row in book.listing(None)]
    assert len(labels) == len(set(labels)) == 4
    book.disconnected("p1")
    book.stop(implicit, "a test")  # ending it leaves the named session's label alone
    assert book.open("p5", "client-p2", secret=named.secret) == (named, True)


def test_an_implicit_session_that_owns_a_tab_does_not_give_way(book: SessionBook) -> None:
    implicit = book.for_peer("p1")
    acted(book, implicit, 3)
    with pytest.raises(E.BadRequest) as info:
        book.open("p1", "agent-a")
    assert info.value.details == {"label": "client-p1"}
    assert book.owner(DEV, 3) is implicit and book.for_peer("p1") is implicit


def test_an_implicit_session_with_work_in_flight_does_not_give_way(book: SessionBook) -> None:
    implicit = book.for_peer("p1")
    book.begin(implicit, "page.snapshot", DEV, None)
    with pytest.raises(E.BadRequest):
        book.open("p1", "agent-a")
    book.end(implicit, DEV, None)
    named, _ = book.open("p1", "agent-a")  # unused again once it answered
    assert book.for_peer("p1") is named


def test_open_sweeps_expired_sessions_first(book: SessionBook, clock: Clock) -> None:
    kept, _ = book.open("p1", "agent-a", lease_ms=5_000, on_disconnect="keep")
    book.disconnected("p1")
    clock.advance(5)
    fresh, resumed = book.open("p2", "agent-a")  # no secret needed: the old one expired
    assert not resumed and fresh is not kept
    assert kept.stopped_by == "its lease running out"


def test_an_implicit_session_lives_as_long_as_its_connection(
        book: SessionBook, clock: Clock) -> None:
    implicit = book.for_peer("p1")
    acted(book, implicit, 3)
    named, _ = book.open("p2", "agent-b", lease_ms=5_000)
    clock.advance(600)  # far past both leases, no request, no renew
    assert book.sweep() == [named]  # the named one had a lease to keep; it lapsed
    assert not implicit.stopped and book.for_peer("p1") is implicit
    assert book.owner(DEV, 3) is implicit
    assert book.disconnected("p1") is implicit and implicit.stopped


# -- for_peer / stop ----------------------------------------------------------------------


def test_for_peer_after_stop_raises_session_stopped_with_by(book: SessionBook) -> None:
    session, _ = book.open("p1", "agent-a")
    book.stop(session, "a person's Stop button")
    with pytest.raises(E.SessionStopped) as info:
        book.for_peer("p1")
    assert info.value.label == "agent-a" and info.value.by == "a person's Stop button"
    assert session.secret not in payload(info.value)
    with pytest.raises(E.SessionStopped):
        book.begin(session, "page.act", DEV, 1)  # the session object refuses too


def test_a_stopped_connection_never_gets_a_new_implicit_session(book: SessionBook) -> None:
    implicit = book.for_peer("p1")
    acted(book, implicit, 1)
    book.stop(implicit, "session 'boss'")
    with pytest.raises(E.SessionStopped) as info:
        book.for_peer("p1")
    assert info.value.by == "session 'boss'"
    assert book.find("client-p1") is None


def test_stopped_connections_are_remembered_up_to_a_bound(book: SessionBook) -> None:
    for i in range(STOPPED_KEEP + 5):
        book.stop(book.for_peer(f"p{i}"), "a test")
    assert len(book._stopped_peers) == STOPPED_KEEP
    with pytest.raises(E.SessionStopped):
        book.for_peer(f"p{STOPPED_KEEP + 4}")
    assert book.for_peer("p0").implicit  # the oldest was forgotten: a new session


def test_stop_releases_tabs_and_a_stopped_session_owns_nothing_after(
        book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    acted(book, a, 1)
    book.opened(a, DEV, 2)
    book.changed.clear()
    assert book.stop(a, "its own request") == [(DEV, 1), (DEV, 2)]
    assert a.stopped and a.stopped_by == "its own request"
    assert a.tabs == set() and a.current == {}
    assert book.owner(DEV, 1) is None and book.owner(DEV, 2) is None
    assert book.changed == {DEV}
    assert book.find("agent-a") is None
    # The answer of a request that was running when it stopped claims nothing.
    acted(book, a, 3)
    book.opened(a, DEV, 4)
    book.claim(a, DEV, 5)
    assert a.tabs == set() and a.current == {}
    assert book.owners(DEV) == []


def test_stop_of_a_stopped_session_releases_nothing(book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    acted(book, a, 1)
    book.stop(a, "first")
    assert book.stop(a, "second") == []


# -- disconnect ---------------------------------------------------------------------------


def test_disconnect_stops_an_on_disconnect_stop_session(book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    acted(book, a, 1)
    assert book.disconnected("p1") is a
    assert a.stopped_by == "its client disconnecting"
    assert book.owner(DEV, 1) is None and book.find("agent-a") is None
    # The peer id is gone: nothing remembers it as stopped (a reused id starts afresh).
    assert "p1" not in book._stopped_peers
    assert book.disconnected("p1") is None


def test_disconnect_keeps_an_on_disconnect_keep_session_until_its_lease(
        book: SessionBook, clock: Clock) -> None:
    a, _ = book.open("p1", "agent-a", lease_ms=10_000, on_disconnect="keep")
    acted(book, a, 1)
    assert book.disconnected("p1") is None
    assert not a.stopped and book.owner(DEV, 1) is a
    b = book.for_peer("p2")
    with pytest.raises(E.TabClaimed) as info:
        acted(book, b, 1)
    assert info.value.owner == "agent-a"
    clock.advance(10)
    assert book.sweep() == [a]
    assert book.owner(DEV, 1) is None
    acted(book, b, 1)
    assert book.owner(DEV, 1) is b


def test_disconnect_forgets_a_stopped_peer(book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    book.stop(a, "a test")
    assert book.disconnected("p1") is None
    assert "p1" not in book._stopped_peers


# -- check / claim ------------------------------------------------------------------------


def test_check_lets_the_owner_through_and_refuses_others(book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    b, _ = book.open("p2", "agent-b")
    acted(book, a, 5)
    book.check(a, DEV, 5, claim=True, attended=True)  # its own tab, attended or not
    book.check(a, DEV, 5, claim=False, attended=False)
    for claim in (True, False):
        with pytest.raises(E.TabClaimed) as info:
            book.check(b, DEV, 5, claim=claim, attended=False)
        err = info.value
        assert err.tabId == 5 and err.owner == "agent-a" and err.person is None
        assert "agent-a" in err.message
        wire = payload(err)
        assert a.secret not in wire and b.secret not in wire
    assert book.owner(DEV, 5) is a and b.tabs == set()


def test_claiming_a_free_tab_sets_current_only_when_none(book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    book.changed.clear()
    acted(book, a, 5)
    assert a.tabs == {(DEV, 5)} and a.current == {DEV: 5} and book.changed == {DEV}
    acted(book, a, 6)
    assert a.tabs == {(DEV, 5), (DEV, 6)} and a.current == {DEV: 5}
    book.check(a, "dev2", 9, claim=True, attended=False)
    assert a.current == {DEV: 5, "dev2": 9}


def test_a_read_of_a_free_tab_claims_nothing(book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    book.check(a, DEV, 5, claim=False, attended=True)
    book.check(a, DEV, 6, claim=False, attended=False)
    assert a.tabs == set() and a.current == {} and book.owners(DEV) == []


def test_a_person_s_tab_on_an_attended_device_needs_tabs_claim(book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    with pytest.raises(E.TabClaimed) as info:
        acted(book, a, 5, attended=True)
    err = info.value
    assert err.tabId == 5 and err.person is True and err.owner is None
    assert "tabs.claim" in err.advice
    assert a.tabs == set() and book.owner(DEV, 5) is None
    assert book.claim(a, DEV, 5, attended=True) is True
    assert book.owner(DEV, 5) is a
    acted(book, a, 5, attended=True)  # its own now


def test_a_tab_a_session_opened_is_no_person_s(book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    b, _ = book.open("p2", "agent-b")
    book.opened(a, DEV, 5)
    book.release(a, DEV, 5)
    acted(book, b, 5, attended=True)  # free and no person's: b may take it
    assert book.owner(DEV, 5) is b
    book.release(b, None, None)
    assert book.claim(a, DEV, 5, attended=True) is False


def test_claim_on_an_unattended_device_is_no_person_s_tab(book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    assert book.claim(a, DEV, 5, attended=False) is False
    assert book.owner(DEV, 5) is a


def test_claim_of_another_session_s_tab_is_refused(book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    b, _ = book.open("p2", "agent-b")
    book.claim(a, DEV, 5)
    with pytest.raises(E.TabClaimed) as info:
        book.claim(b, DEV, 5)
    assert info.value.owner == "agent-a" and info.value.tabId == 5
    assert a.secret not in payload(info.value)
    assert book.claim(a, DEV, 5) is True  # claiming one's own again is fine


# -- opened / closed / replaced -----------------------------------------------------------


def test_a_tab_a_sessions_action_opened_is_its_and_no_persons(book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    b, _ = book.open("p2", "agent-b")
    book.opened(a, DEV, 1)
    book.opened(a, DEV, 2)  # its click's answer named tab 2 (newTabs)
    assert book.owner(DEV, 2) is a and (DEV, 2) in a.tabs
    assert a.current == {}  # opened() alone does not select (tabs.new's answer does)
    # A tab no session's action opened belongs to nobody, and on an attended device it
    # is a person's, whatever its opener (Chromium names the active tab as the opener of
    # a tab a person opens with Ctrl+T).
    with pytest.raises(E.TabClaimed) as info:
        acted(book, b, 3, attended=True)
    assert info.value.person is True
    acted(book, b, 3)  # unattended: a free tab is anyone's
    assert book.owner(DEV, 3) is b


def test_opened_never_takes_a_tab_another_session_owns(book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    b, _ = book.open("p2", "agent-b")
    book.opened(a, DEV, 1)
    book.opened(b, DEV, 1)
    assert book.owner(DEV, 1) is a and b.tabs == set()


def test_closed_frees_the_tab_and_forgets_it_was_made(book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    book.opened(a, DEV, 1)
    book.select(a, DEV, 1)
    book.changed.clear()
    book.closed(DEV, 1)
    assert book.owner(DEV, 1) is None and a.tabs == set() and a.current == {}
    assert book.changed == {DEV}
    # A new tab that reuses the id is a person's again on an attended device.
    with pytest.raises(E.TabClaimed):
        acted(book, a, 1, attended=True)
    book.closed(DEV, 42)  # an unknown tab: nothing happens


def test_replaced_moves_ownership_and_current(book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    book.opened(a, DEV, 1)
    book.select(a, DEV, 1)
    book.replaced(DEV, 1, 11)
    assert a.tabs == {(DEV, 11)} and a.current == {DEV: 11}
    assert book.owner(DEV, 1) is None and book.owner(DEV, 11) is a
    b, _ = book.open("p2", "agent-b")
    book.release(a, None, None)
    acted(book, b, 11, attended=True)  # the replacement is no person's tab either


def test_replaced_keeps_another_current_tab(book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    acted(book, a, 1)
    acted(book, a, 2)
    assert a.current == {DEV: 1}
    book.replaced(DEV, 2, 22)
    assert a.tabs == {(DEV, 1), (DEV, 22)} and a.current == {DEV: 1}


def test_replaced_of_a_person_s_tab_stays_a_person_s(book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    book.replaced(DEV, 1, 11)
    assert book.owner(DEV, 11) is None
    with pytest.raises(E.TabClaimed) as info:
        acted(book, a, 11, attended=True)
    assert info.value.person is True


# -- release / handoff --------------------------------------------------------------------


def test_release_one_tab(book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    acted(book, a, 1)
    acted(book, a, 2)
    assert book.release(a, DEV, 1) == [(DEV, 1)]
    assert a.tabs == {(DEV, 2)} and a.current == {}  # the current tab was released
    assert book.owner(DEV, 1) is None
    with pytest.raises(E.BadRequest) as info:
        book.release(a, DEV, 1)
    assert info.value.details == {"tabId": 1}
    with pytest.raises(E.BadRequest):
        book.release(a, None, 2)  # a tab needs its device


def test_release_all_or_all_of_one_device(book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    for device, tab in ((DEV, 2), (DEV, 1), ("dev2", 3)):
        book.check(a, device, tab, claim=True, attended=False)
    assert book.release(a, "dev2", None) == [("dev2", 3)]
    assert book.release(a, None, None) == [(DEV, 1), (DEV, 2)]
    assert a.tabs == set() and a.current == {} and book.owners(DEV) == []
    assert book.release(a, None, None) == []


def test_handoff_moves_the_tab_and_sets_the_receiver_s_current(book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    b, _ = book.open("p2", "agent-b")
    acted(book, a, 1)
    assert book.handoff(a, DEV, 1, "agent-b") is b
    assert book.owner(DEV, 1) is b and a.tabs == set() and a.current == {}
    assert b.current == {DEV: 1}
    acted(book, b, 2)
    book.check(b, DEV, 2, claim=True, attended=False)
    assert b.current == {DEV: 1}
    # A receiver with a current tab keeps it.
    acted(book, a, 3)
    book.handoff(a, DEV, 3, "agent-b")
    assert b.current == {DEV: 1} and b.tabs == {(DEV, 1), (DEV, 2), (DEV, 3)}
    with pytest.raises(E.TabClaimed):
        acted(book, a, 1)


@pytest.mark.parametrize("queued_on", ["tab", "unknown tab", "both"])
def test_handoff_with_work_in_flight_is_tab_busy(book: SessionBook, queued_on: str) -> None:
    a, _ = book.open("p1", "agent-a")
    book.open("p2", "agent-b")
    acted(book, a, 1)
    if queued_on in ("tab", "both"):
        book.begin(a, "page.act", DEV, 1)
        book.begin(a, "page.act", DEV, 1)
    if queued_on in ("unknown tab", "both"):
        book.begin(a, "page.act", DEV, None)  # may run on tab 1
    book.begin(a, "page.act", DEV, 2)  # another tab does not count
    book.begin(a, "page.act", "dev2", None)  # nor another device
    expected = {"tab": 2, "unknown tab": 1, "both": 3}[queued_on]
    with pytest.raises(E.TabBusy) as info:
        book.handoff(a, DEV, 1, "agent-b")
    assert info.value.tabId == 1 and info.value.inFlight == expected
    assert book.owner(DEV, 1) is a
    if queued_on in ("tab", "both"):
        book.end(a, DEV, 1)
        book.end(a, DEV, 1)
    if queued_on in ("unknown tab", "both"):
        book.end(a, DEV, None)
    book.handoff(a, DEV, 1, "agent-b")  # the other tab's and device's work does not block
    assert book.owner(DEV, 1).label == "agent-b"  # type: ignore[union-attr]


def test_handoff_to_itself_an_unknown_label_or_of_a_tab_not_owned(book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    b, _ = book.open("p2", "agent-b")
    acted(book, a, 1)
    acted(book, b, 2)
    with pytest.raises(E.BadRequest) as info:
        book.handoff(a, DEV, 1, "agent-a")
    assert info.value.details == {"to": "agent-a"}
    with pytest.raises(E.BadRequest) as info:
        book.handoff(a, DEV, 1, "nobody")
    assert info.value.details == {"label": "nobody"}
    with pytest.raises(E.BadRequest) as info:
        book.handoff(a, DEV, 2, "agent-b")
    assert info.value.details == {"tabId": 2}
    assert book.owner(DEV, 1) is a and book.owner(DEV, 2) is b


def test_handoff_to_an_expired_session_is_refused(book: SessionBook, clock: Clock) -> None:
    a, _ = book.open("p1", "agent-a", lease_ms=60_000)
    book.open("p2", "agent-b", lease_ms=5_000)
    acted(book, a, 1)
    clock.advance(5)
    with pytest.raises(E.BadRequest):
        book.handoff(a, DEV, 1, "agent-b")
    assert book.owner(DEV, 1) is a


# -- leases -------------------------------------------------------------------------------


def test_sweep_expires_only_idle_sessions_past_their_lease(book: SessionBook,
                                                           clock: Clock) -> None:
    idle, _ = book.open("p1", "idle", lease_ms=5_000)
    busy, _ = book.open("p2", "busy", lease_ms=5_000)
    young, _ = book.open("p3", "young", lease_ms=60_000)
    acted(book, idle, 1)
    acted(book, busy, 2)
    book.begin(busy, "page.wait", DEV, 2)
    clock.advance(4.999)
    assert book.sweep() == []
    clock.advance(0.001)  # exactly at the lease: expired
    assert book.sweep() == [idle]
    assert idle.stopped_by == "its lease running out" and book.owner(DEV, 1) is None
    assert not busy.stopped and book.owner(DEV, 2) is busy
    with pytest.raises(E.SessionStopped) as info:
        book.for_peer("p1")
    assert info.value.by == "its lease running out"
    clock.advance(100)
    assert book.sweep() == [young]  # busy is still busy
    book.end(busy, DEV, 2)  # its answer renews the lease
    assert book.sweep() == []
    clock.advance(5)
    assert book.sweep() == [busy]


def test_requests_and_renew_restart_the_lease(book: SessionBook, clock: Clock) -> None:
    a, _ = book.open("p1", "agent-a", lease_ms=5_000)
    clock.advance(4)
    book.renew(a)
    clock.advance(4)
    book.begin(a, "page.snapshot", DEV, None)
    book.end(a, DEV, None)
    clock.advance(4)
    assert book.sweep() == []
    assert a.last_method == "page.snapshot"  # renew is no action
    clock.advance(1)
    assert book.sweep() == [a]


def test_begin_and_end_count_in_flight_per_tab(book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    book.begin(a, "page.act", DEV, 1)
    book.begin(a, "page.act", DEV, 1)
    book.begin(a, "devices.list", None, None)
    assert a.in_flight == {(DEV, 1): 2, ("", None): 1} and a.busy() == 3
    book.end(a, DEV, 1)
    book.end(a, None, None)
    assert a.in_flight == {(DEV, 1): 1}
    book.end(a, DEV, 1)
    assert a.in_flight == {} and a.busy() == 0


def test_end_after_stop_does_not_renew(book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    book.begin(a, "page.act", DEV, 1)
    book.stop(a, "a test")
    expires = a.expires_at
    book.end(a, DEV, 1)
    assert a.busy() == 0 and a.expires_at == expires


def test_listing_never_includes_secrets_and_computes_times(book: SessionBook,
                                                           clock: Clock) -> None:
    a, _ = book.open("p1", "agent-b", lease_ms=10_000)
    b, _ = book.open("p2", "agent-a", lease_ms=20_000, on_disconnect="keep")
    acted(book, a, 2)
    book.check(a, "dev0", 1, claim=True, attended=False)
    clock.advance(1.5)
    book.begin(b, "page.act", DEV, 1)
    clock.advance(2.25)
    rows = book.listing(a)
    assert [r["label"] for r in rows] == ["agent-a", "agent-b"]  # sorted by label
    ra, rb = rows[1], rows[0]
    assert ra == {"label": "agent-b", "tabs": [{"device": "dev0", "tabId": 1},
                                               {"device": DEV, "tabId": 2}],
                  "connected": True, "onDisconnect": "stop", "leaseMs": 10_000,
                  "expiresInMs": 6_250, "lastAction": None, "lastActionAgoMs": None,
                  "inFlight": 0, "yours": True}
    assert rb["expiresInMs"] is None and rb["inFlight"] == 1  # busy: no expiry
    assert rb["lastAction"] == "page.act" and rb["lastActionAgoMs"] == 2_250
    assert rb["yours"] is False and rb["onDisconnect"] == "keep"
    text = json.dumps(rows)
    assert a.secret not in text and b.secret not in text
    assert all("secret" not in row for row in rows)
    book.disconnected("p2")
    assert book.listing(None)[0]["connected"] is False
    assert all(r["yours"] is False for r in book.listing(None))


def test_listing_sweeps_first(book: SessionBook, clock: Clock) -> None:
    book.open("p1", "agent-a", lease_ms=5_000)
    clock.advance(5)
    assert book.listing(None) == []


def test_owners_and_tab_keys(book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    b, _ = book.open("p2", "agent-b")
    acted(book, b, 9)
    acted(book, a, 3)
    book.check(a, "dev2", 1, claim=True, attended=False)
    assert book.owners(DEV) == [{"tabId": 3, "label": "agent-a"},
                                {"tabId": 9, "label": "agent-b"}]
    assert book.tab_keys([(DEV, 3)]) == [{"device": DEV, "tabId": 3}]


def test_annotate_marks_owner_mine_and_person(book: SessionBook) -> None:
    a, _ = book.open("p1", "agent-a")
    b, _ = book.open("p2", "agent-b")
    book.opened(a, DEV, 1)
    book.claim(b, DEV, 2)
    book.opened(a, DEV, 4)  # made by a session, now free
    book.release(a, DEV, 4)
    rows = [{"tabId": 1}, {"tabId": 2}, {"tabId": 3}, {"tabId": 4}, {"tabId": "x"}, {}]
    book.annotate(a, DEV, rows, attended=True)
    assert rows == [{"tabId": 1, "owner": "agent-a", "mine": True},
                    {"tabId": 2, "owner": "agent-b", "mine": False},
                    {"tabId": 3, "person": True},
                    {"tabId": 4}, {"tabId": "x"}, {}]
    rows = [{"tabId": 1}, {"tabId": 3}]
    book.annotate(None, DEV, rows, attended=False)
    assert rows == [{"tabId": 1, "owner": "agent-a", "mine": False}, {"tabId": 3}]
    assert a.secret not in json.dumps(rows)


def test_annotate_marks_the_asking_sessions_current_tab(book: SessionBook) -> None:
    """Every row says whether it is the asker's current tab once it has one there (MCP's
    browser_tabs marks that one "(current)", not the browser's active tab); a session
    without one gets no ``current`` field."""
    a, _ = book.open("p1", "agent-a")
    b, _ = book.open("p2", "agent-b")
    book.opened(a, DEV, 1)
    book.select(a, DEV, 1)
    book.opened(b, DEV, 2)
    book.select(b, DEV, 2)
    rows = [{"tabId": 1, "active": False}, {"tabId": 2, "active": True}]
    book.annotate(a, DEV, rows, attended=False)
    assert [r["current"] for r in rows] == [True, False]
    rows = [{"tabId": 1}, {"tabId": 2}]
    book.annotate(b, DEV, rows, attended=False)
    assert [r["current"] for r in rows] == [False, True]
    c, _ = book.open("p3", "agent-c")
    rows = [{"tabId": 1}]
    book.annotate(c, DEV, rows, attended=False)
    assert "current" not in rows[0]
    rows = [{"tabId": 1}, {"tabId": 2}]  # none of its own: the tab last seen active
    book.annotate(c, DEV, rows, attended=False, fallback=2)
    assert [r["current"] for r in rows] == [False, True]


def test_default_lease(book: SessionBook, clock: Clock) -> None:
    implicit = book.for_peer("p1")
    assert implicit.lease_s == DEFAULT_LEASE_MS / 1000 == 120
    assert implicit.on_disconnect == "stop"
    assert book.disconnected("p1") is implicit and implicit.stopped


def test_a_replaced_browser_leaves_no_owner_of_its_tab_ids(book: SessionBook) -> None:
    """A browser started again may give a new tab an old tab's id (Firefox counts from 1):
    after browser_replaced, the session that opens it owns it, not the one that held the
    id in the dead browser (issue 32 soak: TAB_CLAIMED on every call of the opener)."""
    a, _ = book.open("p1", "agent-a")
    b, _ = book.open("p2", "agent-b")
    book.opened(b, DEV, 3)
    book.select(b, DEV, 3)
    acted(book, a, 1)
    book.opened(a, "other", 3)
    freed = book.browser_replaced(DEV)
    assert sorted(freed) == [(DEV, 1), (DEV, 3)]
    assert b.tabs == set() and b.current == {} and a.tabs == {("other", 3)}
    book.opened(a, DEV, 3)  # the new browser's tab 3
    assert book.owner(DEV, 3) is a
    with pytest.raises(E.TabClaimed):
        book.check(b, DEV, 3, claim=True, attended=False)
