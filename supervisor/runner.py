"""The supervisor: one browser, its frame tokens and its input driver.

It meets the bridge only on the wire: the extension and the driver each connect to
``bridge_url`` with the token, for the same ``device``.

A headless browser that dies under it (killed, crashed) is started again, with a fresh
extension copy and profile, for the same device: the extension says hello again, the
driver's connection is kept (issue 13 item 3). A headed browser is not: its user may
have closed it on purpose, and Playwright does not say how it ended. More than
:data:`RESTART_LIMIT` deaths within :data:`RESTART_WINDOW_S` end it:
:attr:`Supervisor.gone` is set.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from pathlib import Path

from playwright.async_api import BrowserContext, Playwright, async_playwright

from .browser_limits import driver_capabilities
from .cdp_proxy import CdpProxy
from . import locator_engine
from .driver import InputDriver
from . import page_logs
from .frames import FrameRegistry
from . import origins, remote, watch
from .origins import OriginPolicy
from .launcher import (
    BROWSERS,
    FIREFOX_STARTUP_MARKER,
    ExtensionCopy,
    PrefValue,
    launch_camoufox,
    launch_chromium,
    launch_firefox,
    prepare_extension,
)

log = logging.getLogger("trustbridge.supervisor")

__all__ = ["BROWSERS", "Supervisor", "driver_capabilities"]

RESTART_LIMIT = 3
"""Browser restarts allowed within :data:`RESTART_WINDOW_S`; one more death gives up."""
RESTART_WINDOW_S = 60.0
"""Seconds over which browser deaths are counted against :data:`RESTART_LIMIT`."""
EXTENSION_GRACE_S = 5.0
"""How long the extension may stay away from the bridge (its own reconnect: 0.25 s
doubling) before the browser is restarted to bring it back, s (issue 32 item 2; the
bridge tells agents the same: bridge/server.py EXTENSION_GRACE_S)."""
BROWSER_RESTART_S = 15.0
"""The restart's expected length the agents are told, s."""


