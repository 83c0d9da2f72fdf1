"""The supervisor: one browser, its frame tokens and its input driver.

It meets the bridge only on the wire: the extension and the driver each connect to
``bridge_url`` with the token, for the same ``device``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from pathlib import Path

from playwright.async_api import BrowserContext, Playwright, async_playwright

from .browser_limits import driver_capabilities
from . import locator_engine
from .driver import InputDriver
from .frames import FrameRegistry
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

    Attributes:
        launch_ms: how long the browser launch took, in ms (set by :meth:`start`).
    """

    def __init__(self, bridge_url: str, token: str, device: str = "chromium", *,
                 browser: str = "chromium", headless: bool = True,
                 trusted_input: bool = True, humanize: bool | float | None = None,
                 keep_ublock: bool = False, firefox_prefs: dict[str, PrefValue] | None = None,
                 keep_alive_ms: int | None = None) -> None:
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
        self.launch_ms: float | None = None
        self.frames = FrameRegistry()
        self.context: BrowserContext | None = None
        self.driver: InputDriver | None = None
        self._pw_cm: contextlib.AbstractAsyncContextManager[Playwright] | None = None
        self._ext: ExtensionCopy | None = None
        self._driver_task: asyncio.Task[None] | None = None
        self._profile: Path | None = None

    async def start(self) -> None:
        """Launch the browser with the extension and start the driver."""
        self._ext = prepare_extension(
            self.bridge_url, self.token, self.device, trusted_input=self.trusted_input,
            keep_alive_ms=self.keep_alive_ms,
            startup_marker=FIREFOX_STARTUP_MARKER if self.browser_name == "firefox" else None)
        self._pw_cm = async_playwright()
        pw = await self._pw_cm.__aenter__()
        await locator_engine.register(pw)
        self._profile = self._ext.path.parent / "profile"
        started = time.perf_counter()
        self.context = await self._launch(pw, self._ext.path, str(self._profile))
        self.launch_ms = (time.perf_counter() - started) * 1000
        self.frames.attach(self.context)
        if self.trusted_input:
            await self.start_driver()
        log.info("%s started for device %s", self.browser_name, self.device)

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
                                      capabilities=driver_capabilities(self.browser_name))
            self.driver.dialogs.attach(self.context)
        self.driver.connected.clear()
        self._driver_task = asyncio.create_task(self.driver.run())

    async def _launch(self, pw: Playwright, extension: Path, profile: str) -> BrowserContext:
        if self.browser_name == "firefox":
            return await launch_firefox(pw, extension, headless=self.headless,
                                        user_data_dir=profile, prefs=self.firefox_prefs)
        if self.browser_name == "camoufox":
            return await launch_camoufox(pw, extension, headless=self.headless,
                                         user_data_dir=profile, humanize=self.humanize,
                                         keep_ublock=self.keep_ublock, prefs=self.firefox_prefs)
        return await launch_chromium(pw, extension, headless=self.headless, user_data_dir=profile)

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

    async def stop(self) -> None:
        """Stop the driver, close the browser and remove the temp extension and profile."""
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

    async def __aenter__(self) -> Supervisor:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
