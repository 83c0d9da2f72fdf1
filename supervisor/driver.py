"""The input driver: performs actions through the browser's own input pipeline.

It connects to the bridge as ``role=driver`` for one device and answers ``driver.act``
``{frameToken, css, action, timeoutMs}``: the token names a Playwright ``Frame``
(:class:`~supervisor.frames.FrameRegistry`), the CSS locator must match exactly one
element (design.md §4), then Playwright's mouse/keyboard input acts on it. Playwright's
actionability checks (visible, stable, enabled, receives events) run before dispatch.
Pages see ``event.isTrusted === true``: input comes from the browser, not from script.

Verbs act through ``frame.locator(unique_selector(css))`` (supervisor/locator_engine.py):
one Playwright call resolves, checks uniqueness and actionability and dispatches, all in
Playwright's utility world, so a click costs what ``locator.click`` costs (issue 7, B2:
the driver's own work around it is ~0.5 ms, of which ~0.3 ms the NavigationWatch
subscription). Element handles and scripts in the page's main world are avoided on the
common paths: the first one in a document makes Playwright set up its injected script
there (~40 ms).

The driver never retries an action after it was dispatched (design.md §2 rule 7).
Playwright's errors become the project's at this boundary, through the one ordered table
of supervisor/errors.py (``map_playwright_errors``); the connection, its hello and its
request loop are the shared peer layer (bridge/protocol/peer.py).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import os
import re
import ssl
import struct
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import ElementHandle, Frame, Page
from playwright.async_api import Error as PlaywrightError
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import (
    PROTOCOL_VERSION,
    CheckAction,
    ClickAction,
    DragAction,
    DriverActParams,
    DriverCdpEndpointParams,
    DriverDialogParams,
    DriverEvaluateParams,
    DriverAxFactsParams,
    DriverBlankPageParams,
    DriverLiveStopParams,
    DriverPointerParams,
    DriverScreenshotParams,
    Event,
    Hello,
    HoverAction,
    MouseAction,
    PressAction,
    Request,
    ScrollAction,
    UploadAction,
)
from trustbridge.bridge.protocol.limits import RESULT_CAP_BYTES, check_result, too_large
from trustbridge.bridge.protocol.peer import Connection, answer, handshake
from trustbridge.bridge.protocol.validate import validate_params

from . import actions as A
from . import locator_engine, mouse, navwatch, page_logs, recording, select, watch
from .browser_limits import refuse_undeliverable
from .cdp_proxy import CdpProxy
from .dialogs import DialogTracker
from .errors import locator_not_unique, map_playwright_errors
from .frames import FrameRegistry
from .isolated_eval import NARROW_EVALUATE, evaluate_isolated
from .live import LiveStreams
from .navwatch import NavigationWatch

log = logging.getLogger("trustbridge.driver")

PLAYWRIGHT_GONE = "Connection closed while reading from the driver"
"""What Playwright (1.x, playwright/_impl/_transport.py) raises for every call once its
node driver process has exited."""
PLAYWRIGHT_RESTART_S = 15.0
"""The wait told while Playwright and the browser start again, s (runner.py
BROWSER_RESTART_S)."""
RECONNECT_MAX_S = 5.0
REMOTE_PING_S, REMOTE_PONG_S = 2.0, 3.0
"""Ping interval and pong timeout of a remote device's driver connection, s (as
supervisor/remote.py PING_S and PONG_S)."""
EVALUATE_TIMEOUT_S = 25.0
"""How long an isolated script's promise may take, s: under the bridge's wait for
``driver.evaluate`` (bridge/executor.py DRIVER_CALL_TIMEOUT_S)."""

_MAIN_EVAL_BODY = """
  // Bytes of the value as UTF-8 JSON, exact near the cap (a UTF-16 unit is 1-3 UTF-8
  // bytes); a value JSON cannot measure is returned and measured by the supervisor.
  const measure = (value) => {
    let json;
    try { json = JSON.stringify(value); } catch (e) { json = undefined; }
    if (typeof json === 'string' && json.length * 3 > cap) {
      const size = new TextEncoder().encode(json).length;
      if (size > cap) return 'tb-big:' + nonce + ':' + size;
    }
    return value;
  };
  // As Playwright's evaluate: the source is evaluated in the page's global scope and a
  // function it yields is called with the element (or nothing); a promise is awaited.
  // Not an async function: a plain value is answered without a promise round.
  let value = globalThis.eval(src);
  if (typeof value === 'function') value = el === undefined ? value() : value(el);
  if (value && typeof value.then === 'function') return Promise.resolve(value).then(measure);
  return measure(value);
