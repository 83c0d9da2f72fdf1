"""How a supervisor ends with the process that started it, however that one ends
(issue 32 item 6).

The parent keeps the write end of a pipe (the supervisor's stdin, which first carries the
token: bridge/embedded.py) open for as long as it lives; the kernel closes it when the
parent exits in any way, SIGKILL included, so the supervisor reads end-of-file within
one event-loop turn (:func:`stdin_closed`). Unlike watching ``os.getppid()`` (still the
fallback, :func:`reparented`), this holds when the parent died before the supervisor
looked at its parent id: a supervisor that started late under load once read parent id
1 as its parent, never saw it change, and kept its browser for 88 minutes.

A supervisor that does not stop within :data:`STOP_BOUND_S` of being asked (Playwright's
close waiting on a browser that does not answer) kills what it started
(:func:`kill_descendants`), so SIGTERM ends it and its browser within 5 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import stat
import sys
from pathlib import Path

STOP_BOUND_S = 3.0
"""How long an orderly stop (driver, browser, Playwright) may take before everything the
supervisor started is killed, s; SIGTERM to exit stays under 5 s."""
PARENT_POLL_S = 1.0
"""Interval of the ``getppid`` fallback, s."""


class _Eof(asyncio.Protocol):
    def __init__(self, done: asyncio.Future[None]) -> None:
        self.done = done

    def data_received(self, data: bytes) -> None:  # nothing more is sent; ignored
        pass

    def eof_received(self) -> bool:
        if not self.done.done():
            self.done.set_result(None)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(None)


def stdin_is_pipe() -> bool:
    """stdin is a pipe or socket (whose end-of-file says the writer is gone), not a
    regular file or a terminal."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def stdin_closed() -> None:
    """Return once stdin reaches end-of-file: the parent holding its write end exited (or
    closed it to ask for a stop). Call only after the token line was read from it."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    transport, _ = await loop.connect_read_pipe(lambda: _Eof(done), sys.stdin)
    try:
        await done
    finally:
        transport.close()


async def reparented(parent: int) -> None:
    """Return once this process's parent id is no longer ``parent`` (fallback when stdin
    is not the parent's pipe); at once when ``parent`` is already 1 (init: the starter
    was gone before we looked)."""
    while parent != 1 and os.getppid() == parent:
        await asyncio.sleep(PARENT_POLL_S)


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def alive(pid: int) -> bool:
    """``pid`` runs (a zombie, exited but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def descendants(pid: int | None = None) -> list[int]:
    """Every live descendant of ``pid`` (default: this process), from /proc (Linux; an
    empty list elsewhere); zombies are left out."""
    out: list[int] = []
    for child in _children(os.getpid() if pid is None else pid):
        if alive(child):
            out.append(child)
        out += descendants(child)
    return out


def kill_descendants() -> list[int]:
    """SIGKILL every descendant of this process (Playwright's driver, the browser and its
    helpers) and, for each that leads a process group (Playwright starts the browser in
    its own), that group too. Returns the pids signalled."""
    pids = descendants()
    for pid in pids:
        with contextlib.suppress(OSError):
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return pids
