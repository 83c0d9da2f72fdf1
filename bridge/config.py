"""Where the bridge keeps its token and endpoint, and how peers find them.

Files live in the state directory: ``$TRUSTBRIDGE_HOME`` if set, else
``$XDG_STATE_HOME/trustbridge``, else ``~/.local/state/trustbridge``.

- ``token``: 32 random bytes as hex, created on first start with file mode 0600
  (design.md §8). Every hello must present it.
- ``endpoint.json``: ``{"url": "ws://127.0.0.1:PORT", "pid": N}`` of the running bridge,
  so the CLI, SDK and MCP server find it without flags.
- ``mcp-http-token``: the bearer token of ``trustbridge mcp --http`` (its own, 32 random
  bytes as hex, mode 0600), created on its first start.
- ``operator-token``: the operator credential (32 random bytes as hex, mode 0600),
  created on the bridge's first start. A client whose hello carries it may stop other
  sessions and see their labels (docs/security.md "Who may do what"); the CLI sends it
  with ``--operator`` only. Agents' own connections (MCP server, SDK) never read it.
- ``sessions/LABEL.json``: ``{"label", "secret", "url", "sessionId"}`` of the kept session
  the CLI's ``--session LABEL`` opened (mode 0600, directory 0700), so the next invocation
  resumes it (docs/sessions.md). The secret is sent only to the bridge at ``url``.

The token leaves this machine only on purpose (:func:`token_refusal`).
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import secrets
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 17831
_WILDCARDS = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1): reachable from
    this machine only. Anything else (a LAN address, ``0.0.0.0``, ``::``) is exposed."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name other than localhost
        return False


def connect_url(host: str, port: int) -> str:
    """``ws://`` URL that local peers use to reach a bridge bound to ``host``: a wildcard
    bind (``0.0.0.0``, ``::``) is reached through loopback; IPv6 literals get brackets."""
    host = _WILDCARDS.get(host, host)
    if ":" in host:
        host = f"[{host}]"
    return f"ws://{host}:{port}"


def state_dir() -> Path:
    """Return (and create, mode 0700) the state directory."""
    base = os.environ.get("TRUSTBRIDGE_HOME")
    if base:
        path = Path(base)
    else:
        xdg = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        path = Path(xdg) / "trustbridge"
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def load_or_create_token(path: Path | None = None) -> str:
    """Return the bridge token, creating it (mode 0600) on first use.

    The file is created with O_EXCL so two processes starting at once agree on one token.
    """
    path = path or state_dir() / "token"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        token = path.read_text().strip()
        if token:
            return token
        path.unlink()
        return load_or_create_token(path)
    token = secrets.token_hex(32)
    with os.fdopen(fd, "w") as fh:
        fh.write(token + "\n")
    return token


def operator_token_path() -> Path:
    """The file of the operator credential (see the module docstring)."""
    return state_dir() / "operator-token"


def load_or_create_operator_token() -> str:
    """The operator credential, created (mode 0600) on first use."""
    return load_or_create_token(operator_token_path())


def read_operator_token() -> str:
    """The operator credential of the local bridge, for ``--operator``.

    Raises:
        ValueError: the file is missing, unreadable or empty (no bridge has started with
            this state directory); the message names it.
    """
    return read_token_file(operator_token_path())


def mcp_http_token_path() -> Path:
    """The file of ``trustbridge mcp --http``'s own bearer token."""
    return state_dir() / "mcp-http-token"


def read_token_file(path: Path) -> str:
    """The token a file holds (its content, surrounding whitespace removed).

    Raises:
        ValueError: the file cannot be read or is empty; the message names it.
    """
    try:
        token = path.read_text().strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read the token file {path}: {exc}") from exc
    if not token:
        raise ValueError(f"the token file {path} is empty")
    return token


def write_new_token(path: Path | None = None) -> str:
    """Replace the token in ``path`` (default: the bridge token) with a new random one,
    mode 0600, and return it. A reader sees the old file or the new one, never a part
    (written beside it, then renamed over it)."""
    path = path or state_dir() / "token"
    tmp = path.with_name(path.name + ".new")
    tmp.unlink(missing_ok=True)  # a leftover keeps its mode under O_TRUNC; start afresh
    token = secrets.token_hex(32)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(token + "\n")
    os.replace(tmp, path)
    return token


