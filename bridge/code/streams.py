"""The worker's output streams: ``sys.stdout`` / ``sys.stderr`` (:class:`OutStream`,
with a binary ``buffer``, :class:`BinaryOut`) on fds 1 and 2, and :class:`Pipe`, the
forwarded pipe they write into (bridge/code/worker.py reads it and sends ``out``
messages)."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import Any


class _FdStream:
    """What both streams share: an unbuffered, write-only, unseekable stream on ``fd``
    (never closed from user code's side; ``fileno()`` is the fd)."""

    def __init__(self, fd: int, name: str) -> None:
        self._fd = fd
        self.name = name

    def write(self, data: Any) -> int:
        raise NotImplementedError

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    def seekable(self) -> bool:
        return False

    @property
    def closed(self) -> bool:
        return False

    def fileno(self) -> int:
        return self._fd


class BinaryOut(_FdStream):
    """``sys.stdout.buffer`` / ``sys.stderr.buffer``: bytes written to fd 1 or 2 as they
    are (the forwarding thread decodes them as UTF-8, an invalid byte as U+FFFD)."""

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        n = len(view)
        while view:
            view = view[os.write(self._fd, view):]
        return n


class OutStream(_FdStream):
    """``sys.stdout`` / ``sys.stderr`` of user code: unbuffered writes to fd 1 or 2, which
    the forwarding thread sends as ``out`` messages in the order they were written (with
    ``os.write`` and child processes' output too). ``buffer`` takes bytes; ``fileno()``
    is 1 or 2; ``isatty()`` is False."""

    encoding = "utf-8"
    errors = "backslashreplace"
    line_buffering = False

    def __init__(self, fd: int, name: str) -> None:
        super().__init__(fd, name)
        self.buffer = BinaryOut(fd, name)

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.buffer.write(text.encode("utf-8", self.errors))
        return len(text)


class Pipe:
    """The forwarded output pipe: the worker's private write fd (fds 1 and 2 are put back
    on it at the start of every call: code that closed or moved them breaks only its own
    call), and the event the forwarding thread sets when it reads :data:`SYNC`."""

    def __init__(self, write_fd: int, synced: threading.Event) -> None:
        self.write_fd = write_fd
        self.synced = synced
        self.stdout = OutStream(1, "<stdout>")
        self.stderr = OutStream(2, "<stderr>")

    def restore(self) -> None:
        """fds 1 and 2, ``sys.stdout`` and ``sys.stderr`` back on the pipe."""
        for fd in (1, 2):
            with contextlib.suppress(OSError):
                os.dup2(self.write_fd, fd)
        sys.stdout, sys.stderr = self.stdout, self.stderr  # type: ignore[assignment]

    def mark(self, marker: bytes) -> None:
        """Write ``marker`` into the pipe, after everything written into it before."""
        view = memoryview(marker)
        while view:
            view = view[os.write(self.write_fd, view):]
