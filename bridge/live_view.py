"""The live view: a person sees a handed tab and acts in it (issue 37; docs/mcp.md
"browser_request_human", docs/security.md "Live view").

Served by the bridge's own server (bridge/server.py: websockets answers plain HTTP GETs
through ``process_request``), on the bridge's address (127.0.0.1 by default):

- ``GET /live/<secret>``: the page (:data:`PAGE`): the reason, the tab's screen, "Done —
  hand back" and "Cancel";
- ``GET /live/<secret>/ws`` (WebSocket): frames to the page, the person's input and
  buttons from it.

The link is the credential: ``<secret>`` is 256 random bits, made per hand-off
(bridge/handover.py). Refused before anything is served:

- a ``Host`` header that is not this bridge's address (DNS rebinding): 403;
- an ``Origin`` other than the bridge's own page (another site's script): 403 (the
  WebSocket needs that exact ``Origin``; a GET may come without one);
- an unknown link: 404; a hand-off that ended or expired: 410;
- the agent's own browser: a WebSocket from a page that a tab of an agent shows (a tab
  a session owns or opened, or any tab of a browser no person uses) is closed (1008)
  before it claims the hand-off, so an agent cannot hand its tab back to itself;
- a second opener: 409, once a live view's WebSocket holds the hand-off (single use:
  the first WebSocket whose handshake completes claims it, and nothing can take its
  place, even after it closes; a second handshake that raced it is closed with 1008).

On the socket the page sends ``{"type": "input", "events": [LiveInput, ...]}``,
``{"type": "done"}`` or ``{"type": "cancel"}`` (each at most MAX_MESSAGE_BYTES); the
bridge sends ``hello {reason,
expiresAt, tabId}``, ``frame {data (base64 JPEG), width, height (CSS px), capturedAt,
sentAt (ms since the epoch)}``, ``ended {state}``, ``refused {reason}`` (input after the
hand-off ended: nothing was sent) and ``error {message}``. The person's input goes to the
device's driver as ``driver.liveInput`` (trusted input, supervisor/live.py); the bridge
counts clicks, keys and wheel turns for the agent's answer and logs no key.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

import pydantic
from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request as HttpRequest, Response as HttpResponse

from .handover import Handover, HandoverBook
from .protocol import errors as E
from .protocol.models import DriverLiveInputParams

log = logging.getLogger("trustbridge.live")

DRIVER_TIMEOUT_S = 10.0
AGENT_TAB_REFUSAL = ("This live-view link is open in a tab of the agent's own browser: "
                     "it is for a person, in a browser of their own. Nothing was handed "
                     "back.")
MAX_MESSAGE_BYTES = 64 * 1024
"""Largest message the live view's socket takes (64 events are ~10 KiB); a larger one
closes it with 1009 (message too big), which ends the hand-off as ``closed``."""
LIVE_PREFIX = "/live/"


def is_live(path: str) -> bool:
    """``path`` is the live view's (``/live/...``)."""
    return path.startswith(LIVE_PREFIX)


