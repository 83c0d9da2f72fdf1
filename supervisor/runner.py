"""The supervisor: one browser, its frame tokens and its input driver.

It meets the bridge only on the wire: the extension and the driver each connect to
``bridge_url`` with the token, for the same ``device``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
from pathlib import Path

from playwright.async_api import BrowserContext, Playwright, async_playwright

from .driver import InputDriver
from .frames import FrameRegistry
from .launcher import ExtensionCopy, launch_chromium, prepare_extension

log = logging.getLogger("trustbridge.supervisor")

BROWSERS = ("chromium",)


class Supervisor:
    """Launches and watches one browser for one device.

    Args:
        bridge_url: ``ws://127.0.0.1:PORT`` of the bridge.
        token: the bridge token.
        device: device id shared by this browser's extension and driver.
        browser: ``chromium`` (Firefox and Camoufox: issue 6).
        headless: run without a window.
        trusted_input: start the input driver (the device then requires trusted input).
    """

    def __init__(self, bridge_url: str, token: str, device: str = "chromium", *,
                 browser: str = "chromium", headless: bool = True,
                 trusted_input: bool = True) -> None:
        if browser not in BROWSERS:
            raise ValueError(f"Unsupported browser {browser!r}; choose one of {BROWSERS}.")
        self.bridge_url = bridge_url
        self.token = token
        self.device = device
        self.browser_name = browser
        self.headless = headless
        self.trusted_input = trusted_input
        self.frames = FrameRegistry()
        self.context: BrowserContext | None = None
        self.driver: InputDriver | None = None
        self._pw_cm: contextlib.AbstractAsyncContextManager[Playwright] | None = None
        self._ext: ExtensionCopy | None = None
        self._driver_task: asyncio.Task[None] | None = None
        self._profile: Path | None = None

    async def start(self) -> None:
        """Launch the browser with the extension and start the driver."""
        self._ext = prepare_extension(self.bridge_url, self.token, self.device)
        self._pw_cm = async_playwright()
        pw = await self._pw_cm.__aenter__()
        self._profile = self._ext.path.parent / "profile"
        self.context = await launch_chromium(pw, self._ext.path, headless=self.headless,
                                             user_data_dir=str(self._profile))
        self.frames.attach(self.context)
        version = self.context.browser.version if self.context.browser else "?"
        if self.trusted_input:
            self.driver = InputDriver(self.bridge_url, self.token, self.device, self.frames,
                                      browser=f"{self.browser_name} {version}")
            self._driver_task = asyncio.create_task(self.driver.run())
        log.info("%s started for device %s", self.browser_name, self.device)

    async def stop_driver(self) -> None:
        """Stop the input driver only (the browser keeps running)."""
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
            shutil.rmtree(self._ext.path.parent, ignore_errors=True)
            self._ext = None

    async def __aenter__(self) -> Supervisor:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