"""
_MAIN_EVAL_JS = "(el, [src, cap, nonce]) => {" + _MAIN_EVAL_BODY + "}"
_MAIN_EVAL_NO_ELEMENT_JS = ("([src, cap, nonce]) => { const el = undefined;"
                            + _MAIN_EVAL_BODY + "}")
"""``driver.evaluate`` in the main world (issue 32 item 3): the agent's value is measured
where it is made; over the cap the answer is ``tb-big:<nonce>:<bytes>`` (the nonce is the
driver's, fresh per call, so no value of the page's is taken for it), else the value
itself, serialised by Playwright as before (no wrapper object: a page that replaces
Object.keys would garble one). Page script could forge the size only to get a value
through that the supervisor's own check_result measures again."""


def _normalised(expression: str) -> str:
    """The expression as Playwright evaluates it (its normalizeEvaluationExpression): a
    ``function`` literal is parenthesised so that eval yields it."""
    text = expression.strip()
    if re.match(r"^(async)?\s*function(\s|\()", text):
        text = f"({text})"
    return text


def check_upload_files(paths: list[str]) -> None:
    """Refuse an upload whose files are not on the supervisor's machine, before any input:
    Playwright would raise FileNotFoundError only after the target was reached (the ref
    form) or leave the open chooser waiting (the no-ref form).

    Args:
        paths: the upload's paths, absolute or relative to the supervisor's working
            directory (as Playwright's ``set_input_files`` reads them).

    Raises:
        BadRequest: one or more paths name nothing (``details.missing``: those paths).
    """
    missing = [path for path in paths if not os.path.exists(path)]
    if missing:
        raise E.BadRequest(
            f"No such file on the browser's machine: {', '.join(missing)}; nothing was "
            "uploaded.", {"missing": missing},
            next_step="Give paths of existing files on the machine that runs the browser.")