class LiveView:
    """Serves the live views of one bridge.

    Args:
        book: the bridge's hand-offs.
        executor: the bridge's executor (its policy, peers and ``_resolve``).
        address: returns ``(host, port)`` the bridge listens on.
    """

    def __init__(self, book: HandoverBook, executor: Any,
                 address: Callable[[], tuple[str, int]]) -> None:
        self.book = book
        self.executor = executor
        self.address = address
        self.sockets: dict[str, ServerConnection] = {}
        self._sending: set[str] = set()
        self._tasks: set[asyncio.Task[Any]] = set()

    # -- HTTP -------------------------------------------------------------------------

    def _hosts(self) -> set[str]:
        host, port = self.address()
        return {f"{h}:{port}" for h in {host, "127.0.0.1", "localhost"}}

    def http(self, conn: ServerConnection, request: HttpRequest) -> HttpResponse | None:
        """Answer a ``/live/`` request: the page, a refusal, or None to go on with the
        WebSocket handshake of a live view that just claimed its hand-off."""
        parts = request.path.split("?", 1)[0].split("/")
        secret = parts[2] if len(parts) > 2 else ""
        socket = len(parts) == 4 and parts[3] == "ws"
        if len(parts) not in (3, 4) or (len(parts) == 4 and not socket):
            return _text(HTTPStatus.NOT_FOUND, "Not found.")
        hosts = self._hosts()
        if request.headers.get("Host") not in hosts:
            log.warning("live view: refused a request for another host")
            return _text(HTTPStatus.FORBIDDEN, "This address is not the bridge's.")
        origin = request.headers.get("Origin")
        if (socket and origin is None) or (
                origin is not None and origin not in {f"http://{h}" for h in hosts}):
            log.warning("live view: refused a request from origin %r", origin)
            return _text(HTTPStatus.FORBIDDEN, "Only the live-view page itself may connect.")
        hand = self.book.by_secret.get(secret)
        if hand is None:
            return _text(HTTPStatus.NOT_FOUND, "Unknown live-view link.")
        if not hand.active or self.book.clock() >= hand.expires_at:
            return _text(HTTPStatus.GONE, f"This hand-off is over ({hand.state}); the link "
                         "has expired.")
        if hand.opener is not None:
            return _text(HTTPStatus.CONFLICT, "This live-view link was already opened; a "
                         "link works once.")
        if socket:
            return None  # claimed once its handshake is done (serve)
        nonce = secrets.token_urlsafe(16)
        host, port = self.address()
        headers = Headers([
            ("Content-Type", "text/html; charset=utf-8"),
            ("Cache-Control", "no-store"),
            ("Referrer-Policy", "no-referrer"),
            ("X-Frame-Options", "DENY"),
            ("X-Content-Type-Options", "nosniff"),
            ("Content-Security-Policy",
             f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; "
             f"img-src data:; connect-src ws://{request.headers.get('Host')}; "
             "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"),
        ])
        body = PAGE.replace("{{NONCE}}", nonce).encode()
        return HttpResponse(200, "OK", headers, body)

    # -- the live view's socket -------------------------------------------------------

    async def serve(self, ws: ServerConnection) -> None:
        """One live view's WebSocket, from its claim (:meth:`http`) to its close."""
        secret = ws.request.path.split("/")[2] if ws.request else ""
        hand = self.book.by_secret.get(secret)
        if hand is not None and hand.opener is None and hand.active \
                and await self._in_an_agents_tab(secret):
            log.warning("live view of hand-off %s: refused, opened in an agent's tab",
                        hand.id)
            await self._send(ws, {"type": "error", "message": AGENT_TAB_REFUSAL})
            await ws.close(1008, "Opened in an agent's tab.")
            return
        if hand is None or hand.opener is not None or not hand.active:
            # Two handshakes that passed http() at once: the first to get here has it.
            await ws.close(1008, "This live-view link was already opened.")
            return
        # The page sends a few hundred bytes at a time; the bridge's limit for peers
        # (32 MiB, uploads) would let a socket make it parse megabytes per message.
        ws.protocol.max_message_size = MAX_MESSAGE_BYTES
        hand.opener = ws  # claimed: single use from here on, even after it closes
        hand.state = "open"
        self.sockets[hand.id] = ws
        hand.on_end.append(self._remember_typed)
        hand.on_end.append(lambda h: self._spawn(self._ended(h, ws)))
        try:
            await self._send(ws, {"type": "hello", "reason": hand.reason,
                                  "expiresAt": hand.expires_ms, "tabId": hand.tab})
            try:
                await self._start(hand)
            except E.TrustbridgeError as err:
                log.warning("live view of hand-off %s: no frames: %s", hand.id, err)
                await self._send(ws, {"type": "error", "message": f"No screen: {err.message}"})
            async for raw in ws:
                await self._on_message(hand, ws, raw)
        except ConnectionClosed:
            pass
        finally:
            self.sockets.pop(hand.id, None)
            self.book.end(hand, "closed")  # no-op when it had ended

    async def _in_an_agents_tab(self, secret: str) -> bool:
        """A tab of an agent shows this link: one a session owns or opened, or any tab
        of a browser no person uses (headless, under automation). The agent has the
        link to relay it; opening it itself would hand the tab back to itself and the
        answer would say a person did (a person's own tab in their paired browser may
        open it)."""
        executor = self.executor
        for device, ext in list(executor.policy.extensions.items()):
            try:
                rows = (await executor.peer(ext).call("tabs.list", {}, DRIVER_TIMEOUT_S)
                        ).get("tabs") or []
            except E.TrustbridgeError:
                continue
            for row in rows:
                url, tab = row.get("url"), row.get("tabId")
                if not isinstance(url, str) or f"{LIVE_PREFIX}{secret}" not in url:
                    continue
                if not executor.gate.attended(device) or (
                        isinstance(tab, int) and (
                            executor.sessions.owner(device, tab) is not None
                            or (device, tab) in executor.sessions._made)):
                    return True
        return False

    async def _start(self, hand: Handover) -> None:
        policy = self.executor.policy
        ext, driver = policy.extensions.get(hand.device), policy.drivers.get(hand.device)
        if ext is None or driver is None:
            raise E.DeviceNotConnected(f"Device {hand.device!r} lost its extension or driver.")
        # With the driver: a blank tab (no content script) is named by the driver's
        # driver.blankPage, as for the page tools (executor._resolve).
        target = await self.executor._resolve(ext, hand.tab, None, driver)
        await self.executor.peer(driver).call(
            "driver.liveStart", {"frameToken": target["frameToken"], "handoverId": hand.id},
            DRIVER_TIMEOUT_S)

    async def _on_message(self, hand: Handover, ws: ServerConnection,
                          raw: str | bytes) -> None:
        try:
            msg = json.loads(raw)
            kind = msg.get("type") if isinstance(msg, dict) else None
        except ValueError:
            kind = None
        if kind not in ("input", "done", "cancel"):
            await self._send(ws, {"type": "error", "message": "Unknown message."})
            return
        if not hand.active:
            await self._send(ws, {"type": "refused", "reason": f"The hand-off is over "
                                  f"({hand.state}); nothing was sent to the page."})
            return
        if kind == "done":
            self.book.end(hand, "handedBack")
            return
        if kind == "cancel":
            self.book.end(hand, "cancelled")
            return
        try:
            params = DriverLiveInputParams.model_validate(
                {"handoverId": hand.id, "events": msg.get("events")})
        except pydantic.ValidationError:
            await self._send(ws, {"type": "error", "message": "Malformed input events."})
            return
        for event in params.events:
            if event.type == "down":
                hand.counts["clicks"] += 1
                hand.break_run()  # a click may move the caret to another field
            elif event.type == "keydown":
                hand.counts["keys"] += 1
                if event.key:
                    hand.key(event.key)
            elif event.type == "wheel":
                hand.counts["wheels"] += 1
        driver = self.executor.policy.drivers.get(hand.device)
        try:
            if driver is None:
                raise E.TrustedInputUnavailable("The input driver is offline; nothing was sent.")
            sent = await self.executor.peer(driver).call(
                "driver.liveInput", params.model_dump(mode="json"), DRIVER_TIMEOUT_S)
        except E.TrustbridgeError as err:
            await self._send(ws, {"type": "error", "message": err.message})
            return
        refused = sent.get("refused") if isinstance(sent, dict) else 0
        if isinstance(refused, int) and refused > 0:  # said, not dropped silently
            await self._send(ws, {"type": "error", "message": (
                f"{refused} key(s) the browser does not know were not sent to the page.")})

    def _remember_typed(self, hand: Handover) -> None:
        """What the person typed is masked in the agent's later snapshots, titles and
        URLs of the device, as a sensitive value the agent typed would be
        (bridge/secrets.py; runs under its MIN_CHARS are not kept)."""
        for run in hand.typed:
            self.executor.secrets.typed(hand.device, hand.tab, None,
                                        {"kind": "type", "text": run}, sensitive=True)
        hand.typed = [""]

    async def _ended(self, hand: Handover, ws: ServerConnection) -> None:
        """The hand-off ended: stop the frames, keep the driver's counts, tell the page."""
        driver = self.executor.policy.drivers.get(hand.device)
        if driver is not None:
            try:
                hand.stream = await self.executor.peer(driver).call(
                    "driver.liveStop", {"handoverId": hand.id}, DRIVER_TIMEOUT_S)
            except E.TrustbridgeError as err:
                log.warning("live view of hand-off %s: stopping its frames failed: %s",
                            hand.id, err)
                hand.stream = {"stopped": False}
        else:
            hand.stream = {"stopped": False}
        await self._send(ws, {"type": "ended", "state": hand.state})

    def frame(self, params: dict[str, Any]) -> None:
        """A ``live.frame`` event of a driver: to the hand-off's live view, unless the
        previous frame is still being sent (then this one is dropped: the next is
        newer)."""
        hid = params.get("handoverId")
        ws = self.sockets.get(hid) if isinstance(hid, str) else None
        hand = self.book.by_id.get(hid) if isinstance(hid, str) else None
        if ws is None or hand is None or not hand.active or hid in self._sending:
            return
        self._sending.add(hid)
        message = {"type": "frame", "data": params.get("data"), "width": params.get("width"),
                   "height": params.get("height"), "capturedAt": params.get("capturedAt"),
                   "sentAt": time.time() * 1000}

        async def send() -> None:
            try:
                await self._send(ws, message)
            finally:
                self._sending.discard(hid)

        self._spawn(send())

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @staticmethod
    async def _send(ws: ServerConnection, message: dict[str, Any]) -> None:
        with contextlib.suppress(ConnectionClosed):
            await ws.send(json.dumps(message))


