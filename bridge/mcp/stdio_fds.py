"""fd 0 and fd 1 taken for :mod:`.stdio`: private descriptors for the wire, and the
standard descriptors pointed elsewhere while it serves, as the ``mcp`` package's
``stdio_server`` does (fd 0 at the null device, fd 1 at stderr), so the browser this
server starts (a child process) and stray prints cannot touch the protocol stream.

``O_NONBLOCK``, which the event loop needs, belongs to the open file, and other
processes may share that: a terminal (fd 0, 1 and 2 of a shell are usually one open
file) is therefore opened anew by its name, so the flag never reaches the shell or our
own stderr; a pipe or socket is served from a duplicate, and its flag is restored on
release.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import selectors
import stat
import sys
from dataclasses import dataclass, field

if sys.platform != "win32":
    import fcntl

ENV = "TRUSTBRIDGE_MCP_STDIO"
"""Environment variable: ``package`` serves with the ``mcp`` package's transport."""

_claimed: set[int] = set()


@dataclass
class Claim:
    """fd 0 or fd 1 taken for the wire: ``wire`` serves it, ``saved`` restores it."""

    fd: int
    wire: int
    saved: int | None = None
    shared: bool = True
    """``wire`` shares the open file with ``saved`` (a duplicate, not a reopened tty)."""
    was_blocking: bool = field(default=True)
    """``O_NONBLOCK`` was clear on the open file before (restored on release)."""


def _open_wire(fd: int, event: int) -> Claim | str:
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
            claim = Claim(fd, os.open(os.ttyname(fd), flags | os.O_NOCTTY | os.O_CLOEXEC),
                          shared=False)
        else:
            claim = Claim(fd, fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3))
    except OSError as exc:
        return f"{name} cannot be opened again: {exc}"
    try:
        with selectors.DefaultSelector() as probe:  # epoll refuses some devices (EPERM)
            probe.register(claim.wire, event)
    except OSError as exc:
        os.close(claim.wire)
        return f"{name} cannot be watched by the selector: {exc}"
    return claim


def _divert(claim: Claim) -> None:
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


def release(claim: Claim) -> None:
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


def claim_both() -> tuple[Claim, Claim] | str:
    """fd 0 and fd 1 claimed and diverted, or why the package's transport must serve
    instead (then nothing was changed).

    Raises:
        RuntimeError: this transport already serves in this process.
    """
    if 0 in _claimed or 1 in _claimed:
        raise RuntimeError("stdin and stdout already serve another MCP stdio transport")
    if sys.platform == "win32":
        return "Windows pipes cannot be watched by a selector"
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
        release(stdin)
        return stdout
    try:
        _divert(stdin)
        _divert(stdout)
    except OSError as exc:
        release(stdout)
        release(stdin)
        return f"stdin or stdout cannot be diverted: {exc}"
    _claimed.update((0, 1))
    return stdin, stdout


def release_both(stdin: Claim, stdout: Claim) -> None:
    """Undo :func:`claim_both`: fd 0 and fd 1 are the wire again."""
    release(stdout)
    release(stdin)
    _claimed.difference_update((0, 1))
