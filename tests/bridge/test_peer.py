"""bridge/protocol/peer.py over real loopback WebSockets: handshake, correlation, loss."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import ServerConnection, serve

from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import (
    PROTOCOL_VERSION,
    Event,
    Hello,
    Request,
    Response,
    Welcome,
)
from trustbridge.bridge.protocol.peer import Connection, answer, encode, handshake

pytestmark = pytest.mark.timeout(20)

STEP_S = 5.0
HELLO = Hello(role="client", protocolVersion=PROTOCOL_VERSION, token="t")
WAIT_RESULT = {"tabId": 1, "waitedMs": 5}

Handler = Callable[[ServerConnection], Awaitable[None]]


@contextlib.asynccontextmanager
async def far_side(handler: Handler) -> AsyncIterator[ClientConnection]:
    """A loopback server running ``handler`` per connection, and a socket connected to it."""
    async with serve(handler, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        async with connect(f"ws://127.0.0.1:{port}", proxy=None) as ws:
            yield ws


async def welcome_then(ws: ServerConnection,
                       then: Callable[[ServerConnection], Awaitable[None]]) -> None:
    Hello.model_validate_json(await ws.recv())
    await ws.send(encode(Welcome(protocolVersion=PROTOCOL_VERSION, peerId="p9")))
    await then(ws)


async def requests_of(ws: ServerConnection) -> AsyncIterator[Request]:
    async for raw in ws:
        yield Request.model_validate_json(raw)


async def test_handshake_accepted_returns_the_welcome() -> None:
    """A welcome answers the hello: handshake returns it with the bridge's peer id."""
    async def idle(ws: ServerConnection) -> None:
        await ws.wait_closed()

    async with far_side(lambda ws: welcome_then(ws, idle)) as ws:
        welcome = await asyncio.wait_for(handshake(ws, HELLO, STEP_S), STEP_S)
    assert (welcome.peerId, welcome.protocolVersion) == ("p9", PROTOCOL_VERSION)


async def test_handshake_refused_raises_the_class_of_its_code_and_closes() -> None:
    """An error response to the hello is raised as its class, details kept; the socket closes."""
    async def refuse(ws: ServerConnection) -> None:
        await ws.recv()
        err = E.Unauthorized("Wrong token.")
        await ws.send(encode(Response(id=None, ok=False, error=err.to_payload())))
        await ws.wait_closed()

    async with far_side(refuse) as ws:
        with pytest.raises(E.Unauthorized, match="Wrong token"):
            await asyncio.wait_for(handshake(ws, HELLO, STEP_S), STEP_S)
        assert ws.close_code is not None


async def test_handshake_answered_by_something_else_is_bad_request() -> None:
    """A first frame that is neither a welcome nor an error is BAD_REQUEST."""
    async def odd(ws: ServerConnection) -> None:
        await ws.recv()
        await ws.send(encode(Event(event="dialog.opened")))
        await ws.wait_closed()

    async with far_side(odd) as ws:
        with pytest.raises(E.BadRequest, match="Expected welcome, got event"):
            await asyncio.wait_for(handshake(ws, HELLO, STEP_S), STEP_S)


async def test_answers_reach_their_own_calls_in_any_order() -> None:
    """Two calls answered in reverse order each get the result with their own id."""
    async def reverse(ws: ServerConnection) -> None:
        got = [await anext(requests_of(ws)) for _ in range(2)]
        for req in reversed(got):
            result = {"tabId": int(req.params["n"]), "waitedMs": 0}
            await ws.send(encode(Response(id=req.id, ok=True, result=result)))
        await ws.wait_closed()

    async with far_side(lambda ws: welcome_then(ws, reverse)) as ws:
        await handshake(ws, HELLO, STEP_S)
        conn = Connection(ws, "bridge", id_prefix="c")
        reader = asyncio.create_task(conn.serve())
        one, two = await asyncio.wait_for(asyncio.gather(
            conn.call("page.wait", {"n": 1}), conn.call("page.wait", {"n": 2})), STEP_S)
        reader.cancel()
    assert (one["tabId"], two["tabId"]) == (1, 2)
    assert conn.pending == {}


