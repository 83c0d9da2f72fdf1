"""Executes a routed client request: the peer calls each route needs (docs/design.md §2
rules 1-7, §10 "The executor's routes").

The server hands every client request to :meth:`Executor.dispatch`, which validates it,
refuses a URL it may not load (bridge/urls.py: ``file:`` unless allowed, ``data:``), asks
:class:`~bridge.routing.RoutingPolicy` (no I/O) where it goes, waits for the request's
turn on its tab when the method is ``serialized`` (:class:`~bridge.tabqueue.TabQueue`,
§2.1), and hands it to one handler per route (a ``match`` in :meth:`Executor._run`):

- ``Local``: answered here (``devices.list``);
- ``ToExtension``: one call to the extension; input on a device that never had a driver
  says ``inputPath: "synthetic"`` (rule 5); a load a JavaScript dialog blocks answers
  early with the dialog (§2.1);
- ``TrustedInput`` (rule 3): ``page.resolveTarget`` on the extension (a drag resolves its
  drop target too), then ``driver.act`` on the driver; a driver gone meanwhile is
  TRUSTED_INPUT_UNAVAILABLE (rule 4), an answer that never comes is
  BROWSER_OPERATION_UNCERTAIN (rule 7, raised by the peer's ``call``);
- ``ToDriver``: the extension names the tab's frame and the driver's own method
  (``METHODS[m].driver_method``) captures or evaluates; ``page.dialog`` (``under_dialog``:
  the page is blocked) goes to the driver alone;
- ``page.batch`` (§2.2): its actions in order, each routed again (the driver may leave or
  a dialog open between two), stopping at the first failure (``completedActions``,
  ``interruptedAction``); nothing is replayed (rule 7).

After an input action, what the extension pushed meanwhile (§10 "each room once": the
click's receipt, §2.3, and ``tab.opened`` events) becomes the result's ``delivered`` and
``newTabs`` through :class:`~bridge.after_input.AfterInput` (the short waits) and
:class:`~bridge.events.ActionEvents` (which receipt and tabs are the action's, no I/O).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import Field

from . import ax_facts
from .after_input import AfterInput, PeerCall
from .hang_watch import WATCHED as HANG_WATCHED
from .hang_watch import HangWatch
from .dialog_waits import DialogWaits, on_tab
from .dialogs import OpenDialog
from .dispatch_signals import DispatchSignals
from .events import may_open_tab
from .files import check_upload
from .handover import HandoverBook, HumanService
from .new_tab import open_tab
from .protocol import errors as E
from .protocol.methods import (
    ALLOWED_UNDER_DIALOG,
    CLOSES_TAB,
    METHODS,
    REPORTS_LATE_TABS,
    SERIALIZED_METHODS,
    TABS_API_ONLY,
    WAITS_FOR_LOAD,
)
from .protocol.models import (
    ActParams,
    BatchParams,
    SnapshotAfter,
    SnapshotParams,
)
from .protocol.origins import OriginPolicy
from .protocol.validate import validate_params
from .routing import Local, RoutingPolicy, ToDriver, ToExtension, TrustedInput
from .secrets import TypedSecrets
from .session_gate import SESSION_METHODS, SessionGate
from .sessions import SessionBook
from .tabqueue import TabQueue
from .trusted_input import TrustedInputRoute
from .urls import check_navigation_url, redact_credentials

log = logging.getLogger("trustbridge.executor")

DRIVER_MARGIN_S = 5.0
"""Extra seconds the bridge waits for a peer beyond the action's own ``timeoutMs``."""
RESOLVE_TIMEOUT_S = 10.0
"""How long the bridge waits for ``page.resolveTarget`` and ``driver.dialog``, s."""
DRIVER_CALL_TIMEOUT_S = 60.0
"""How long the bridge waits for ``driver.screenshot`` / ``driver.evaluate``, s."""
KEY_ALLOWANCE_S = 0.025
"""Extra seconds the bridge waits per typed character: ``timeoutMs`` bounds finding and
focusing the target, not typing a long text key by key (the driver types without a
deadline once it started, so a long text is never cut in the middle)."""
DEFAULT_TIMEOUT_MS = 30_000
"""The timeout of an extension call whose params have no ``timeoutMs``, ms."""
BATCH_ITEM_METHOD = "page.act"
"""Each action of a ``page.batch`` is routed and run as this method."""


def beforeunload_from_env() -> bool:
    """Whether navigate and close accept a beforeunload prompt: yes unless the environment
    says ``TRUSTBRIDGE_BEFOREUNLOAD=ask`` (then the prompt is reported as an open dialog,
    as any other, for the agent to answer with page.dialog / browser_handle_dialog)."""
    return os.environ.get("TRUSTBRIDGE_BEFOREUNLOAD", "accept").strip().lower() != "ask"


