"""The code worker: ``python -m bridge.code.worker``, one process per session.

It runs the Python code :class:`~bridge.code.runtime.CodeRuntime` sends, in one set of
globals kept between calls (``browser``, ``tab``, ``asyncio`` bound), with top-level
``await``. It never connects to the bridge: its SDK objects sit on a
:class:`~bridge.code.relay.RelayClient` whose requests the parent answers.

Protocol (JSON lines; :mod:`bridge.code.relay` has the message shapes): on the fds that
were its stdin and stdout at start, duplicated away before any user code runs. fd 0
then reads ``/dev/null`` and fds 1 and 2 write into a pipe whose bytes are forwarded as
``out`` messages as they are read, so ``print``, ``os.write(1, ...)``, a child process's
output and a fatal error report reach the call's output in the order written instead of
corrupting the channel, and a call cut off by a timeout still returns what it printed.

Interrupting: the parent sends SIGINT. Running Python code gets ``KeyboardInterrupt``
where it is; code waiting on an ``await`` gets its task cancelled. Either ends the call
with ``done`` (the worker lives on). Code that ignores it is killed by the parent.

It is local trusted code, NOT a sandbox: it can do anything this user can.
"""

from __future__ import annotations

import ast
import asyncio
import codecs
import contextlib
import inspect
import json
import os
import signal
import sys
import threading
import traceback
import types
from typing import Any

from .output import clean
from .streams import Pipe

FILENAME = "<exec>"
"""The file name of the user's code in tracebacks (frames before it are the worker's)."""
CHUNK_CHARS = 32_000
"""Characters per ``out`` message (keeps every protocol line far below the parent's limit)."""
MAX_VALUE_CHARS = 1_000_000
"""Characters of the last expression's repr sent to the parent (it cuts to its budget)."""
SYNC = b"\x00\x1b[trustbridge-sync]\x00"
"""Written into the output pipe (through the worker's private fd, so code that moved fds
1 and 2 cannot stop it) at the end of a call: once the forwarding thread reads it, every
byte written into the pipe before it has been sent, so ``done`` follows all of the
output; output after it is tagged ``late`` (printed between calls)."""
BEGIN = b"\x00\x1b[trustbridge-begin]\x00"
"""Written the same way at the start of a call: output after it is the call's own."""
SYNC_WAIT_S = 10.0
"""How long the end of a call waits for :data:`SYNC` to be forwarded, s: a bound for a
forwarding thread stuck on a parent that stopped reading (never reached otherwise)."""


class Channel:
    """The protocol fds: one JSON object per line; writes from any thread, serialized."""

    def __init__(self, fd_in: int, fd_out: int) -> None:
        self._fd_in = fd_in
        self._fd_out = fd_out
        self._lock = threading.Lock()
        self._buf = b""

    def send(self, msg: dict[str, Any]) -> None:
        data = (json.dumps(msg, ensure_ascii=False, default=str) + "\n").encode(
            "utf-8", "surrogatepass")
        with self._lock:
            view = memoryview(data)
            while view:
                n = os.write(self._fd_out, view)
                view = view[n:]

    def recv(self) -> dict[str, Any] | None:
        """The next message (blocking; one reader thread at a time); None at end of input."""
        while True:
            line, sep, rest = self._buf.partition(b"\n")
            if sep:
                self._buf = rest
                if line.strip():
                    return json.loads(line)
                continue
            chunk = os.read(self._fd_in, 1 << 16)
            if not chunk:
                return None
            self._buf += chunk


def _take_fds() -> tuple[Channel, Pipe]:
    """Move the protocol off fds 0 and 1; point fds 1 and 2 at a forwarded pipe.

    Returns:
        The channel, and the pipe. Output is sent as ``{"t": "out", "s": str}``, with
        ``"late": true`` when it was written between calls (after a call's :data:`SYNC`,
        before the next one's :data:`BEGIN`).
    """
    proto_in, proto_out = os.dup(0), os.dup(1)
    for fd in (proto_in, proto_out):
        os.set_inheritable(fd, False)  # a child process of user code must not hold them
    channel = Channel(proto_in, proto_out)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    read_end, write_end = os.pipe()  # both non-inheritable (PEP 446)
    os.dup2(write_end, 1)
    os.dup2(write_end, 2)

    synced = threading.Event()
    markers = (SYNC, BEGIN)
    longest = max(len(m) for m in markers)

    def forward() -> None:
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        in_call = False

        def emit(data: bytes, final: bool = False) -> None:
            text = decoder.decode(data, final) if data or final else ""
            for i in range(0, len(text), CHUNK_CHARS):
                msg: dict[str, Any] = {"t": "out", "s": text[i:i + CHUNK_CHARS]}
                if not in_call:
                    msg["late"] = True
                channel.send(msg)

        pending = b""
        while chunk := os.read(read_end, 1 << 16):
            pending += chunk
            while True:
                found = [(i, m) for m in markers if (i := pending.find(m)) >= 0]
                if not found:
                    break
                i, marker = min(found)
                emit(pending[:i], final=True)  # a cut character is not carried across
                pending = pending[i + len(marker):]
                in_call = marker is BEGIN
                if marker is SYNC:
                    synced.set()
            # Hold back a tail that may be the start of a marker split across reads.
            keep = next((k for k in range(min(longest - 1, len(pending)), 0, -1)
                         if any(m.startswith(pending[-k:]) for m in markers)), 0)
            emit(pending[:len(pending) - keep])
            pending = pending[len(pending) - keep:]

    threading.Thread(target=forward, name="fd-forward", daemon=True).start()
    return channel, Pipe(write_end, synced)