async def _answered(method: str, response: Callable[[Request], Response],
                    name: str = "bridge") -> dict[str, Any]:
    """Call ``method`` on a far side that answers it with ``response(request)``."""
    async def reply(ws: ServerConnection) -> None:
        req = await anext(requests_of(ws))
        await ws.send(encode(response(req)))
        await ws.wait_closed()

    async with far_side(lambda ws: welcome_then(ws, reply)) as ws:
        await handshake(ws, HELLO, STEP_S)
        conn = Connection(ws, name)
        reader = asyncio.create_task(conn.serve())
        try:
            return await asyncio.wait_for(conn.call(method, {}), STEP_S)
        finally:
            reader.cancel()


async def test_error_answer_is_raised_as_its_class_with_facts_and_next_step() -> None:
    """An error response becomes its class, typed facts and next step restored."""
    err = E.RefNotFound("Ref e9 is unknown.", ref="e9", tabId=4, next_step="List tabs.")
    with pytest.raises(E.RefNotFound) as info:
        await _answered("page.snapshot",
                        lambda req: Response(id=req.id, ok=False, error=err.to_payload()))
    assert (info.value.ref, info.value.tabId, info.value.next_step) == ("e9", 4, "List tabs.")


async def _lost(method: str, **kwargs: Any) -> E.TrustbridgeError:
    """Call ``method`` on a far side that closes the connection on receiving it."""
    async def cut(ws: ServerConnection) -> None:
        await anext(requests_of(ws))
        await ws.close(1011, "gone")

    async with far_side(lambda ws: welcome_then(ws, cut)) as ws:
        await handshake(ws, HELLO, STEP_S)
        conn = Connection(ws, "driver of device 'd1'", details={"device": "d1"}, **kwargs)
        reader = asyncio.create_task(conn.serve())
        with pytest.raises(E.TrustbridgeError) as info:
            await asyncio.wait_for(conn.call(method, {}), STEP_S)
        await reader
    return info.value


@pytest.mark.parametrize("method", ["driver.act", "page.act", "page.batch"])
async def test_loss_of_an_input_request_is_uncertain(method: str) -> None:
    """An input request (methods.INPUT_METHODS) lost with the connection is
    BROWSER_OPERATION_UNCERTAIN, naming the device and method (design.md §2 rule 7)."""
    err = await _lost(method)
    assert type(err) is E.BrowserOperationUncertain
    assert (err.device, err.method) == ("d1", method)


async def test_loss_of_another_request_is_not_connected() -> None:
    """A request that is not input, lost with the connection, is DEVICE_NOT_CONNECTED."""
    err = await _lost("page.snapshot")
    assert type(err) is E.DeviceNotConnected
    assert "disconnected before answering page.snapshot" in err.message


async def test_loss_uses_the_owners_chosen_error() -> None:
    """A Connection built with ``lost=`` fails its pending calls with that error."""
    err = await _lost("page.snapshot", lost=lambda m: E.Timeout(f"custom {m}"))
    assert type(err) is E.Timeout and err.message == "custom page.snapshot"


async def test_call_after_loss_fails_at_once_without_sending() -> None:
    """Once the connection is gone, a call fails DEVICE_NOT_CONNECTED, even for input."""
    async def cut(ws: ServerConnection) -> None:
        await ws.close()

    async with far_side(lambda ws: welcome_then(ws, cut)) as ws:
        await handshake(ws, HELLO, STEP_S)
        conn = Connection(ws, "bridge")
        await asyncio.wait_for(conn.serve(), STEP_S)
        with pytest.raises(E.DeviceNotConnected, match="nothing was sent"):
            await conn.call("page.act", {})


@pytest.mark.parametrize(("method", "cls"), [("driver.act", E.BrowserOperationUncertain),
                                             ("page.snapshot", E.Timeout)])
async def test_no_answer_in_time(method: str, cls: type[E.TrustbridgeError]) -> None:
    """No answer within timeout_s: input is uncertain, anything else TIMEOUT; the late
    answer is then dropped."""
    async def late(ws: ServerConnection) -> None:
        req = await anext(requests_of(ws))
        await asyncio.sleep(0.3)
        await ws.send(encode(Response(id=req.id, ok=True, result={"done": True})))
        await ws.wait_closed()

    async with far_side(lambda ws: welcome_then(ws, late)) as ws:
        await handshake(ws, HELLO, STEP_S)
        conn = Connection(ws, "driver", details={"device": "d1"})
        reader = asyncio.create_task(conn.serve())
        with pytest.raises(cls) as info:
            await conn.call(method, {}, timeout_s=0.05)
        await asyncio.sleep(0.4)  # the late answer arrives and finds no call
        reader.cancel()
    assert info.value.details["timeoutS"] == 0.05
    assert conn.pending == {}


