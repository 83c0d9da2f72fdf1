"""The driver's side of the live view (issue 37, bridge/live_view.py): the tab's screen as
JPEG frames, and the person's mouse, wheel and keyboard as trusted input.

Frames: in Chromium, CDP ``Page.startScreencast`` on a CDP session of the tab's Playwright
page (the browser sends a frame when the page repaints; each is acknowledged with
``Page.screencastFrameAck``, which is what lets the next one come). Firefox and Camoufox
speak no CDP to Playwright: there a JPEG screenshot of the viewport is taken every
``intervalMs`` (default 200 ms, so about 5 frames a second at most; a screenshot of an
unchanged page is sent again). Each frame goes to the bridge as a ``live.frame`` event
``{handoverId, data (base64 JPEG), width, height (CSS px of the viewport the image
shows), capturedAt (ms since the epoch, when the browser captured it)}``.

Input: each event goes through Playwright's ``page.mouse`` / ``page.keyboard``, the same
input the agent's trusted actions use (CDP ``Input.dispatch*Event`` in Chromium, Juggler
or WebDriver BiDi in Firefox), so the page sees ``event.isTrusted === true``. A character
its US layout has no key for (``ë``, ``€``) is inserted as text on its keydown
(``keyboard.insert_text``: a trusted ``input`` event, no key events). Points are
CSS px of the top-level viewport; the driver records the pointer's position
(supervisor/mouse.py) as for any pointer input it sends. Keys are never logged.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import CDPSession, Frame, Page
from playwright.async_api import Error as PlaywrightError

from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import (
    DriverLiveInputParams,
    DriverLiveStartParams,
    DriverLiveStopParams,
    LiveInput,
)

from . import mouse

log = logging.getLogger("trustbridge.driver.live")

Send = Callable[[str, dict[str, Any]], Awaitable[None]]


@dataclass(eq=False)
class _Stream:
    page: Page
    cdp: CDPSession | None = None
    task: asyncio.Task[None] | None = None
    frames: int = 0
    navigations: int = 0
    on_nav: Callable[[Frame], None] | None = None
    pending: set[asyncio.Future[Any]] = field(default_factory=set)
    held_keys: list[str] = field(default_factory=list)
    """Keys the person pressed and has not released (Playwright's keyboard of the page
    keeps them down, modifiers included, for whoever types next: the agent)."""
    held_buttons: list[str] = field(default_factory=list)


class LiveStreams:
    """The live views one driver serves, by hand-off id.

    Args:
        send: sends an event to the bridge (``InputDriver.send_event``).
        frame_for: frame token → Playwright ``Frame`` (FrameRegistry.frame_for).
    """

    def __init__(self, send: Send, frame_for: Callable[[str], Frame]) -> None:
        self.send = send
        self.frame_for = frame_for
        self.streams: dict[str, _Stream] = {}

    async def start(self, params: DriverLiveStartParams) -> dict[str, Any]:
        """Start streaming the page of ``params.frameToken``.

        Returns:
            ``{"mode": "screencast" | "screenshots"}``.

        Raises:
            FrameTokenUnknown: the token names no live frame.
            BadRequest: a stream for this hand-off is already running.
        """
        if params.handoverId in self.streams:
            raise E.BadRequest(f"Hand-off {params.handoverId!r} is already streaming.")
        page = self.frame_for(params.frameToken).page
        stream = _Stream(page)

        def on_nav(frame: Frame) -> None:
            if frame is page.main_frame:
                stream.navigations += 1

        stream.on_nav = on_nav
        page.on("framenavigated", on_nav)
        self.streams[params.handoverId] = stream
        try:
            stream.cdp = await page.context.new_cdp_session(page)
        except PlaywrightError:
            stream.cdp = None  # Firefox, Camoufox: no CDP
        if stream.cdp is not None:
            cdp = stream.cdp

            def on_frame(event: dict[str, Any]) -> None:
                self._spawn(stream, self._screencast_frame(params.handoverId, stream, cdp,
                                                           event))

            cdp.on("Page.screencastFrame", on_frame)
            await cdp.send("Page.startScreencast", {
                "format": "jpeg", "quality": params.quality, "maxWidth": params.maxWidth,
                "maxHeight": params.maxHeight, "everyNthFrame": 1})
            return {"mode": "screencast"}
        stream.task = asyncio.ensure_future(self._screenshots(params, stream))
        return {"mode": "screenshots"}

    def _spawn(self, stream: _Stream, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        stream.pending.add(task)
        task.add_done_callback(stream.pending.discard)

    async def _screencast_frame(self, handover: str, stream: _Stream, cdp: CDPSession,
                                event: dict[str, Any]) -> None:
        meta = event.get("metadata") or {}
        with contextlib.suppress(PlaywrightError):  # the next frame comes after the ack
            await cdp.send("Page.screencastFrameAck", {"sessionId": event["sessionId"]})
        stamp = meta.get("timestamp")
        stream.frames += 1
        await self.send("live.frame", {
            "handoverId": handover, "data": event["data"],
            "width": meta.get("deviceWidth"), "height": meta.get("deviceHeight"),
            "capturedAt": stamp * 1000 if isinstance(stamp, int | float) else None})

    async def _screenshots(self, params: DriverLiveStartParams, stream: _Stream) -> None:
        """Firefox: a viewport JPEG every ``intervalMs``."""
        page = stream.page
        while True:
            started = time.time() * 1000
            try:
                size = page.viewport_size or await page.evaluate(
                    "({width: innerWidth, height: innerHeight})")
                shot = await page.screenshot(type="jpeg", quality=params.quality)
            except PlaywrightError as exc:
                if page.is_closed():
                    return
                log.debug("live screenshot failed: %s", exc)
            else:
                stream.frames += 1
                await self.send("live.frame", {
                    "handoverId": params.handoverId,
                    "data": base64.b64encode(shot).decode(), "width": size["width"],
                    "height": size["height"], "capturedAt": started})
            await asyncio.sleep(params.intervalMs / 1000)

    async def stop(self, params: DriverLiveStopParams) -> dict[str, Any]:
        """Stop the stream of ``params.handoverId``: ``{stopped, frames, navigations}``."""
        stream = self.streams.pop(params.handoverId, None)
        if stream is None:
            return {"stopped": False}
        if stream.on_nav is not None:
            stream.page.remove_listener("framenavigated", stream.on_nav)
        if stream.task is not None:
            stream.task.cancel()
        if stream.cdp is not None:
            with contextlib.suppress(PlaywrightError):
                await stream.cdp.send("Page.stopScreencast")
            with contextlib.suppress(PlaywrightError):
                await stream.cdp.detach()
        for task in stream.pending:
            task.cancel()
        await _release(stream)
        return {"stopped": True, "frames": stream.frames, "navigations": stream.navigations}

    async def input(self, params: DriverLiveInputParams) -> dict[str, Any]:
        """Send the person's events in order as trusted input: ``{sent, refused}``
        (refused: a key Playwright does not know; never which).

        Raises:
            BadRequest: no stream for this hand-off (it ended).
        """
        stream = self.streams.get(params.handoverId)
        if stream is None:
            raise E.BadRequest(f"Hand-off {params.handoverId!r} has no live view running; "
                               "nothing was sent.")
        page = stream.page
        sent = refused = 0
        for event in params.events:
            try:
                await _one(page, event)
                _hold(stream, event)
                sent += 1
            except PlaywrightError as exc:
                if page.is_closed():
                    raise E.BrowserTabClosed("The tab closed; the rest was not sent.") from exc
                refused += 1  # an unknown key name: Playwright sends nothing for it
        return {"sent": sent, "refused": refused}


def _hold(stream: _Stream, event: LiveInput) -> None:
    """Follow which keys and buttons the person holds down."""
    if event.type in ("keydown", "keyup") and event.key:
        # Shift released first: "A" goes down and "a" comes up (the same key).
        same = [k for k in stream.held_keys
                if k == event.key or (len(k) == 1 and k.lower() == event.key.lower())]
        for k in same:
            stream.held_keys.remove(k)
        if event.type == "keydown":
            stream.held_keys.append(event.key)
    elif event.type in ("down", "up"):
        with contextlib.suppress(ValueError):
            stream.held_buttons.remove(event.button)
        if event.type == "down":
            stream.held_buttons.append(event.button)


async def _release(stream: _Stream) -> None:
    """Release what the person still holds when the hand-off ends (a live view that
    closed mid-press, a crafted socket): otherwise a held Shift would shift the agent's
    next typing and a held button turn its next click into a drag."""
    page = stream.page
    for key in reversed(stream.held_keys):
        with contextlib.suppress(PlaywrightError):
            await page.keyboard.up(key)
    for button in reversed(stream.held_buttons):
        with contextlib.suppress(PlaywrightError):
            await page.mouse.up(button=button)  # type: ignore[arg-type]
    stream.held_keys.clear()
    stream.held_buttons.clear()


async def _one(page: Page, event: LiveInput) -> None:
    if event.type in ("move", "down", "up", "wheel") and event.x is not None \
            and event.y is not None:
        await page.mouse.move(event.x, event.y)
        mouse.moved(page, event.x, event.y)
    if event.type == "down":
        await page.mouse.down(button=event.button, click_count=event.clickCount)
    elif event.type == "up":
        await page.mouse.up(button=event.button, click_count=event.clickCount)
    elif event.type == "wheel":
        await page.mouse.wheel(event.deltaX, event.deltaY)
    elif event.type in ("keydown", "keyup") and event.key:
        try:
            if event.type == "keydown":
                await page.keyboard.down(event.key)
            else:
                await page.keyboard.up(event.key)
        except PlaywrightError:
            if page.is_closed() or not _is_text(event.key):
                raise
            # A character Playwright's US layout has no key for (ë, €, ü, an emoji):
            # typed as text on its keydown (CDP Input.insertText / its Firefox
            # counterpart: the field's trusted input event, no key events), nothing on its
            # keyup; dropping it would leave the person's text silently short.
            if event.type == "keydown":
                await page.keyboard.insert_text(event.key)


def _is_text(key: str) -> bool:
    """``key`` is a KeyboardEvent.key that types text (a character, or a grapheme of
    several code points), not a named key such as ``Enter`` or ``Unidentified``."""
    return len(key) == 1 or not key.isascii()
