"""The worker process as the runtime sees it: :func:`spawn`, :class:`Worker` (its pipe,
what is in flight, interrupt and kill), and :func:`death_text`."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from ..protocol import errors as E

LINE_LIMIT = 1 << 26
"""Longest protocol line read from the worker, bytes (a large bridge request)."""


def _worker_env() -> dict[str, str]:
    """The environment of the worker: this one, with this ``trustbridge`` package importable
    (the folder holding it: a clone's root, or site-packages)."""
    env = dict(os.environ)
    root = str(Path(sys.modules["trustbridge"].__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    env.pop("PYTHONSTARTUP", None)
    return env


def keep_child_status() -> None:
    """SIGCHLD back to its default when it is ignored (SIG_IGN, inherited from a parent
    that set it: some MCP clients' launchers do): with it ignored the kernel reaps the
    worker itself, so asyncio's waitpid finds no child ("Unknown child process pid N,
    will report returncode 255") and a dead worker's status and signal are lost. Only
    the main thread may set a handler; elsewhere it is left as it is (cli_repl calls
    this from its main thread)."""
    with contextlib.suppress(ValueError, OSError):
        if signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)


async def spawn() -> Worker:
    """Start ``python -m trustbridge.bridge.code.worker`` in a process group of its own (killed with
    the children of user code).

    Raises:
        InternalError: the process could not be started.
    """
    keep_child_status()
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-X", "utf8", "-m", "trustbridge.bridge.code.worker",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=_worker_env(), limit=LINE_LIMIT,
            start_new_session=True)
    except OSError as exc:
        raise E.InternalError(f"Cannot start the code worker: {exc}.") from exc
    return Worker(proc)


class Worker:
    """One worker process and what is in flight with it."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.ready: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.done: asyncio.Future[dict[str, Any]] | None = None
        self.run_id: int | None = None  # the call ``done`` must name
        self.out: Any = None  # the running call's output buffer
        self.calls: dict[int, asyncio.Task[None]] = {}
        self.reader: asyncio.Task[None] | None = None
        self._write_lock = asyncio.Lock()

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None and not (self.reader and self.reader.done())

    async def send(self, msg: dict[str, Any]) -> None:
        """Write one message; a dead worker's broken pipe is ignored (its answer is dropped)."""
        assert self.proc.stdin is not None
        data = (json.dumps(msg, ensure_ascii=False, default=str) + "\n").encode(
            "utf-8", "surrogatepass")
        async with self._write_lock:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError, RuntimeError):
                self.proc.stdin.write(data)
                await self.proc.stdin.drain()

    def interrupt(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(signal.SIGINT)

    async def kill(self) -> None:
        """SIGKILL the worker's process group (children of user code too) and reap it."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.proc.wait(), 10)
        if self.reader is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(self.reader, 5)


async def death_text(worker: Worker, rc: int | None, err: str | None) -> str:
    """Why the worker's channel ended, in words, with what it wrote to stderr."""
    stderr = b""
    if worker.proc.stderr is not None:
        with contextlib.suppress(Exception):
            stderr = await asyncio.wait_for(worker.proc.stderr.read(4000), 2)
    if err is not None:
        how = f"its channel broke ({err})"
    elif rc is not None and rc < 0:
        name = signal.Signals(-rc).name if -rc in signal.valid_signals() else str(-rc)
        how = f"it was ended by signal {name}"
    else:
        how = f"it exited with status {rc}"
    tail = stderr.decode("utf-8", "replace").strip()
    return (f"WorkerDied: the code worker process died ({how}); its state (variables, "
            "imports) is lost and the next call starts a fresh worker."
            + (f"\n{tail}" if tail else ""))