def token_refusal(url: str, token_named: bool) -> str | None:
    """Why the token may not be sent to the bridge at ``url``, or None when it may.

    The rule (issue 13, item 9; design.md §8): the token goes to a loopback host
    (127.0.0.0/8, ::1, ``localhost``) over ``ws://`` or ``wss://``; beyond this machine
    only over ``wss://`` (TLS) and only when the user named the token (``--token-file``),
    since the state directory's token is the local bridge's; never over ``ws://``
    beyond this machine (it would travel in plain text).

    Args:
        url: the bridge URL, e.g. ``ws://127.0.0.1:17831``.
        token_named: the user gave the token explicitly (a ``--token-file``).
    """
    parts = urlsplit(url)
    if parts.scheme not in ("ws", "wss"):
        return f"{url} is not a ws:// or wss:// URL"
    host = parts.hostname or ""
    if is_loopback_host(host):
        return None
    if parts.scheme == "ws":
        return (f"{host} is not this machine and ws:// is not encrypted: the token would "
                "travel in plain text. Reach a remote bridge over wss:// (TLS, "
                "docs/security.md) and name its token with --token-file")
    if not token_named:
        return (f"{host} is not this machine: the token of this machine's state directory "
                "is not sent there. Name the remote bridge's token with --token-file")
    return None


def write_endpoint(url: str, path: Path | None = None) -> None:
    """Record the running bridge's URL for other processes (mode 0600)."""
    path = path or state_dir() / "endpoint.json"
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump({"url": url, "pid": os.getpid()}, fh)
    os.replace(tmp, path)


def read_endpoint(path: Path | None = None) -> dict[str, Any] | None:
    """Return ``{"url", "pid"}`` of the last bridge started, or None."""
    path = path or state_dir() / "endpoint.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def live_endpoint(path: Path | None = None) -> dict[str, Any] | None:
    """``{"url", "pid"}`` of the endpoint file when its process is still alive, is not this
    one, and something accepts TCP connections at its URL (another bridge uses this state
    directory), else None (no file, a stale file, a recycled pid)."""
    info = read_endpoint(path)
    pid = info.get("pid") if info else None
    if not info or not isinstance(pid, int) or pid == os.getpid() or pid <= 0:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:  # alive, another user's
        pass
    try:
        parts = urlsplit(str(info.get("url", "")))
        with socket.create_connection((parts.hostname or "", parts.port or 0), timeout=0.5):
            return info
    except (OSError, ValueError):
        return None


def clear_endpoint(path: Path | None = None) -> None:
    """Remove the endpoint file if it still names this process."""
    path = path or state_dir() / "endpoint.json"
    info = read_endpoint(path)
    if info and info.get("pid") == os.getpid():
        path.unlink(missing_ok=True)


def session_path(label: str) -> Path:
    """The file of the CLI's kept session ``label`` (its directory created, mode 0700).

    Raises:
        ValueError: ``label`` cannot name a file (a session label never contains ``/``).
    """
    if not label or "/" in label or "\0" in label or label in (".", ".."):
        raise ValueError(f"{label!r} is not a session label")
    folder = state_dir() / "sessions"
    folder.mkdir(exist_ok=True, mode=0o700)
    return folder / f"{label}.json"


def read_session(label: str) -> dict[str, Any] | None:
    """The saved ``{"label", "secret", "url", ...}`` of kept session ``label``, or None
    (never saved, unreadable or not an object)."""
    try:
        data = json.loads(session_path(label).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_session(label: str, data: dict[str, Any]) -> Path:
    """Save kept session ``label`` (mode 0600, replaced atomically); returns the file."""
    path = session_path(label)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh)
    os.replace(tmp, path)
    return path


def remove_session(label: str) -> None:
    """Forget kept session ``label`` (no error if it was never saved)."""
    with contextlib.suppress(ValueError):
        session_path(label).unlink(missing_ok=True)
