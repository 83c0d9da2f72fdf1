"""``trustbridge mcp`` on stdio answers input that is not a JSON-RPC message with a JSON-RPC
error (bridge/mcp/server.py) and keeps serving: a client never waits for an answer that
cannot come. ``--no-embedded``: no bridge, no browser; none is needed to answer these."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.message import SessionMessage

from trustbridge.bridge.mcp.server import answer_malformed, malformed_reply

REPO = Path(__file__).resolve().parents[2]
STEP_S = 10.0
"""Upper bound, seconds, on waiting for one line of the server's stdout."""

INITIALIZE = {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "test", "version": "0"}}}


@pytest.fixture(params=[["--no-embedded"], []], ids=["no-embedded", "default"])
async def server(tmp_path: Path,
                 request: pytest.FixtureRequest) -> AsyncIterator[asyncio.subprocess.Process]:
    """``python -m trustbridge mcp`` with its own state directory (no bridge running), with
    ``--no-embedded`` or as configured by default (it starts a browser once a client
    speaks MCP, never for unreadable lines: the test checks its stderr before it sends
    initialize)."""
    errlog = tmp_path / "stderr.log"
    with errlog.open("w") as err:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "trustbridge", "mcp", *request.param,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=err, cwd=str(REPO), env=dict(os.environ, TRUSTBRIDGE_HOME=str(tmp_path)))
    try:
        yield proc
    finally:
        if proc.returncode is None:
            assert proc.stdin is not None
            proc.stdin.close()
            try:
                await asyncio.wait_for(proc.wait(), STEP_S)
            except TimeoutError:
                proc.kill()
                await proc.wait()


async def _exchange(proc: asyncio.subprocess.Process, line: bytes) -> dict[str, Any]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(line + b"\n")
    await proc.stdin.drain()
    return json.loads(await asyncio.wait_for(proc.stdout.readline(), STEP_S))


async def test_malformed_lines_get_errors_and_the_server_keeps_serving(
        server: asyncio.subprocess.Process, tmp_path: Path) -> None:
    """Broken JSON gets -32700 with id null; a lone surrogate or a JSON value that is not a
    JSON-RPC message gets -32600 with the request's id when it has one, and none of them
    starts a bridge; then initialize is answered as usual."""
    parse = await _exchange(server, b'{"jsonrpc": "2.0", "id": 1, "method": ')
    assert parse["id"] is None and parse["error"]["code"] == types.PARSE_ERROR

    surrogate = await _exchange(
        server, rb'{"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"s": "\ud800"}}')
    assert surrogate["id"] == 2 and surrogate["error"]["code"] == types.INVALID_REQUEST
    assert "surrogate" in surrogate["error"]["message"]

    no_method = await _exchange(server, b'{"jsonrpc": "2.0", "id": "x7"}')
    assert no_method["id"] == "x7" and no_method["error"]["code"] == types.INVALID_REQUEST

    batch = await _exchange(server, b"[1, 2]")
    assert batch["id"] is None and batch["error"]["code"] == types.INVALID_REQUEST

    assert "bridge listening" not in (tmp_path / "stderr.log").read_text()
    init = await _exchange(server, json.dumps(INITIALIZE).encode())
    assert init["id"] == 3 and init["result"]["serverInfo"]["name"] == "trustbridge"


def test_reply_for_each_kind_of_bad_line() -> None:
    """malformed_reply: the code and id for each kind of line, and None for an item that
    says nothing about what was sent (nothing to answer)."""
    def err(line: str) -> Exception:
        try:
            types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except Exception as exc:  # noqa: BLE001 - the transport hands over any exception
            return exc
        raise AssertionError(f"{line!r} is valid")

    cases = {
        "not json": (None, types.PARSE_ERROR),
        '{"jsonrpc": "2.0", "id": 5, "method": "x", "params": {"a": "\\udc00"}}':
            (5, types.INVALID_REQUEST),
        '{"jsonrpc": "1.0", "id": 6, "method": "ping"}': (6, types.INVALID_REQUEST),
        '{"jsonrpc": "2.0", "id": 6, "method": 5}': (6, types.INVALID_REQUEST),
        '{"id": [7], "method": "ping"}': (None, types.INVALID_REQUEST),
        '"just a string"': (None, types.INVALID_REQUEST),
    }
    for line, (want_id, want_code) in cases.items():
        reply = malformed_reply(err(line))
        assert reply is not None, line
        assert (reply.id, reply.error.code) == (want_id, want_code), line
    assert malformed_reply(RuntimeError("transport hiccup")) is None


async def test_answer_malformed_forwards_messages_in_order() -> None:
    """answer_malformed: valid messages pass through unchanged and in order; an exception
    item becomes an error on the write stream and is not passed on."""
    send_in, recv_in = anyio.create_memory_object_stream[SessionMessage | Exception](10)
    send_out, recv_out = anyio.create_memory_object_stream[SessionMessage](10)
    ping = SessionMessage(types.jsonrpc_message_adapter.validate_python(
        {"jsonrpc": "2.0", "id": 9, "method": "ping"}))
    try:
        types.jsonrpc_message_adapter.validate_json("{", by_name=False)
    except Exception as exc:  # noqa: BLE001
        bad = exc
    async with send_in, recv_in, send_out, recv_out:
        await send_in.send(bad)
        await send_in.send(ping)
        await send_in.aclose()
        seen = []
        with anyio.fail_after(STEP_S):
            async with answer_malformed(recv_in, send_out) as filtered:
                async for item in filtered:
                    seen.append(item)
        err = recv_out.receive_nowait()
    assert seen == [ping]
    assert isinstance(err.message, types.JSONRPCError) and err.message.id is None
    assert err.message.error.code == types.PARSE_ERROR