class InputDriver:
    """Connects to the bridge and performs ``driver.act`` requests.

    Args:
        url: bridge URL, ``ws://127.0.0.1:PORT``.
        token: bridge token.
        device: the device id this driver serves (same as its extension's).
        frames: the token → Frame registry of this device's browser.
        browser: name and version for ``doctor``.
        capabilities: what this browser's driver can do, sent in hello and shown by
            ``doctor`` (``trustedInput`` is always true; see
            :func:`supervisor.runner.driver_capabilities`).
        pointer: how clicks move and press (:class:`supervisor.actions.PointerPath`);
            default from the environment (:meth:`~supervisor.actions.PointerPath.from_env`).
        ssl_context: for a ``wss://`` URL (a remote device, supervisor/remote.py): the
            context that checks the bridge's certificate; its connection is then pinged
            every ``remote.PING_S`` s.
        humanize: a person's rhythm for clicks and typing on refs (supervisor/humanize.py);
            None: ``TRUSTBRIDGE_HUMANIZE=1`` in the environment turns it on. An action's own
            ``humanize`` field overrides it for that action.
    """

    def __init__(self, url: str, token: str, device: str, frames: FrameRegistry,
                 browser: str | None = None,
                 capabilities: dict[str, bool] | None = None,
                 pointer: A.PointerPath | None = None,
                 ssl_context: Any = None, humanize: bool | None = None) -> None:
        self.url = url
        self.ssl_context = ssl_context
        self.token = token
        self.device = device
        self.frames = frames
        self.browser = browser
        self.capabilities = {**(capabilities or {}), "trustedInput": True}
        self.pointer = pointer or A.PointerPath.from_env()
        self.humanize = (os.environ.get("TRUSTBRIDGE_HUMANIZE", "") not in ("", "0")
                         if humanize is None else humanize)
        self.connected = asyncio.Event()
        self._conn: Connection | None = None
        self._tasks: set[asyncio.Future[Any]] = set()
        self.dialogs = DialogTracker(lambda ev, p: self._spawn(self.send_event(ev, p)))
        # The CDP door of a Chromium device (supervisor/cdp_proxy.py), set by its owner
        # (runner / attach); None: this browser has none (Firefox, Camoufox).
        self.cdp: CdpProxy | None = None
        # Live views of tabs handed to a person (issue 37, supervisor/live.py).
        self.live = LiveStreams(self.send_event, lambda token: self.frames.frame_for(token))
        self.on_bridge_event: Callable[[str, dict[str, Any]], None] | None = None
        """Called with the bridge's ``extension.left`` / ``extension.joined`` (set by the
        supervisor: supervisor/runner.py)."""
        self.on_reconnect: Callable[[], Awaitable[None]] | None = None
        """Awaited after each connection but the first is welcomed (the supervisor
        re-stamps every frame: issue 32 item 2)."""
        self.sessions = 0
        """How many connections the bridge welcomed."""

    async def run(self) -> None:
        """Stay connected until cancelled, reconnecting with backoff (0.1 s → 5 s),
        whatever ended the connection (a failure in serving it included: logged, never
        the end of the loop, issue 32 item 2)."""
        delay = 0.1
        while True:
            try:
                await self._session()
                delay = 0.1
            except (OSError, InvalidStatus, WebSocketException, TimeoutError) as exc:
                log.debug("driver connection failed: %s", exc)
                if isinstance(exc, ssl.SSLCertVerificationError):  # will not heal by itself
                    log.error("driver: the bridge's certificate was refused: %s", exc)
            except E.TrustbridgeError as exc:
                log.error("bridge refused the driver: %s", exc)
            except Exception:  # noqa: BLE001 - the device keeps its driver regardless
                log.exception("driver connection ended by a failure; reconnecting")
            self.connected.clear()
            await asyncio.sleep(delay)
            delay = min(delay * 2, RECONNECT_MAX_S)

    async def close(self) -> None:
        """Disconnect now (the bridge keeps the device's trusted-input promise)."""
        if self._conn is not None:
            await self._conn.ws.close()

    async def _session(self) -> None:
        remote: dict[str, Any] = {}
        if self.ssl_context is not None:  # a remote device: TLS checked, a cut link noticed
            remote = {"ssl": self.ssl_context, "ping_interval": REMOTE_PING_S,
                      "ping_timeout": REMOTE_PONG_S, "close_timeout": 1.0}
        async with connect(self.url, open_timeout=5, max_size=64 * 1024 * 1024, proxy=None,
                           compression=None, **remote) as ws:
            hello = Hello(role="driver", device=self.device, protocolVersion=PROTOCOL_VERSION,
                          token=self.token, browser=self.browser,
                          capabilities=self.capabilities)
            await handshake(ws, hello)
            conn = Connection(ws, "bridge")
            self._conn = conn
            self.sessions += 1
            if self.sessions > 1 and self.on_reconnect is not None:
                try:  # before it serves: the first action after it finds fresh tokens
                    await self.on_reconnect()
                except Exception:  # noqa: BLE001 - stamping is best effort per frame
                    log.exception("re-stamping after the reconnect failed")
            self.connected.set()
            log.info("driver for %s online", self.device)
            try:
                await conn.serve(on_request=self._on_request, on_event=self._on_event,
                                 on_malformed=self._on_malformed)
            finally:
                self._conn = None
                for task in self._tasks:
                    task.cancel()
                for handover in list(self.live.streams):  # their frames have nowhere to go
                    asyncio.ensure_future(self.live.stop(
                        DriverLiveStopParams(handoverId=handover)))

    async def _on_malformed(self, _raw: str | bytes, _exc: object) -> None:
        log.warning("driver got a malformed message")

    async def _on_request(self, req: Request) -> None:
        self._spawn(self._answer(req))

    async def _on_event(self, event: Event) -> None:
        """``extension.left`` / ``extension.joined`` (the bridge's word on this device's
        extension, issue 32 item 2) go to :attr:`on_bridge_event`; others are dropped."""
        if self.on_bridge_event is not None and event.event in ("extension.left",
                                                                "extension.joined"):
            self.on_bridge_event(event.event, dict(event.params))

    async def _answer(self, req: Request) -> None:
        response = await answer(req, self._served(req.method, req.params), "The driver failed",
                                log)
        if self._conn is not None:
            with contextlib.suppress(ConnectionClosed):
                await self._conn.send(response)

    async def _dispatched(self, note: str) -> None:
        """``driver.dispatched {id}`` (bridge/dispatch_signals.py); a closed connection
        just drops it (the answer cannot go either)."""
        with contextlib.suppress(ConnectionClosed):
            await self.send_event("driver.dispatched", {"id": note})

    async def send_event(self, event: str, params: dict[str, Any]) -> None:
        """Tell the bridge something happened (``dialog.opened``, ``dialog.closed``)."""
        if self._conn is not None:
            await self._conn.notify(event, params)

    # -- actions ----------------------------------------------------------------------

    async def _served(self, method: str, raw: dict[str, Any]) -> dict[str, Any]:
        """:meth:`_serve`, with Playwright's own driver process gone said as such.

        Raises:
            DeviceNotConnected: (``details.recovering``) Playwright's node driver process
                exited (Playwright raises a bare ``Exception("Connection closed while
                reading from the driver")``); the supervisor is starting it and the
                browser again (supervisor/runner.py ``_playwright_gone``). Before, this
                was INTERNAL_ERROR "The driver failed: Exception." for every action.
        """
        try:
            return await self._serve(method, raw)
        except E.TrustbridgeError:
            raise
        except Exception as exc:
            if PLAYWRIGHT_GONE not in str(exc):
                raise
            raise E.DeviceNotConnected(
                f"Playwright's driver process for device {self.device!r} exited, taking the "
                "browser with it; its supervisor is starting both again (the tabs and refs "
                f"from before are gone). Nothing more was sent; retry in about "
                f"{PLAYWRIGHT_RESTART_S:g} s.",
                {"device": self.device, "recovering": {
                    "part": "browser", "action": "Playwright's driver process exited; "
                    "its supervisor is starting it and the browser again",
                    "expectedWaitS": PLAYWRIGHT_RESTART_S}},
                next_step=f"Wait about {PLAYWRIGHT_RESTART_S:g} s, then open a page again "
                "(navigate) and take a new snapshot.") from exc

    async def _serve(self, method: str, raw: dict[str, Any]) -> dict[str, Any]:
        handler = {
            "driver.act": self.act,
            "driver.dialog": self.dialog,
            "driver.screenshot": self.screenshot,
            "driver.evaluate": self.evaluate,
            # Page tools of supervisor/page_logs.py (console, network, resize, pdf).
            "driver.console": lambda p: page_logs.console(self.frames.frame_for(p.frameToken), p),
            "driver.network": lambda p: page_logs.network(self.frames.frame_for(p.frameToken), p),
            "driver.resize": lambda p: page_logs.resize(self.frames.frame_for(p.frameToken), p),
            "driver.emulateMedia": lambda p: page_logs.emulate_media(
                self.frames.frame_for(p.frameToken), p),
            "driver.pdf": lambda p: page_logs.pdf(self.frames.frame_for(p.frameToken), p),
            "driver.tracing": lambda p: recording.tracing(self.frames.frame_for(p.frameToken), p),
            # A chooser announced after a click's answer (the receipt's fileInput sign).
            "driver.fileChooser": lambda p: watch.await_file_chooser(
                self.frames.frame_for(p.frameToken).page, p.timeoutMs / 1000),
            # A download a click's handler started, announced after its answer (its
            # receipt's download sign).
            "driver.download": lambda p: watch.await_download(
                self.frames.frame_for(p.frameToken).page, p.timeoutMs / 1000),
            # The navigation a click's form submission planned, after its answer (its
            # receipt's navigates sign).
            "driver.navigation": lambda p: navwatch.await_navigation(
                p.watch, p.timeoutMs / 1000),
            "driver.cdpEndpoint": self.cdp_endpoint,
            "driver.cdpClose": self.cdp_close,
            "driver.pointer": self.pointer_at,
            "driver.blankPage": self.blank_page,
            "driver.axFacts": self.ax_facts,
            "driver.liveStart": self.live.start,
            "driver.liveInput": self.live.input,
            "driver.liveStop": self.live.stop,
        }.get(method)
        if handler is None:
            raise E.BadRequest(f"The driver does not handle {method!r}.")
        return await handler(validate_params(method, raw, client=False))

    async def act(self, params: DriverActParams) -> dict[str, Any]:
        """Perform one action with trusted input.

        Returns:
            ``{"done": True, "action": kind, "frameUrl": str, ...verb fields}``, plus
            ``dialog: {type, message}`` when a JavaScript dialog opened during the action
            (the answer comes at once; the dialog waits for ``page.dialog``) and
            ``popups: [{url}]`` for pages the action opened.
            ``postActionDocumentChanged: bool``: the target's frame (or an ancestor) started
            loading another document during the action (supervisor/navwatch.py).

        Raises:
            FrameTokenUnknown: the token names no live frame.
            LocatorNotUnique: the CSS matched 0 or ≥2 elements (``details.count``).
            ElementObscured / ElementTargetDisabled / ElementNotEditable / Timeout:
                actionability failed within ``timeoutMs``; nothing was dispatched.
            BrowserOperationUncertain: the page or frame went away during the action.
            BadRequest: an upload names files that do not exist on this machine
                (``details.missing``); nothing was dispatched.
        """
        action = params.action
        if isinstance(action, UploadAction):  # before any lookup or input: nothing is sent
            check_upload_files(action.files)
        frame = self.frames.frame_for(params.frameToken)
        page = frame.page
        navwatch.stop_late(page)  # what comes now is this action's
        target: A.Target | None = None
        note = params.notifyDispatched
        human = getattr(action, "humanize", None)
        human = self.humanize if human is None else human
        signal = _Once(None if note is None else  # the bridge's snapshot may start now
                       lambda: self._spawn(self._dispatched(note)))
        with map_playwright_errors(timeout_ms=params.timeoutMs):
            if isinstance(action, MouseAction):  # vision tools: a viewport point, no ref
                work = lambda: mouse.act(page, action, self.pointer)
            elif params.css is None and isinstance(action, UploadAction):
                # The file chooser an earlier click opened (supervisor/watch.py).
                work = lambda: watch.answer_file_chooser(page, action)
            elif params.css is None:
                if not isinstance(action, PressAction):
                    raise E.BadRequest(f"A {action.kind} needs a target element.")
                bidi = (self.browser or "").startswith("firefox")  # as Target.bidi
                work = lambda: A.press_key(page, action.key, bidi=bidi)
            else:
                target = self._target(frame, params.css, allow_script=params.allowScript,
                                      dispatched=signal, humanize=human)
                if isinstance(action, DragAction):
                    if not params.toFrameToken or not params.toCss:
                        raise E.BadRequest("A drag needs the drop target's frame token and CSS.")
                    drop = self._target(self.frames.frame_for(params.toFrameToken), params.toCss)
                    source = target
                    work = lambda: A.drag(source, drop, action, params.timeoutMs)
                elif params.selectOption is not None and isinstance(action, ClickAction):
                    # issue 14 item 2: a click on an option of a collapsed select selects it
                    # through the select route (one change).
                    one, index = target, params.selectOption
                    work = lambda: select.click_option(one, index, params.timeoutMs)
                elif params.fastPoint is not None and isinstance(action, CheckAction):
                    one, at = target, params.fastPoint  # issue 18, as below
                    work = lambda: A.fast_set_checked(one, action, at, params.timeoutMs)
                elif (params.fastPoint is not None and isinstance(action, ClickAction | HoverAction)
                      and not (human and isinstance(action, ClickAction))):
                    # issue 18: the extension verified this point; no actionability waits.
                    one, at = target, params.fastPoint
                    work = lambda: A.fast_pointer(one, action, at, params.timeoutMs)
                elif params.point is not None and isinstance(action, ClickAction):
                    # Coordinate route (closed shadow root): the extension hit-tested this
                    # point; Playwright's own hit test would see the host, so force.
                    pos = {"x": params.point.x, "y": params.point.y}
                    locator = target.locator
                    work = lambda: locator.click(position=pos, button=action.button,
                                                 click_count=action.clickCount,
                                                 modifiers=action.modifiers or None,
                                                 force=True, timeout=params.timeoutMs,
                                                 **self.pointer.click_options())
                else:
                    verb = A.VERBS.get(action.kind)
                    if verb is None:
                        raise E.BadRequest(f"Unknown action {action.kind!r}.")
                    one = target
                    work = lambda: verb(one, action, params.timeoutMs)
            # issue 6: refuse what this browser would deliver as something else.
            await refuse_undeliverable(self.capabilities, self.browser or "this browser",
                                       action, target.locator if target else None, page)
            moves = mouse.moves(page)
            with NavigationWatch(frame) as nav:  # issue 4: postActionDocumentChanged
                extra = await self._run_watching(page, work, action, signal)
                if target is not None and mouse.moves(page) == moves:
                    _pointed(page, target, action, params.point, extra)
                late = None
                if not nav.changed and (isinstance(action, ClickAction) or (
                        isinstance(action, MouseAction) and action.op == "click")):
                    # A submit's navigation may come after the answer (driver.navigation).
                    late = navwatch.watch_late(nav)
            # A navigation that became a download kept the document (supervisor/watch.py).
            extra["postActionDocumentChanged"] = (nav.changed
                                                  and not extra.get("navigationWasDownload"))
        if late is not None:
            extra["lateNavigation"] = late
        return {"done": True, "action": action.kind, "frameUrl": frame.url, **extra}

    def _target(self, frame: Frame, css: str, *, allow_script: bool = False,
                dispatched: Callable[[], None] = lambda: None,
                humanize: bool = False) -> A.Target:
        selector = locator_engine.unique_selector(css)
        return A.Target(locator=frame.locator(selector), frame=frame, selector=selector,
                        trusted_insert_text=bool(self.capabilities.get("unicodeText")),
                        pointer=self.pointer, allow_script=allow_script,
                        bidi=(self.browser or "").startswith("firefox"),
                        humanize=humanize, dispatched=dispatched)

    async def _run_watching(self, page: Page, work: Any, action: Any = None,
                            on_done: Callable[[], None] | None = None) -> dict[str, Any]:
        # The action lets the watch skip the download-link look after anything but a click.
        return await watch.run_watching(page, work, self.dialogs, action, on_done)

    async def dialog(self, params: DriverDialogParams) -> dict[str, Any]:
        """Accept or dismiss the oldest open dialog.

        Raises:
            BadRequest: no dialog is open, or the browser had already closed it
                (``details.alreadyClosed``; it is then reported closed first).
        """
        try:
            result = await self.dialogs.answer(params.accept, params.promptText,
                                               params.dialogId)
        except E.BadRequest as err:
            if err.details.get("alreadyClosed"):
                await self.send_event("dialog.closed", {"dialogId": err.details["dialogId"]})
            raise
        # Sent before the answer, on the same socket: when the client reads the answer,
        # the bridge already knows this dialog is gone.
        await self.send_event("dialog.closed", {"dialogId": result["dialogId"]})
        return result

    async def screenshot(self, params: DriverScreenshotParams) -> dict[str, Any]:
        """PNG of the viewport, the full page, or one element (base64 in ``png``).

        Returns:
            ``{png, width, height, scale, clip: {x, y, width, height}}``: ``width``/``height``
            in image px; ``scale`` image px per CSS px; ``clip`` in CSS px of the top-level
            page (viewport capture: the scroll offset and viewport size).
        """
        frame = self.frames.frame_for(params.frameToken)
        page = frame.page
        # issue 15: png or jpeg (quality 90, as Playwright MCP's browser_take_screenshot).
        shot: dict[str, Any] = {"type": params.type}
        if params.type == "jpeg":
            shot["quality"] = 90
        with map_playwright_errors():
            # Read in the isolated world: page script cannot forge the geometry.
            top = page.main_frame
            scale = await evaluate_isolated(top, None, "window.devicePixelRatio",
                                            EVALUATE_TIMEOUT_S)
            if params.css:
                handle = await self._unique(frame, params.css)
                try:
                    box = await handle.bounding_box()
                    png = await handle.screenshot(**shot)
                finally:
                    self._spawn(A.dispose_quietly(handle))
                if box is None:
                    raise E.ElementTargetDetached("The element has no box (hidden?).")
                scroll = await evaluate_isolated(top, None, "[scrollX, scrollY]",
                                                 EVALUATE_TIMEOUT_S)
                clip = {"x": box["x"] + scroll[0], "y": box["y"] + scroll[1],
                        "width": box["width"], "height": box["height"]}
            else:
                png = await page.screenshot(**shot, full_page=params.fullPage)
                x, y, w, h = await evaluate_isolated(
                    top, None, "[scrollX, scrollY, innerWidth, innerHeight]"
                    if not params.fullPage else "[0, 0, document.documentElement.scrollWidth,"
                    " document.documentElement.scrollHeight]", EVALUATE_TIMEOUT_S)
                clip = {"x": x, "y": y, "width": w, "height": h}
        if params.type == "png":
            width, height = struct.unpack(">II", png[16:24])
        else:  # a JPEG keeps its size in a frame header, not at a fixed offset
            import io

            from PIL import Image

            with Image.open(io.BytesIO(png)) as img:
                width, height = img.size
        return {"png": base64.b64encode(png).decode(), "width": width, "height": height,
                "scale": scale, "clip": clip, "type": params.type}

    async def evaluate(self, params: DriverEvaluateParams) -> dict[str, Any]:
        """Run ``expression`` in the frame (with the ref's element as argument when given).

        ``world="isolated"`` (the default): the page's DOM without its JavaScript, so page
        script cannot see the call nor forge its result (supervisor/isolated_eval.py);
        ``"main"``: the page's own world, where page globals are visible.

        Returns:
            ``{"value": JSON-serialisable result, "world": "isolated" | "main"}``.

        Raises:
            BadRequest: the script threw or returned something not serialisable.
            LocatorNotUnique: the element's locator matched 0 or ≥2 elements.
            ResultTooLarge: the value is over RESULT_CAP_BYTES (1 MB) as JSON
                (bridge/protocol/limits.py); measured here, it is never sent on.
        """
        frame = self.frames.frame_for(params.frameToken)
        if params.world == "isolated":
            scope = locator_engine.unique_selector(params.css) if params.css else None
            with map_playwright_errors():
                value = await evaluate_isolated(frame, scope, params.expression,
                                                EVALUATE_TIMEOUT_S)
            return {"value": value, "world": "isolated"}
        try:
            # issue 32 item 3: the value is measured in the page and one over the cap
            # never leaves it (a 33 MB string took 15 s to reach the supervisor).
            source = _normalised(params.expression)
            nonce = os.urandom(8).hex()
            if params.css:
                handle = await self._unique(frame, params.css)
                try:
                    value = await handle.evaluate(_MAIN_EVAL_JS,
                                                  [source, RESULT_CAP_BYTES, nonce])
                finally:
                    self._spawn(A.dispose_quietly(handle))
            else:
                value = await frame.evaluate(_MAIN_EVAL_NO_ELEMENT_JS,
                                             [source, RESULT_CAP_BYTES, nonce])
            big = f"tb-big:{nonce}:"
            if isinstance(value, str) and value.startswith(big):
                raise too_large(int(value[len(big):]), "The script's value", NARROW_EVALUATE)
        except PlaywrightError as exc:
            text = str(exc).splitlines()[0][:300]
            raise E.BadRequest(f"The script failed in the page: {text}") from exc
        # issue 32 item 3: measured here, so a value over the cap never reaches the bridge.
        check_result(value, "The script's value", NARROW_EVALUATE)
        return {"value": value, "world": "main"}

    async def blank_page(self, params: DriverBlankPageParams) -> dict[str, Any]:
        """The frame token of a blank tab's page, named by its place among the blank pages
        (:meth:`supervisor.frames.FrameRegistry.blank_page`, whose errors it raises).

        Returns:
            ``{"frameToken": str}``.
        """
        return {"frameToken": await self.frames.blank_page(params.index, params.count)}

    async def ax_facts(self, params: DriverAxFactsParams) -> dict[str, Any]:
        """Chromium's computed role, name and states of a frame's elements, by local ref
        (issue 30 item 8; :meth:`supervisor.frames.FrameRegistry.ax_facts`).

        Returns:
            ``{"facts": {ref: {role, name, states}}, "source": "chromium-ax" | "none"}``;
            ``none`` (and no facts) where the tree cannot be read (not Chromium).

        Raises:
            FrameTokenUnknown: the token names no live frame.
        """
        frame = self.frames.frame_for(params.frameToken)
        if self.frames.route != "cdp":
            return {"facts": {}, "source": "none"}
        try:
            facts = await self.frames.ax_facts(frame, params.refs)
        except PlaywrightError as exc:
            raise E.InternalError(
                "The browser's accessibility tree could not be read: "
                f"{str(exc).splitlines()[0][:200]}", {}) from exc
        return {"facts": facts, "source": "chromium-ax"}

    async def pointer_at(self, params: DriverPointerParams) -> dict[str, Any]:
        """Where this driver last sent the pointer of the frame's page (supervisor/mouse.py
        ``last``): CSS px of the top-level viewport; (0, 0) before any pointer input.

        Returns:
            ``{"x": float, "y": float}``.

        Raises:
            FrameTokenUnknown: the token names no live frame.
            BadRequest: the position is not known (the element the last ref action
                pointed at left the page before its box was read).
        """
        page = self.frames.frame_for(params.frameToken).page
        where = await mouse.last(page)
        if where is None:
            raise mouse.unknown_position()
        return {"x": where[0], "y": where[1]}

    async def cdp_endpoint(self, params: DriverCdpEndpointParams) -> dict[str, Any]:
        """The loopback CDP endpoint of this browser, issued to ``params.session``
        (supervisor/cdp_proxy.py; started at the first call).

        Returns:
            ``{url, httpUrl, session, device}`` (:meth:`CdpProxy.endpoint`).

        Raises:
            BadRequest: this browser has no CDP (Firefox and Camoufox speak WebDriver
                BiDi or Juggler to Playwright, not CDP), ``details.browser`` names it.
        """
        if self.cdp is None:
            raise E.BadRequest(
                f"Device {self.device!r} runs {self.browser or 'a browser'} and has no CDP "
                "endpoint: the CDP door exists for Chromium devices only.",
                {"device": self.device, "browser": self.browser},
                next_step="Use a Chromium device (trustbridge up --browser chromium), or "
                "drive this one through the bridge's own tools.")
        return await self.cdp.endpoint(params.session)

    async def cdp_close(self, _params: Any) -> dict[str, Any]:
        """Close this browser's CDP door (the person withdrew their consent, docs/cdp.md):
        ``{closed}``, whether one was open."""
        return {"closed": self.cdp is not None and await self.cdp.close()}

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @staticmethod
    async def _unique(frame: Frame, css: str) -> ElementHandle:
        """A handle on the one element ``css`` matches.

        Raises:
            LocatorNotUnique: 0 or ≥2 matches (``details.count``).
        """
        with map_playwright_errors():
            handle = await frame.query_selector(locator_engine.unique_selector(css))
        if handle is None:  # the unique selector throws instead
            raise locator_not_unique(0)
        return handle


POINTER_ACTIONS = (ClickAction, HoverAction, CheckAction, ScrollAction)
"""Ref actions whose Playwright input (its actionability path) moves the pointer over the
target; a verb that sends its own point records it itself (supervisor/mouse.py)."""


def _pointed(page: Page, target: A.Target, action: Any, point: Any,
             extra: dict[str, Any]) -> None:
    """Record that the pointer went over ``target`` (its box read in the background):
    after a ref action that moved it without telling where. A check that needed no click
    (``changed`` false) did not move it."""
    if not isinstance(action, POINTER_ACTIONS) or extra.get("changed") is False:
        return
    offset = None
    if isinstance(action, ClickAction) and action.position is not None:
        offset = (action.position.x, action.position.y)
    elif isinstance(action, ClickAction) and point is not None:  # the coordinate route
        offset = (point.x, point.y)
    mouse.moved_over(page, target.locator, offset)


class _Once:
    """A callable that runs ``then`` the first time it is called, never again (the
    ``driver.dispatched`` signal: a verb may signal before its read-back, and the watch
    signals again when the verb returns)."""

    def __init__(self, then: Callable[[], None] | None) -> None:
        self._then = then

    def __call__(self) -> None:
        then, self._then = self._then, None
        if then is not None:
            then()
