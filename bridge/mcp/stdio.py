"""MCP over stdin/stdout on the event loop itself, without a worker thread per line.

The ``mcp`` package's ``mcp.server.stdio.stdio_server`` reads and writes through anyio's
wrapped files: every line read and every line written is a hop to a worker thread and
back, about 1.3 ms before and 1.5 ms after each tool call on a loaded 2-core machine
(issue 18). :func:`stdio_transport` keeps that transport's contract (read from its
source, mcp 2.3.0) and does the I/O on the loop: stdin through
``loop.connect_read_pipe`` and an ``asyncio.StreamReader``, stdout through non-blocking
``os.write`` calls (the selector writes the rest when the pipe is full).

The contract both keep:
    - it yields ``(read_stream, write_stream)``: ``SessionMessage | Exception`` items in,
      ``SessionMessage`` items out (anyio object streams);
    - one JSON-RPC message per line, read as UTF-8 with invalid bytes replaced by U+FFFD
      (inside a JSON string the message stays valid, elsewhere it is a parse error);
      lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r`` (the package reads stdin in
      universal-newlines mode); the last line at EOF may lack its end;
    - each line is validated with ``mcp_types.jsonrpc_message_adapter.validate_json(line,
      by_name=False)``; a line that fails is handed over as that exception (the server
      answers it: :func:`bridge.mcp.server.answer_malformed`);
    - each outgoing message is ``model_dump_json(by_alias=True, exclude_unset=True)`` and
      ``\\n``, encoded UTF-8 and written at once;
    - while serving, fd 0 reads the null device and fd 1 points at stderr, so the
      browser this server starts (a child process) and stray prints cannot touch the
      protocol stream; both are restored on exit;
    - EOF on stdin ends the read stream.

Where it differs, on purpose:
    - a line longer than :data:`MAX_LINE_BYTES` (the package has no limit: it reads with
      ``TextIOWrapper.readline``) is skipped and handed over as :class:`LineTooLong`,
      which the server answers with a JSON-RPC error (the request's id when the line
      starts or ends with it); the next line is read as usual;
    - a message that cannot be encoded (a lone surrogate in a tool's text: the package's
      writer raises and the whole server stops) is replaced by a JSON-RPC error for the
      same request id;
    - at EOF, the read stream ends once the requests already read are answered, at most
      :data:`EOF_GRACE_S` later (its end cancels the requests still running); the
      package's reader sees EOF a thread hop late, which lets quick answers out by luck;
    - when stdout is gone (EPIPE), the read stream ends as at EOF, so the server stops
      instead of failing with the write error;
    - leaving the context, even cancelled (SIGTERM), does not wait for stdin: the
      package's thread blocked in ``readline`` cannot be interrupted.

The package's ``stdio_server`` serves instead when ``$TRUSTBRIDGE_MCP_STDIO`` is
``package`` (for comparison: ``scripts/bench_mcp_stdio.py``), when the loop is not
asyncio's, when ``sys.stdin``/``sys.stdout`` are not fd 0/1 (a test's replacement), or
when fd 0 or fd 1 is neither a pipe, a socket nor a character device the selector can
watch (a regular file: ``trustbridge mcp < requests.jsonl > out``; ``/dev/null``).

Neither side has a task of its own: the server's read loop reads and parses stdin in
``receive()``, and a handler's ``send()`` writes its answer, queueing only what a full
pipe does not take (a reader task and a writer task, as the package has, cost about
60 µs more per tool call: scripts/bench_mcp_stdio.py on the 2-core dev machine). The
descriptors: :mod:`.stdio_fds`; splitting lines: :mod:`.stdio_lines`.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio
import mcp_types as types
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from .stdio_fds import ENV, claim_both, release_both
from .stdio_lines import MAX_LINE_BYTES, LineSplitter, LineTooLong

__all__ = ["ENV", "EOF_GRACE_S", "MAX_LINE_BYTES", "LineTooLong", "stdio_transport"]

log = logging.getLogger(__name__)

_CHUNK_BYTES = 256 * 1024
"""The most read from stdin at once; also the reader's buffer limit (flow control)."""

_HIGH_WATER_BYTES = 256 * 1024
"""A ``send()`` that leaves more than this queued for stdout waits until it is written."""

EOF_GRACE_S = 1.0
"""At EOF, how long requests already read may take to be answered before the read
stream ends (which cancels those still running: mcp's ``JSONRPCDispatcher.run``)."""