def _compile(source: str) -> tuple[types.CodeType | None, types.CodeType | None]:
    """``(body, last)``: the code, and its last statement apart when it is an expression
    (its value is the call's value). Raises SyntaxError."""
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    tree = ast.parse(source, FILENAME, "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        expr = ast.Expression(tree.body.pop().value)
        last = compile(expr, FILENAME, "eval", flags=flags)
    body = compile(tree, FILENAME, "exec", flags=flags) if tree.body else None
    return body, last


async def _evaluate(code: types.CodeType, scope: dict[str, Any]) -> Any:
    result = eval(code, scope)  # running the user's code is the point
    if code.co_flags & inspect.CO_COROUTINE:
        result = await result
    return result


HERE = os.path.dirname(os.path.abspath(__file__))
"""This package's folder: its frames (the worker, the relay) are left out of tracebacks."""


def _traceback(exc: BaseException) -> str:
    """The exception's traceback without this package's own frames (the worker and relay
    say nothing about the code; the SDK's frames stay); a SyntaxError as Python prints it."""
    te = traceback.TracebackException.from_exception(exc)
    seen: set[int] = set()
    stack: list[traceback.TracebackException] = [te]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        item.stack = traceback.StackSummary.from_list(
            [f for f in item.stack if os.path.dirname(os.path.abspath(f.filename)) != HERE
             or f.filename == FILENAME])
        stack += [x for x in (item.__cause__, item.__context__) if x is not None]
    return "".join(te.format())


class Worker:
    """The globals, the running call, and the SIGINT handling."""

    def __init__(self, channel: Channel, pipe: Pipe) -> None:
        from .relay import RelayClient  # after the fds moved: nothing prints meanwhile

        self.channel = channel
        self.pipe = pipe
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        hello = channel.recv() or {}
        self.relay = RelayClient(channel, self.loop, hello.get("protocolVersion", 0),
                                 hello.get("session"))
        from ..sdk import Browser, Tab

        self._tab_class = Tab
        self.device = hello.get("device")
        self.scope: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__,
                                      "asyncio": asyncio}
        self.scope["browser"] = Browser(self.relay, self.device)  # type: ignore[arg-type]
        self._bound_tab = self._tab_class(self.relay, self.device, None)  # type: ignore[arg-type]
        self.scope["tab"] = self._bound_tab
        self.task: asyncio.Task[None] | None = None
        self._in_code = False

    def bind_tab(self, where: dict[str, Any] | None) -> None:
        """Point ``tab`` at the session's current tab, unless the code rebound it."""
        if where is None or self.scope.get("tab") is not self._bound_tab:
            return
        device, tab_id = where.get("device", self.device), where.get("tabId")
        if (device, tab_id) != (self._bound_tab.device, self._bound_tab.tab_id):
            self._bound_tab = self._tab_class(self.relay, device, tab_id)  # type: ignore[arg-type]
            self.scope["tab"] = self._bound_tab

    def on_sigint(self, _signum: int, frame: types.FrameType | None) -> None:
        """Python code running now is interrupted where it is; code waiting on an await
        is cancelled; between calls nothing happens."""
        if self.task is None or self.task.done():
            return
        if self._in_code:
            f = frame
            while f is not None:
                if f.f_code is Channel.send.__code__:
                    break  # mid-write of a protocol line: a cut line would lose a message
                if f.f_code.co_filename == FILENAME:
                    raise KeyboardInterrupt
                f = f.f_back
        self.loop.call_soon_threadsafe(self.task.cancel)

    async def run(self, msg: dict[str, Any]) -> None:
        # What an earlier call did to fds 1/2 or sys.stdout/stderr (closed, moved to
        # /dev/null, replaced) must not break this call's output.
        self.pipe.restore()
        self.pipe.mark(BEGIN)
        try:
            reply = await self._run(msg)
        except BaseException as exc:  # noqa: BLE001 - an interrupt past the code's end
            reply = {"t": "done", "id": msg["id"], "value": None, "interrupted": True,
                     "error": clean("".join(traceback.format_exception_only(type(exc), exc))
                                    or type(exc).__name__)}
        finally:
            self.pipe.synced.clear()
            self.pipe.mark(SYNC)  # on the private fd: it arrives whatever fd 1 became
            self.pipe.synced.wait(SYNC_WAIT_S)
        self.channel.send(reply)

    async def _run(self, msg: dict[str, Any]) -> dict[str, Any]:
        """Compile and run one call's code; the ``done`` message (strings clean, see
        :func:`clean`)."""
        self.bind_tab(msg.get("tab"))
        reply: dict[str, Any] = {"t": "done", "id": msg["id"], "value": None, "error": None}
        try:
            body, last = _compile(msg["code"])
        except (SyntaxError, ValueError) as exc:  # ValueError: a NUL byte in the source
            reply["error"] = clean("".join(traceback.format_exception_only(type(exc), exc)))
            return reply
        try:
            self._in_code = True
            try:
                if body is not None:
                    await _evaluate(body, self.scope)
                if last is not None:
                    value = await _evaluate(last, self.scope)
                    if value is not None:
                        text = clean(repr(value))
                        reply["value"] = text[:MAX_VALUE_CHARS]
                        reply["valueChars"] = len(text)
            finally:
                self._in_code = False
        except BaseException as exc:  # noqa: BLE001 - every failure of user code is its answer
            if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt):
                reply["interrupted"] = True
            if isinstance(exc, SystemExit):
                reply["systemExit"] = True
                reply.update(_exit_status(exc))
            try:
                reply["error"] = clean(_traceback(exc))
            except Exception as bad:  # noqa: BLE001 - e.g. a __str__ that raises
                reply["error"] = clean(f"{type(exc).__name__} (its traceback could not be "
                                       f"formatted: {type(bad).__name__}: {bad})")
            code = getattr(exc, "code", None)
            if hasattr(exc, "to_payload") and code is not None:
                reply["errorCode"] = getattr(code, "value", str(code))
        return reply

    def serve(self) -> None:
        """Read messages on a thread; run each call on the loop, one at a time."""
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()

        def read() -> None:
            while (msg := self.channel.recv()) is not None:
                if msg.get("t") == "reply":
                    self.loop.call_soon_threadsafe(self.relay.answer, msg)
                else:
                    self.loop.call_soon_threadsafe(queue.put_nowait, msg)
            _parent_gone()

        async def main() -> None:
            self.channel.send({"t": "ready", "pid": os.getpid()})
            while (msg := await queue.get()) is not None:
                if msg.get("t") == "run":
                    self.task = self.loop.create_task(self.run(msg))
                    try:
                        await asyncio.shield(self.task)
                    except asyncio.CancelledError:
                        pass
                    self.task = None

        threading.Thread(target=read, name="protocol-read", daemon=True).start()
        signal.signal(signal.SIGINT, self.on_sigint)
        self.loop.run_until_complete(main())


