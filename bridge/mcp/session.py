"""The MCP server's hold on the browser: :class:`Connection`, one per server.

It owns the bridge connection (and the embedded default it starts, or restarts, when no
bridge is running), the current device and tab, and the two look-ups several tools
share (every tab; the open dialog). What one tool call answers is not kept here: each
call builds its own :class:`~.response.Response`.

The tools reach the browser only through the SDK (:mod:`bridge.sdk`) over this
connection's :class:`~bridge.client.BridgeClient`: the MCP server is a client of the
bridge protocol like any other (design.md §10).

Sessions (issue 16, docs/sessions.md): each bridge connection is one session, opened and
renewed by :class:`~.lease.SessionLease`; a stopped one answers SESSION_STOPPED to every
later tool call. The session's first tab: :meth:`Connection.may_open_own_tab` and
:meth:`Connection.tab`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import config
from ..client import BridgeClient
from ..embedded import Embedded
from ..protocol import errors as E
from ..protocol.models import DeviceInfo
from ..sdk import Browser, SnapshotResult, Tab
from ..session_gate import READS
from .lease import SessionLease
from .options import McpOptions
from .report import OpenedTab, TabRow

log = logging.getLogger("trustbridge.mcp")


INPUT_METHODS = frozenset({"page.act", "page.batch"})
"""Methods whose ``newTabs`` are the action's own (any other reports late tabs)."""
INPUT_WINDOWS = 8
"""Input calls whose times are kept to judge when a late tab opened."""
PAGE_STATE_BUDGET_MS = 1_000
"""How long the page state after an action may walk the page, ms."""


class _Recording:
    """A BridgeClient that hands every result to ``note(method, result)`` (the
    Connection's record of reported tabs); everything else is the client's."""

    def __init__(self, client: BridgeClient,
                 note: Callable[[str, Mapping[str, Any], float], None]) -> None:
        self._client = client
        self._note = note

    async def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        sent_ms = time.time() * 1000
        result = await self._client.call(method, params)
        self._note(method, result, sent_ms)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


class ConnectionTab(Tab):
    """An SDK Tab whose snapshots always use its Connection's own diff baseline, and whose
    results tell the Connection which tabs they report opened.

    Two MCP servers on one bridge must not share "what you last saw" (issue 13 item 11),
    so every snapshot a tool takes through the connection names the connection's session,
    whatever session the tool passed. Every result's ``newTabs`` (an action's, or the late
    ones a snapshot, wait or find reports) reaches :meth:`Connection.take_opened`, whatever
    tool asked, so the Response can follow a foreground tab (issue 15 item 2).
    """

    def __init__(self, client: BridgeClient, device: str | None, tab_id: int | None,
                 session: str,
                 note: Callable[[str, Mapping[str, Any], float], None] | None = None) -> None:
        def noted(method: str, result: Mapping[str, Any], sent_ms: float) -> None:
            # Only the latest result's snapshot is the page as it is now (any later
            # request through this tab, even a read, may follow a change).
            after = result.get("snapshotAfter")
            self.snapshot_after = dict(after) if isinstance(after, Mapping) else None
            if note is not None:
                note(method, result, sent_ms)

        super().__init__(_Recording(client, noted), device, tab_id)  # type: ignore[arg-type]
        self.session = session
        self.snapshot_after: dict[str, Any] | None = None
        """The ``snapshotAfter`` of the latest result through this tab (a ``page.snapshot``
        result), if it carried one: the page state a tool's Response shows without
        asking again (Connection.tab ``page_state``). Per tab object, so per tool call:
        concurrent calls never see each other's."""

    async def snapshot_result(self, *, session: str | None = None,
                              **kwargs: Any) -> SnapshotResult:
        """:meth:`Tab.snapshot_result` in this connection's session (``session`` is
        ignored: a tool cannot pick another client's baseline)."""
        return await super().snapshot_result(session=self.session, **kwargs)


