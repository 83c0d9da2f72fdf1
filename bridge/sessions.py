"""Sessions: each agent owns the tabs it works in (docs/sessions.md, issue 16).

Pure bookkeeping, no I/O (like bridge/routing.py): the executor asks :class:`SessionBook`
whether a request may touch a tab, and the server tells it who connected and who left.

The model:

- A **session** belongs to one client connection at a time. ``session.open`` names it
  (its label is what others see); a connection that never opens one gets an implicit
  session at its first request (label ``client-<peer id>``). Every request belongs to
  its connection's session.
- **Lease**: a session lives ``leaseMs`` (default 120 s) after its last request or
  ``session.renew``; clients renew every ``leaseMs / 3`` (40 s by default) while idle. A
  request in flight keeps it alive. A session whose connection closes is stopped at once
  (``onDisconnect: "stop"``, the default: MCP server, SDK) or waits for its lease to run
  out, resumable by label and secret (``"keep"``: the CLI's ``--session NAME``). An
  implicit session has no lease while its connection is open: it ends with it.
- **Ownership**: a session claims the tabs it creates (``tabs.new``), the tabs its input
  opened (the action's answer names them in ``newTabs``: never a tab by its opener
  alone), and a free tab it first acts on (input, navigation, select, evaluate…).
  Another session's action on a claimed tab is TAB_CLAIMED, naming the owner's label;
  nothing reaches the page. A read (snapshot, find, wait, screenshot…) is allowed on any
  tab and claims nothing: it dispatches nothing, and refs and diff baselines stay the
  owner's (gate: bridge/session_gate.py READS).
- **A person's tabs**: on an attended device (a headed browser, or a person's own browser
  with the paired extension), a tab no session opened is a person's; sessions never claim it
  by acting on it (TAB_CLAIMED with ``person: true``), only with an explicit
  ``tabs.claim``.
- ``session.release`` frees tabs; ``session.handoff {to}`` gives a tab to another live
  session, refused with TAB_BUSY while the giver has requests on it; ``session.stop``
  (also a person's Stop button, lease expiry and disconnect) cancels the session's
  queued requests (the server withdraws them), lets a running one finish, releases its
  tabs (never closing them) and ends it: its later requests are SESSION_STOPPED. Who may
  stop another session (an operator, a person, the holder of its secret) is the gate's
  rule (bridge/session_gate.py); the book bars the stopper from the tabs its stop
  released (:meth:`SessionBook.stop`).
- Per session: the current tab per device (a request without ``tabId`` goes there, not
  to whatever tab the browser has active) and the diff baseline key of snapshots.
"""

from __future__ import annotations

import secrets
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from .protocol import errors as E

__all__ = ["DEFAULT_LEASE_MS", "Session", "SessionBook", "TabKey"]

DEFAULT_LEASE_MS = 120_000
"""A session's lease when ``session.open`` names none, ms (docs/sessions.md)."""
HEARTBEAT_SHARE = 3
"""Clients renew an idle session every lease / HEARTBEAT_SHARE (40 s for the default)."""
STOPPED_KEEP = 64
"""Stopped sessions remembered per book, so their connections' later requests are told
SESSION_STOPPED (and by whom) rather than silently getting a new session."""

TabKey = tuple[str, int]
"""(device, tab id)."""


@dataclass(eq=False)
class Session:
    """One session (see the module docstring). Times are monotonic seconds."""

    id: str
    label: str
    secret: str
    lease_s: float
    on_disconnect: Literal["stop", "keep"]
    peer: str | None
    expires_at: float
    implicit: bool = False
    tabs: set[TabKey] = field(default_factory=set)
    current: dict[str, int] = field(default_factory=dict)
    """Device → the tab a request without ``tabId`` addresses."""
    in_flight: Counter[TabKey | tuple[str, None]] = field(default_factory=Counter)
    last_method: str | None = None
    last_at: float | None = None
    stopped_by: str | None = None

    @property
    def stopped(self) -> bool:
        return self.stopped_by is not None

    def busy(self) -> int:
        """Requests of this session queued or running."""
        return sum(self.in_flight.values())


