"""Peer plumbing, written once: the handshake, request correlation and the serve loop.

Every side of the protocol speaks through this module (docs/design.md §10): the bridge
(``bridge/server.py``) for each connected peer, the client (``bridge/client.py``), the
input driver (``supervisor/driver.py``) and the fake peers of the tests.

- :func:`handshake`: the connecting side sends its :class:`~.models.Hello` and reads the
  :class:`~.models.Welcome`, or the bridge's error response, raised as its own class.
- :class:`Connection`: one open WebSocket. :meth:`Connection.call` sends a request and
  awaits the response with the same id (ids are ``<prefix><n>``); :meth:`Connection.serve`
  reads frames, validates each with ``MESSAGE_ADAPTER``, hands responses to the waiting
  call and requests / events to the caller's handlers. When the connection is lost,
  every call still waiting fails at once: input (``methods.INPUT_METHODS``) with
  BROWSER_OPERATION_UNCERTAIN, since it may have reached the page (design.md §2 rule 7),
  anything else with DEVICE_NOT_CONNECTED, or the errors the owner chose.
- :func:`answer`: run a request's work and turn its outcome into a Response.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import pydantic
from websockets.asyncio.connection import Connection as WebSocket
from websockets.exceptions import ConnectionClosed

from . import errors as E
from .limits import FRAME_LIMIT_BYTES, FRAME_MARGIN_BYTES, too_large
from .methods import INPUT_METHODS
from .models import MESSAGE_ADAPTER, Event, Hello, Request, Response, Welcome
from .validate import error_locs, summarise, validate_result

log = logging.getLogger("trustbridge.peer")

LostError = Callable[[str], E.TrustbridgeError]
"""Method name → the error its caller gets when the connection goes before the answer."""
LateError = Callable[[str, float], E.TrustbridgeError]
"""(method, timeout s) → the error its caller gets when no answer came in time."""


def encode(message: Hello | Welcome | Request | Response | Event) -> str:
    """One wire frame: compact JSON without None fields, except ``Response.id``, which
    is required on the wire (null when the request's id was unreadable)."""
    payload = message.model_dump(mode="json", exclude_none=True)
    if isinstance(message, Response):
        payload["id"] = message.id
    return json.dumps(payload, separators=(",", ":"))


def bounded_frame(message: Hello | Welcome | Request | Response | Event,
                  limit: int = FRAME_LIMIT_BYTES - FRAME_MARGIN_BYTES) -> str:
    """:func:`encode`, except that a Response over ``limit`` bytes (UTF-8) becomes a
    RESULT_TOO_LARGE error response with the same id (``details.bytes``: its size).
    Other messages are sent as they are (only responses carry page data)."""
    text = encode(message)
    if len(text) * 4 <= limit or not isinstance(message, Response):
        return text
    size = len(text.encode())
    if size <= limit:
        return text
    err = too_large(size, "The answer", "Ask for less: a smaller area, a slice of the "
                    "value, a filtered listing.", FRAME_LIMIT_BYTES)
    return encode(Response(id=message.id, ok=False, error=err.to_payload()))


async def handshake(ws: WebSocket, hello: Hello, timeout_s: float | None = None) -> Welcome:
    """Say hello on a freshly opened socket and return the bridge's welcome.

    On any failure the socket is closed before the error is raised.

    Args:
        ws: the open WebSocket.
        hello: this peer's hello (role, device, token, ...).
        timeout_s: seconds to wait for the answer; None waits as long as the socket lives.

    Raises:
        TrustbridgeError: the bridge refused the hello (UNAUTHORIZED, PROTOCOL_MISMATCH,
            BAD_REQUEST), raised as the class of its code with its details.
        BadRequest: the first frame was not a welcome (or did not fit the models).
        ConnectionClosed: the bridge closed the connection without an answer (the caller
            says what that means to it: the client calls it UNAUTHORIZED, the driver
            reconnects).
        TimeoutError: no answer within ``timeout_s``.
    """
    try:
        await ws.send(encode(hello))
        raw = await asyncio.wait_for(ws.recv(), timeout_s)
        first = MESSAGE_ADAPTER.validate_json(raw)
    except pydantic.ValidationError as exc:
        await ws.close()
        raise E.BadRequest("The bridge's answer to hello is malformed: " + summarise(exc),
                           {"errors": error_locs(exc)}) from exc
    except BaseException:
        await ws.close()
        raise
    if isinstance(first, Response) and first.error is not None:
        await ws.close()
        raise E.error_from_payload(first.error)
    if not isinstance(first, Welcome):
        await ws.close()
        raise E.BadRequest(f"Expected welcome, got {first.type}.")
    return first


def lost_error(name: str, details: dict[str, Any] | None = None) -> LostError:
    """The default loss errors for calls on the connection to ``name`` (e.g. ``"the
    driver of device 'd1'"``): input is uncertain, anything else not connected."""

    def lost(method: str) -> E.TrustbridgeError:
        facts = {**(details or {}), "method": method}
        if method in INPUT_METHODS:
            return E.BrowserOperationUncertain(
                f"The {name} disconnected during {method}; the action may or may not have "
                "reached the page and will not be repeated. Take a new snapshot to see the "
                "page's state.", facts)
        return E.DeviceNotConnected(
            f"The {name} disconnected before answering {method}.", facts)

    return lost


def late_error(name: str, details: dict[str, Any] | None = None) -> LateError:
    """The default errors for a call on ``name`` that got no answer in time: input is
    uncertain (it was sent; a late answer is dropped and nothing is re-sent), anything
    else TIMEOUT."""

    def late(method: str, timeout_s: float) -> E.TrustbridgeError:
        facts = {**(details or {}), "method": method, "timeoutS": timeout_s}
        if method in INPUT_METHODS:
            return E.BrowserOperationUncertain(
                f"The {name} did not answer {method} within {timeout_s:.1f} s; the action "
                "may or may not have reached the page and will not be repeated. Take a new "
                "snapshot to see the page's state.", facts)
        return E.Timeout(f"The {name} did not answer {method} within {timeout_s:.0f} s.",
                         facts)

    return late


RequestHandler = Callable[[Request], Awaitable[None]]
EventHandler = Callable[[Event], Awaitable[None]]
MalformedHandler = Callable[[str | bytes, pydantic.ValidationError | None], Awaitable[None]]


class Connection:
    """One open protocol connection: correlated calls out, a serve loop in.

    Args:
        ws: the open WebSocket (after the hello).
        name: how errors name the other side (``"bridge connection"``, ``"driver of
            device 'd1'"``).
        id_prefix: prefix of this side's request ids (``c`` client, ``b`` bridge).
        details: facts every loss / timeout error carries (e.g. ``{"device": "d1"}``).
        lost: error for a call whose connection went before its answer (default
            :func:`lost_error`).
        late: error for a call with no answer within its timeout (default
            :func:`late_error`).
    """

    def __init__(self, ws: WebSocket, name: str, *, id_prefix: str = "",
                 details: dict[str, Any] | None = None, lost: LostError | None = None,
                 late: LateError | None = None) -> None:
        self.ws = ws
        self.name = name
        self._prefix = id_prefix
        self._ids = itertools.count(1)
        self._lost = lost or lost_error(name, details)
        self._late = late or late_error(name, details)
        self.pending: dict[str, tuple[asyncio.Future[dict[str, Any]], str]] = {}
        """Request id → (future of its result, method), for calls awaiting their answer."""
        self.gone = False
        """The connection is lost: new calls fail at once."""

    def next_id(self) -> str:
        """A request id not used before on this connection."""
        return f"{self._prefix}{next(self._ids)}"

    async def send(self, message: Welcome | Request | Response | Event) -> None:
        """Send one frame. A response over the bridge's frame limit (FRAME_LIMIT_BYTES less
        FRAME_MARGIN_BYTES) goes out as RESULT_TOO_LARGE with the same id instead: a larger
        frame would make the bridge close the connection, and every tab's trusted input
        with it (issue 32 item 3).

        Raises:
            ConnectionClosed: the socket is closed.
        """
        await self.ws.send(bounded_frame(message))

    async def notify(self, event: str, params: dict[str, Any]) -> None:
        """Send a one-way event; a closed connection drops it silently (nobody is owed it)."""
        with contextlib.suppress(ConnectionClosed):
            await self.send(Event(event=event, params=params))

    async def call(self, method: str, params: dict[str, Any],
                   timeout_s: float | None = None, req_id: str | None = None) -> dict[str, Any]:
        """Send a request and wait for its result.

        Args:
            method / params: the request.
            timeout_s: seconds to wait for the answer; None: as long as the connection lives.
            req_id: the id to use (default: :meth:`next_id`).

        Raises:
            TrustbridgeError: the other side's error, as the class of its code.
            BrowserOperationUncertain / DeviceNotConnected (by default): the connection
                was lost before the answer (``lost``).
            DeviceNotConnected: the connection was already lost; nothing was sent.
            BrowserOperationUncertain / Timeout (by default): no answer in ``timeout_s``.
            InternalError: the answer does not fit the method's result model.
        """
        req_id = req_id or self.next_id()
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[req_id] = (fut, method)
        try:
            if self.gone:  # known before sending: nothing reached anyone
                raise E.DeviceNotConnected(f"The {self.name} is gone; nothing was sent.",
                                           {"method": method})
            try:
                await self.send(Request(id=req_id, method=method, params=params))
            except ConnectionClosed as exc:
                # The frame may be partly on its way (send can fail while draining).
                raise self._lost(method) from exc
            try:
                result = await asyncio.wait_for(fut, timeout_s)
            except TimeoutError as exc:
                # An answer that comes later finds no pending entry and is dropped.
                raise self._late(method, timeout_s or 0.0) from exc
        finally:
            self.pending.pop(req_id, None)
        # Checked where it arrives: a peer's bug never travels on as a good answer.
        return validate_result(method, result, sender=f"The {self.name}")

    def settle(self, response: Response) -> bool:
        """Complete the call ``response`` answers; False if no call waits for it."""
        entry = self.pending.get(str(response.id)) if response.id is not None else None
        if entry is None or entry[0].done():
            log.debug("%s answered unknown request %r", self.name, response.id)
            return False
        fut, _method = entry
        if response.ok:
            fut.set_result(response.result or {})
        else:
            fut.set_exception(E.error_from_payload(response.error or E.ErrorPayload(
                code=E.ErrorCode.INTERNAL_ERROR, message="The peer failed without an error.")))
        return True

    def fail_pending(self) -> None:
        """The connection is lost: fail every call still waiting (see ``lost``)."""
        self.gone = True
        for fut, method in list(self.pending.values()):
            if not fut.done():
                fut.set_exception(self._lost(method))
        self.pending.clear()

    async def serve(self, *, on_request: RequestHandler | None = None,
                    on_event: EventHandler | None = None,
                    on_malformed: MalformedHandler | None = None,
                    on_other: Callable[[Any], Awaitable[None]] | None = None) -> None:
        """Read frames until the connection closes, then fail the calls still waiting.

        Responses complete their calls; requests, events, frames that fail the models
        (binary frames too, with no validation error) and anything else (a hello or
        welcome out of place) go to the handlers, awaited in arrival order. A missing
        handler drops what it would get.
        """
        try:
            async for raw in self.ws:
                if isinstance(raw, bytes):
                    if on_malformed is not None:
                        await on_malformed(raw, None)
                    continue
                try:
                    msg = MESSAGE_ADAPTER.validate_json(raw)
                except pydantic.ValidationError as exc:
                    if on_malformed is not None:
                        await on_malformed(raw, exc)
                    continue
                if isinstance(msg, Response):
                    self.settle(msg)
                elif isinstance(msg, Request):
                    if on_request is not None:
                        await on_request(msg)
                elif isinstance(msg, Event):
                    if on_event is not None:
                        await on_event(msg)
                elif on_other is not None:
                    await on_other(msg)
        except ConnectionClosed:
            pass
        finally:
            self.fail_pending()


async def answer(req: Request, work: Awaitable[dict[str, Any]], failure: str,
                 logger: logging.Logger = log) -> Response:
    """Await ``work`` and return the Response to ``req``: its result, the project error
    it raised, or INTERNAL_ERROR ``"<failure>: <exception type>."`` for anything else
    (logged with its traceback: a bug must not take the connection down)."""
    try:
        return Response(id=req.id, ok=True, result=await work)
    except E.TrustbridgeError as err:
        return Response(id=req.id, ok=False, error=err.to_payload())
    except Exception as exc:
        logger.exception("%s failed", req.method)
        err = E.InternalError(f"{failure}: {type(exc).__name__}.")
        return Response(id=req.id, ok=False, error=err.to_payload())