@dataclass(frozen=True)
class TabList:
    """Every tab of every device with an extension, and the dialog open now.

    Attributes:
        rows: ``(device, tab)`` in a stable order; a tab's position is the index
            browser_tabs takes.
        dialog: the JavaScript dialog open on the current device (any device when none is
            chosen), ``{type, message, defaultValue?, url?}``, from the same
            ``devices.list`` answer; None if there is none.
    """

    rows: list[TabRow]
    dialog: dict[str, Any] | None


class Connection:
    """Bridge connection, embedded launch, and the current tab of one MCP server.

    Args:
        url: bridge URL; default: the endpoint file of the running bridge.
        token: bridge token; default: the token file.
        embedded: when no bridge is reachable (and no ``url`` was given), start the
            embedded default (bridge + supervisor + headless Chromium) and stop it on
            :meth:`close`.
        bridge_port: port of the embedded bridge on 127.0.0.1; if taken, any free port.
        headless: run the embedded browser without a window.
        snapshot_after_action: the result of every tool that changes the page carries the
            page's snapshot (Playwright MCP's "Page state" section).
        progress: called with short progress lines (the CLI prints them to stderr).
        options: ``trustbridge mcp``'s options (bridge/mcp/options.py): the tools listed
            (``caps``), the session label, and how the embedded browser is launched
            (browser, viewport, profile, origins...; ``headless`` is the argument above).
        lease_ms: the session's lease, ms (default: the bridge's, 120 000; renewed every
            third of it while idle).
        ca_file: for a ``wss://`` ``url``: the PEM CA the bridge's certificate must chain
            to (docs/deploy.md).
        device: the device this session starts on (a bridge with several, e.g. remote
            devices); None: the only one connected.
    """

    def __init__(self, *, url: str | None = None, token: str | None = None,
                 embedded: bool = True, bridge_port: int = config.DEFAULT_PORT,
                 headless: bool = True, snapshot_after_action: bool = True,
                 progress: Callable[[str], None] | None = None,
                 options: McpOptions | None = None,
                 lease_ms: int | None = None, ca_file: str | None = None,
                 device: str | None = None) -> None:
        self.options = options or McpOptions()
        """Launch options of the embedded browser, and ``caps``."""
        self.caps = self.options.caps
        """The ``--caps`` this server lists tools for (bridge/mcp/server.py tools_for)."""
        self.url = url
        self.token = token
        self.embedded = embedded
        self.bridge_port = bridge_port
        self.headless = headless
        self.snapshot_after_action = snapshot_after_action
        self.progress = progress or (lambda _msg: None)
        self.ca_file = ca_file
        """For a ``wss://`` url: the CA the bridge's certificate must chain to."""
        self.device: str | None = device
        """Device of the current tab (None: the only device connected); set at start by
        ``trustbridge mcp --bridge-device NAME``, changed by browser_tabs select."""
        self.tab_id: int | None = None
        """The current tab, chosen with browser_tabs select (None: the active tab)."""
        self.snapshot_session = f"mcp-{secrets.token_hex(8)}"
        """Diff baseline of every snapshot this server shows the model (browser_snapshot
        and the page state after each action), so ``mode: diff`` means "since what you
        last saw" for this client alone (random: unique per server on a shared bridge)."""
        self.lease = SessionLease(self.options.session_label, lease_ms)
        """This server's session on the bridge (bridge/mcp/lease.py)."""
        self.own_tab_pending = True
        """The session has no tab of its own yet (or no longer: it closed or released the
        current one): its next tool call refused on a tab another session (or a person)
        holds gets a window of its own (:meth:`may_open_own_tab`), and on an attended
        device its first tab is such a window (:meth:`tab`). A read's result pinning the
        tab the browser has active does not end it (a read claims nothing: the tab may be
        another session's); an action's result, browser_tabs select/new/claim do."""
        self._held: int | None = None
        """The current tab when the bridge said it was this session's (an action answered
        there, or tabs.new / select / claim did): :meth:`lost_tab`."""
        self._notes: list[str] = []
        self._client: BridgeClient | None = None
        self._emb: Embedded | None = None
        self._restarts_seen = 0
        self._lock = asyncio.Lock()
        self._warm: asyncio.Task[None] | None = None
        self._bridge: tuple[str, int | None] | None = None
        """``(url, pid)`` of the bridge the session is open on (:meth:`_bridge_identity`)."""

    async def client(self) -> BridgeClient:
        """The bridge connection: reused while open, else (re)connected, else the embedded
        default is started (when allowed) and connected to. An embedded browser that has
        exited is started again.

        Raises:
            BrowserCrashed: (``what: "browser"``, once per restart) the embedded browser
                died and was started again (by its supervisor, or here); the agent's tabs
                and refs are gone. The next call proceeds.
            DeviceNotConnected: no bridge is reachable and none may or could be started.
            Unauthorized / ProtocolMismatch: the bridge refused this client.
            SessionStopped: this server's session was stopped (nothing is sent).
            BadRequest: the bridge refused ``session.open`` (a ``--session-label`` in use).
        """
        if self.lease.stopped is not None:
            raise self.lease.stopped
        self.lease.last_used = time.monotonic()
        async with self._lock:
            restarted = False
            if self._emb is not None and self._emb.child is not None \
                    and self._emb.child.returncode is not None:
                # Its keeper gave up (or was not running): start it here, on the same
                # bridge, so other clients' sessions on it stay (issue 32).
                self.progress("the browser this server started has exited; starting it again")
                try:
                    await self._emb.restart_supervisor()
                except E.TrustbridgeError:
                    await self._close_client()
                    await self._stop_embedded()
                    self._emb = await self._start_embedded()
                    self._emb.keep_supervisor()
                restarted = True
            elif self._emb is not None and self._emb.restarts > self._restarts_seen:
                restarted = True  # the supervisor started its dead browser again
            if restarted:
                assert self._emb is not None
                self._restarts_seen = self._emb.restarts
                raise self._restarted()
            if self._client is not None and not self._client.closed:
                return self._client
            lost = self._client is not None  # the bridge closed our connection
            self._client = None
            started = False
            try:
                client = await BridgeClient.connect(self.url, self.token, ca_file=self.ca_file)
                bridge = self._bridge_identity(None)
            except E.DeviceNotConnected as err:
                if not self.embedded or self.url is not None:
                    raise
                log.info("no bridge reachable (%s); starting the embedded default", err.message)
                await self._stop_embedded()
                try:
                    self._emb = await self._start_embedded()
                except E.BadRequest as busy:
                    # Another server's bridge came up meanwhile in this state directory:
                    # join it rather than fail (issue 32 soak: BAD_REQUEST "already
                    # running").
                    url = busy.details.get("url")
                    if not isinstance(url, str):
                        raise
                    client = await BridgeClient.connect(url, self.token)
                    bridge = self._bridge_identity(None)
                else:
                    self._emb.keep_supervisor()
                    client = await BridgeClient.connect(self._emb.url, self._emb.token)
                    bridge = self._bridge_identity(self._emb)
                    started = True
            await self.lease.open(client)
            try:
                await self._check_browser(client, started)
            except E.DeviceNotConnected:
                await client.close()
                raise
            if self._bridge is not None and bridge != self._bridge:
                self._moved(self._bridge, bridge, started)
            elif lost:
                log.info("reconnected to the bridge at %s", bridge[0])
            self._bridge = bridge
            # A new session owns nothing: its tab from before the reconnect was freed when
            # the old session ended and may be another session's now, so a refusal there
            # gets it a window of its own (may_open_own_tab). A tab only read (pinned)
            # stays "may open my own" too.
            self.own_tab_pending = self.own_tab_pending or self.tab_id is None or lost
            self._client = client
            return client

    def _bridge_identity(self, emb: Embedded | None) -> tuple[str, int | None]:
        """``(url, pid)`` naming one bridge process: a bridge that restarted on the same
        port is another bridge (its browser, tabs and refs are others)."""
        if emb is not None:
            return emb.url, os.getpid()
        if self.url is not None:
            return self.url, None
        info = config.read_endpoint() or {}
        pid = info.get("pid")
        return str(info.get("url")), pid if isinstance(pid, int) else None

    def _moved(self, old: tuple[str, int | None], new: tuple[str, int | None],
               started: bool) -> None:
        """The session now runs on another bridge than before (the one it used went away:
        its owner exited or it restarted): the current tab and every ref are from a
        browser that is gone, so the session starts afresh on the new one (its next
        navigate opens or takes a tab there) and the call's result says so (issue 32
        item 1; before, every later call answered BROWSER_TAB_CLOSED for the old tab)."""
        gone_tab = self.tab_id
        self.select(None, None)
        where = ("this server started its own bridge and browser at " + new[0]) if started \
            else f"this server connected to the bridge now running at {new[0]}"
        tab = f" Tab {gone_tab} and every" if gone_tab is not None else " Every"
        self._notes.append(
            f"The bridge this server used ({old[0]}) is gone; {where}.{tab} ref from before "
            "is gone: this call ran in that browser.")
        log.warning("bridge %s gone; now on %s", old[0], new[0])

    async def _check_browser(self, client: BridgeClient, started: bool) -> None:
        """A server started with ``--browser NAME`` (or its variable / config key) that
        joined a running bridge uses that browser only: the bridge's device running it
        becomes the current device, and when the bridge has none, every call is refused
        with the next step (issue 32 item 1: before, a Chromium bridge was used silently,
        with a warning on stderr only, which MCP clients hide). Chosen over starting the
        asked browser as a second device on the other bridge: that browser would belong
        to a bridge this server does not own, and live or die with it.

        Raises:
            DeviceNotConnected: (``details.requestedBrowser``) the running bridge has no
                device of the asked browser.
        """
        if started or "browser" not in self.options.launch_set or self.url is not None:
            return
        want = self.options.browser
        names = {"chromium": ("chrom",), "firefox": ("firefox",), "camoufox": ("camoufox",)}
        devices = (await client.call("devices.list")).get("devices") or []
        running = [(str(d.get("device")), str(d.get("browser") or "")) for d in devices
                   if d.get("extension")]
        match = [dev for dev, name in running if dev == want
                 or any(n in name.lower() for n in names.get(want, (want,)))]
        if match:
            if self.device is None or self.device not in match:
                self.device = match[0]
            return
        have = ", ".join(f"{dev} ({name or '?'})" for dev, name in running) or "no browser"
        raise E.DeviceNotConnected(
            f"This server was started with --browser {want}, but the bridge already running "
            f"in {config.state_dir()} has {have}; it does not use another browser than the "
            "one asked for.", {"requestedBrowser": want, "running": [d for d, _ in running]},
            next_step=f"Tell the user: stop the running bridge so this server starts {want} "
            "itself, or give this server its own TRUSTBRIDGE_HOME, or start it without "
            "--browser to use the running browser.")

    @property
    def label(self) -> str | None:
        """This server's session label (None before its bridge connection opened)."""
        return self.lease.label

    @property
    def session(self) -> dict[str, Any] | None:
        """The ``session.open`` answer (without its secret), None before it is open."""
        return self.lease.info

    @property
    def stopped(self) -> E.SessionStopped | None:
        """The SESSION_STOPPED every later tool call answers, once the session stopped."""
        return self.lease.stopped

    @property
    def client_name(self) -> str | None:
        """The MCP client's ``clientInfo.name``: the stem of the session label."""
        return self.lease.client_name

    @client_name.setter
    def client_name(self, name: str | None) -> None:
        self.lease.client_name = name

    def session_ended(self, err: E.TrustbridgeError) -> None:
        """A tool call answered ``err``: a SESSION_STOPPED is kept for every later call."""
        self.lease.ended(err)

    def may_open_own_tab(self, err: E.TrustbridgeError) -> bool:
        """Whether a tool call refused with ``err`` should get the session a window of its
        own and be run again there.

        The rule (issue 16 item 4, docs/sessions.md): a session's first tab. Until it has
        one (no browser_tabs select/new/claim, no action answered on a tab), a tool
        addresses the tab the browser has active, as Playwright MCP does: on the embedded
        launch, its one blank tab, which the first action claims. A read (browser_snapshot
        first) may have pinned that tab while it is another session's: reads are allowed
        there and claim nothing, so the pin alone does not make it this session's. When
        that tab is another session's or a person's, the bridge refuses the request before
        anything is sent (TAB_CLAIMED), so running the call again in a new window
        (``tabs.new {window: true}``: the foreground tab of a window of its own, which the
        browser does not throttle) does nothing twice. Once the session has a tab,
        TAB_CLAIMED is the call's answer, except on the tab it held when another session
        owns that one now (:meth:`lost_tab`): the call then runs in a new window too, and
        says why. Closing or releasing the current tab (:meth:`select` with no tab) makes
        it pending again.
        """
        if not isinstance(err, E.TabClaimed) or self.stopped is not None:
            return False
        return self.own_tab_pending or self.lost_tab(err)

    def lost_tab(self, err: E.TrustbridgeError) -> bool:
        """Whether ``err`` refused the call on the current tab this session held (an
        action answered there, browser_tabs new/select/claim made it current, or the
        server followed it as a tab the page opened) because another session owns it now
        (``details.owner``).

        A tab changes hands behind a session's back when its browser is started again and
        a new tab gets the id of a tab from before (Firefox counts tabs from 1 in each
        browser process; Chromium from a random start), or when the bridge freed the tab
        and another session took it. Before issue 32's soak fix every later call of the
        server answered TAB_CLAIMED for it, over and over (287 answers in one soak): the
        agent had no way out but browser_tabs. A late tab followed after this session's
        input may also be another session's window opened at that moment (the same loop,
        41 answers in a 4-minute soak). Selecting another session's tab is
        refused by the bridge (``tabs.select`` claims), so a held tab refused here was
        the session's own."""
        return (isinstance(err, E.TabClaimed) and not self.own_tab_pending
                and self.tab_id is not None and self._held == self.tab_id
                and err.details.get("tabId") == self.tab_id
                and bool(err.details.get("owner")))

    async def open_own_tab(self, refused: E.TrustbridgeError | None = None) -> None:
        """Open this session's own window (``tabs.new {window: true}``) and make its tab
        current; the line saying so is kept for the tool's result (:meth:`take_notes`).

        Args:
            refused: the TAB_CLAIMED that refused the call on the browser's active tab;
                None: the device is attended (a person may be using its tabs).

        Raises:
            TrustbridgeError: as ``tabs.new`` raises.
        """
        lost = refused is not None and self.lost_tab(refused)
        # own_tab_pending ends with the window (select below), not before: a tabs.new
        # that fails (the browser being recovered) must leave the next refusal to open it
        # (before, every later call answered TAB_CLAIMED on the other session's tab: the
        # issue 32 soak's loop).
        client = await self.client()
        opened = await client.call("tabs.new", {"device": self.device, "window": True})
        self.select(opened.get("device") or self.device, int(opened["tabId"]), held=True)
        if lost:
            assert refused is not None
            tab = refused.details.get("tabId")
            self._notes.append(
                f"Opened a new window for this session (tab {opened['tabId']}): tab {tab}, "
                f"this session's current tab, now belongs to session "
                f'"{refused.details.get("owner")}" (a browser started again reused its '
                "id, it was freed and taken, or it was followed as new but is that "
                "session's). Refs from tab "
                f"{tab} are gone.")
            return
        if refused is None:
            why = "a person may be using this browser's other tabs"
        else:
            owner = refused.details.get("owner")
            whose = f'belongs to session "{owner}"' if owner else "is a person's"
            why = f"the tab the browser had active (tab {refused.details.get('tabId')}) {whose}"
        self._notes.append(f"Opened a new window for this session (tab {opened['tabId']}): "
                           f"{why}.")

    async def replace_gone_tab(self, gone: int) -> None:
        """The current tab ``gone`` no longer exists (closed by a person, a page or another
        client): open a tab for this session (``tabs.new``, a window of its own) and make
        it current; the line saying so is kept for the tool's result (issue 32 item 1).

        Raises:
            TrustbridgeError: as ``tabs.new`` raises.
        """
        client = await self.client()
        opened = await client.call("tabs.new", {"device": self.device, "window": True})
        self.select(opened.get("device") or self.device, int(opened["tabId"]), held=True)
        self.own_tab_pending = False
        self._notes.append(f"Tab {gone} is gone (closed); opened tab {opened['tabId']} for "
                           "this session and navigated there. Refs from tab "
                           f"{gone} are gone.")

    def take_notes(self) -> list[str]:
        """Lines about what the connection did for the current call (a window it opened),
        each once."""
        notes, self._notes = self._notes, []
        return notes

    def _restarted(self) -> E.BrowserCrashed:
        """The answer of the first call after the embedded browser came back: what the
        agent knew (tabs, refs, the current tab) is gone, and this call did nothing."""
        self.select(None, None)
        return E.BrowserCrashed(
            "The browser this MCP server started was started again (it died, or its "
            "extension stayed away from the bridge and its supervisor restarted it). Every "
            "tab and ref from before is gone; this call was not performed.",
            {"what": "browser", "tabId": None},
            next_step="Open a page with browser_navigate (or call browser_snapshot on the "
            "new tab) and use only the refs of that new snapshot.")

    @property
    def launched(self) -> Embedded | None:
        """The embedded default this connection started and still runs, if any."""
        return self._emb

    async def _start_embedded(self) -> Embedded:
        ports = [self.bridge_port] if self.bridge_port == 0 else [self.bridge_port, 0]
        for port in ports:
            # The launch options (--browser, --viewport-size, ...: bridge/mcp/options.py);
            # ``headless`` stays this connection's own (older callers pass it alone).
            launch = {**self.options.embedded_kwargs(), "headless": self.headless}
            emb = Embedded(port=port, progress=self.progress, **launch)
            try:
                await emb.start()
                return emb
            except OSError as exc:
                await emb.stop()
                if port == 0:
                    raise E.DeviceNotConnected(f"Cannot start a bridge: {exc}.") from exc
                self.progress(f"port {port} is taken; using a free port")
            except BaseException:
                await emb.stop()
                raise
        raise AssertionError("unreachable")

    async def _stop_embedded(self) -> None:
        if self._emb is not None:
            emb, self._emb = self._emb, None
            # The next embedded default counts its restarts from 0: a restart of it must
            # still be reported when the stopped one had restarted before.
            self._restarts_seen = 0
            await emb.stop()

    async def browser(self) -> Browser:
        """An SDK Browser on this connection, addressing the current device."""
        return Browser(await self.client(), self.device)

    async def tab(self, *, page_state: bool = False) -> Tab:
        """The current tab as an SDK Tab (not checked; a closed tab fails at its next use);
        its snapshots use :attr:`snapshot_session`, and the tabs its results report opened
        are kept for :meth:`take_opened`.

        ``page_state``: the tool will show the page state after its action or wait, so
        (when :attr:`snapshot_after_action` is on) its actions, batches and waits ask the
        bridge for the snapshot in the same request (``snapshotAfter``; issue 18), which
        the Response takes from the tab (``ConnectionTab.snapshot_after``) instead of
        asking again.

        The session's first tab on an attended device (``lease.attended``) is a window of
        its own, opened here: no tab a person may be using is read or acted on unasked.
        """
        if self.own_tab_pending and self.tab_id is None and self.stopped is None:
            await self.client()  # the session and its devices' facts
            attended = self.lease.attended
            if self.device in attended or (self.device is None and len(attended) == 1):
                await self.open_own_tab()
        tab = ConnectionTab(await self.client(), self.device, self.tab_id,
                            self.snapshot_session, self._note_result)
        if page_state and self.snapshot_after_action:
            tab._after = {"session": self.snapshot_session,
                          "timeBudgetMs": PAGE_STATE_BUDGET_MS}
        return tab

    # What results reported (issue 15 item 2). Class defaults: the constructor belongs to
    # the launch options.
    _opened: list[OpenedTab] | None = None
    _inputs: tuple[tuple[float, float], ...] = ()

    @property
    def input_windows(self) -> tuple[tuple[float, float], ...]:
        """``(sent, answered)`` of the last INPUT_WINDOWS input calls, ms since the epoch
        (the clock of a tab's ``openedAt``), oldest first."""
        return self._inputs

    def _note_result(self, method: str, result: Mapping[str, Any], sent_ms: float) -> None:
        """Keep the ``newTabs`` of a result (and of a batch's completed actions), and when
        an input call was sent and answered."""
        if method in INPUT_METHODS:
            self._inputs = (*self._inputs, (sent_ms, time.time() * 1000))[-INPUT_WINDOWS:]
        if method.startswith("page.") and isinstance(result.get("tabId"), int):
            if self.tab_id is None:
                # Pin "the active tab" to the tab that answered: a tab the page brings to
                # the front must become current by being followed (and said), never
                # silently. A read's pin keeps own_tab_pending: the tab may be another
                # session's (reads are allowed there, docs/sessions.md).
                self.device = result.get("device") or self.device
                self.tab_id = result["tabId"]
            if method not in READS and result["tabId"] == self.tab_id:
                # An action answered on the current tab: the bridge gave it to this
                # session (a free tab is claimed by its first action), or it was already.
                self.own_tab_pending = False
                self._held = self.tab_id
        after = result.get("snapshotAfter")
        items = [result, *(result.get("completedActions") or [])]
        for item in items:
            for tab in item.get("newTabs") or []:
                if self._opened is None:
                    self._opened = []
                self._opened.append(OpenedTab(item.get("device") or result.get("device"),
                                              dict(tab), method not in INPUT_METHODS))
        for tab in (after or {}).get("newTabs") or []:  # reported late by the snapshot
            if self._opened is None:
                self._opened = []
            self._opened.append(OpenedTab(result.get("device"), dict(tab), True))

    def take_opened(self) -> list[OpenedTab]:
        """The tabs results reported opened since the last call, in order (each once)."""
        opened, self._opened = self._opened or [], None
        return opened

    def select(self, device: str | None, tab_id: int | None, *, held: bool = False) -> None:
        """Make ``tab_id`` of ``device`` the current tab of every later tool call (a tab
        this session chose: it has a tab now). ``tab_id`` None: the current tab was
        closed, released or is gone; later calls address the browser's active tab, and
        the session may again open a window of its own (:meth:`may_open_own_tab`).
        ``held``: the bridge has just said the tab is this session's (tabs.new, select,
        claim answered), so losing it later is :meth:`lost_tab`; an action answered
        there says so too."""
        self.device, self.tab_id = device, tab_id
        self.own_tab_pending = tab_id is None
        self._held = tab_id if held else None

    def is_current(self, device: str, tab: Mapping[str, Any]) -> bool:
        """Whether ``tab`` of ``device`` is the one later tool calls act on: the chosen
        tab, else the session's current tab on the bridge (a ``tabs.list`` row's
        ``current``: a tab the session opened, not the browser's active one), else the
        active tab."""
        if self.tab_id is None:
            current = tab.get("current")
            if current is not None:
                return bool(current) and self.device in (None, device)
            return bool(tab.get("active")) and self.device in (None, device)
        return self.tab_id == tab.get("tabId") and self.device in (None, device)

    def _dialog(self, devices: Sequence[DeviceInfo],
                active: Mapping[str, int] | None = None) -> dict[str, Any] | None:
        """The dialog that blocks the current tab: on the chosen tab (``tab_id``, else the
        device's active tab when ``active`` names it) or not yet placed on any tab. A
        dialog on another tab does not block this one (docs/design.md §2.1)."""
        for dev in devices:
            if self.device not in (None, dev.device):
                continue
            current = self.tab_id if self.tab_id is not None else (active or {}).get(dev.device)
            for dialog in dev.dialogs or ([dev.dialog] if dev.dialog else []):
                placed = dialog.get("tabId")
                if current is None or placed is None or placed == current:
                    return dict(dialog)
        return None

    async def tab_list(self) -> TabList:
        """Every tab of every device with an extension: one ``devices.list``, then one
        ``tabs.list`` per such device.

        Raises:
            DeviceNotConnected: no extension is connected.
        """
        browser = await self.browser()
        devices = await browser.devices()
        with_ext = [d for d in devices if d.extension]
        if not with_ext:
            raise E.DeviceNotConnected("No browser extension is connected to the bridge.")
        rows: list[TabRow] = []
        for dev in with_ext:
            rows += [(dev.device, dict(t))
                     for t in await Browser(browser.client, dev.device).tabs()]
        active = {device: t["tabId"] for device, t in rows if t.get("active")}
        # The session's current tab, where the bridge sends its tabId-less requests, is
        # the one whose dialog blocks this server's tools (not the browser's active tab).
        active.update({device: t["tabId"] for device, t in rows if t.get("current")})
        return TabList(rows, self._dialog(devices, active))

    async def open_dialog(self) -> dict[str, Any] | None:
        """The JavaScript dialog open on the current device now (any device when none is
        chosen), from one ``devices.list``; None if there is none or the bridge cannot say."""
        try:
            return self._dialog(await (await self.browser()).devices())
        except E.TrustbridgeError:
            return None

    def client_connected(self) -> None:
        """The client connected (its first message, ``initialize`` or ``server/discover``,
        came): when no bridge is running (and this server may
        start one), start the browser now (:meth:`start_in_background`), so its start
        overlaps the client's initialize and tools/list instead of delaying the first
        tool call (tests/e2e/test_mcp_cli.py
        ``test_the_browser_starts_while_the_client_initializes``)."""
        if self.embedded and self.url is None and config.live_endpoint() is None:
            self.start_in_background()

    def start_in_background(self) -> None:
        """Connect now, starting the embedded default when no bridge is running, while
        the client is still initializing: the first tool call then waits only for what is
        left of the start (it takes :meth:`client`'s lock after this). A failure here is
        logged only; the first tool call tries again and reports it as its error."""
        if self._warm is None:
            self._warm = asyncio.create_task(self._warm_up())

    async def _warm_up(self) -> None:
        try:
            await self.client()
        except Exception as err:  # noqa: BLE001 - the first tool call retries and reports
            log.info("starting in the background failed (%s); the first call retries", err)

    async def _close_client(self) -> None:
        self.lease.stop_heartbeat()
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()

    async def close(self) -> None:
        """Close the connection (the bridge stops its session: ``onDisconnect: "stop"``;
        its tabs stay open, free) and stop the embedded default if this one started it
        (a start still under way in the background is cancelled: it stops what it began)."""
        if self._warm is not None and not self._warm.done():
            self._warm.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._warm
        await self._close_client()
        await self._stop_embedded()


Session = Connection
"""The name ``trustbridge mcp`` (bridge/cli.py) and older callers construct."""
