"""The session methods of :class:`bridge.sdk.Browser` (docs/sessions.md, issue 16).

Every request of a :class:`~bridge.sdk.Browser` belongs to its connection's session: the
one ``Browser.connect(session="label")`` opened (its lease kept alive by the client's
heartbeat, :meth:`bridge.client.BridgeClient.open_session`), else an implicit one the
bridge makes at the first request (label ``client-<peer id>``). Either way it stops when
the browser closes (``on_disconnect="stop"``): its queued work is cancelled and its tabs
are freed, never closed.

A session owns the tabs it opens (:meth:`~bridge.sdk.Browser.new_tab`) and a free tab it
first acts on; another session's request on one of them raises
:class:`~bridge.protocol.errors.TabClaimed` before anything reaches the page. A tab a
person opened in a headed browser is never taken by acting on it: :meth:`claim` it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from .client import BridgeClient
from .sdk_results import (
    SessionInfo,
    SessionOpenResult,
    SessionStopResult,
    SessionTabsResult,
)

if TYPE_CHECKING:
    from .sdk import Tab

__all__ = ["BrowserSessions"]


def _tab_id(tab: int | Tab | None) -> int | None:
    return tab if tab is None or isinstance(tab, int) else tab.tab_id


class BrowserSessions:
    """Mixin of :class:`bridge.sdk.Browser`: its session and the tabs it owns."""

    client: BridgeClient
    device: str | None

    @property
    def session(self) -> SessionOpenResult | None:
        """The ``session.open`` answer of a browser connected with ``session=`` (``{label,
        leaseMs, heartbeatMs, secret, resumed, tabs}``); None for an implicit session."""
        return cast(SessionOpenResult | None, self.client.session)

    async def sessions(self) -> list[SessionInfo]:
        """The live sessions this connection may see: ``[{label, tabs: [{device, tabId}],
        connected, onDisconnect, leaseMs, expiresInMs, lastAction, lastActionAgoMs,
        inFlight, yours}]`` (never a secret). ``yours`` marks this browser's own. An
        operator connection (``Browser.connect(operator=...)``) sees every session; any
        other sees its own only (docs/security.md "Who may do what")."""
        result = await self.client.call("sessions.list")
        return cast(list[SessionInfo], list(result["sessions"]))

    async def release(self, tab: int | Tab | None = None) -> SessionTabsResult:
        """Give up ``tab`` (an id, a :class:`~bridge.sdk.Tab` or a ``SyncTab``), or every
        tab this session owns on the device (None). The tabs stay open and become free.

        Returns:
            ``{label, tabs: [{device, tabId}]}``: the tabs freed.

        Raises:
            BadRequest: this session does not own ``tab``.
            SessionStopped: this browser's session was stopped.
        """
        result = await self.client.call(
            "session.release", {"device": self.device, "tabId": _tab_id(tab)})
        return cast(SessionTabsResult, result)

    async def handoff(self, tab: int | Tab | None, to: str) -> SessionTabsResult:
        """Give one of this session's tabs (None: its current tab) to the live session
        labelled ``to``; from then on only ``to`` may use it.

        Returns:
            ``{label, tabs: [{device, tabId}], to}``.

        Raises:
            TabBusy: requests of this session are still queued or running on the tab
                (``err.inFlight``); wait for their answers, then hand it off.
            BadRequest: this session does not own the tab; no live session ``to``.
            SessionStopped: this browser's session was stopped.
        """
        result = await self.client.call(
            "session.handoff", {"device": self.device, "tabId": _tab_id(tab), "to": to})
        return cast(SessionTabsResult, result)

    async def stop_session(self, label: str | None = None, *,
                           secret: str | None = None) -> SessionStopResult:
        """Stop session ``label`` (None: this browser's own): its queued requests answer
        CANCELLED and never run, a running one finishes and reports what it did, its
        tabs are released (never closed), and its later requests raise SessionStopped.

        Returns:
            ``{label, stopped, cancelled, running, released: [{device, tabId}]}``;
            ``stopped`` is false when it had stopped already.

        Another session may be stopped by an operator connection, or with that session's
        ``secret`` (its ``session["secret"]``); the stopper never takes its tabs.

        Raises:
            Unauthorized: another session's label, this connection is no operator and
                ``secret`` is not that session's.
            BadRequest: (an operator) no session has that label.
        """
        params: dict[str, Any] = {"label": label}
        if secret is not None:
            params["secret"] = secret
        return cast(SessionStopResult, await self.client.call("session.stop", params))

    async def claim(self, tab_id: int) -> SessionTabsResult:
        """Claim free tab ``tab_id`` explicitly: the way to take a tab a person opened
        (sessions never take those by acting on them). It becomes this session's
        current tab (requests of a ``Tab`` without id go there).

        Returns:
            ``{label, tabs: [{device, tabId}], person}``; ``person`` is true when the
            tab was a person's. Get a handle with ``await browser.tab(tab_id)``.

        Raises:
            TabClaimed: another session owns it (``err.owner`` names it).
            BrowserTabClosed: no such tab.
            SessionStopped: this browser's session was stopped.
        """
        result = await self.client.call("tabs.claim", {"device": self.device, "tabId": tab_id})
        return cast(SessionTabsResult, result)