def _text(status: HTTPStatus, text: str) -> HttpResponse:
    headers = Headers([("Content-Type", "text/plain; charset=utf-8"),
                       ("Cache-Control", "no-store")])
    return HttpResponse(status.value, status.phrase, headers, (text + "\n").encode())


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>trustbridge — a person's turn</title>
<style nonce="{{NONCE}}">
body { font: 14px system-ui, sans-serif; margin: 0; background: #1e1e1e; color: #eee; }
header { display: flex; gap: 12px; align-items: center; padding: 8px 12px;
         background: #2b2b2b; }
#reason { flex: 1; font-weight: 600; }
button { font: inherit; padding: 6px 14px; border-radius: 4px; border: 0; cursor: pointer; }
#done { background: #2e7d32; color: #fff; } #cancel { background: #555; color: #fff; }
#status { padding: 4px 12px; color: #bbb; min-height: 1.4em; }
#screen { display: block; margin: 8px auto; max-width: calc(100vw - 16px);
          outline: 2px solid #444; cursor: crosshair; background: #000; }
#screen:focus { outline-color: #4caf50; }
</style></head>
<body>
<header><span>The agent asks:</span><span id="reason"></span>
<button id="done">Done — hand back</button><button id="cancel">Cancel</button></header>
<div id="status">Connecting…</div>
<img id="screen" tabindex="0" alt="The browser tab">
<script nonce="{{NONCE}}">
"use strict";
const screen = document.getElementById("screen");
const status = document.getElementById("status");
const ws = new WebSocket(location.href.replace(/^http/, "ws").replace(/[?#].*$/, "") + "/ws");
let size = {width: 0, height: 0};
let over = false;
window.__live = {frames: 0, lastFrame: null, ended: null, refused: 0, errors: []};
function send(msg) { if (ws.readyState === 1) ws.send(JSON.stringify(msg)); }
function point(e) {
  const r = screen.getBoundingClientRect();
  const x = (e.clientX - r.left) / r.width * size.width;
  const y = (e.clientY - r.top) / r.height * size.height;
  return {x: Math.max(0, x), y: Math.max(0, y)};
}
function input(ev) { if (!over) send({type: "input", events: [ev]}); }
const BUTTONS = ["left", "middle", "right"];
ws.onmessage = (m) => {
  const msg = JSON.parse(m.data);
  if (msg.type === "hello") {
    document.getElementById("reason").textContent = msg.reason;
    status.textContent = "Act in the picture below (click it first to type), then press " +
      "\\u201cDone \\u2014 hand back\\u201d. Link valid until " +
      new Date(msg.expiresAt).toLocaleTimeString() + ".";
  } else if (msg.type === "frame") {
    size = {width: msg.width || size.width, height: msg.height || size.height};
    screen.src = "data:image/jpeg;base64," + msg.data;
    window.__live.frames += 1;
    window.__live.lastFrame = {capturedAt: msg.capturedAt, sentAt: msg.sentAt,
                               receivedAt: Date.now()};
  } else if (msg.type === "ended") {
    over = true; window.__live.ended = msg.state;
    status.textContent = "Handed back (" + msg.state + "). You can close this page.";
  } else if (msg.type === "refused") {
    window.__live.refused += 1; status.textContent = msg.reason;
  } else if (msg.type === "error") {
    window.__live.errors.push(msg.message); status.textContent = msg.message;
  }
};
ws.onclose = () => { if (!over) status.textContent = "Disconnected."; over = true; };
let lastMove = 0;
screen.addEventListener("mousemove", (e) => {
  const now = Date.now();
  if (now - lastMove < 40 && !e.buttons) return;
  lastMove = now; input({type: "move", ...point(e)});
});
screen.addEventListener("mousedown", (e) => {
  e.preventDefault(); screen.focus();
  input({type: "down", ...point(e), button: BUTTONS[e.button] || "left",
         clickCount: Math.min(3, Math.max(1, e.detail))});
});
screen.addEventListener("mouseup", (e) => {
  input({type: "up", ...point(e), button: BUTTONS[e.button] || "left",
         clickCount: Math.min(3, Math.max(1, e.detail))});
});
screen.addEventListener("contextmenu", (e) => e.preventDefault());
screen.addEventListener("dragstart", (e) => e.preventDefault());
screen.addEventListener("wheel", (e) => {
  e.preventDefault();
  input({type: "wheel", ...point(e), deltaX: e.deltaX, deltaY: e.deltaY});
}, {passive: false});
screen.addEventListener("keydown", (e) => {
  e.preventDefault(); window.__live.lastKeyAt = Date.now();
  input({type: "keydown", key: e.key});
});
screen.addEventListener("keyup", (e) => { e.preventDefault(); input({type: "keyup", key: e.key}); });
document.getElementById("done").onclick = () => send({type: "done"});
document.getElementById("cancel").onclick = () => send({type: "cancel"});
</script></body></html>
"""