class SessionBook:
    """Every session of one bridge, the tabs they own and which tabs sessions opened.

    Args:
        clock: monotonic seconds (tests pass a fake).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._sessions: dict[str, Session] = {}
        self._by_label: dict[str, Session] = {}
        self._by_peer: dict[str, Session] = {}
        self._stopped_peers: dict[str, Session] = {}
        self._owner: dict[TabKey, Session] = {}
        self._made: set[TabKey] = set()
        """Tabs a session's own action opened (``tabs.new``, a click's ``newTabs``): never
        a person's."""
        self._barred: dict[TabKey, Session] = {}
        """Tab → the session that stopped its owner: it never takes (or reads what may
        show typed content of) the tabs its stop released (docs/security.md)."""
        self.on_end: Callable[[Session], None] = lambda _session: None
        """Called once a session ends, however (stop, disconnect, lease): the bridge ends
        its hand-offs to a person there (bridge/handover.py)."""
        self._ids = 0
        self.changed: set[str] = set()
        """Devices whose tab owners changed since the executor last told their extension."""

    # -- lifecycle --------------------------------------------------------------------

    def open(self, peer: str, label: str, lease_ms: int = DEFAULT_LEASE_MS,
             on_disconnect: Literal["stop", "keep"] = "stop",
             secret: str | None = None) -> tuple[Session, bool]:
        """``session.open`` on connection ``peer``: a new session, or the kept one of
        ``label`` resumed with its ``secret``.

        Returns:
            (the session, whether it was resumed).

        Raises:
            BadRequest: the connection has a session already (one opened, or the implicit
                one it used); the label belongs to a live session and ``secret`` does not
                match it (or it is attached to another connection).
        """
        self.sweep()
        held = self._by_peer.get(peer)
        if held is not None and not (held.implicit and not held.tabs and not held.busy()):
            raise E.BadRequest(f"This connection already belongs to session {held.label!r}; "
                               "open another connection for another session.",
                               {"label": held.label})
        if held is not None:  # an unused implicit session gives way to the named one
            self._end(held, None)
        existing = self._by_label.get(label)
        if existing is not None:
            if secret is None or not secrets.compare_digest(secret, existing.secret):
                raise E.BadRequest(
                    f"Session label {label!r} is in use by a live session. Pick another "
                    "label, or resume that session with its secret.", {"label": label})
            if existing.peer is not None:
                raise E.BadRequest(f"Session {label!r} is attached to another connection.",
                                   {"label": label})
            existing.peer = peer
            self._by_peer[peer] = existing
            self._touch(existing, None)  # a resume is no action (sessions list shows actions)
            return existing, True
        self._ids += 1
        session = Session(id=f"s{self._ids}", label=label, secret=secrets.token_urlsafe(24),
                          lease_s=lease_ms / 1000, on_disconnect=on_disconnect, peer=peer,
                          expires_at=self.clock() + lease_ms / 1000)
        self._add(session)
        return session, False

    def for_peer(self, peer: str) -> Session:
        """The session of connection ``peer``'s request: its own, or a new implicit one.

        Raises:
            SessionStopped: the connection's session was stopped; nothing runs.
        """
        session = self._by_peer.get(peer)
        if session is not None:
            return session
        stopped = self._stopped_peers.get(peer)
        if stopped is not None:
            raise self.stopped_error(stopped)
        label, n = f"client-{peer}", 1
        while label in self._by_label:  # a session.open may have picked that label
            n += 1
            label = f"client-{peer}-{n}"
        self._ids += 1
        session = Session(id=f"s{self._ids}", label=label,
                          secret=secrets.token_urlsafe(24), lease_s=DEFAULT_LEASE_MS / 1000,
                          on_disconnect="stop", peer=peer,
                          expires_at=self.clock() + DEFAULT_LEASE_MS / 1000, implicit=True)
        self._add(session)
        return session

    def _add(self, session: Session) -> None:
        self._sessions[session.id] = session
        self._by_label[session.label] = session
        if session.peer is not None:
            self._by_peer[session.peer] = session

    def find(self, label: str) -> Session | None:
        """The live session labelled ``label``, or None."""
        return self._by_label.get(label)

    def by_label(self, label: str) -> Session:
        """The live session labelled ``label``.

        Raises:
            BadRequest: none is live.
        """
        self.sweep()
        session = self._by_label.get(label)
        if session is None:
            raise E.BadRequest(f"No live session is labelled {label!r} (sessions.list "
                               "lists them).", {"label": label})
        return session

    def renew(self, session: Session) -> None:
        """``session.renew``: the lease runs from now."""
        self._touch(session, None)

    def _touch(self, session: Session, method: str | None) -> None:
        session.expires_at = self.clock() + session.lease_s
        if method is not None:
            session.last_method, session.last_at = method, self.clock()

    def disconnected(self, peer: str) -> Session | None:
        """Connection ``peer`` closed: its session stops (``onDisconnect: stop``, returned
        so the caller can cancel what it had queued) or waits for a resume (``keep``)."""
        self._stopped_peers.pop(peer, None)
        session = self._by_peer.pop(peer, None)
        if session is None:
            return None
        session.peer = None
        if session.on_disconnect == "keep":
            return None
        self._end(session, "its client disconnecting")
        return session

    def stop(self, session: Session, by: str, stopper: Session | None = None) -> list[TabKey]:
        """Stop ``session`` (see the module docstring); returns the tabs it released.

        Args:
            stopper: the other session that stopped it (an operator's), if any: the
                released tabs stay closed to it (:meth:`check`, :meth:`claim` raise
                TabClaimed with ``stoppedBy``), so stopping is never a way to take them.
        """
        released = sorted(session.tabs)
        self._end(session, by)
        if stopper is not None and stopper is not session:
            for key in released:
                self._barred[key] = stopper
        return released

    def _end(self, session: Session, by: str | None) -> None:
        for key in list(session.tabs):
            self._free(key)
        session.current.clear()
        self._sessions.pop(session.id, None)
        if self._by_label.get(session.label) is session:
            del self._by_label[session.label]
        if session.peer is not None:
            self._by_peer.pop(session.peer, None)
            if by is not None:
                self._stopped_peers[session.peer] = session
                while len(self._stopped_peers) > STOPPED_KEEP:
                    self._stopped_peers.pop(next(iter(self._stopped_peers)))
        session.stopped_by = by or "its own client"
        self.on_end(session)

    def sweep(self) -> list[Session]:
        """Stop every session whose lease ran out with nothing in flight; returns them
        (their queued work is none: a queued request counts as in flight)."""
        now = self.clock()
        # An implicit session lives as long as its connection (docs/sessions.md): its
        # client never opened a session, so it has no heartbeat to keep a lease; a raw
        # client idle past 120 s was SESSION_STOPPED while still connected (seen in a
        # full benchmark run: the profile's client after B3-B5).
        expired = [s for s in self._sessions.values()
                   if s.expires_at <= now and not s.busy()
                   and not (s.implicit and s.peer is not None)]
        for session in expired:
            self._end(session, "its lease running out")
        return expired

    @staticmethod
    def stopped_error(session: Session) -> E.SessionStopped:
        return E.SessionStopped(
            f"Session {session.label!r} was stopped by {session.stopped_by}; its queued "
            "work was cancelled and its tabs released. Nothing of this request was sent.",
            label=session.label, by=session.stopped_by)

    # -- requests ---------------------------------------------------------------------

    def begin(self, session: Session, method: str, device: str | None,
              tab: int | None) -> None:
        """A request of ``session`` arrived (it counts as in flight until :meth:`end`).

        Raises:
            SessionStopped: the session was stopped.
        """
        if session.stopped:
            raise self.stopped_error(session)
        self._touch(session, method)
        session.in_flight[(device or "", tab)] += 1

    def end(self, session: Session, device: str | None, tab: int | None) -> None:
        """The request :meth:`begin` counted has answered."""
        key = (device or "", tab)
        session.in_flight[key] -= 1
        if session.in_flight[key] <= 0:
            del session.in_flight[key]
        if not session.stopped:
            self._touch(session, None)

    def owner(self, device: str, tab: int) -> Session | None:
        """The session that owns the tab (None: free)."""
        return self._owner.get((device, tab))

    def check(self, session: Session, device: str, tab: int, *, claim: bool,
              attended: bool, reveal: bool = False) -> None:
        """May ``session`` use the tab? Claims a free tab when ``claim`` (an action); a
        tab so claimed becomes the session's current tab on the device if it has none.

        Args:
            claim: the request acts on the tab (input, navigation, selection, script):
                a free tab becomes the session's. A read (``claim`` False) of a free tab
                claims nothing.
            attended: a person may have opened tabs on this device (headed, or no
                driver): a tab no session opened is then a person's, never claimed here.
            reveal: a read that can show typed content (gate: bridge/session_gate.py
                REVEALING): refused on another session's tab like an action.

        Raises:
            TabClaimed: another session owns it (``owner`` its label), or it is a
                person's tab and the request would claim it (``person: true``), or this
                session stopped the tab's owner (``stoppedBy``: its own label).
        """
        key = (device, tab)
        owner = self._owner.get(key)
        if owner is session:
            return
        if owner is not None:
            raise E.TabClaimed(
                f"Tab {tab} belongs to session {owner.label!r}; nothing was sent to it.",
                tabId=tab, owner=owner.label)
        if claim or reveal:
            self._check_bar(session, key)
        if not claim:
            return
        if attended and key not in self._made:
            raise E.TabClaimed(
                f"Tab {tab} is a person's tab (no session opened it); a session never takes "
                "one silently. Claim it explicitly (tabs.claim; MCP browser_tabs action "
                "claim) to act in it, or open a tab of your own.",
                tabId=tab, person=True, next_step=(
                    "Claim the tab explicitly (tabs.claim), or open a tab of your own "
                    "(tabs.new)."))
        self._own(session, key)
        if not session.stopped:
            # Its requests without tabId go on to the tab it took, not to whatever tab the
            # browser shows next (another session's tabs.new activates that one).
            session.current.setdefault(device, tab)

    def claim(self, session: Session, device: str, tab: int, attended: bool = True) -> bool:
        """``tabs.claim``: take a free tab, a person's included; returns whether it was a
        person's (on an ``attended`` device, a tab no session opened).

        Raises:
            TabClaimed: another session owns it.
        """
        owner = self._owner.get((device, tab))
        if owner is not None and owner is not session:
            raise E.TabClaimed(f"Tab {tab} belongs to session {owner.label!r}; ask it to "
                               "hand the tab off or release it.", tabId=tab, owner=owner.label)
        self._check_bar(session, (device, tab))
        person = attended and (device, tab) not in self._made
        self._own(session, (device, tab))
        return person

    def _check_bar(self, session: Session, key: TabKey) -> None:
        if self._barred.get(key) is session:
            raise E.TabClaimed(
                f"Tab {key[1]} was released when this session stopped its owner; the "
                "stopper never takes the stopped session's tabs. Nothing was sent to it.",
                {"stoppedBy": session.label}, tabId=key[1], next_step=(
                    "Work in a tab of your own (tabs.new); another session, or a person, "
                    "may take this one."))

    def opened(self, session: Session, device: str, tab: int) -> None:
        """``session``'s own action opened the tab: its ``tabs.new``, or its input whose
        answer named the tab in ``newTabs``. The tab is no person's, and the session's
        unless it stopped. An opener alone gives no tab an owner: Chromium gives a tab a
        person opens (Ctrl+T, a link) the active tab as opener, often a session's."""
        key = (device, tab)
        self._made.add(key)
        if not session.stopped and key not in self._owner:
            self._own(session, key)

    def closed(self, device: str, tab: int) -> None:
        """The tab closed: nobody owns it any more."""
        self._free((device, tab))
        self._made.discard((device, tab))
        self._barred.pop((device, tab), None)

    def browser_replaced(self, device: str) -> list[TabKey]:
        """``device``'s browser was started again: every tab of the old one is gone, so
        nobody owns (or opened, or is barred from) any of its tab ids any more, and no
        session's current tab there stands (issue 32 soak: a new tab that got the id of a
        tab a session held in the dead browser stayed that session's, and the session
        that opened it was refused TAB_CLAIMED there on every call). Returns the tabs
        freed."""
        freed = [key for key in self._owner if key[0] == device]
        for key in freed:
            self._free(key)
        self._made = {key for key in self._made if key[0] != device}
        self._barred = {key: s for key, s in self._barred.items() if key[0] != device}
        for session in self._sessions.values():
            session.current.pop(device, None)
        return freed

    def replaced(self, device: str, old: int, new: int) -> None:
        """Tab ``old`` was replaced by ``new`` (a crashed renderer's tab recovered as a new
        one): its owner owns the new one, and it is the owner's current tab if the old was."""
        owner = self._owner.get((device, old))
        was_current = owner is not None and owner.current.get(device) == old
        made = (device, old) in self._made
        self.closed(device, old)
        if made:
            self._made.add((device, new))
        if owner is not None and not owner.stopped and (device, new) not in self._owner:
            self._own(owner, (device, new))
            if was_current:
                owner.current[device] = new

    def select(self, session: Session, device: str, tab: int) -> None:
        """Requests of ``session`` without ``tabId`` go to this tab from now on."""
        session.current[device] = tab

    def release(self, session: Session, device: str | None, tab: int | None) -> list[TabKey]:
        """``session.release``: free one tab of the session's (or all; ``device`` None:
        on every device). Returns the tabs freed.

        Raises:
            BadRequest: the session does not own ``tab``.
        """
        if tab is not None:
            if device is None or (device, tab) not in session.tabs:
                raise E.BadRequest(f"This session does not own tab {tab}.", {"tabId": tab})
            keys = [(device, tab)]
        else:
            keys = sorted(k for k in session.tabs if device is None or k[0] == device)
        for key in keys:
            self._free(key)
        return keys

    def handoff(self, session: Session, device: str, tab: int, to: str) -> Session:
        """``session.handoff``: tab → the live session labelled ``to``; it becomes that
        session's current tab on the device if it has none.

        Raises:
            BadRequest: no live session ``to``; this session does not own the tab; a
                handoff to itself.
            TabBusy: this session has requests queued or running on the tab.
        """
        target = self.by_label(to)
        key = (device, tab)
        if key not in session.tabs:
            raise E.BadRequest(f"This session does not own tab {tab}.", {"tabId": tab})
        if target is session:
            raise E.BadRequest("A session cannot hand a tab off to itself.", {"to": to})
        busy = session.in_flight.get(key, 0) + session.in_flight.get((device, None), 0)
        if busy:
            raise E.TabBusy(f"Tab {tab} has {busy} request(s) of this session queued or "
                            "running; hand it off once they answered.", tabId=tab, inFlight=busy)
        self._free(key)
        self._own(target, key)
        target.current.setdefault(device, tab)
        return target

    def _own(self, session: Session, key: TabKey) -> None:
        if session.stopped:
            # A stopped session owns nothing: the answer of a request that was running
            # when it stopped (it finishes, docs/sessions.md) must not claim the tab again.
            return
        self._owner[key] = session
        session.tabs.add(key)
        self.changed.add(key[0])

    def _free(self, key: TabKey) -> None:
        owner = self._owner.pop(key, None)
        if owner is not None:
            owner.tabs.discard(key)
            if owner.current.get(key[0]) == key[1]:
                del owner.current[key[0]]
            self.changed.add(key[0])

    # -- views ------------------------------------------------------------------------

    def owners(self, device: str) -> list[dict[str, Any]]:
        """``[{tabId, label}]`` for every owned tab of ``device`` (the extension's badge)."""
        return [{"tabId": tab, "label": s.label}
                for (dev, tab), s in sorted(self._owner.items()) if dev == device]

    def annotate(self, session: Session | None, device: str, tabs: Iterable[dict[str, Any]],
                 attended: bool, fallback: int | None = None) -> None:
        """Add ``owner`` / ``mine`` / ``person`` to ``tabs.list`` rows, in place, and
        ``current`` (on every row) when the bridge knows where ``session``'s requests
        without tabId go on ``device``: its current tab, else ``fallback`` (the tab last
        seen active: several windows each have an active tab)."""
        current = session.current.get(device) if session is not None else None
        if current is None:
            current = fallback
        for row in tabs:
            tab = row.get("tabId")
            if not isinstance(tab, int):
                continue
            if current is not None:
                row["current"] = tab == current
            owner = self._owner.get((device, tab))
            if owner is not None:
                row["owner"] = owner.label
                row["mine"] = owner is session
            elif attended and (device, tab) not in self._made:
                row["person"] = True

    def listing(self, asker: Session | None) -> list[dict[str, Any]]:
        """``sessions.list`` rows of every live session (never a secret); the gate shows
        others' rows to operator connections only."""
        self.sweep()
        now = self.clock()
        rows = []
        for s in sorted(self._sessions.values(), key=lambda s: s.label):
            rows.append({
                "label": s.label,
                "tabs": [{"device": d, "tabId": t} for d, t in sorted(s.tabs)],
                "connected": s.peer is not None,
                "onDisconnect": s.on_disconnect,
                "leaseMs": int(s.lease_s * 1000),
                "expiresInMs": None if s.busy() else max(0, int((s.expires_at - now) * 1000)),
                "lastAction": s.last_method,
                "lastActionAgoMs": None if s.last_at is None else int((now - s.last_at) * 1000),
                "inFlight": s.busy(),
                "yours": s is asker,
            })
        return rows

    def tab_keys(self, keys: Iterable[TabKey]) -> list[dict[str, Any]]:
        return [{"device": d, "tabId": t} for d, t in keys]
