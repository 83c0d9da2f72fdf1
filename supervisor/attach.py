"""Trusted input in a browser someone else started: an input driver attached over CDP.

``trustbridge attach --cdp http://127.0.0.1:9222`` (bridge/cli_attach.py) runs this. The
person started Chromium with ``--remote-debugging-port`` and our extension loaded and
paired (bridge/pairing.py), so the device's extension is already connected to the bridge.
:class:`Attached` launches nothing: it connects Playwright to that browser
(``chromium.connect_over_cdp``), stamps every frame with a token exactly as a supervised
browser's frames are stamped (:class:`~supervisor.frames.FrameRegistry`), records console
and network (supervisor/page_logs.py) and runs the :class:`~supervisor.driver.InputDriver`
for the device. The driver's hello makes the device require trusted input
(design.md §2 rule 1; the paired device's record keeps the promise across bridge restarts,
bridge/pairing.py): once this process is gone, input for the device fails
TRUSTED_INPUT_UNAVAILABLE; it never falls back to synthetic events.

Leaving never closes the person's browser: Playwright's connection is dropped (its driver
process stops), the browser and its pages stay as they are. Chromium only: Firefox has
no CDP endpoint to attach to (docs/attach.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Self

from playwright.async_api import Browser, BrowserContext, Playwright, async_playwright

from trustbridge.bridge.protocol import errors as E

from . import locator_engine, page_logs
from .browser_limits import driver_capabilities
from .cdp_proxy import CdpProxy
from .driver import InputDriver
from .frames import FrameRegistry

log = logging.getLogger("trustbridge.attach")

CONNECT_TIMEOUT_MS = 15_000
"""Bound on connecting to the CDP endpoint, ms."""
DRIVER_READY_S = 15.0
"""Bound on the bridge welcoming the driver, s."""
PAIRED_DEVICE_JS = """() => new Promise((resolve) => {
  // options/store.js: the pairing the options page stored (null when unpaired).
  const req = indexedDB.open('trustbridge-pairing');
  req.onerror = () => resolve(null);
  req.onsuccess = () => {
    const db = req.result;
    try {
      const get = db.transaction('pairing', 'readonly').objectStore('pairing').get('current');
      get.onsuccess = () => { db.close(); resolve(get.result ? get.result.device || null : null); };
      get.onerror = () => { db.close(); resolve(null); };
    } catch (err) { db.close(); resolve(null); }
  };
})"""
"""Run in our extension's service worker: the device its stored pairing names."""


async def paired_device(context: BrowserContext, timeout_s: float = 3.0) -> str | None:
    """The device our extension in ``context`` is paired as, read from its storage in its
    service worker, or None (no trustbridge service worker running there, or unpaired).

    A paired extension's worker stays alive (its keep-alive call, background/connection.js),
    so it is listed; an unpaired one may have been stopped by Chromium's idle timer.
    """
    for worker in context.service_workers:
        if not worker.url.startswith("chrome-extension://") \
                or not worker.url.endswith("/background.js"):
            continue
        with contextlib.suppress(Exception):  # another extension's worker, or one stopping
            device = await asyncio.wait_for(worker.evaluate(PAIRED_DEVICE_JS), timeout_s)
            if isinstance(device, str) and device:
                return device
    return None


