"""bridge/mcp/stdio.py: MCP over stdin/stdout on the event loop, with the contract of the
``mcp`` package's ``stdio_server``.

Two subjects, both real child processes on real pipes: ``python -m trustbridge mcp
--no-embedded`` (no bridge, no browser: none is needed for what these send), and a
harness that serves :func:`stdio_transport` with :func:`answer_malformed` and answers
every request with what it saw (its position, method and params), so the transport's
own behaviour shows without the server loop around it. Where the contract is the
package's, the same test runs against the package's transport
(``TRUSTBRIDGE_MCP_STDIO=package``)."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import signal
import socket
import sys
import tty
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from trustbridge.bridge.mcp.stdio import ENV
from trustbridge.bridge.mcp.stdio_lines import MAX_LINE_BYTES, LineSplitter, LineTooLong
from trustbridge.bridge.server import DEFAULT_MAX_MESSAGE_BYTES

REPO = Path(__file__).resolve().parents[2]
STEP_S = 20.0
"""Upper bound, seconds, on waiting for one answer or for the process to exit."""

INITIALIZE = {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "test", "version": "0"}}}

HARNESS = r"""
import asyncio, os, sys
import mcp_types as types
from mcp.shared.message import SessionMessage
from trustbridge.bridge.mcp.server import answer_malformed
from trustbridge.bridge.mcp.stdio import stdio_transport

async def main() -> None:
    limit = int(sys.argv[1])
    async with stdio_transport(line_limit=limit) as (read, write), \
            answer_malformed(read, write) as messages:
        n = 0
        async for item in messages:
            n += 1
            m = item.message
            if not isinstance(m, types.JSONRPCRequest):
                continue
            if m.method == "stray":  # output that must miss the wire
                print("stray print", flush=True)
                os.system("echo stray child")
            text = "a\ud800b" if m.method == "surrogate" else "ok"
            await write.send(SessionMessage(types.JSONRPCResponse(
                jsonrpc="2.0", id=m.id,
                result={"n": n, "method": m.method, "params": m.params or {}, "t": text})))
            if m.method == "quit":  # leave the transport while stdin stays open
                break
        await write.aclose()  # as Server.run does: the package's writer waits for it
    print("harness done", file=sys.stderr, flush=True)