class _Unanswered:
    """The ids of the requests read from stdin and not answered yet.

    Why: the end of the read stream cancels every request in flight. The package's
    reader sees EOF one thread hop after the last line, which is time enough for a
    ``ping`` or ``tools/list`` (``printf ... | trustbridge mcp`` gets its answers); a
    reader on the loop sees it at once, so it waits for those answers instead, up to
    :data:`EOF_GRACE_S`.
    """

    def __init__(self) -> None:
        self._ids: set[types.RequestId] = set()
        self._answered: anyio.Event | None = None

    def read(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCRequest):
            self._ids.add(message.id)
        elif (isinstance(message, types.JSONRPCNotification)
              and message.method == "notifications/cancelled"):  # never answered
            self._ids.discard((message.params or {}).get("requestId"))  # type: ignore[arg-type]

    def written(self, message: types.JSONRPCMessage) -> None:
        if self._ids and isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self._ids.discard(message.id)  # type: ignore[arg-type]
            if not self._ids and self._answered is not None:
                self._answered.set()

    async def wait(self, timeout_s: float) -> None:
        """Until every request read is answered, at most ``timeout_s`` seconds."""
        if self._ids:
            self._answered = anyio.Event()
            with anyio.move_on_after(timeout_s):
                await self._answered.wait()


def _parse(line: bytes) -> SessionMessage | Exception:
    try:
        message = types.jsonrpc_message_adapter.validate_json(
            line.decode("utf-8", "replace"), by_name=False)
    except Exception as exc:  # noqa: BLE001 - handed over as the package does
        return exc
    return SessionMessage(message)


class _Stdin(ObjectReceiveStream[SessionMessage | Exception]):
    """The read stream: each ``receive()`` takes the next line of stdin, reading more
    when none is buffered; at EOF (or a read error, logged) it ends once the requests
    read are answered (:class:`_Unanswered`), at once when stdout is gone."""

    def __init__(self, reader: asyncio.StreamReader, transport: asyncio.BaseTransport,
                 lines: LineSplitter, unanswered: _Unanswered) -> None:
        self._reader = reader
        self._transport = transport
        self._lines = lines
        self._unanswered = unanswered
        self._items: list[SessionMessage | Exception] = []
        self._next = 0
        self._eof = False
        self._waited = False
        self._closed = False
        self.stdout_gone = False

    async def receive(self) -> SessionMessage | Exception:
        while self._next == len(self._items):
            if self._closed:
                raise anyio.ClosedResourceError
            if self._eof:
                if not (self.stdout_gone or self._waited):
                    self._waited = True
                    await self._unanswered.wait(EOF_GRACE_S)
                raise anyio.EndOfStream
            await self._read()
        item = self._items[self._next]
        self._next += 1
        return item

    async def _read(self) -> None:
        try:
            data = await self._reader.read(_CHUNK_BYTES)
        except OSError as exc:  # EIO: the terminal hung up
            log.warning("stdin failed (%s): ending the MCP session", exc)
            data = b""
        self._items, self._next = [], 0
        for line in self._lines.feed(data) if data else self._lines.end():
            item = line if isinstance(line, LineTooLong) else _parse(line)
            if isinstance(item, SessionMessage):
                self._unanswered.read(item.message)
            self._items.append(item)
        self._eof = not data

    def stop(self) -> None:
        """Stop reading: the stream ends as at EOF, without waiting for answers."""
        self.stdout_gone = True
        self._transport.close()  # the reader gets EOF

    async def aclose(self) -> None:
        self._closed = True


