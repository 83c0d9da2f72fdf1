"""MCP over stdin/stdout on the event loop itself, without a worker thread per line.

The ``mcp`` package's ``mcp.server.stdio.stdio_server`` reads and writes through anyio's
wrapped files: every line read and every line written is a hop to a worker thread and
back, about 1.3 ms before and 1.5 ms after each tool call on a loaded 2-core machine
(issue 18). :func:`stdio_transport` keeps that transport's contract (read from its
source, mcp 2.3.0) and does the I/O on the loop: stdin through
``loop.connect_read_pipe`` and an ``asyncio.StreamReader``, stdout through non-blocking
``os.write`` calls (waiting on the selector only when the pipe is full).

The contract both keep:
    - it yields ``(read_stream, write_stream)``: ``SessionMessage | Exception`` items in,
      ``SessionMessage`` items out (anyio memory object streams, no buffer);
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

``O_NONBLOCK`` belongs to the open file, which other processes may share: a terminal
(fd 0, 1 and 2 of a shell are usually one open file) is therefore opened anew by its
name, so the flag never reaches the shell or our own stderr; a pipe or socket is
served from a duplicate and its flag is restored on exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import selectors
import stat
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from .stdio_lines import MAX_LINE_BYTES, LineSplitter, LineTooLong

log = logging.getLogger(__name__)

ENV = "TRUSTBRIDGE_MCP_STDIO"
"""Environment variable: ``package`` serves with the ``mcp`` package's transport."""

_CHUNK_BYTES = 256 * 1024
"""The most read from stdin at once; also the reader's buffer limit (flow control)."""

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


async def _pump_stdin(reader: asyncio.StreamReader, lines: LineSplitter,
                      send: MemoryObjectSendStream[SessionMessage | Exception],
                      unanswered: _Unanswered) -> None:
    """Hand over every line of stdin until EOF (or a read error: logged, then as EOF),
    then end the read stream once the requests read are answered (:class:`_Unanswered`)."""
    async with send:
        while True:
            try:
                data = await reader.read(_CHUNK_BYTES)
            except OSError as exc:  # EIO: the terminal hung up
                log.warning("stdin failed (%s): ending the MCP session", exc)
                data = b""
            for line in lines.feed(data) if data else lines.end():
                item = line if isinstance(line, LineTooLong) else _parse(line)
                if isinstance(item, SessionMessage):
                    unanswered.read(item.message)
                await send.send(item)
            if not data:
                await unanswered.wait(EOF_GRACE_S)
                return


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


def _set_once(future: asyncio.Future[None]) -> None:
    if not future.done():  # the selector may report writable again before we run
        future.set_result(None)


async def _write_all(fd: int, data: bytes) -> None:
    """Write ``data`` to the non-blocking ``fd`` now, waiting on the selector only while
    the pipe is full.

    Raises:
        OSError: stdout is gone (EPIPE, ECONNRESET, EIO).
    """
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:
            loop = asyncio.get_running_loop()
            ready = loop.create_future()
            loop.add_writer(fd, _set_once, ready)
            try:
                await ready
            finally:
                loop.remove_writer(fd)


async def _pump_stdout(fd: int, receive: MemoryObjectReceiveStream[SessionMessage],
                       unanswered: _Unanswered, stdout_gone: Callable[[], None]) -> None:
    gone = False
    async with receive:
        async for item in receive:
            data = _encode(item)
            if gone or not data:
                continue  # still taken, so the server's sends never block
            try:
                await _write_all(fd, data)
                unanswered.written(item.message)
            except OSError as exc:
                gone = True
                log.warning("stdout is closed (%s): stopping the MCP server", exc)
                stdout_gone()


@dataclass
class _Claim:
    """fd 0 or fd 1 taken for the wire: ``wire`` serves it, ``saved`` restores it."""

    fd: int
    wire: int
    saved: int | None = None
    shared: bool = True
    """``wire`` shares the open file with ``saved`` (a duplicate, not a reopened tty)."""
    was_blocking: bool = field(default=True)


_claimed: set[int] = set()


def _open_wire(fd: int, event: int) -> _Claim | str:
    """A private descriptor for fd ``fd`` that the selector can watch for ``event``, or
    why the package's transport must serve instead (a regular file, ``/dev/null``)."""
    name = "stdin" if fd == 0 else "stdout"
    try:
        mode = os.fstat(fd).st_mode
    except OSError as exc:
        return f"{name}: {exc}"
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)):
        return f"{name} is not a pipe, socket or character device"
    try:
        if os.isatty(fd):  # a fresh open file: O_NONBLOCK stays ours
            flags = os.O_RDONLY if fd == 0 else os.O_WRONLY
            claim = _Claim(fd, os.open(os.ttyname(fd), flags | os.O_NOCTTY | os.O_CLOEXEC),
                           shared=False)
        else:
            claim = _Claim(fd, fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3))
    except OSError as exc:
        return f"{name} cannot be opened again: {exc}"
    try:
        with selectors.DefaultSelector() as probe:  # epoll refuses some devices (EPERM)
            probe.register(claim.wire, event)
    except OSError as exc:
        os.close(claim.wire)
        return f"{name} cannot be watched by the selector: {exc}"
    return claim


