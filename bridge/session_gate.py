"""Where sessions meet requests (docs/sessions.md): the executor asks :class:`SessionGate`
which tab a request addresses and whether its session may use it before anything is
sent, tells it what the answer changed (a tab opened, selected or closed), and hands it
the ``session.*`` methods, which the bridge answers itself.

The bookkeeping is :class:`~bridge.sessions.SessionBook` (no I/O); this module adds the
one round trip a session may need: a request without ``tabId`` from a session that has no
current tab and a bridge that has not yet seen which tab is active asks the extension's
``tabs.list`` once, so the ownership check is made on the tab the request will really
run on (never after the fact).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
from collections.abc import Callable
from typing import Any

from .after_input import PeerCall
from .protocol import errors as E
from .protocol.methods import CLIENT_INPUT_METHODS
from .routing import RoutingPolicy
from .sessions import Session, SessionBook
from .tabqueue import TabQueue

__all__ = ["CLAIMS", "READS", "REVEALING", "SessionGate"]

CLAIMS = frozenset({*CLIENT_INPUT_METHODS, "page.navigate", "page.history", "page.evaluate",
                    "page.resize", "page.dialog", "page.tracing", "tabs.select",
                    "tabs.close", "human.request"})
"""Methods that act on their tab: a free tab becomes the session's (``page.tracing``
records the tab's whole browser context, so only a tab's owner may start or stop it)."""
READS = frozenset({"page.snapshot", "page.wait", "page.find", "page.screenshot",
                   "page.console", "page.network", "page.pdf"})
"""Methods that only look at their tab: they never claim it. Those of REVEALING are the
owner's only; the rest are allowed on any tab (another session's too: they dispatch
nothing, refs are stable per element, diff baselines are per session)."""
REVEALING = frozenset({"page.screenshot", "page.console", "page.network", "page.find",
                       "page.pdf"})  # and, by their params, see reveals()
"""Reads that can show what was typed into the tab: a screenshot or PDF shows a card
number or password in clear, the console a logged error carrying it, the network record
a posted form, find matches any text (a regex over names is an oracle). The snapshot
redacts typed secrets (bridge/secrets.py) and wait returns no content, so they stay open
to every session; these (and the snapshot's ``read`` mode: :func:`reveals`) are refused on
another session's tab (TAB_CLAIMED, nothing sent; docs/security.md "Who may do what")."""


def reveals(method: str, parsed: Any) -> bool:
    """Whether a read can show typed content (REVEALING), or is a ``read``-mode snapshot
    (the page's whole text for reading, where a page's own echo of a typed value is most
    likely: the typed-secret mask covers values typed into fields known to be sensitive,
    and only in the forms it knows), or a wait for text (``text`` / ``textGone``: it
    matches before any mask, so a masked card number could be guessed digit by digit)."""
    if method == "page.wait":
        return getattr(parsed, "text", None) is not None \
            or getattr(parsed, "textGone", None) is not None
    return method in REVEALING or (method == "page.snapshot"
                                   and getattr(parsed, "mode", None) == "read")
FIRST_WAIT_S = 30.0
"""How long a session's first action waits for another session's first action on the
same device (the claim comes with its answer), s."""


def perturbs(method: str, parsed: Any) -> bool:
    """Whether a read changes the page or what its owner reads next, so it counts as an
    action (TAB_CLAIMED on another session's tab): a screenshot of an element scrolls it
    into view, a full-page one resizes the viewport, a PDF prints (beforeprint, media
    change), and ``clear`` empties the tab's console or network record for everyone."""
    if method == "page.screenshot":
        return getattr(parsed, "ref", None) is not None or bool(getattr(parsed, "fullPage", False))
    if method == "page.pdf":
        return True
    if method in ("page.console", "page.network"):
        return bool(getattr(parsed, "clear", False))
    return False


SESSION_METHODS = frozenset({"session.open", "session.renew", "session.release",
                             "session.handoff", "session.stop", "sessions.list",
                             "tabs.claim"})
"""Methods the gate answers (served by the bridge)."""
LIST_TIMEOUT_S = 10.0

Withdraw = Callable[[str, str], tuple[int, int]]
"""(peer id, reason) → (requests withdrawn, requests still running) of that connection."""


class SessionGate:
    """Session checks for one executor.

    Args:
        book: the bridge's sessions.
        policy: the routing policy (which device, attended or not).
        queue: the executor's tab queues (the active tab last seen).
        peer: live peer by id.
    """

    def __init__(self, book: SessionBook, policy: RoutingPolicy, queue: TabQueue,
                 peer: Callable[[str], PeerCall]) -> None:
        self.book = book
        self.policy = policy
        self.queue = queue
        self.peer = peer
        self.withdraw: Withdraw = lambda _peer, _reason: (0, 0)
        """Set by the server: withdraws a connection's queued requests."""
        self.operator: Callable[[str], bool] = lambda _peer: False
        """Set by the server: whether a connection said hello with the operator
        credential."""
        self._first: dict[str, tuple[Session, asyncio.Event]] = {}
        """Device → the session whose first action runs on the browser's active tab."""
        self._opening: dict[tuple[str, int], int] = {}
        """(device, id(session)) → requests of that session that may open a tab (tabs.new,
        input) in progress on the device (issue 32 item 7)."""

    # -- requests that may open tabs (issue 32 item 7) ---------------------------------

    def may_open(self, session: Session, device: str | None, method: str) -> bool:
        """Count a request that may open a tab (``tabs.new``, input) as in progress until
        :meth:`opened_done`; returns whether it was counted."""
        if device is None or (method != "tabs.new" and method not in CLIENT_INPUT_METHODS):
            return False
        key = (device, id(session))
        self._opening[key] = self._opening.get(key, 0) + 1
        return True

    def opened_done(self, session: Session, device: str) -> None:
        """The request :meth:`may_open` counted has answered (and its answer was booked)."""
        key = (device, id(session))
        left = self._opening.get(key, 0) - 1
        if left > 0:
            self._opening[key] = left
        else:
            self._opening.pop(key, None)

    def _others_opening(self, session: Session, device: str) -> bool:
        return any(n > 0 and d == device and sid != id(session)
                   for (d, sid), n in self._opening.items())

    def _foreign(self, session: Session, device: str, acted_on: Any,
                 opened: dict[str, Any]) -> bool:
        """Whether a tab an action's answer named as opened may be another session's, so
        it is neither reported to nor booked for the acting session: another session owns
        it (its tabs.new or its own action's answer came first), or another session has a
        request that may open a tab in progress and nothing ties this tab to the acting
        tab (its opener is not that tab: it was found by the browser's clock or announced
        with another opener)."""
        owner = self.book.owner(device, opened["tabId"])
        if owner is not None and owner is not session:
            return True
        return opened.get("openerTabId") != acted_on and self._others_opening(session, device)

    def _owned_by_another(self, session: Session, device: str,
                          opened: dict[str, Any]) -> bool:
        """Whether a reported tab is owned by a session other than ``session``."""
        tab = opened.get("tabId")
        owner = self.book.owner(device, tab) if isinstance(tab, int) else None
        return owner is not None and owner is not session

    def attended(self, device: str) -> bool:
        """A person may open tabs on ``device``: its driver says the browser is headed
        (``headed``), or its extension says the browser is not under automation
        (``attended``: ``navigator.webdriver`` is false, i.e. a person's own browser)."""
        caps = self.policy.capabilities(device)
        return bool(caps.get("headed") or caps.get("attended"))

    async def admit(self, session: Session, method: str, parsed: Any,
                    device: str) -> int | None:
        """Before a request runs: fill in its tab and check the session may use it.

        A request without ``tabId`` addresses the session's current tab (else the tab
        active in the browser); the tab is written into ``parsed.tabId`` so the
        extension acts on exactly that tab.

        Returns:
            The tab checked (None: the method addresses no existing tab).

        Raises:
            TabClaimed: another session owns the tab, or it is a person's tab and the
                method would claim it.
        """
        if method not in CLAIMS and method not in READS:
            return None
        tab = getattr(parsed, "tabId", None)
        if tab is None and method == "page.dialog":
            tab = self._dialog_tab(session, device)
            if tab is None:
                return None  # the bridge's dialog book picks; see _to_driver
        acts = method in CLAIMS or perturbs(method, parsed)
        if tab is None:
            tab = await self._unknown_tab(session, device, acts)
        if tab is None:
            # No session owns a tab of this device, no person's tab is at stake and no
            # other session's first action is running: whichever tab is active is free;
            # the answer names it and answered() claims it.
            return None
        if getattr(parsed, "tabId", None) is None:
            parsed.tabId = tab
        if acts:
            self.book.check(session, device, tab, claim=True, attended=self.attended(device))
        elif reveals(method, parsed):  # another session's tab: the owner's only
            self.book.check(session, device, tab, claim=False, attended=False, reveal=True)
        return tab

    async def _unknown_tab(self, session: Session, device: str, acts: bool) -> int | None:
        """The tab a tabId-less request of ``session`` means, when it has no current tab:
        the browser's active tab as last seen, else (another session owns tabs here, a
        person may, or another session's first action is running on the active tab)
        the active tab as tabs.list says now. None: nobody can own the active tab, and
        an action takes the device's first-action slot until its answer names the tab.

        Two sessions' first actions on a fresh device would otherwise both run on the
        active tab unchecked (the claim comes with the answer): the second waits for the
        first's answer (at most FIRST_WAIT_S), then looks the tab up."""
        if acts:
            held = self._first.get(device)
            if held is not None and held[0] is not session:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(held[1].wait(), FIRST_WAIT_S)
        tab = session.current.get(device)
        if tab is None:
            tab = self.queue.active_tab(device)
        if tab is not None:
            return tab
        first = self._first.get(device)
        if self.book.owners(device) or (first is not None and first[0] is not session) \
                or (acts and self.attended(device)):
            return await self._active_from_browser(device)
        if acts and first is None:
            self._first[device] = (session, asyncio.Event())
        return None

    def settled(self, session: Session, device: str | None) -> None:
        """A request of ``session`` answered (or failed): free the device's first-action
        slot if it held it (the answer claimed the tab, or nothing ran)."""
        held = self._first.get(device or "")
        if held is not None and held[0] is session:
            held[1].set()
            del self._first[device or ""]

    def tab_gone(self, session: Session, device: str, err: E.BrowserTabClosed) -> bool:
        """A request failed with BROWSER_TAB_CLOSED: the session follows a tab a crash
        recovery replaced (``details.replacedBy``: ownership and current tab move to the
        new id) and forgets one that is gone. Returns whether the book changed (the
        caller may run a tabId-less request once more: its tab now means another)."""
        tab, by = err.details.get("tabId"), err.details.get("replacedBy")
        if not isinstance(tab, int):
            return False
        if isinstance(by, int):
            self.book.replaced(device, tab, by)
        else:
            self.book.closed(device, tab)
        if session.current.get(device) == tab:  # not owned (read-only use), still current
            del session.current[device]
        self.queue.forget(device, tab)
        return True

    def _dialog_tab(self, session: Session, device: str) -> int | None:
        """The tab of the oldest open dialog on a tab the session owns, else the tab of
        the dialog the driver would answer (``DialogBook.to_answer``) once it is placed on
        one tab: answering it acts on that tab, so admit() checks it like any action."""
        book = self.policy.dialogs
        for dialog in book.all(device):
            for tab in sorted(dialog.tabs or ()):
                if (device, tab) in session.tabs:
                    return tab
        picked = book.to_answer(device, None, self.queue.active_tab(device))
        if picked is not None and picked.tabs is not None and len(picked.tabs) == 1:
            return next(iter(picked.tabs))
        return None

    async def _active_from_browser(self, device: str) -> int | None:
        try:
            extension = self.policy.route("tabs.list", device).extension  # type: ignore[union-attr]
            listed = await self.peer(extension).call("tabs.list", {}, LIST_TIMEOUT_S)
        except E.TrustbridgeError:
            return None  # the request itself will say what is wrong
        return next((t["tabId"] for t in listed.get("tabs", []) if t.get("active")), None)

    def answered(self, session: Session, method: str, device: str,
                 result: dict[str, Any]) -> None:
        """After a good answer: what it changed for sessions (tabs opened, selected,
        closed; ``tabs.list`` rows get ``owner`` / ``mine`` / ``person``)."""
        tab = result.get("tabId")
        crashed = result.get("crashedTabId")
        if result.get("recoveredFromCrash") and isinstance(crashed, int) \
                and isinstance(tab, int):
            self.book.replaced(device, crashed, tab)  # the new tab is the old one's
        if method in CLAIMS and method != "tabs.close" and isinstance(tab, int) \
                and self.book.owner(device, tab) is None:
            # It ran on the browser's active tab, which no session owned (admit()).
            with contextlib.suppress(E.TabClaimed):
                self.book.check(session, device, tab, claim=True,
                                attended=self.attended(device))
        if method == "tabs.new" and isinstance(tab, int):
            self.book.opened(session, device, tab)
            self.book.select(session, device, tab)
        elif method == "tabs.select" and isinstance(tab, int):
            self.book.select(session, device, tab)
        elif method == "tabs.close" and isinstance(tab, int):
            self.book.closed(device, tab)
        elif method == "tabs.list":
            self.book.annotate(session, device, result.get("tabs") or [], self.attended(device),
                               self.queue.active_tab(device))
        # A late tab (a snapshot's report of a tab opened after an earlier answer) that
        # another session owns is not this session's to follow: another session's
        # window opened at that moment was followed and looped on (issue 32 soak).
        for item in (result, result.get("snapshotAfter")):
            late = item.get("newTabs") if isinstance(item, dict) else None
            if late and (method not in CLIENT_INPUT_METHODS or item is not result):
                kept = [o for o in late if not self._owned_by_another(session, device, o)]
                if len(kept) != len(late):
                    item["newTabs"] = kept
        if method not in CLIENT_INPUT_METHODS:
            # A read's newTabs are tabs the addressed tab opened *after* an earlier
            # action's answer (late tabs): their opener is the session's tab, but nothing
            # ties them to its action, and a tab a person opens (Ctrl+T, a link) has the
            # active tab as opener too (tests/e2e/test_person_tabs.py).
            return
        for item in (result, *(result.get("completedActions") or [])):
            if not item.get("newTabs"):
                continue
            acted_on = item.get("tabId", tab)
            # issue 32 item 7: never another session's tab (it would become this
            # session's current tab in MCP, and be booked as this session's).
            kept = [o for o in item["newTabs"] if not (
                isinstance(o.get("tabId"), int) and self._foreign(session, device, acted_on, o))]
            if len(kept) != len(item["newTabs"]):
                item["newTabs"] = kept
            for opened in kept:
                if isinstance(opened.get("tabId"), int):
                    # The action's own window named it (the extension's announcement or
                    # the driver's popup, bridge/after_input.py new_tabs): the acting
                    # session's, whoever owns its opener.
                    self.book.opened(session, device, opened["tabId"])

    # -- the session methods ------------------------------------------------------------

    async def serve(self, peer: str | None, method: str, parsed: Any) -> dict[str, Any]:
        """Answer a ``session.*`` / ``sessions.list`` / ``tabs.claim`` request of
        connection ``peer``.

        Raises:
            BadRequest: no connection (an in-process call), or as the book raises.
            TabClaimed / TabBusy / SessionStopped: as the book raises.
            BrowserTabClosed: ``tabs.claim`` of a tab the browser does not have.
        """
        if peer is None:
            raise E.BadRequest(f"{method} needs a client connection.")
        book = self.book
        if method == "session.open":
            session, resumed = book.open(peer, parsed.label, parsed.leaseMs,
                                         parsed.onDisconnect, parsed.secret)
            return {"sessionId": session.id, "label": session.label,
                    "leaseMs": int(session.lease_s * 1000),
                    "heartbeatMs": int(session.lease_s * 1000 / 3), "secret": session.secret,
                    "resumed": resumed, "tabs": book.tab_keys(sorted(session.tabs))}
        session = book.for_peer(peer)
        operator = self.operator(peer)
        if method == "sessions.list":
            rows = book.listing(session)
            if operator:
                return {"sessions": rows}
            mine = [r for r in rows if r["yours"]]
            return {"sessions": mine, "others": len(rows) - len(mine)}
        if method == "session.renew":
            book.renew(session)
            return {"label": session.label, "leaseMs": int(session.lease_s * 1000)}
        if method == "session.stop":
            return self._stop_asked(session, parsed.label, parsed.secret, operator)
        if method == "session.release" and parsed.tabId is None and parsed.device is None:
            # Every tab on every device: no device to pick (several may be connected, or
            # none any more).
            return {"label": session.label,
                    "tabs": book.tab_keys(book.release(session, None, None))}
        device = self.policy.pick_device(getattr(parsed, "device", None))
        if method == "session.release":
            freed = book.release(session, device, parsed.tabId)
            return {"label": session.label, "tabs": book.tab_keys(freed)}
        if method == "session.handoff":
            tab = parsed.tabId if parsed.tabId is not None else session.current.get(device)
            if tab is None:
                raise E.BadRequest("Name the tab to hand off (tabId): this session has no "
                                   "current tab.")
            target = book.handoff(session, device, tab, parsed.to)
            return {"label": session.label, "to": target.label,
                    "tabs": book.tab_keys([(device, tab)])}
        if method == "tabs.claim":
            # Another's tab, or one this session's stop released: refused before asking.
            book.check(session, device, parsed.tabId, claim=False, attended=False,
                       reveal=True)
            await self._check_exists(device, parsed.tabId)
            person = book.claim(session, device, parsed.tabId, self.attended(device))
            book.select(session, device, parsed.tabId)
            return {"label": session.label, "person": person,
                    "tabs": book.tab_keys([(device, parsed.tabId)])}
        raise E.InternalError(f"No session handler for {method}.")

    async def _check_exists(self, device: str, tab: int) -> None:
        extension = self.policy.route("tabs.list", device).extension  # type: ignore[union-attr]
        listed = await self.peer(extension).call("tabs.list", {}, LIST_TIMEOUT_S)
        if not any(t.get("tabId") == tab for t in listed.get("tabs", [])):
            raise E.BrowserTabClosed(f"Tab {tab} is not open on device {device!r}.",
                                     {"tabId": tab})

    def _stop_asked(self, asker: Session, label: str | None, secret: str | None,
                    operator: bool) -> dict[str, Any]:
        """``session.stop``: one's own session; another only as an operator or with its
        secret (docs/security.md "Who may do what").

        Raises:
            Unauthorized: another session, asked by a connection that is no operator and
                without its secret (``reason: notOperator``); the same answer whether or
                not the label is live, so it is no oracle of labels.
            BadRequest: an operator named no live session.
        """
        if label is None or label == asker.label:
            return self.stop(asker, "its own request")
        self.book.sweep()
        target = self.book.find(label)
        if target is not None and secret is not None \
                and hmac.compare_digest(secret.encode(), target.secret.encode()):
            return self.stop(target, "its own request (a connection with its secret)")
        if not operator:
            raise E.Unauthorized(
                "Only the session itself, a person (the browser's Stop button) or an "
                "operator connection may stop a session; nothing was stopped.",
                {"reason": "notOperator"}, next_step=(
                    "Stop your own session (session.stop without label). An operator "
                    "connects with the operator credential (docs/security.md)."))
        target = self.book.by_label(label)
        return self.stop(target, f"the operator (session {asker.label!r})", stopper=asker)

    def stop(self, session: Session, by: str, stopper: Session | None = None
             ) -> dict[str, Any]:
        """Stop ``session``: withdraw its connection's queued requests, release its tabs
        (never to ``stopper``: bridge/sessions.py SessionBook.stop)."""
        cancelled = running = 0
        if session.peer is not None:
            cancelled, running = self.withdraw(
                session.peer, f"session {session.label!r} was stopped by {by}")
        stopped = not session.stopped
        released = self.book.stop(session, by, stopper) if stopped else []
        return {"label": session.label, "stopped": stopped, "cancelled": cancelled,
                "running": running, "released": self.book.tab_keys(released)}