class _Stdout(ObjectSendStream[SessionMessage]):
    """The write stream: ``send()`` writes the line at once; what a full pipe does not
    take is queued whole and written by the selector, so lines never interleave and a
    cancelled sender never leaves half a line. When stdout is gone (EPIPE), it calls
    ``stdout_gone`` once and drops what is sent after."""

    def __init__(self, fd: int, unanswered: _Unanswered,
                 stdout_gone: Callable[[], None]) -> None:
        self._fd = fd
        self._unanswered = unanswered
        self._stdout_gone = stdout_gone
        self._queue = bytearray()
        self._drained: asyncio.Future[None] | None = None
        self._gone = False
        self._closed = False

    async def send(self, item: SessionMessage) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        data = _encode(item)
        if data and not self._gone:
            self._write(data)
            self._unanswered.written(item.message)
        if len(self._queue) > _HIGH_WATER_BYTES:
            await self.drained()

    def _write(self, data: bytes) -> None:
        if self._queue:
            self._queue += data
            return
        try:
            written = os.write(self._fd, data)
        except BlockingIOError:
            written = 0
        except OSError as exc:
            self._fail(exc)
            return
        if written < len(data):
            self._queue += data[written:]
            asyncio.get_running_loop().add_writer(self._fd, self._write_queued)

    def _write_queued(self) -> None:
        try:
            written = os.write(self._fd, self._queue)
        except BlockingIOError:
            return
        except OSError as exc:
            self._fail(exc)
            return
        del self._queue[:written]
        if not self._queue:
            asyncio.get_running_loop().remove_writer(self._fd)
            self._wake()

    def _fail(self, exc: OSError) -> None:
        self._gone = True
        if self._queue:
            self._queue.clear()
            asyncio.get_running_loop().remove_writer(self._fd)
        self._wake()
        log.warning("stdout is closed (%s): stopping the MCP server", exc)
        self._stdout_gone()

    def _wake(self) -> None:
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)
        self._drained = None

    async def drained(self) -> None:
        """Until everything sent is written (or stdout is gone)."""
        if self._queue:
            if self._drained is None:
                self._drained = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._drained)

    def stop(self) -> None:
        if self._queue:
            self._queue.clear()
            asyncio.get_running_loop().remove_writer(self._fd)
        self._wake()

    async def aclose(self) -> None:
        self._closed = True


def _encode(item: SessionMessage) -> bytes:
    """One line of JSON for ``item``; a message that cannot be encoded becomes a JSON-RPC
    error for its request (INTERNAL_ERROR, -32603), so the client is answered."""
    message = item.message
    try:
        return (message.model_dump_json(by_alias=True, exclude_unset=True) + "\n").encode()
    except (ValueError, UnicodeError) as exc:  # pydantic's PydanticSerializationError
        rid = getattr(message, "id", None)
        log.error("an MCP message could not be encoded as JSON (%s); sent an error for "
                  "request %r instead", exc, rid)
        if rid is None:  # a notification: nothing waits for it
            return b""
        error = types.JSONRPCError(jsonrpc="2.0", id=rid, error=types.ErrorData(
            code=types.INTERNAL_ERROR, message="Internal error: the answer could not be "
            "encoded as JSON in UTF-8 (a lone surrogate in a string?)."))
        return (error.model_dump_json(by_alias=True, exclude_unset=True) + "\n").encode()


@asynccontextmanager
async def stdio_transport(*, line_limit: int = MAX_LINE_BYTES) -> AsyncIterator[tuple[
        ObjectReceiveStream[SessionMessage | Exception], ObjectSendStream[SessionMessage]]]:
    """Serve MCP over the process's stdin and stdout (the contract: module docstring).

    Args:
        line_limit: the longest stdin line read as a message, bytes (the package's
            fallback reads any length).

    Yields:
        ``(read_stream, write_stream)``, as ``mcp.server.stdio.stdio_server`` does; the
        read stream ends at EOF on stdin or when stdout is gone. Leaving the context
        writes what is still queued for stdout (unless cancelled).

    Raises:
        RuntimeError: a second transport in the same process (the package's raises it
            too).
    """
    claims = claim_both()
    if isinstance(claims, str):
        log.info("MCP over stdio through the mcp package's transport: %s", claims)
        async with stdio_server() as streams:
            yield streams  # type: ignore[misc]
        return
    stdin_fd, stdout_fd = claims
    loop = asyncio.get_running_loop()
    stdout: _Stdout | None = None
    transport: asyncio.BaseTransport | None = None
    try:
        reader = asyncio.StreamReader(limit=_CHUNK_BYTES)
        pipe = os.fdopen(stdin_fd.wire, "rb", buffering=0)
        stdin_fd.wire = -1  # the transport owns (and closes) it from here on
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe)
        os.set_blocking(stdout_fd.wire, False)
        unanswered = _Unanswered()
        stdin = _Stdin(reader, transport, LineSplitter(line_limit), unanswered)
        stdout = _Stdout(stdout_fd.wire, unanswered, stdin.stop)
        yield stdin, stdout
        await stdout.drained()
    finally:
        if stdout is not None:
            stdout.stop()
        if transport is not None:
            transport.close()
        release_both(stdin_fd, stdout_fd)
