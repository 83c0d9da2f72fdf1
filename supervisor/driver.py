"""The input driver: performs actions through the browser's own input pipeline.

It connects to the bridge as ``role=driver`` for one device and answers ``driver.act``
``{frameToken, css, action, timeoutMs}``: the token names a Playwright ``Frame``
(:class:`~supervisor.frames.FrameRegistry`), the CSS locator must match exactly one
element (DESIGN §4), then Playwright's mouse/keyboard input acts on it. Playwright's
actionability checks (visible, stable, enabled, receives events) run before dispatch.
Pages see ``event.isTrusted === true``: input comes from the browser, not from script.

The driver never retries an action after it was dispatched (DESIGN §2 rule 7).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from typing import Any

import pydantic
from playwright.async_api import ElementHandle, Error as PlaywrightError, Frame
from playwright.async_api import TimeoutError as PlaywrightTimeout
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

from bridge.protocol import errors as E
from bridge.protocol.models import (
    MESSAGE_ADAPTER,
    PROTOCOL_VERSION,
    ClickAction,
    DriverActParams,
    Hello,
    HoverAction,
    PressAction,
    Request,
    Response,
    TypeAction,
    Welcome,
)

from .frames import FrameRegistry

log = logging.getLogger("trustbridge.driver")

RECONNECT_MAX_S = 5.0


class InputDriver:
    """Connects to the bridge and performs ``driver.act`` requests.

    Args:
        url: bridge URL, ``ws://127.0.0.1:PORT``.
        token: bridge token.
        device: the device id this driver serves (same as its extension's).
        frames: the token → Frame registry of this device's browser.
        browser: name and version for ``doctor``.
    """

    def __init__(self, url: str, token: str, device: str, frames: FrameRegistry,
                 browser: str | None = None) -> None:
        self.url = url
        self.token = token
        self.device = device
        self.frames = frames
        self.browser = browser
        self.connected = asyncio.Event()
        self._ws: ClientConnection | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        """Stay connected until cancelled, reconnecting with backoff (0.1 s → 5 s)."""
        delay = 0.1
        while True:
            try:
                await self._session()
                delay = 0.1
            except (OSError, InvalidStatus, WebSocketException, TimeoutError) as exc:
                log.debug("driver connection failed: %s", exc)
            except E.TrustbridgeError as exc:
                log.error("bridge refused the driver: %s", exc)
            self.connected.clear()
            await asyncio.sleep(delay)
            delay = min(delay * 2, RECONNECT_MAX_S)

    async def close(self) -> None:
        """Disconnect now (the bridge keeps the device's trusted-input promise)."""
        if self._ws is not None:
            await self._ws.close()

    async def _session(self) -> None:
        async with connect(self.url, open_timeout=5, max_size=64 * 1024 * 1024) as ws:
            hello = Hello(role="driver", device=self.device, protocolVersion=PROTOCOL_VERSION,
                          token=self.token, browser=self.browser,
                          capabilities={"trustedInput": True})
            await ws.send(hello.model_dump_json())
            first = MESSAGE_ADAPTER.validate_json(await ws.recv())
            if isinstance(first, Response) and first.error is not None:
                raise E.error_from_payload(first.error)
            if not isinstance(first, Welcome):
                raise E.BadRequest("The bridge did not welcome the driver.")
            self._ws = ws
            self.connected.set()
            log.info("driver for %s online", self.device)
            try:
                async for raw in ws:
                    self._on_message(ws, raw)
            except ConnectionClosed:
                pass
            finally:
                self._ws = None
                for task in self._tasks:
                    task.cancel()

    def _on_message(self, ws: ClientConnection, raw: str | bytes) -> None:
        try:
            msg = MESSAGE_ADAPTER.validate_json(raw)
        except pydantic.ValidationError:
            log.warning("driver got a malformed message")
            return
        if isinstance(msg, Request):
            task = asyncio.create_task(self._answer(ws, msg))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _answer(self, ws: ClientConnection, req: Request) -> None:
        try:
            if req.method != "driver.act":
                raise E.BadRequest(f"The driver does not handle {req.method!r}.")
            try:
                params = DriverActParams.model_validate(req.params)
            except pydantic.ValidationError as exc:
                raise E.BadRequest(f"Invalid driver.act params: {exc.error_count()} errors.") from exc
            result = await self.act(params)
            response = Response(id=req.id, ok=True, result=result)
        except E.TrustbridgeError as err:
            response = Response(id=req.id, ok=False, error=err.to_payload())
        except Exception as exc:
            log.exception("driver.act failed")
            response = Response(id=req.id, ok=False,
                                error=E.InternalError(f"Driver failure: {type(exc).__name__}").to_payload())
        with contextlib.suppress(ConnectionClosed):
            await ws.send(response.model_dump_json(exclude_none=True))

    # -- actions ----------------------------------------------------------------------

    async def act(self, params: DriverActParams) -> dict[str, Any]:
        """Perform one action with trusted input.

        Returns:
            ``{"done": True, "action": kind, "frameUrl": str}``.

        Raises:
            FrameTokenUnknown: the token names no live frame.
            LocatorNotUnique: the CSS matched 0 or ≥2 elements (``details.count``).
            ElementObscured / ElementTargetDisabled / ElementNotEditable / Timeout:
                actionability failed within ``timeoutMs``; nothing was dispatched.
            BrowserOperationUncertain: the page or frame went away during the action.
        """
        frame = self.frames.frame_for(params.frameToken)
        action = params.action
        if params.css is None:
            if not isinstance(action, PressAction):
                raise E.BadRequest(f"A {action.kind} needs a target element.")
            await frame.page.keyboard.press(action.key)
            return {"done": True, "action": action.kind, "frameUrl": frame.url}
        handle = await self._unique(frame, params.css)
        try:
            await self._perform(handle, action, params.timeoutMs)
        except PlaywrightTimeout as exc:
            raise _actionability_error(exc, params.timeoutMs) from exc
        except PlaywrightError as exc:
            raise _playwright_error(exc) from exc
        finally:
            # Release the handle without holding up the answer.
            task = asyncio.ensure_future(_dispose(handle))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return {"done": True, "action": action.kind, "frameUrl": frame.url}

    @staticmethod
    async def _unique(frame: Frame, css: str) -> ElementHandle:
        try:
            handles = await frame.query_selector_all(css)
        except PlaywrightError as exc:
            raise _playwright_error(exc) from exc
        if len(handles) != 1:
            for h in handles:
                asyncio.ensure_future(_dispose(h))
            raise E.LocatorNotUnique(
                f"The locator matched {len(handles)} elements at action time, not exactly one; "
                "the page changed since the snapshot. Take a new snapshot.",
                {"count": len(handles)},
            )
        return handles[0]

    @staticmethod
    async def _perform(handle: ElementHandle, action: Any, timeout_ms: int) -> None:
        if isinstance(action, ClickAction):
            await handle.click(button=action.button, click_count=action.clickCount,
                               modifiers=action.modifiers or None, timeout=timeout_ms)
        elif isinstance(action, HoverAction):
            await handle.hover(timeout=timeout_ms)
        elif isinstance(action, TypeAction):
            # Playwright focuses the element, then sends one trusted key event per character.
            await handle.type(action.text, timeout=timeout_ms)
            if action.submit:
                await handle.press("Enter", timeout=timeout_ms)
        elif isinstance(action, PressAction):
            await handle.press(action.key, timeout=timeout_ms)
        else:  # pragma: no cover - the protocol union is closed
            raise E.BadRequest(f"Unknown action {action!r}")


async def _dispose(handle: ElementHandle) -> None:
    with contextlib.suppress(PlaywrightError):
        await handle.dispose()


_OBSCURED = re.compile(r"<([a-z0-9-]+)([^>]*)> (?:from <[^>]*> subtree )?intercepts pointer events")


def _actionability_error(exc: PlaywrightTimeout, timeout_ms: int) -> E.TrustbridgeError:
    """Name the cause Playwright's call log gives for an action that never became possible."""
    text = str(exc)
    if m := _OBSCURED.search(text):
        return E.ElementObscured(
            f"Another element (<{m.group(1)}>) covers the target's click point; close or "
            "scroll it away, then retry.",
            {"coveredBy": m.group(1), "timeoutMs": timeout_ms},
        )
    if "element is not enabled" in text or "element is disabled" in text:
        return E.ElementTargetDisabled(
            "The target is disabled; wait until it is enabled.", {"timeoutMs": timeout_ms}
        )
    if "element is not editable" in text or "readonly" in text:
        return E.ElementNotEditable(
            "The target does not accept text (readonly or disabled); nothing was typed.",
            {"timeoutMs": timeout_ms},
        )
    if "element is not visible" in text:
        return E.Timeout(
            "The target stayed invisible; scroll or open what hides it, then retry.",
            {"timeoutMs": timeout_ms, "cause": "not-visible"},
        )
    return E.Timeout(
        f"The target did not become actionable within {timeout_ms} ms.", {"timeoutMs": timeout_ms}
    )


def _playwright_error(exc: PlaywrightError) -> E.TrustbridgeError:
    text = str(exc)
    if "Element is not attached" in text or "not attached to the DOM" in text:
        return E.ElementTargetDetached(
            "The element left the document before the action; take a new snapshot."
        )
    if "closed" in text.lower() or "detached" in text.lower() or "crash" in text.lower():
        return E.BrowserOperationUncertain(
            "The page or frame went away during the action; it may have partly happened and "
            "will not be repeated. Take a new snapshot."
        )
    if "Unexpected token" in text or "is not a valid selector" in text:
        return E.BadRequest("The extension produced a locator the driver cannot parse.")
    return E.InternalError(f"The browser rejected the action: {text.splitlines()[0][:200]}")