asyncio.run(main())
"""


def _line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def _request(rid: int | str, method: str = "x", **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


class Child:
    """A child process on pipes: bytes in, one JSON object per stdout line out."""

    def __init__(self, proc: asyncio.subprocess.Process, errlog: Path) -> None:
        self.proc = proc
        self.errlog = errlog

    async def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        await self.proc.stdin.drain()

    async def answer(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), STEP_S)
        assert line.endswith(b"\n"), f"no answer; stderr: {self.stderr()[-2000:]}"
        return json.loads(line)

    async def close_stdin_and_wait(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return await asyncio.wait_for(self.proc.wait(), STEP_S)

    def stderr(self) -> str:
        return self.errlog.read_text(errors="replace")


async def _spawn(tmp_path: Path, args: list[str], env: dict[str, str] | None = None,
                 **streams: Any) -> Child:
    errlog = tmp_path / f"stderr-{len(list(tmp_path.iterdir()))}.log"
    with errlog.open("w") as err:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, *args, stdin=streams.get("stdin", asyncio.subprocess.PIPE),
            stdout=streams.get("stdout", asyncio.subprocess.PIPE), stderr=err, cwd=str(REPO),
            env=dict(os.environ, TRUSTBRIDGE_HOME=str(tmp_path), **(env or {})),
            limit=MAX_LINE_BYTES)  # our reader of its stdout takes any answer
    return Child(proc, errlog)


@pytest.fixture
async def children(tmp_path: Path) -> AsyncIterator[list[Child]]:
    """Every child a test starts; killed at the end if still running."""
    started: list[Child] = []
    yield started
    for child in started:
        if child.proc.returncode is None:
            child.proc.kill()
            await child.proc.wait()


@pytest.fixture(params=["native", "package"])
def transport(request: pytest.FixtureRequest) -> str:
    """Which transport serves: this module's, or the package's (``$TRUSTBRIDGE_MCP_STDIO``)."""
    return str(request.param)


async def _harness(tmp_path: Path, children: list[Child], transport: str = "native",
                   limit: int = MAX_LINE_BYTES) -> Child:
    child = await _spawn(tmp_path, ["-c", HARNESS, str(limit)], {ENV: transport})
    children.append(child)
    return child


async def _server(tmp_path: Path, children: list[Child], transport: str = "native",
                  *args: str, **streams: Any) -> Child:
    child = await _spawn(tmp_path, ["-m", "trustbridge", *args, "mcp", "--no-embedded"],
                         {ENV: transport}, **streams)
    children.append(child)
    return child


# -- both transports: the package's contract --------------------------------------------


async def test_messages_keep_their_order_both_ways(tmp_path: Path, children: list[Child],
                                                   transport: str) -> None:
    """200 requests in one write come in one by one and in order, and their answers go
    out in the order they were sent."""
    child = await _harness(tmp_path, children, transport)
    await child.send(b"".join(_line(_request(i, "m", i=i)) for i in range(200)))
    answers = [await child.answer() for _ in range(200)]
    assert [a["id"] for a in answers] == list(range(200))
    assert [a["result"]["n"] for a in answers] == list(range(1, 201))
    assert await child.close_stdin_and_wait() == 0


async def test_line_ends_invalid_utf8_and_the_last_line(tmp_path: Path, children: list[Child],
                                                        transport: str) -> None:
    """``\\r\\n`` and a lone ``\\r`` end lines as ``\\n`` does; an invalid UTF-8 byte in a
    string becomes U+FFFD and the message stays valid, outside one it is a parse error
    (answered, and reading goes on); the last line without an end is read at EOF and
    answered before the transport ends."""
    child = await _harness(tmp_path, children, transport)
    await child.send(_line(_request(1))[:-1] + b"\r\n" + _line(_request(2))[:-1] + b"\r"
                     + b'{"jsonrpc": "2.0", "id": 3, "method": "x", "params": {"s": "a\xffb"}}\n'
                     + b'{"jsonrpc": "2.0", \xff "id": 4}\n')
    assert (await child.answer())["id"] == 1
    assert (await child.answer())["id"] == 2
    third = await child.answer()
    assert third["id"] == 3 and third["result"]["params"] == {"s": "a\ufffdb"}
    broken = await child.answer()
    assert broken["id"] is None and broken["error"]["code"] == types.PARSE_ERROR
    await child.send(json.dumps(_request(5)).encode())  # no line end
    assert child.proc.stdin is not None
    child.proc.stdin.close()
    assert (await child.answer())["id"] == 5
    assert await asyncio.wait_for(child.proc.wait(), STEP_S) == 0
    assert "harness done" in child.stderr()


async def test_a_large_line_is_one_message(tmp_path: Path, children: list[Child],
                                           transport: str) -> None:
    """A 12 MiB request (it arrives in many reads) is read whole and answered."""
    child = await _harness(tmp_path, children, transport)
    big = "x" * (12 * 1024 * 1024)
    await child.send(_line(_request(7, "big", s=big)))
    answer = await child.answer()
    assert answer["id"] == 7 and answer["result"]["params"]["s"] == big
    assert await child.close_stdin_and_wait() == 0


async def test_stray_output_never_reaches_stdout(tmp_path: Path, children: list[Child],
                                                 transport: str) -> None:
    """While serving, a print and a child process's output go to stderr: stdout holds
    the answer only."""
    child = await _harness(tmp_path, children, transport)
    await child.send(_line(_request(1, "stray")))
    assert (await child.answer())["id"] == 1
    assert await child.close_stdin_and_wait() == 0
    assert child.proc.stdout is not None
    assert await child.proc.stdout.read() == b""
    assert "stray print" in child.stderr() and "stray child" in child.stderr()


async def test_the_server_answers_malformed_lines_and_serves_on(
        tmp_path: Path, children: list[Child], transport: str) -> None:
    """``trustbridge mcp``: a line that is not JSON gets -32700, then initialize and
    tools/list are answered; EOF on stdin ends the server with exit code 0."""
    child = await _server(tmp_path, children, transport)
    await child.send(b"{not json\n")
    parse = await child.answer()
    assert parse["id"] is None and parse["error"]["code"] == types.PARSE_ERROR
    await child.send(_line(INITIALIZE) + _line(
        {"jsonrpc": "2.0", "method": "notifications/initialized"}) + _line(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
    assert (await child.answer())["result"]["serverInfo"]["name"] == "trustbridge"
    tools = await child.answer()
    assert tools["id"] == 2 and any(t["name"] == "browser_snapshot"
                                    for t in tools["result"]["tools"])
    assert await child.close_stdin_and_wait() == 0


# -- this transport ---------------------------------------------------------------------


async def test_a_line_over_the_limit_gets_an_error_with_its_id(
        tmp_path: Path, children: list[Child]) -> None:
    """A line over the limit is skipped with -32600 and the id read at its start (or at
    its end, where the TypeScript SDK puts it), never held whole; the next line is read
    as usual."""
    child = await _harness(tmp_path, children, limit=4096)
    await child.send(_line({"jsonrpc": "2.0", "id": 11, "method": "x",
                            "params": {"s": "y" * 100_000}}))
    over = await child.answer()
    assert over["id"] == 11 and over["error"]["code"] == types.INVALID_REQUEST
    assert "4096-byte limit" in over["error"]["message"]
    await child.send(_line({"method": "x", "params": {"s": "y" * 5000, "id": 99},
                            "jsonrpc": "2.0", "id": "last"}))
    assert (await child.answer())["id"] == "last"
    await child.send(_line(_request(12)))
    assert (await child.answer())["id"] == 12
    assert await child.close_stdin_and_wait() == 0


def test_the_limit_holds_what_the_bridge_takes() -> None:
    """64 MiB: every request the bridge can take (32 MiB frames) fits in a line."""
    assert MAX_LINE_BYTES >= DEFAULT_MAX_MESSAGE_BYTES + 1024 * 1024


def test_splitter_across_reads() -> None:
    """Lines and their ends split across reads: ``\\r`` then ``\\n`` in the next read is
    one end; a line over the limit comes out as LineTooLong once its end arrives."""
    s = LineSplitter(limit=10)
    assert s.feed(b"ab") == []
    assert s.feed(b"c\r") == [b"abc"]
    assert s.feed(b"\nd\r\re") == [b"d", b""]
    assert s.feed(b"f\n" + b"z" * 8) == [b"ef"]
    assert s.feed(b"z" * 8) == []
    over, ok = s.feed(b'zz, "id": 3}\nok\n')
    assert isinstance(over, LineTooLong) and over.size == 28 and over.request_id == 3
    assert ok == b"ok"
    assert s.feed(b"tail") == []
    assert s.end() == [b"tail"] and s.end() == []


async def test_an_answer_that_cannot_be_encoded_becomes_an_error(
        tmp_path: Path, children: list[Child]) -> None:
    """A lone surrogate in an answer (text from a page's JavaScript can hold one) cannot
    be UTF-8: that request gets -32603 and the transport serves on (the package's
    writer raises and stops the server)."""
    child = await _harness(tmp_path, children)
    await child.send(_line(_request(1, "surrogate")) + _line(_request(2)))
    bad = await child.answer()
    assert bad["id"] == 1 and bad["error"]["code"] == types.INTERNAL_ERROR
    assert (await child.answer())["id"] == 2
    assert await child.close_stdin_and_wait() == 0


async def test_leaving_while_stdin_is_open_does_not_wait_for_it(
        tmp_path: Path, children: list[Child]) -> None:
    """The server leaves the transport (as on SIGTERM) while the client keeps stdin open:
    it is left at once, with the answer already sent written (the package's transport
    would wait for its thread blocked reading stdin)."""
    child = await _harness(tmp_path, children)
    await child.send(_line(_request(1, "quit", s="q" * 300_000)))
    answer = await child.answer()
    assert answer["id"] == 1 and len(answer["result"]["params"]["s"]) == 300_000
    assert await asyncio.wait_for(child.proc.wait(), STEP_S) == 0
    assert "harness done" in child.stderr()


async def test_sigterm_with_stdin_open_exits_at_once(tmp_path: Path,
                                                     children: list[Child]) -> None:
    """``trustbridge mcp`` stopped by SIGTERM while its client keeps stdin open exits 0
    (nothing waits for a stdin line)."""
    child = await _server(tmp_path, children)
    await child.send(_line(INITIALIZE))
    await child.answer()
    child.proc.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(child.proc.wait(), STEP_S) == 0


async def test_stdout_closed_stops_the_server(tmp_path: Path, children: list[Child]) -> None:
    """When the client stops reading (stdout's read end closed), the server notices at
    its next answer and exits instead of serving into the void."""
    child = await _server(tmp_path, children)
    await child.send(_line(INITIALIZE))
    await child.answer()
    assert child.proc.stdout is not None
    transport = child.proc._transport  # close only the stdout pipe
    transport.get_pipe_transport(1).close()  # type: ignore[attr-defined]
    await child.send(_line({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
    assert await asyncio.wait_for(child.proc.wait(), STEP_S) == 0
    assert "stdout is closed" in child.stderr()


async def test_a_regular_file_stdin_falls_back_to_the_package(
        tmp_path: Path, children: list[Child]) -> None:
    """``trustbridge mcp < requests.jsonl > out``: the selector cannot watch regular
    files, so the package's transport serves; every request is answered."""
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(_line(INITIALIZE) + _line(
        {"jsonrpc": "2.0", "method": "notifications/initialized"}) + b"[1]\n")
    out = tmp_path / "out.jsonl"
    with requests.open("rb") as stdin, out.open("wb") as stdout:
        child = await _server(tmp_path, children, "native", "-v", stdin=stdin, stdout=stdout)
        assert await asyncio.wait_for(child.proc.wait(), STEP_S) == 0
    answers = [json.loads(line) for line in out.read_text().splitlines()]
    assert [a["id"] for a in answers] == ["init", None]
    assert "the mcp package's transport: stdin is not a pipe" in child.stderr()


async def test_dev_null_stdin_falls_back_and_ends(tmp_path: Path,
                                                  children: list[Child]) -> None:
    """``/dev/null`` is a character device that epoll refuses: the package's transport
    serves, reads EOF and the server exits 0."""
    stdin = os.open(os.devnull, os.O_RDONLY)
    try:
        child = await _server(tmp_path, children, "native", "-v", stdin=stdin)
        assert await asyncio.wait_for(child.proc.wait(), STEP_S) == 0
    finally:
        os.close(stdin)
    assert "cannot be watched by the selector" in child.stderr()


async def test_one_socket_for_stdin_and_stdout(tmp_path: Path, children: list[Child]) -> None:
    """A socket as both stdin and stdout (inetd style; libuv-based clients such as Node's
    give sockets too): lines both ways, and the socket's incoming data never makes the
    writer think its peer left; EOF (the peer's shutdown) ends the transport."""
    ours, theirs = socket.socketpair()
    try:
        child = await _spawn(tmp_path, ["-c", HARNESS, str(MAX_LINE_BYTES)],
                             {ENV: "native"}, stdin=theirs.fileno(), stdout=theirs.fileno())
        children.append(child)
        theirs.close()
        reader, writer = await asyncio.open_connection(sock=ours)
        for i in range(3):
            writer.write(_line(_request(i)))
            await writer.drain()
            answer = json.loads(await asyncio.wait_for(reader.readline(), STEP_S))
            assert answer["id"] == i
        writer.write_eof()
        assert await asyncio.wait_for(child.proc.wait(), STEP_S) == 0
        assert "harness done" in child.stderr()
        writer.close()
    finally:
        theirs.close()


async def test_a_terminal_keeps_blocking_mode(tmp_path: Path, children: list[Child]) -> None:
    """On a terminal (fd 0 and 1 one open file, shared with whoever started us), the
    transport opens the terminal anew: O_NONBLOCK never reaches the shared open file."""
    master, slave = pty.openpty()
    tty.setraw(slave)
    try:
        child = await _spawn(tmp_path, ["-c", HARNESS, str(MAX_LINE_BYTES)],
                             {ENV: "native"}, stdin=slave, stdout=slave)
        children.append(child)
        os.write(master, _line(_request(1)))
        loop = asyncio.get_running_loop()
        got = b""
        while not got.endswith(b"\n"):
            got += await asyncio.wait_for(loop.run_in_executor(None, os.read, master, 65536),
                                          STEP_S)
        assert json.loads(got.splitlines()[-1])["id"] == 1
        assert os.get_blocking(slave), "the shared terminal was made non-blocking"
    finally:
        os.close(master)
        os.close(slave)
