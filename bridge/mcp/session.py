"""The MCP server's hold on the browser: one bridge connection, the current tab, and the
embedded default it starts when no bridge is running.

The tools reach the browser only through the SDK (:mod:`bridge.sdk`) over this
session's :class:`~bridge.client.BridgeClient`: the MCP server is a client of the bridge
protocol like any other (design.md §10).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .. import config
from ..client import BridgeClient
from ..embedded import Embedded
from ..protocol import errors as E
from ..sdk import Browser, SnapshotResult, Tab
from .report import (
    Result,
    TabRow,
    dialog_of,
    input_path,
    modal_section,
    new_tabs_of,
    render_tabs,
    warnings,
)

log = logging.getLogger("trustbridge.mcp")

MCP_SNAPSHOT_SESSION = "mcp"
"""Diff baseline of every snapshot this server shows the model (browser_snapshot and the
page state after each action), so ``mode: diff`` means "since what you last saw"."""
OPENED_SLACK_S = 0.05
"""Clock slack when comparing a tab's ``openedAt`` (the browser's clock) with the start of
a tool call (this process's clock; the same machine), s."""


class Session:
    """Connection, current tab and options shared by every tool call of one MCP server.

    Args:
        url: bridge URL; default: the endpoint file of the running bridge.
        token: bridge token; default: the token file.
        embedded: when no bridge is reachable (and no ``url`` was given), start the
            embedded default (bridge + supervisor + headless Chromium) and stop it on
            :meth:`close`.
        bridge_port: port of the embedded bridge on 127.0.0.1; if taken, any free port.
        headless: run the embedded browser without a window.
        snapshot_after_action: append the page's snapshot to the result of every tool
            that changes the page (Playwright MCP's "Page state" section).
        progress: called with short progress lines (the CLI prints them to stderr).
    """

    def __init__(self, *, url: str | None = None, token: str | None = None,
                 embedded: bool = True, bridge_port: int = config.DEFAULT_PORT,
                 headless: bool = True, snapshot_after_action: bool = True,
                 progress: Callable[[str], None] | None = None) -> None:
        self.url = url
        self.token = token
        self.embedded = embedded
        self.bridge_port = bridge_port
        self.headless = headless
        self.snapshot_after_action = snapshot_after_action
        self.progress = progress or (lambda _msg: None)
        self.device: str | None = None
        """Device of the current tab (None: the only device connected)."""
        self.tab_id: int | None = None
        """The current tab, chosen with browser_tabs select (None: the active tab)."""
        self.call_started = time.time()
        """When the running tool call started, epoch s (set by :meth:`Tool.call`)."""
        self._client: BridgeClient | None = None
        self._emb: Embedded | None = None
        self._lock = asyncio.Lock()

    async def client(self) -> BridgeClient:
        """The bridge connection: reused while open, else (re)connected, else the embedded
        default is started (when allowed) and connected to. An embedded browser that has
        exited is started again.

        Raises:
            DeviceNotConnected: no bridge is reachable and none may or could be started.
            Unauthorized / ProtocolMismatch: the bridge refused this client.
        """
        async with self._lock:
            if self._emb is not None and self._emb.child is not None \
                    and self._emb.child.returncode is not None:
                self.progress("the browser this server started has exited; starting it again")
                await self._close_client()
                await self._stop_embedded()
            if self._client is not None and not self._client.closed:
                return self._client
            self._client = None
            try:
                self._client = await BridgeClient.connect(self.url, self.token)
                return self._client
            except E.DeviceNotConnected as err:
                if not self.embedded or self.url is not None:
                    raise
                log.info("no bridge reachable (%s); starting the embedded default", err.message)
            await self._stop_embedded()
            self._emb = await self._start_embedded()
            self._client = await BridgeClient.connect(self._emb.url, self._emb.token)
            return self._client

    @property
    def launched(self) -> Embedded | None:
        """The embedded default this session started and still runs, if any."""
        return self._emb

    async def _start_embedded(self) -> Embedded:
        ports = [self.bridge_port] if self.bridge_port == 0 else [self.bridge_port, 0]
        for port in ports:
            emb = Embedded(port=port, headless=self.headless, progress=self.progress)
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
            await emb.stop()

    async def browser(self) -> Browser:
        """An SDK Browser on the session's connection, addressing the current device."""
        return Browser(await self.client(), self.device)

    async def tab(self) -> Tab:
        """The current tab as an SDK Tab (not checked; a closed tab fails at its next use)."""
        return Tab(await self.client(), self.device, self.tab_id)

    def select(self, device: str | None, tab_id: int | None) -> None:
        """Make ``tab_id`` of ``device`` the current tab of every later tool call."""
        self.device, self.tab_id = device, tab_id

    def is_current(self, device: str, tab: Mapping[str, Any]) -> bool:
        """Whether ``tab`` of ``device`` is the one later tool calls act on."""
        if self.tab_id is None:
            return bool(tab.get("active")) and self.device in (None, device)
        return self.tab_id == tab.get("tabId") and self.device in (None, device)

    async def all_tabs(self) -> list[TabRow]:
        """Every tab of every device with an extension, in a stable order: (device, tab).
        A tab's position in this list is the index browser_tabs takes.

        Raises:
            DeviceNotConnected: no extension is connected.
        """
        browser = await self.browser()
        devices = [d for d in await browser.devices() if d.extension]
        if not devices:
            raise E.DeviceNotConnected("No browser extension is connected to the bridge.")
        out: list[TabRow] = []
        for dev in devices:
            out += [(dev.device, dict(t))
                    for t in await Browser(browser.client, dev.device).tabs()]
        return out

    async def open_dialog(self) -> dict[str, Any] | None:
        """The JavaScript dialog open on the current device now (any device when none is
        chosen), from ``devices.list``; None if there is none or the bridge cannot say."""
        try:
            devices = await (await self.browser()).devices()
        except E.TrustbridgeError:
            return None
        for dev in devices:
            if dev.dialog and self.device in (None, dev.device):
                return dict(dev.dialog)
        return None

    async def page_state(self, tab: Tab | None = None) -> str:
        """The "Page state" section: URL, title and snapshot of the current tab; while a
        JavaScript dialog blocks the page, the "Modal state" section instead.

        Never raises: if the snapshot fails (the page is navigating), the section says so.
        """
        try:
            snap = await (tab or await self.tab()).snapshot_result(session=MCP_SNAPSHOT_SESSION)
        except E.DialogOpen:
            dialog = await self.open_dialog()
            if dialog is not None:
                return modal_section(dialog)
            return "### Page state\n(snapshot unavailable: a dialog blocks the page)"
        except E.TrustbridgeError as err:
            return ("### Page state\n"
                    f"(snapshot unavailable: {err.code.value}; call browser_snapshot)")
        return format_page_state(snap)

    async def after_action(self, result_line: str, tab: Tab | None = None,
                           results: Sequence[Result] = (),
                           labels: Sequence[str] = ()) -> str:
        """The text of a tool that changed the page.

        Sections: ``### Result`` (``result_line``, then ``with trusted input`` or
        ``with SYNTHETIC input`` when ``results`` carry an input path, then warnings such
        as ``delivered: false``); ``### New tabs`` when input opened tabs; ``### Modal
        state`` when a JavaScript dialog is open (the snapshot is skipped: the page is
        blocked); else ``### Page state`` when :attr:`snapshot_after_action` is on.

        Args:
            result_line: what was done, without a final full stop.
            tab: the tab acted on (default: the current tab).
            results: the bridge's result of each action (``page.act`` results or the
                ``completedActions`` of a batch).
            labels: how to name each action in warnings, e.g. ``"the click on Buy (ref
                e7)"`` (same order; default ``"the click"``).
        """
        how = input_path(results)
        lines = [result_line + (f" with {how}." if how else ".")]
        lines += warnings(results, list(labels) or ["the click"] * len(results))
        sections = ["### Result\n" + "\n".join(lines)]
        dialog = dialog_of(results)
        if dialog is None and not self.snapshot_after_action:
            dialog = await self.open_dialog()
        if dialog is not None:
            state = modal_section(dialog)
        elif self.snapshot_after_action:
            state = await self.page_state(tab)
        else:
            state = ""
        # Looked for after the snapshot: a popup's tab can appear a little after the
        # click that opened it has returned.
        opened = await self._new_tabs_section(results) if how else ""
        return "\n\n".join(s for s in (*sections, opened, state) if s)

    async def _new_tabs_section(self, results: Sequence[Result]) -> str:
        """The "New tabs" section: tabs the actions reported (``newTabs``), and tabs whose
        opener is the tab acted on that opened since this tool call started (the bridge
        reports a popup only when the driver saw it before the click returned)."""
        reported = new_tabs_of(results)
        openers = {r.get("tabId") for r in results} - {None}
        try:
            tabs = await self.all_tabs()
        except E.TrustbridgeError:
            tabs = []
        since_ms = (self.call_started - OPENED_SLACK_S) * 1000
        ids = {t.get("tabId") for t in reported} | {
            t.get("tabId") for _, t in tabs
            if t.get("openerTabId") in openers and (t.get("openedAt") or 0) >= since_ms}
        if not ids:
            return ""
        if not ids & {t.get("tabId") for _, t in tabs}:  # already closed, or no list
            lines = [f"- [{t.get('title', '')}]({t.get('url', '')}) tab {t.get('tabId')}"
                     for t in reported]
            return "### New tabs\n" + "\n".join(lines)
        return render_tabs(tabs, self.is_current, only=ids, heading="### New tabs") + \
            "\n(select one with browser_tabs action select and its index)"

    async def _close_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()

    async def close(self) -> None:
        """Close the connection and stop the embedded default if this session started it."""
        await self._close_client()
        await self._stop_embedded()


def format_page_state(snap: SnapshotResult) -> str:
    """Render a snapshot result the way Playwright MCP shows page state."""
    lines = ["### Page state", f"- Page URL: {snap.get('url', '')}",
             f"- Page Title: {snap.get('title', '')}"]
    if "tabId" in snap:
        on = f" on {snap['device']}" if "device" in snap else ""
        lines.append(f"- Tab: {snap['tabId']}{on}")
    # The extension's truncation trailer names the wire method; the model calls the tool.
    text = snap.get("snapshot", "").replace("call page.snapshot with cursor",
                                            "call browser_snapshot with cursor")
    lines += ["- Page Snapshot:", "```yaml", text, "```"]
    return "\n".join(lines)