class Supervisor:
    """Launches and watches one browser for one device.

    Args:
        bridge_url: ``ws://127.0.0.1:PORT`` of the bridge.
        token: the bridge token.
        device: device id shared by this browser's extension and driver.
        browser: ``chromium``, ``firefox`` (Debian's firefox-esr over WebDriver BiDi) or
            ``camoufox`` (needs ``python -m camoufox fetch``); see docs/browsers.md.
        headless: run without a window.
        trusted_input: start the input driver (the device then requires trusted input).
        humanize: Camoufox only: human-like cursor movement (True, or the longest
            movement in seconds). Ignored by the other browsers.
        keep_ublock: Camoufox only: keep its default uBlock Origin addon.
        firefox_prefs: Firefox and Camoufox only: prefs on top of
            :data:`~supervisor.launcher.FIREFOX_PREFS`.
        keep_alive_ms: interval in ms of the extension background's keep-alive call
            (None: the extension's default, 20000).
        restart: start the browser again when it dies (default: when headless).
        viewport: ``{width, height}`` in CSS px of the top-level viewport (default
            :data:`~supervisor.launcher.VIEWPORT`; Camoufox: its window size).
        user_data_dir: a profile folder that outlives this supervisor (``--user-data-dir``;
            kept across restarts and runs); None: a fresh temp profile per launch, removed
            with the extension copy (``--isolated``, the default).
        executable_path: the browser binary instead of the one found on this machine.
        origins: which origins the pages may request (``--allowed-origins`` /
            ``--blocked-origins``, enforced by :func:`supervisor.origins.install`).
        output_dir: where files the browser produces are saved (``--output-dir``; None:
            the consumer's default). Kept here for the download and PDF paths.
        ca_file: for a ``wss://`` ``bridge_url`` (a remote device, docs/deploy.md): the
            PEM CA file the bridge's certificate must chain to (None: the system's store).
            The driver connects to that URL itself; the extension reaches it through a
            loopback relay (supervisor/remote.py).

    Attributes:
        launch_ms: how long the browser launch took, in ms (set by :meth:`start`).
        restarts: how many times the browser died and was started again.
        on_restart: called with :attr:`restarts` after each restart.
        gone: set when the browser died and was not (or could not be) started again.
    """

    def __init__(self, bridge_url: str, token: str, device: str = "chromium", *,
                 browser: str = "chromium", headless: bool = True,
                 trusted_input: bool = True, humanize: bool | float | None = None,
                 keep_ublock: bool = False, firefox_prefs: dict[str, PrefValue] | None = None,
                 keep_alive_ms: int | None = None, restart: bool | None = None,
                 viewport: dict[str, int] | None = None, user_data_dir: str | None = None,
                 executable_path: str | None = None, origins: OriginPolicy | None = None,
                 output_dir: str | None = None, ca_file: str | None = None) -> None:
        if browser not in BROWSERS:
            raise ValueError(f"Unsupported browser {browser!r}; choose one of {BROWSERS}.")
        self.bridge_url = bridge_url
        self.token = token
        self.device = device
        self.browser_name = browser
        self.headless = headless
        self.trusted_input = trusted_input
        self.humanize = humanize
        self.keep_ublock = keep_ublock
        self.firefox_prefs = firefox_prefs
        self.keep_alive_ms = keep_alive_ms
        self.viewport = dict(viewport) if viewport else None
        self.user_data_dir = user_data_dir
        self.executable_path = executable_path
        self.origins = origins or OriginPolicy()
        self.output_dir = output_dir
        self.ssl_context = remote.client_ssl_context(ca_file) \
            if remote.is_remote_url(bridge_url) else None
        self.relay: remote.Relay | None = None
        self.launch_ms: float | None = None
        self.restart = headless if restart is None else restart
        self.restarts = 0
        self.on_restart: Callable[[int], None] | None = None
        self.gone = asyncio.Event()
        self._stopping = False
        self._deaths: list[float] = []
        self._restart_task: asyncio.Task[None] | None = None
        self.frames = FrameRegistry("cdp" if browser == "chromium" else "transient")
        self.context: BrowserContext | None = None
        self.driver: InputDriver | None = None
        self._pw_cm: contextlib.AbstractAsyncContextManager[Playwright] | None = None
        self._ext: ExtensionCopy | None = None
        self._driver_task: asyncio.Task[None] | None = None
        self._profile: Path | None = None
        self._pw: Playwright | None = None
        self._ext_back = asyncio.Event()
        self._ext_watch: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Launch the browser with the extension and start the driver."""
        self._stopping = False
        if self.output_dir:  # downloads go there (process-wide: one supervisor per process)
            watch.configure_downloads(self.output_dir)
        await self._open_playwright()
        if self.ssl_context is not None and self.relay is None:
            self.relay = remote.Relay(self.bridge_url, self.ssl_context)
            await self.relay.start()
        await self._open_browser()
        if self.trusted_input:
            await self.start_driver()
        log.info("%s started for device %s", self.browser_name, self.device)

    async def _open_playwright(self) -> None:
        """Start Playwright (its node driver process) and watch that process: when it
        dies, :meth:`_playwright_gone` brings it and the browser back."""
        self._pw_cm = async_playwright()
        pw = await self._pw_cm.__aenter__()
        await locator_engine.register(pw)
        self._pw = pw
        # Playwright says nothing when its node driver process dies (SIGKILL, OOM): every
        # later call raises a bare Exception("Connection closed while reading from the
        # driver"), and no context "close" event comes. Its transport's error future is
        # the one place the death shows (playwright/_impl/_transport.py, private: read
        # defensively; without it the extension watch still restarts, slower).
        transport = getattr(getattr(self._pw_cm, "_connection", None), "_transport", None)
        failed = getattr(transport, "on_error_future", None)
        if isinstance(failed, asyncio.Future):
            cm = self._pw_cm
            failed.add_done_callback(lambda _f: self._playwright_gone(cm))

    def _playwright_gone(self, cm: object) -> None:
        """Playwright's node driver process of ``cm`` exited: the browser it ran is gone
        or out of reach (Chromium exits with its pipe). Start both again, as a dead
        browser is (issue 32 soak: every later action answered INTERNAL_ERROR "The
        driver failed: Exception.")."""
        if self._stopping or cm is not self._pw_cm:
            return
        log.warning("Playwright's driver process for device %s exited; starting it and %s "
                    "again", self.device, self.browser_name)
        self.frames.browser_gone()
        self.context = None  # unreachable now; its close is nobody's to wait for
        self._restart_task = asyncio.ensure_future(self._restart_playwright())

    async def _restart_playwright(self) -> None:
        if self.driver is not None:
            with contextlib.suppress(Exception):
                await self.driver.send_event("device.recovering", {
                    "part": "browser", "expectedWaitS": BROWSER_RESTART_S,
                    "action": "Playwright's driver process exited, so its supervisor is "
                    "starting it and the browser again; the tabs and refs from before are "
                    "gone"})
        old, self._pw_cm, self._pw = self._pw_cm, None, None
        if old is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(old.__aexit__(None, None, None), 10)
        try:
            await self._open_playwright()
        except Exception as exc:  # noqa: BLE001 - ends this supervisor, said once
            log.error("Playwright could not be started again: %s", exc)
            self.gone.set()
            return
        await self._restart()

    async def _open_browser(self) -> None:
        """A fresh extension copy and profile, the browser on them, frames watched."""
        self._ext = prepare_extension(
            self.relay.url if self.relay is not None else self.bridge_url, self.token, self.device, trusted_input=self.trusted_input,
            keep_alive_ms=self.keep_alive_ms,
            startup_marker=FIREFOX_STARTUP_MARKER if self.browser_name == "firefox" else None)
        # A --user-data-dir profile is the user's: reused on restart, never removed.
        self._profile = Path(self.user_data_dir) if self.user_data_dir \
            else self._ext.path.parent / "profile"
        started = time.perf_counter()
        context = await self._launch(self._pw, self._ext.path, str(self._profile))
        self.launch_ms = (time.perf_counter() - started) * 1000
        self.context = context
        context.on("close", lambda _ctx: self._browser_closed(context))
        self.frames.attach(context)
        page_logs.attach(context)  # console and network of every page (issue 15)
        await origins.install(context, self.origins)

    def _browser_closed(self, context: BrowserContext) -> None:
        """The context closed: by :meth:`stop`, or because the browser died."""
        if self._stopping or context is not self.context:
            return
        self.frames.browser_gone()
        if not self.restart:
            log.warning("%s closed; not starting it again (headed)", self.browser_name)
            self.context = None
            self.gone.set()
            return
        self._restart_task = asyncio.ensure_future(self._restart())

    async def _restart(self) -> None:
        now = time.monotonic()
        self._deaths = [t for t in self._deaths if now - t < RESTART_WINDOW_S] + [now]
        self.context = None
        if self._ext is not None:
            self._ext.cleanup()  # the dead browser's config (with the token) and profile
            self._ext = None
        if len(self._deaths) > RESTART_LIMIT:
            log.error("%s died %d times within %.0f s; not starting it again",
                      self.browser_name, len(self._deaths), RESTART_WINDOW_S)
            self.gone.set()
            return
        log.warning("%s exited unexpectedly; starting it again for device %s",
                    self.browser_name, self.device)
        if self.driver is not None:
            # newBrowser: the bridge forgets the old tabs' owners when the new browser's
            # extension says hello (a new tab may get an old tab's id: Firefox).
            with contextlib.suppress(Exception):
                await self.driver.send_event("device.recovering", {
                    "part": "browser", "expectedWaitS": BROWSER_RESTART_S,
                    "newBrowser": True, "action": "its supervisor is starting the browser "
                    "again; the tabs and refs from before are gone"})
        try:
            await self._open_browser()
        except Exception as exc:  # any launch failure ends this supervisor, said once
            log.error("%s could not be started again: %s", self.browser_name, exc)
            self.gone.set()
            return
        if self.driver is not None and self.context is not None:
            self.driver.dialogs.attach(self.context)
        self.restarts += 1
        log.warning("%s restarted for device %s (restart %d); its tabs and refs are gone",
                    self.browser_name, self.device, self.restarts)
        if self.on_restart is not None:
            self.on_restart(self.restarts)

    async def start_driver(self) -> None:
        """Start the input driver, or restart it after :meth:`stop_driver`: it connects to
        the bridge and says hello for this device again (reconnecting with backoff until
        the bridge answers). Nothing happens if it is already running.

        Raises:
            RuntimeError: the browser is not started (call :meth:`start` first).
        """
        if self._driver_task is not None and not self._driver_task.done():
            return
        if self.context is None:
            raise RuntimeError("The browser is not started; call start() first.")
        if self.driver is None:
            version = self.context.browser.version if self.context.browser else "?"
            self.driver = InputDriver(self.bridge_url, self.token, self.device, self.frames,
                                      browser=f"{self.browser_name} {version}",
                                      # --humanize: our rhythm on every browser (Camoufox
                                      # also gets its own cursor, launcher.py); unset: the
                                      # environment's TRUSTBRIDGE_HUMANIZE.
                                      humanize=None if self.humanize is None else bool(self.humanize),
                                      capabilities={**driver_capabilities(self.browser_name),
                                                    # A person may open tabs in a headed
                                                    # browser: sessions never claim those
                                                    # silently (bridge/sessions.py).
                                                    "headed": not self.headless,
                                                    # It restarts a browser whose
                                                    # extension stays away (not a
                                                    # person's headed one).
                                                    "watchesExtension": self.restart},
                                      ssl_context=self.ssl_context)
            self.driver.dialogs.attach(self.context)
            self.driver.on_reconnect = self._restamp
            self.driver.on_bridge_event = self._extension_event
            if self.browser_name == "chromium":  # the CDP door (issue 19, docs/cdp.md)
                self.driver.cdp = CdpProxy(
                    lambda: self.context.browser if self.context else None, self.device)
        self.driver.connected.clear()
        self._driver_task = asyncio.create_task(self.driver.run())

    async def _restamp(self) -> None:
        """The driver's connection came back: every frame holds a token the driver knows
        (FrameRegistry.restamp_all)."""
        if self.context is not None:
            count = await self.frames.restamp_all(self.context)
            log.info("driver reconnected; %d frames hold their token", count)

    def _extension_event(self, event: str, _params: dict[str, object]) -> None:
        """The bridge says the extension left or came back (supervisor/driver.py)."""
        if event == "extension.joined":
            self._ext_back.set()
            return
        self._ext_back.clear()
        if self.restart and (self._ext_watch is None or self._ext_watch.done()):
            self._ext_watch = asyncio.create_task(self._watch_extension())

    async def _watch_extension(self) -> None:
        """The extension left the bridge while the browser lives: give it
        EXTENSION_GRACE_S to come back by itself (a cut socket does), else restart the
        browser, which loads it afresh (issue 32 item 2: a killed extension process, or a
        ``chrome.runtime.reload()``, never came back). The bridge is told first, so every
        answer in the gap names the restart and its expected wait."""
        try:
            await asyncio.wait_for(self._ext_back.wait(), EXTENSION_GRACE_S)
            return
        except TimeoutError:
            pass
        if self._stopping or self.context is None or self._ext_back.is_set():
            return
        log.warning("the extension of device %s stayed away for %.0f s; restarting %s",
                    self.device, EXTENSION_GRACE_S, self.browser_name)
        if self.driver is not None:
            with contextlib.suppress(Exception):
                await self.driver.send_event("device.recovering", {
                    "part": "extension", "expectedWaitS": BROWSER_RESTART_S,
                    "action": f"it stayed away {EXTENSION_GRACE_S:g} s, so its supervisor "
                    "is restarting the browser; the tabs and refs from before are gone"})
        await self.restart_browser()

    async def restart_browser(self) -> None:
        """Close the running browser and start it again for the same device (a fresh
        extension copy and profile; counted like a death against RESTART_LIMIT)."""
        context = self.context
        if context is None or self._stopping:
            return
        self.context = None  # its close is ours: _browser_closed leaves it alone
        self.frames.browser_gone()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(context.close(), 10)
        await self._restart()

    async def _launch(self, pw: Playwright | None, extension: Path,
                      profile: str) -> BrowserContext:
        assert pw is not None, "start() opens Playwright first"
        if self.browser_name == "firefox":
            return await launch_firefox(pw, extension, headless=self.headless,
                                        user_data_dir=profile, prefs=self.firefox_prefs,
                                        viewport=self.viewport,
                                        executable_path=self.executable_path)
        if self.browser_name == "camoufox":
            return await launch_camoufox(pw, extension, headless=self.headless,
                                         user_data_dir=profile, humanize=self.humanize,
                                         keep_ublock=self.keep_ublock, prefs=self.firefox_prefs,
                                         viewport=self.viewport,
                                         executable_path=self.executable_path)
        return await launch_chromium(pw, extension, headless=self.headless, user_data_dir=profile,
                                     viewport=self.viewport, executable_path=self.executable_path)

    async def stop_driver(self) -> None:
        """Stop the input driver only (the browser keeps running); :meth:`start_driver`
        brings it back."""
        if self._driver_task is not None:
            self._driver_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._driver_task
            self._driver_task = None
        if self.driver is not None:
            await self.driver.close()
            if self.driver.cdp is not None:  # its endpoint goes with it (a new one later)
                await self.driver.cdp.close()

    async def stop(self) -> None:
        """Stop the driver, close the browser and remove the temp extension and profile."""
        self._stopping = True
        if self._ext_watch is not None and not self._ext_watch.done():
            self._ext_watch.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._ext_watch
        if self._restart_task is not None and not self._restart_task.done():
            self._restart_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._restart_task
        await self.stop_driver()
        if self.context is not None:
            with contextlib.suppress(Exception):
                await self.context.close()
            self.context = None
        if self._pw_cm is not None:
            with contextlib.suppress(Exception):
                await self._pw_cm.__aexit__(None, None, None)
            self._pw_cm = None
        if self._ext is not None:
            self._ext.cleanup()
            self._ext = None
        if self.relay is not None:
            await self.relay.stop()
            self.relay = None

    async def __aenter__(self) -> Supervisor:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