def _exit_status(exc: SystemExit) -> dict[str, Any]:
    """What a program ending with ``exc`` would exit with, as Python does:
    ``exitStatus`` 0 for None, n for an int, else 1 with ``exitMessage`` (str of it)."""
    code = exc.code
    if code is None:
        return {"exitStatus": 0}
    if isinstance(code, int):
        return {"exitStatus": code}
    return {"exitStatus": 1, "exitMessage": clean(str(code))}


def _parent_gone() -> None:
    """The protocol channel ended: the parent is gone (killed, even by SIGKILL). Nothing
    of this worker may outlive it: SIGKILL its process group (it leads one, so the child
    processes of user code go too, unless they left it with a session of their own), this
    process included; ``os._exit`` when it leads none (run by hand)."""
    if os.getpgid(0) == os.getpid():
        with contextlib.suppress(OSError):
            os.killpg(os.getpid(), signal.SIGKILL)
    os._exit(0)


def main() -> None:
    # An inherited SIG_IGN would let the kernel reap user code's children: their status
    # would be lost (subprocess reports 0).
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    channel, pipe = _take_fds()
    sys.stdout, sys.stderr = pipe.stdout, pipe.stderr  # type: ignore[assignment]
    sys.stdin = open(os.devnull)  # noqa: SIM115 - user code reads nothing from the channel
    Worker(channel, pipe).serve()


if __name__ == "__main__":
    main()