async def test_malformed_answer_is_internal_error_naming_the_method() -> None:
    """An answer that does not fit its method's result model is INTERNAL_ERROR naming it."""
    with pytest.raises(E.InternalError) as info:
        await _answered("page.wait", lambda req: Response(id=req.id, ok=True,
                                                          result={"waited": True}),
                        name="extension")
    assert info.value.method == "page.wait"
    assert "The extension answered page.wait with a malformed result" in info.value.message


async def test_fitting_answer_is_returned_unchanged() -> None:
    """A result that fits its model comes back as sent, fields the model does not name kept."""
    sent = {**WAIT_RESULT, "extraField": [1, 2]}
    assert await _answered("page.wait",
                           lambda req: Response(id=req.id, ok=True, result=sent)) == sent


async def test_serve_hands_requests_events_and_malformed_frames_to_their_handlers() -> None:
    """serve() gives requests, events and frames that fail the models to their handlers,
    in arrival order."""
    seen: list[str] = []

    async def chatter(ws: ServerConnection) -> None:
        await ws.send(encode(Request(id="b1", method="driver.act", params={})))
        await ws.send(encode(Event(event="dialog.closed")))
        await ws.send("{not json")
        await ws.send(b"\x00")
        await ws.close()

    async def on_request(req: Request) -> None:
        seen.append(f"request {req.method}")

    async def on_event(ev: Event) -> None:
        seen.append(f"event {ev.event}")

    async def on_malformed(raw: str | bytes, exc: object) -> None:
        seen.append("binary" if exc is None else "malformed")

    async with far_side(lambda ws: welcome_then(ws, chatter)) as ws:
        await handshake(ws, HELLO, STEP_S)
        conn = Connection(ws, "bridge")
        await asyncio.wait_for(conn.serve(on_request=on_request, on_event=on_event,
                                          on_malformed=on_malformed), STEP_S)
    assert seen == ["request driver.act", "event dialog.closed", "malformed", "binary"]


async def test_answer_turns_outcomes_into_responses() -> None:
    """answer(): a result is ok, a project error keeps its code, a bug is INTERNAL_ERROR
    naming only the exception type."""
    req = Request(id=7, method="driver.act")

    async def ok() -> dict[str, Any]:
        return {"done": True}

    async def refused() -> dict[str, Any]:
        raise E.ElementObscured("covered", coveredBy="div")

    async def bug() -> dict[str, Any]:
        raise KeyError("secret-value")

    good, known, broken = [await answer(req, w(), "The driver failed")
                           for w in (ok, refused, bug)]
    assert (good.ok, good.result, good.id) == (True, {"done": True}, 7)
    assert known.error is not None and known.error.details == {"coveredBy": "div"}
    assert broken.error is not None and broken.error.code == E.ErrorCode.INTERNAL_ERROR
    assert broken.error.message == "The driver failed: KeyError."


def test_bounded_frame_turns_an_answer_over_the_frame_limit_into_result_too_large() -> None:
    """issue 32 item 3: a response larger than the bridge's frame limit would make the
    bridge close the sender's connection; it goes out as RESULT_TOO_LARGE (same id, its
    size) instead, and anything under the limit goes out as it is."""
    import json as _json

    from trustbridge.bridge.protocol.limits import FRAME_LIMIT_BYTES
    from trustbridge.bridge.protocol.models import Response as _Response
    from trustbridge.bridge.protocol.peer import bounded_frame

    big = _Response(id="d7", ok=True, result={"png": "A" * (FRAME_LIMIT_BYTES + 10)})
    sent = _json.loads(bounded_frame(big))
    assert sent["id"] == "d7" and sent["ok"] is False
    assert sent["error"]["code"] == "RESULT_TOO_LARGE"
    assert sent["error"]["details"]["bytes"] > FRAME_LIMIT_BYTES
    assert sent["error"]["details"]["limitBytes"] == FRAME_LIMIT_BYTES
    small = _Response(id="d8", ok=True, result={"png": "A" * 1000})
    assert _json.loads(bounded_frame(small))["result"]["png"] == "A" * 1000