def _divert(claim: _Claim) -> None:
    """Point ``claim.fd`` at the null device (stdin) or stderr (stdout), keeping the wire
    in ``claim.saved``.

    Raises:
        OSError: a descriptor could not be duplicated.
    """
    claim.saved = fcntl.fcntl(claim.fd, fcntl.F_DUPFD_CLOEXEC, 3)
    claim.was_blocking = os.get_blocking(claim.saved)
    if claim.fd == 0:
        target = os.open(os.devnull, os.O_RDONLY)
    else:
        try:
            target = os.dup(2)
        except OSError:
            target = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(target, claim.fd)
    finally:
        os.close(target)


def _release(claim: _Claim) -> None:
    """Close the wire descriptor and point ``claim.fd`` back at the wire, blocking as it
    was."""
    with contextlib.suppress(OSError):
        os.close(claim.wire)
    if claim.saved is None:
        return
    with contextlib.suppress(OSError):
        if claim.shared:
            os.set_blocking(claim.saved, claim.was_blocking)
        os.dup2(claim.saved, claim.fd)
    with contextlib.suppress(OSError):
        os.close(claim.saved)


def _backed_by(stream: object, fd: int) -> bool:
    try:
        return stream.buffer.fileno() == fd  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return False


def _claim_both() -> tuple[_Claim, _Claim] | str:
    """fd 0 and fd 1 claimed and diverted, or why the package's transport must serve
    instead (then nothing was changed).

    Raises:
        RuntimeError: this transport already serves in this process.
    """
    if 0 in _claimed or 1 in _claimed:
        raise RuntimeError("stdin and stdout already serve another MCP stdio transport")
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return "the event loop is not asyncio's"
    if os.environ.get(ENV) == "package":
        return f"${ENV}=package"
    if not (_backed_by(sys.stdin, 0) and _backed_by(sys.stdout, 1)):
        return "sys.stdin or sys.stdout is not fd 0 or fd 1"
    stdin = _open_wire(0, selectors.EVENT_READ)
    if isinstance(stdin, str):
        return stdin
    stdout = _open_wire(1, selectors.EVENT_WRITE)
    if isinstance(stdout, str):
        _release(stdin)
        return stdout
    try:
        _divert(stdin)
        _divert(stdout)
    except OSError as exc:
        _release(stdout)
        _release(stdin)
        return f"stdin or stdout cannot be diverted: {exc}"
    _claimed.update((0, 1))
    return stdin, stdout


@asynccontextmanager
async def stdio_transport(*, line_limit: int = MAX_LINE_BYTES) -> AsyncIterator[tuple[
        MemoryObjectReceiveStream[SessionMessage | Exception],
        MemoryObjectSendStream[SessionMessage]]]:
    """Serve MCP over the process's stdin and stdout (the contract: module docstring).

    Args:
        line_limit: the longest stdin line read as a message, bytes (the package's
            fallback reads any length).

    Yields:
        ``(read_stream, write_stream)``, as ``mcp.server.stdio.stdio_server`` does; the
        read stream ends at EOF on stdin or when stdout is gone.

    Raises:
        RuntimeError: a second transport in the same process (the package's raises it
            too).
    """
    claims = _claim_both()
    if isinstance(claims, str):
        log.info("MCP over stdio through the mcp package's transport: %s", claims)
        async with stdio_server() as streams:
            yield streams  # type: ignore[misc]
        return
    stdin, stdout = claims
    loop = asyncio.get_running_loop()
    transport: asyncio.BaseTransport | None = None
    try:
        reader = asyncio.StreamReader(limit=_CHUNK_BYTES)
        pipe = os.fdopen(stdin.wire, "rb", buffering=0)
        stdin.wire = -1  # the transport owns (and closes) it from here on
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe)
        os.set_blocking(stdout.wire, False)
        read_send, read_stream = anyio.create_memory_object_stream[
            SessionMessage | Exception](0)
        write_stream, write_receive = anyio.create_memory_object_stream[SessionMessage](0)
        reading = anyio.CancelScope()
        unanswered = _Unanswered()

        async def read() -> None:
            with reading:  # cancelled (stdout gone, or leaving): still ends read_stream
                await _pump_stdin(reader, LineSplitter(line_limit), read_send, unanswered)

        async with anyio.create_task_group() as tg:
            tg.start_soon(read)
            tg.start_soon(_pump_stdout, stdout.wire, write_receive, unanswered,
                          reading.cancel)
            try:
                yield read_stream, write_stream
            finally:
                reading.cancel()  # stdin may stay open: never wait for it
                write_stream.close()  # the writer ends once it has written what it has
    finally:
        if transport is not None:
            transport.close()
        _release(stdout)
        _release(stdin)
        _claimed.difference_update((0, 1))