class Attached:
    """The input driver of device ``device`` in a Chromium reached at ``cdp_url``.

    Args:
        cdp_url: the browser's DevTools endpoint, ``http://127.0.0.1:9222`` (its
            ``--remote-debugging-port``) or a ``ws://…/devtools/browser/…`` URL.
        bridge_url: ``ws://127.0.0.1:PORT`` of the bridge.
        token: the bridge token (a driver needs it; a paired device's credential admits
            its extension only).
        device: the device id of the extension in that browser; None: the device its
            stored pairing names (:func:`paired_device`).

    Attributes:
        frames: token → Frame of every page of the browser.
        driver: the input driver, once started.
        gone: set when the browser closed or the CDP connection dropped.
    """

    def __init__(self, cdp_url: str, bridge_url: str, token: str,
                 device: str | None = None) -> None:
        self.cdp_url = cdp_url
        self.bridge_url = bridge_url
        self.token = token
        self.device = device
        self.frames = FrameRegistry("cdp")  # attach is Chromium over CDP
        self.driver: InputDriver | None = None
        self.gone = asyncio.Event()
        self.browser: Browser | None = None
        self._pw: Playwright | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Connect to the browser, stamp its frames, start the driver and wait until the
        bridge welcomed it.

        Raises:
            DeviceNotConnected: nothing answers at ``cdp_url`` (a Chromium without
                ``--remote-debugging-port``, or another port), the browser's extension is
                not paired and no ``device`` was named, or the bridge did not accept the
                driver within :data:`DRIVER_READY_S` (its reason is logged: e.g. another
                driver is online for the device).
            BadRequest: the extension there is paired as another device than ``device``.
        """
        self._pw = await async_playwright().start()
        try:
            self.browser = await self._pw.chromium.connect_over_cdp(
                self.cdp_url, timeout=CONNECT_TIMEOUT_MS)
        except Exception as exc:
            raise E.DeviceNotConnected(
                f"No Chromium DevTools endpoint at {self.cdp_url}: {str(exc).splitlines()[0]}",
                {"cdp": self.cdp_url},
                next_step="Start Chromium with --remote-debugging-port=9222 and a "
                "non-default --user-data-dir (docs/attach.md), then attach again.") from exc
        self.browser.on("disconnected", lambda _b: self._browser_gone())
        # After connecting: Playwright registers an engine with the contexts it knows, and
        # an attached browser's default context is known only once connected (measured:
        # registered before, the engine is "unknown" in its pages).
        await locator_engine.register(self._pw)
        contexts = self.browser.contexts
        found = None
        for context in contexts:
            found = found or await paired_device(context)
        if self.device is None and found is None:
            raise E.DeviceNotConnected(
                "The browser at this endpoint has no paired trustbridge extension running "
                "(or its worker is asleep); name the device with --device.",
                {"cdp": self.cdp_url},
                next_step="Load the extension (trustbridge extension), pair it "
                "(trustbridge pair), or pass --device NAME.")
        if self.device is not None and found is not None and found != self.device:
            raise E.BadRequest(
                f"The extension in this browser is paired as device {found!r}, not "
                f"{self.device!r}: its refs would name frames this driver does not hold.",
                {"device": self.device, "paired": found})
        self.device = self.device or found
        assert self.device is not None
        for context in contexts:
            self.frames.attach(context)
            page_logs.attach(context)
        await self.frames.settle()
        version = self.browser.version
        self.driver = InputDriver(
            self.bridge_url, self.token, self.device, self.frames,
            browser=f"chromium {version} (attached over CDP)"[:64],
            # A person uses this browser: sessions never claim its tabs silently.
            capabilities={**driver_capabilities("chromium"), "headed": True})
        for context in contexts:
            self.driver.dialogs.attach(context)
        # The CDP door (issue 19): rides this process's own CDP connection.
        self.driver.cdp = CdpProxy(lambda: self.browser, self.device)
        self._task = asyncio.create_task(self.driver.run())
        try:
            await asyncio.wait_for(self.driver.connected.wait(), DRIVER_READY_S)
        except TimeoutError:
            raise E.DeviceNotConnected(
                f"The bridge at {self.bridge_url} did not accept the input driver of device "
                f"{self.device!r} within {DRIVER_READY_S:g} s (see the log line above).",
                {"device": self.device}) from None
        log.info("attached to %s over CDP as the driver of device %s", version, self.device)

    def _browser_gone(self) -> None:
        self.frames.browser_gone()
        self.gone.set()

    async def stop(self) -> None:
        """Stop the driver and drop the CDP connection; the browser keeps running."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self.driver is not None:
            with contextlib.suppress(Exception):
                await self.driver.close()
            if self.driver.cdp is not None:
                await self.driver.cdp.close()
        if self._pw is not None:
            # Not browser.close(): that is the person's browser. Stopping Playwright ends
            # its connection (and its driver process) and nothing else.
            with contextlib.suppress(Exception):
                await self._pw.stop()
            self._pw = None

    async def __aenter__(self) -> Self:
        try:
            await self.start()
        except BaseException:
            await self.stop()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