class Executor(TrustedInputRoute):
    """Runs client requests against the peers named by ``peer(peer_id)``.

    Args:
        policy: the routing policy.
        peer: returns the live peer with that id, or raises DeviceNotConnected.
        allow_file_urls: ``page.navigate`` / ``tabs.new`` may load ``file:`` URLs
            (bridge/urls.py).
        origins: the origin lists the browser enforces: ``page.navigate`` / ``tabs.new``
            to an origin they block is refused before it is sent (bridge/urls.py).
    """

    def __init__(self, policy: RoutingPolicy, peer: Callable[[str], PeerCall],
                 allow_file_urls: bool = False, origins: OriginPolicy | None = None,
                 accept_beforeunload: bool | None = None) -> None:
        self.policy = policy
        if accept_beforeunload is None:
            accept_beforeunload = beforeunload_from_env()
        self.accept_beforeunload = accept_beforeunload
        """Accept a beforeunload prompt raised by a navigate or close the agent asked for
        (issue 32 item 5); False: report it as an open dialog for the agent to answer."""
        self.peer = peer
        self.allow_file_urls = allow_file_urls
        self.origins = origins if origins is not None and origins.active else None
        self.queue = TabQueue()
        self.links: Callable[[], Awaitable[dict[str, dict[str, Any]]]] | None = None
        """Set by the server: device → {host, remote, latencyMs} for ``devices.list``."""
        # self.peer is looked up at each call: scripts/benchlib wraps it after construction
        self.after = AfterInput(lambda peer_id: self.peer(peer_id))
        self.dialog_waits = DialogWaits(policy, lambda peer_id: self.peer(peer_id))
        self.hangs = HangWatch(lambda peer_id: self.peer(peer_id))  # issue 32 item 4
        self.secrets = TypedSecrets()
        self.signals = DispatchSignals()
        self.sessions = SessionBook()
        self.gate = SessionGate(self.sessions, policy, self.queue,
                                lambda peer_id: self.peer(peer_id))
        # Tabs handed to a person (issue 37, bridge/handover.py); the server sets
        # base_url to its own http://host:port for the live-view links.
        self.handovers = HandoverBook()
        self.sessions.on_end = self.handovers.session_ended
        self.base_url: Callable[[], str] = lambda: "http://127.0.0.1"
        self.human = HumanService(self.handovers, policy, self.queue.active_tab,
                                  lambda peer_id: self.peer(peer_id), lambda: self.base_url(),
                                  mask=lambda device, text: self.secrets.mask(device, text))

    def _check_person_consent(self, parsed: Any) -> None:
        """``cdp.endpoint`` on a person's own browser (its extension says ``attended``:
        paired, not under automation, docs/attach.md) needs the person's consent: the
        toggle in the extension's options page, which the extension reports as
        ``cdpAllowed`` (hello) and ``consent.cdp`` (when it changes). Off by default.

        Raises:
            Unauthorized: the person has not allowed it (``details.reason``:
                ``personNotAllowed``); nothing was issued.
        """
        try:
            device = self.policy.pick_device(getattr(parsed, "device", None))
        except E.TrustbridgeError:
            return  # routing says what is wrong
        caps = self.policy.extension_capabilities(device)
        if caps.get("attended") and not caps.get("cdpAllowed"):
            raise E.Unauthorized(
                f"Device {device!r} is a person's own browser, and its CDP door would act "
                "on every tab there, the person's included; the person has not allowed it. "
                "Nothing was issued.", {"device": device, "reason": "personNotAllowed"},
                next_step=("Ask the person to open the trustbridge extension's options page "
                           "in that browser and turn on \"Allow the CDP door\", then ask "
                           "again (docs/cdp.md)."))

    # -- events from peers ------------------------------------------------------------

    def tab_opened(self, extension: str, params: dict[str, Any]) -> None:
        """The extension's ``tab.opened`` event (a malformed one is dropped): remembered
        for the ``newTabs`` of the action that opened it. It makes no session the tab's
        owner: an opener alone is no session's action (docs/sessions.md)."""
        self.after.tab_opened(extension, params)

    def receipt_pushed(self, extension: str, params: dict[str, Any]) -> None:
        """The extension's ``page.receipt`` event: a click in progress reached its target.
        Receipts nobody waits for (late, unknown, from another peer) are dropped."""
        self.after.receipt_pushed(extension, params)

    def input_dispatched(self, driver: str, params: dict[str, Any]) -> None:
        """The driver's ``driver.dispatched`` event (bridge/dispatch_signals.py)."""
        self.signals.dispatched(driver, params)

    def page_opened(self, device: str) -> None:
        """The driver's ``page.opened``: it can now see (and report dialogs of) a page."""
        self.dialog_waits.page_opened(device)

    def dialog_opened(self, device: str, dialog: OpenDialog) -> None:
        """A dialog the policy just recorded: place it on its tab (bridge/dialog_waits.py),
        then wake the calls on that tab it blocks."""
        self.dialog_waits.opened(device, dialog)

    # -- requests ---------------------------------------------------------------------

    async def dispatch(self, method: str, params: dict[str, Any],
                       on_start: Callable[[], None] | None = None,
                       peer: str | None = None) -> dict[str, Any]:
        """Validate a client request, route it and return its result.

        Args:
            method / params: the client request.
            on_start: called once the request leaves its tab's queue and starts running.
            peer: the client connection that sent it: the request belongs to its session
                (bridge/sessions.py; None, an in-process call: no session applies).

        Raises:
            TrustbridgeError: any protocol error (BadRequest for invalid params).
            TabClaimed: the tab belongs to another session (nothing was sent).
            SessionStopped: the connection's session was stopped.
        """
        parsed = validate_params(method, params)
        if method in ("page.act", "page.batch"):
            _check_uploads(parsed)
        if method in SESSION_METHODS:
            return await self.gate.serve(peer, method, parsed)
        if method == "cdp.endpoint" and peer is not None and not self.gate.operator(peer):
            # The door reaches every tab, bypassing sessions (docs/cdp.md): it would undo
            # the owner-only rules between agents (docs/security.md "Who may do what").
            raise E.Unauthorized(
                "The CDP door acts on every tab of the browser, other sessions' and a "
                "person's included; only an operator connection gets its URL. Nothing was "
                "issued.", {"reason": "notOperator"}, next_step=(
                    "Ask the person running trustbridge (`trustbridge cdp` uses the "
                    "operator credential), or connect with it (docs/security.md)."))
        if method == "cdp.endpoint":
            self._check_person_consent(parsed)
        if peer is None:
            return await self._dispatch(method, parsed, on_start, None)
        session = self.sessions.for_peer(peer)
        device = None
        if method != "devices.list":  # the one bridge method that names no device
            with contextlib.suppress(E.TrustbridgeError):  # routing says what is wrong
                device = self.policy.pick_device(getattr(parsed, "device", None))
        explicit = getattr(parsed, "tabId", None)
        if device is not None and explicit is not None:
            # A handed tab says so to every session, before whose tab it is (the tabs of
            # other sessions would otherwise answer TAB_CLAIMED): bridge/handover.py.
            self.handovers.refuse(method, device, explicit)
        self.sessions.begin(session, method, device, explicit)
        counted = explicit
        # issue 32 item 7: while this may open a tab, another session's action does not
        # take a tab that nothing ties to it (SessionGate._foreign).
        opening = self.gate.may_open(session, device, method)
        try:
            for attempt in (1, 2):
                if device is not None:
                    checked = await self.gate.admit(session, method, parsed, device)
                    if checked != counted:  # count it on the tab it runs on (handoff checks)
                        self.sessions.end(session, device, counted)
                        self.sessions.begin(session, method, device, checked)
                        counted = checked
                    if method == "page.snapshot" and getattr(parsed, "session", None) is None \
                            and getattr(parsed, "cursor", None) is None:
                        parsed.session = session.id  # per-session diff baselines
                    if method == "cdp.endpoint":  # issued to this session (docs/cdp.md)
                        parsed.session = session.label
                    after = getattr(parsed, "snapshotAfter", None)
                    if after is not None and after.session is None:
                        after.session = session.id  # as page.snapshot's baseline
                if session.stopped:
                    raise self.sessions.stopped_error(session)
                try:
                    result = await self._dispatch(method, parsed, on_start, session)
                except E.BrowserTabClosed as err:
                    # The tab the session's current tab named is gone (closed, replaced
                    # after a crash, a restarted browser): forget or follow it; a request
                    # that named no tab runs once more on the tab it now means (the
                    # extension refused it before sending anything).
                    again = device is not None and self.gate.tab_gone(session, device, err) \
                        and explicit is None and attempt == 1
                    if not again:
                        raise
                    parsed.tabId = None
                    continue
                if device is not None:
                    self.gate.answered(session, method, device, result)
                return result
            raise E.InternalError("unreachable")  # the loop returns or raises
        finally:
            if opening and device is not None:
                self.gate.opened_done(session, device)
            self.gate.settled(session, device)
            self.sessions.end(session, device, counted)

    async def _dispatch(self, method: str, parsed: Any, on_start: Callable[[], None] | None,
                        session: Any) -> dict[str, Any]:
        """:meth:`dispatch` once the session admitted the request."""
        if method in ("human.request", "human.wait", "human.end"):
            if on_start is not None:
                on_start()  # running: a Stop ends the hand-off, which the wait answers
            if method == "human.request":
                return await self.human.request(parsed, session)
            if method == "human.end":
                return await self.human.end(parsed, session)
            return await self.human.wait(parsed, session)
        if url := getattr(parsed, "url", None):
            try:
                check_navigation_url(url, self.allow_file_urls, self.origins)
            except E.BadRequest as err:
                if "reason" in err.details:  # an origin list: said where the user reads it too
                    log.warning("blocked a navigation to %s: %s", redact_credentials(url)[:200],
                                err.details["reason"])
                raise
        # A dialog that just opened blocks every tab until it is placed on its own.
        await self.dialog_waits.settled(getattr(parsed, "device", None))
        route = self.policy.route(method, getattr(parsed, "device", None),
                                  getattr(parsed, "tabId", None), self.queue.active_tab)
        if not isinstance(route, Local) and self.handovers.by_id:
            # A tab handed to a person takes no agent request (bridge/handover.py).
            tab = getattr(parsed, "tabId", None)
            self.handovers.refuse(method, route.device,
                                  tab if tab is not None else self.queue.active_tab(route.device))
        start = on_start or (lambda: None)
        if isinstance(route, Local) or method not in SERIALIZED_METHODS:
            start()
            result = await self._run(method, parsed, route)
        else:
            async with self.queue.turn(route.device, getattr(parsed, "tabId", None)):
                if session is not None and session.stopped:  # stopped while it queued
                    raise E.Cancelled(f"Session {session.label!r} was stopped by "
                                      f"{session.stopped_by} before this request ran; "
                                      "nothing was sent.")
                start()
                result = await self._run(method, parsed, route)
        if not isinstance(route, Local):
            self.queue.learn(method, route.device, getattr(parsed, "tabId", None), result)
        return result

    async def _run(self, method: str, parsed: Any, route: Any) -> dict[str, Any]:
        if method in HANG_WATCHED and not isinstance(route, Local):
            result = await self._watching_hang(method, parsed, route)
        else:
            result = await self._run_once(method, parsed, route)
        if method in CLOSES_TAB and not isinstance(route, Local):
            self.hangs.closed(route.device, result.get("tabId"))
        after = getattr(parsed, "snapshotAfter", None)
        if after is not None and not isinstance(route, Local) and "snapshotAfter" not in result:
            # (An act's provisional snapshot, kept, is in its result already.)
            await self._snapshot_after(parsed, route, after, result)
        return result

    async def _watching_hang(self, method: str, parsed: Any, route: Any) -> dict[str, Any]:
        """:meth:`_run_once`, with a hung page named as such (bridge/hang_watch.py): a tab
        already found stuck is probed first, a TIMEOUT is followed by one probe.

        Raises:
            PageUnresponsive: the tab's page does not run script (``details.tabId``).
        """
        tab = getattr(parsed, "tabId", None)
        tab = tab if tab is not None else self.queue.active_tab(route.device)
        await self.hangs.before(route.device, route.extension, tab, method)
        try:
            result = await self._run_once(method, parsed, route)
        except E.Timeout as err:
            await self.hangs.after_timeout(route.device, route.extension, tab, method, err)
            raise
        if result.get("transitionPending") and not result.get("dialog"):
            # A reload or history move that did not land in time answers "pending", not
            # TIMEOUT: the same one probe tells a stuck page from a slow one.
            timeout_ms = getattr(parsed, "timeoutMs", None)
            await self.hangs.after_timeout(
                route.device, route.extension, result.get("tabId", tab), method,
                E.Timeout("The load did not finish in time.", timeoutMs=timeout_ms))
        return result

    async def _snapshot_after(self, parsed: Any, route: Any, after: SnapshotAfter,
                              result: dict[str, Any]) -> None:
        """Add the snapshot ``after`` asks for to ``result`` (``snapshotAfter``, or
        ``snapshotAfterError`` with why not), taken once the action (or wait) answered and
        before the answer goes out; for input that is inside its tab-queue turn, so no
        other request of the tab runs between the action and it (issue 18: one request
        instead of two per MCP tool). It is scrubbed of typed secrets as any snapshot is,
        after what this action typed was recorded.

        None is taken when the action opened a dialog (the page cannot answer; the result
        names the dialog), a tab (the client may follow it and want that tab's state), or
        a batch stopped at a failure (the client reports the failure): every snapshot of
        a session is its next diff's baseline, so none is taken that may go unshown."""
        items = [result, *(result.get("completedActions") or [])]
        if any(i.get("dialog") or i.get("transitionPending") or i.get("newTabs")
               for i in items) or result.get("interruptedAction"):
            return
        tab = next((i["tabId"] for i in reversed(items) if isinstance(i.get("tabId"), int)),
                   parsed.tabId)
        if any(i.get("postActionDocumentChanged") for i in items) and isinstance(tab, int):
            # The state asked for is the new document's, not a page half loaded.
            await self._until_loaded(route.extension, tab)
        result.update(await self._take_snapshot(route.device, tab, after))

    async def _until_loaded(self, extension: str, tab: int) -> None:
        """Wait until ``tab`` no longer says ``status: loading`` in ``tabs.list``, it is
        gone, or LOAD_WAIT_S passed (polled every LOAD_POLL_S); never raises: the
        snapshot then shows what there is."""
        deadline = time.monotonic() + LOAD_WAIT_S
        while True:
            try:
                tabs = (await self.peer(extension).call("tabs.list", {}, RESOLVE_TIMEOUT_S))
            except E.TrustbridgeError:
                return
            row = next((t for t in tabs.get("tabs") or [] if t.get("tabId") == tab), None)
            if row is None or row.get("status") != "loading" or time.monotonic() >= deadline:
                return
            await asyncio.sleep(LOAD_POLL_S)

    async def _take_snapshot(self, device: str, tab: int | None, after: SnapshotAfter,
                             provisional: str | None = None) -> dict[str, Any]:
        """``{snapshotAfter: page.snapshot result}`` or ``{snapshotAfterError: payload}``;
        ``provisional``: asked as such (bridge/dispatch_signals.py: not the session's diff
        baseline until :meth:`_keep_snapshot`, no late tabs with it)."""
        try:
            model = SnapshotParams if provisional is None else _ProvisionalSnapshotParams
            params = model(device=device, tabId=tab, mode=after.mode,
                           maxChars=after.maxChars, session=after.session,
                           timeBudgetMs=after.timeBudgetMs,
                           **({} if provisional is None else {"provisional": provisional}))
            route = self.policy.route("page.snapshot", device, tab, self.queue.active_tab)
            return {"snapshotAfter": await self._run_once("page.snapshot", params, route)}
        except E.TrustbridgeError as err:
            return {"snapshotAfterError": err.to_payload().model_dump(mode="json",
                                                                      exclude_none=True)}

    async def _run_once(self, method: str, parsed: Any, route: Any) -> dict[str, Any]:
        if isinstance(parsed, ActParams) and not isinstance(route, Local):
            # What a type/fill typed is remembered whatever the answer (an uncertain
            # one may have reached the page): bridge/secrets.py.
            result: dict[str, Any] = {}
            try:
                result = await self._route(method, parsed, route)
            finally:
                tab = result.get("tabId", parsed.tabId)
                self.secrets.typed(route.device,
                                   tab if tab is not None else self.queue.active_tab(route.device),
                                   parsed.ref, parsed.action, result.get("sensitive") is True)
            if isinstance(snap := result.get("snapshotAfter"), dict):
                # Taken while the act ran (its provisional snapshot): masked again now
                # that what this act typed is known.
                self.secrets.scrub_snapshot(route.device, snap)
                self.secrets.scrub_tabs(route.device, snap)
            return self.secrets.scrub_tabs(route.device, result)
        result = await self._route(method, parsed, route)
        if method == "page.snapshot":
            # Issue 30 item 8: lines whose role and name only the browser's own
            # accessibility tree knows (ElementInternals), from the driver; before the
            # scrub, so a name holding a typed secret is masked like any other.
            driver = self.policy.drivers.get(route.device)
            await ax_facts.apply(result, None if driver is None else self.peer(driver).call)
            self.secrets.scrub_snapshot(route.device, result)
            self.secrets.scrub_tabs(route.device, result)  # the late tabs it reports
        elif method == "page.find":
            self.secrets.scrub_find(route.device, result)
            self.secrets.scrub_tabs(route.device, result)
        elif not isinstance(route, Local):
            self.secrets.scrub_tabs(route.device, result)
        return result

    async def _route(self, method: str, parsed: Any, route: Any) -> dict[str, Any]:
        match route, parsed:
            case Local(), _:
                links = await self.links() if self.links is not None else {}
                return {"devices": [d.model_copy(update=links.get(d.device, {})).model_dump()
                                    for d in self.policy.devices()]}
            case ToExtension() | TrustedInput(), BatchParams():
                return await self._batch(parsed, route)
            case ToExtension(), _:
                return await self._to_extension(method, parsed, route)
            case TrustedInput(), ActParams():
                return await self._trusted_input(route, parsed)
            case ToDriver(), _:
                return await self._to_driver(method, parsed, route)
        raise E.InternalError(f"No handler for {method} on {type(route).__name__}.")

    async def _to_extension(self, method: str, parsed: Any, route: ToExtension) -> dict[str, Any]:
        """One call to the extension (rule 5 for input on a device without a driver)."""
        started = time.monotonic()
        forward = parsed.model_dump(exclude={"device", "snapshotAfter"}, exclude_none=True)
        timeout_s = getattr(parsed, "timeoutMs", DEFAULT_TIMEOUT_MS) / 1000 + DRIVER_MARGIN_S
        if method in ALLOWED_UNDER_DIALOG or method in TABS_API_ONLY:
            # The extension's background answers these alone; a blocked page cannot hold
            # them up (closing the tab is the way out of an alert loop).
            before = self.dialog_waits.known(route.device)
            call = self.peer(route.extension).call(method, forward, timeout_s)
            if method in CLOSES_TAB and self.accept_beforeunload \
                    and isinstance(getattr(parsed, "tabId", None), int):
                result = await self._leaving(route.device, call, before, parsed.tabId)
            else:
                result = await call
            if method in CLOSES_TAB:  # the driver's dialog.closed may come after this
                self._forget_dialogs_of(route.device, result.get("tabId"), before)
        else:
            result = await self._unless_dialog(method, parsed, route, forward, timeout_s)
        if route.synthetic:
            result["inputPath"] = "synthetic"
            late = time.monotonic() if may_open_tab(parsed.action) else None
            result.update(await self.after.new_tabs(route.extension, result.get("tabId"),
                                                    started, 0, late))
        elif method in REPORTS_LATE_TABS and not getattr(parsed, "provisional", None):
            with contextlib.suppress(E.TrustbridgeError):  # the page's answer stands
                result.update(await self.after.late_tabs(route.extension, result.get("tabId")))
        result["device"] = route.device
        return result

    async def _unless_dialog(self, method: str, parsed: Any, route: ToExtension,
                             forward: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """Call the extension, or answer early when a JavaScript dialog blocks the tab the
        call waits on (bridge/dialog_waits.py): a load (``WAITS_FOR_LOAD``, e.g. an
        ``alert()`` in the new page's head) answers ``{tabId, transitionPending: true,
        dialog}``; anything else raises DIALOG_OPEN (the page cannot answer it). A
        ``page.navigate`` of a tab its dialog blocks dismisses that dialog through the
        driver first (``dismissedDialog`` in the result; DialogWaits.dismiss_before_load).

        Raises:
            DialogOpen: a dialog now blocks the tab of a call that is not a load.
        """
        device = route.device
        if method == "tabs.new":
            if not forward.get("url") or not self.policy.driver_capabilities(
                    device).get("trustedInput"):  # only a browser driver reports dialogs
                return await self.peer(route.extension).call(method, forward, timeout_s)
            return await open_tab(self.peer(route.extension), self.dialog_waits, device,
                                  forward["url"], self.policy.driver_browser(device),
                                  window=bool(forward.get("window")))
        tab = getattr(parsed, "tabId", None)
        tab = tab if tab is not None else self.queue.active_tab(device)
        dismissed: dict[str, Any] | None = None
        if method == "page.navigate":
            # A load on a blocked tab: dismiss its dialog through the driver first, so the
            # page gets one answer and the record agrees (bridge/dialog_waits.py).
            dismissed, nxt = await self.dialog_waits.dismiss_before_load(device, tab)
            if nxt is not None:
                shown = nxt.public()
                early: dict[str, Any] = {"transitionPending": True, "dialog": shown,
                                         "dismissedDialog": dismissed,
                                         "navigationStarted": False}
                if "tabId" in shown:
                    early["tabId"] = shown["tabId"]
                return early
        before = self.dialog_waits.known(device)
        call = asyncio.ensure_future(self.peer(route.extension).call(method, forward, timeout_s))
        # A dialog the old document raises while it is being navigated away from (an
        # alert loop) also answers early: the load is then pending behind it, and
        # tabs.close is the way out that always works.
        result, dialog = await self.dialog_waits.race(device, call, before, on_tab(tab))
        accepted: dict[str, Any] | None = None
        if dialog is not None and method == "page.navigate" and self.accept_beforeunload \
                and dialog.public().get("type") == "beforeunload":
            # issue 32 item 5: the agent asked to leave; the page's "leave this page?" is
            # answered yes and the load goes on (dismissing it kept the page: a loop).
            accepted = await self.dialog_waits.accept_leave(device, dialog)
            before = self.dialog_waits.known(device)
            result, dialog = await self.dialog_waits.race(device, call, before, on_tab(tab))
        if accepted is not None and result is not None:
            result["acceptedBeforeUnload"] = accepted
        if dialog is None:
            assert result is not None
            if method in WAITS_FOR_LOAD:
                # A new document: the browser dismissed the dialogs the tab had; the
                # driver's dialog.closed may come after this answer.
                self._forget_dialogs_of(device, result.get("tabId"), before)
            if dismissed is not None:
                result["dismissedDialog"] = dismissed
            return result
        shown = dialog.public()
        if method not in WAITS_FOR_LOAD:
            raise E.DialogOpen(
                f"{E.a_dialog(shown.get('type'))} opened on the page during {method} "
                f"({str(shown.get('message'))[:200]!r}); the page cannot answer until the "
                "dialog is answered (accept or dismiss), or the tab is closed or navigated "
                "away.",
                {"dialog": {"type": shown.get("type")}, "tabId": shown.get("tabId")},
            )
        out: dict[str, Any] = {"transitionPending": True, "dialog": shown}
        if dismissed is not None:
            out["dismissedDialog"] = dismissed
        if "tabId" in shown:
            out["tabId"] = shown["tabId"]
        return out

    async def _leaving(self, device: str, call: Any, before: set[int],
                       tab: int) -> dict[str, Any]:
        """``tabs.close`` of ``tab``: when the page asks to confirm leaving
        (beforeunload) the prompt is accepted, since the close was asked for (issue 32
        item 5), and the close's own answer awaited; the result then carries
        ``acceptedBeforeUnload`` (the prompt). Any other dialog is left to the close (the
        browser dismisses it with the page).

        Raises:
            TrustbridgeError: the close's own error.
        """
        task = asyncio.ensure_future(call)
        # Only a prompt placed on this tab: another tab's is never answered for it.
        leaving = lambda d: (d.tabs is not None and tab in d.tabs
                             and d.public().get("type") == "beforeunload")
        result, dialog = await self.dialog_waits.race(device, task, before, leaving)
        if dialog is None:
            assert result is not None
            return result
        accepted = await self.dialog_waits.accept_leave(device, dialog)
        result = await task
        if accepted is not None:
            result["acceptedBeforeUnload"] = accepted
        return result

    def _forget_dialogs_of(self, device: str, tab: Any, before: set[int]) -> None:
        """Forget the dialogs placed on ``tab`` alone that were open before the call."""
        if not isinstance(tab, int):
            return
        for d in self.policy.dialogs.all(device):
            if id(d) in before and d.tabs == frozenset({tab}):
                self.policy.dialogs.drop(device, d)

    async def _resolve(self, extension: str, tab_id: int | None, ref: str | None,
                       driver: str | None = None, **flags: Any) -> dict[str, Any]:
        """``{frameToken, css, tabId, …}`` of the ref's element, or of the tab's top frame
        without ``ref`` (the extension's ``page.resolveTarget``).

        A tab showing about:blank has no content script to name its top frame; the
        extension says so (``details.blank``: its place among the blank tabs) and, given
        the device's ``driver``, the driver names the page in the same place
        (``driver.blankPage``), so screenshots, evaluate, console and keys work on a new
        tab as Playwright's do on its page (issue 30: a false failure before).

        Raises:
            BrowserDocumentChanged: the frame is gone or not ready (or, without ``driver``,
                the tab is blank).
            ElementTargetAmbiguous: the driver cannot tell the blank tab's page apart.
        """
        params = {k: v for k, v in {"tabId": tab_id, "ref": ref}.items() if v is not None}
        params.update({k: v for k, v in flags.items() if v})
        # Checked against its result model on arrival (bridge/protocol/peer.py).
        try:
            return await self.peer(extension).call("page.resolveTarget", params,
                                                   RESOLVE_TIMEOUT_S)
        except E.BrowserDocumentChanged as err:
            blank = err.details.get("blank")
            if ref is not None or driver is None or not isinstance(blank, dict):
                raise
            found = await self.peer(driver).call("driver.blankPage", blank, RESOLVE_TIMEOUT_S)
            return {"frameToken": found["frameToken"], "css": None,
                    "tabId": err.details.get("tabId", tab_id)}

    def _driver_now(self, device: str) -> str:
        driver_id = self.policy.drivers.get(device)
        if driver_id is None:  # the driver left while the ref was being resolved (rule 4)
            raise E.TrustedInputUnavailable(
                f"The input driver of device {device!r} went offline; nothing was sent.",
                {"device": device},
            )
        return driver_id

    async def _to_driver(self, method: str, parsed: Any, route: ToDriver) -> dict[str, Any]:
        """A method only the driver serves, as its own method (``driver_method``)."""
        driver_method = METHODS[method].driver_method
        assert driver_method is not None, method
        fields = parsed.model_dump(exclude={"device", "tabId", "ref"}, exclude_none=True)
        if METHODS[method].frameless:  # no tab's frame is needed (cdp.endpoint)
            result = await self.peer(route.driver).call(driver_method, fields, RESOLVE_TIMEOUT_S)
            return {**result, "device": route.device}
        if METHODS[method].under_dialog:
            # It answers a dialog that blocks the page: the extension cannot resolve a
            # frame in a blocked page, and the driver does not need one. The dialog is the
            # named tab's (else the active tab's, else the oldest: bridge/dialogs.py).
            book = self.policy.dialogs
            dialog = book.to_answer(route.device, parsed.tabId,
                                    self.queue.active_tab(route.device))
            if parsed.tabId is not None and dialog is None and book.all(route.device):
                raise E.BadRequest(f"No JavaScript dialog is open on tab {parsed.tabId}.",
                                   {"tabId": parsed.tabId})
            if dialog is not None and dialog.id is not None:
                fields["dialogId"] = dialog.id
            result = await self.peer(route.driver).call(driver_method, fields, RESOLVE_TIMEOUT_S)
            out = {**result, "device": route.device}
            if dialog is not None:
                if dialog.id is not None:  # gone once answered (dialog.closed may come later)
                    book.closed(route.device, dialog.id)
                if "tabId" in dialog.public():
                    out["tabId"] = dialog.public()["tabId"]
            return out
        target = await self._resolve(route.extension, parsed.tabId, getattr(parsed, "ref", None),
                                     route.driver)
        fields.update(frameToken=target["frameToken"], css=target.get("css"))
        result = await self.peer(route.driver).call(driver_method, fields, DRIVER_CALL_TIMEOUT_S)
        return {**result, "tabId": target.get("tabId"), "device": route.device}

    async def _batch(self, params: BatchParams, route: ToExtension | TrustedInput) -> dict[str, Any]:
        """Run actions in order; stop at the first failure. Never replays anything."""
        completed: list[dict[str, Any]] = []
        for index, item in enumerate(params.actions):
            act = ActParams(device=params.device, tabId=params.tabId, ref=item.ref,
                            action=item.action, timeoutMs=item.timeoutMs)
            try:
                # Routed again: the driver may have gone (rule 4) or a dialog opened
                # between two actions.
                current = self.policy.route(BATCH_ITEM_METHOD, route.device)
                result = await self._run(BATCH_ITEM_METHOD, act, current)
            except E.TrustbridgeError as err:
                return {
                    "completedActions": completed,
                    "interruptedAction": {"index": index,
                                          "error": err.to_payload().model_dump(mode="json")},
                    "device": route.device,
                }
            completed.append({"index": index, **result})
        return {"completedActions": completed, "interruptedAction": None, "device": route.device}


LOAD_WAIT_S = 5.0
"""How long the snapshot after an action that loaded another document waits for it to
load, s (the MCP server waits as long for a tab it follows: bridge/mcp/response.py)."""
LOAD_POLL_S = 0.05
"""How often the tab's load status is read meanwhile, s."""


def driver_timeout_s(params: ActParams) -> float:
    """How long the bridge waits for ``driver.act``, s: the action's ``timeoutMs``, the
    margin, and KEY_ALLOWANCE_S per character of typed or filled text. Past it the answer
    is BROWSER_OPERATION_UNCERTAIN (the input may have reached the page; docs/design.md §2
    rule 7)."""
    text = getattr(params.action, "text", None) or getattr(params.action, "value", None)
    typed = len(text) if isinstance(text, str) else 0
    return params.timeoutMs / 1000 + DRIVER_MARGIN_S + typed * KEY_ALLOWANCE_S


class _ProvisionalSnapshotParams(SnapshotParams):
    """``page.snapshot`` as the executor asks for a provisional page state
    (bridge/dispatch_signals.py); never a client's request."""

    provisional: str = Field(min_length=1, max_length=32)


def _check_uploads(parsed: Any) -> None:
    """An ``upload`` action never hands a page a file of the state directory (the bridge
    token, the operator credential: bridge/files.py), whoever sends it; the MCP server
    adds its allowed roots before it sends.

    Raises:
        BadRequest: nothing was sent.
    """
    items = getattr(parsed, "actions", None) or [parsed]
    for item in items:
        action = getattr(item, "action", None)
        files = getattr(action, "files", None) if getattr(action, "kind", None) == "upload" \
            else None
        if files:
            check_upload(files, None)
