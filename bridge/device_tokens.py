"""Credentials of remote devices: a browser on another machine joins the bridge with one.

A remote device (``trustbridge device``, docs/deploy.md) runs a supervisor, its browser
and the extension on its own host and reaches the bridge over ``wss://``. It never holds
the bridge token (the master secret every local client uses): the operator issues it a
**device credential** on the bridge's host,

    trustbridge device-token issue NAME     # prints the credential once
    trustbridge device-token revoke NAME
    trustbridge device-token list

and copies it to the device (mode 0600). A credential admits exactly two hellos: the
driver and the extension of device ``NAME``; presented as a client, or for another
device, it is refused (UNAUTHORIZED). The bridge keeps only its SHA-256, in :data:`FILE`
in the state directory (mode 0600). The CLI writes that file; a running bridge only reads
it, again whenever its modification time or size changes (checked at every hello and every
:data:`~bridge.server.SWEEP_S`), so an issue takes effect at the next hello and a revoke
closes the device's open connections within that sweep (close code 1008, ``device
credential revoked``) and refuses its later hellos.

Issuing a name again replaces its credential (the old one is refused from then on).
Unlike a paired browser's credential (bridge/pairing.py), this one admits the device's
*driver*: a remote device brings its own trusted input, and its first driver hello
makes the device require it (design.md §2 rule 1), as for a local supervisor.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import time
import weakref
from pathlib import Path
from typing import Any

from . import config
from .protocol.models import Hello

log = logging.getLogger("trustbridge.device_tokens")

FILE = "device-tokens.json"
"""The records in the state directory: ``{"devices": {name: {"sha256", "issuedAt"}}}``
(mode 0600; ``issuedAt`` in Unix seconds)."""
CREDENTIAL_BYTES = 32
"""A credential is this many random bytes, written as hex (64 characters)."""
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
"""A device name: letters, digits, ``.``, ``_``, ``-``; at most 64 characters."""
CLOSE_REVOKED = 1008


def _digest(credential: str) -> str:
    return hashlib.sha256(credential.encode()).hexdigest()


def check_name(name: str) -> str:
    """Return ``name`` if it is a valid device name (:data:`NAME_RE`).

    Raises:
        ValueError: it is not (the message says what is allowed).
    """
    if not NAME_RE.match(name):
        raise ValueError(f"{name!r} is not a device name: use 1-64 letters, digits, '.', "
                         "'_' or '-', starting with a letter or digit.")
    return name


class DeviceTokens:
    """The issued device credentials (the file) and the connections they admitted.

    Args:
        path: the records file (default: :data:`FILE` in the state directory, resolved
            at first use).
    """

    def __init__(self, path: Path | None = None) -> None:
        self._path = path
        self._records: dict[str, dict[str, Any]] = {}
        self._stamp: tuple[int, int] | None = None
        self._live: weakref.WeakKeyDictionary[Any, tuple[str, str]] = \
            weakref.WeakKeyDictionary()
        """Open connection → (device, the digest of the credential that admitted it)."""

    @property
    def path(self) -> Path:
        if self._path is None:
            self._path = config.state_dir() / FILE
        return self._path

    # -- the file (CLI side writes, bridge side reads) ----------------------------------

    def records(self) -> dict[str, dict[str, Any]]:
        """Device name → ``{"sha256", "issuedAt"}``, re-read when the file changed (a
        missing file: none issued; a broken one is logged and read as none)."""
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self._records, self._stamp = {}, None
            return self._records
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp != self._stamp:
            try:
                data = json.loads(self.path.read_text())
                devices = data.get("devices") if isinstance(data, dict) else None
                self._records = {k: v for k, v in (devices or {}).items()
                                 if isinstance(v, dict) and isinstance(v.get("sha256"), str)}
            except (OSError, ValueError) as exc:
                log.error("cannot read %s (%s): no device credential is valid", self.path, exc)
                self._records = {}
            self._stamp = stamp
        return self._records

    def _save(self, records: dict[str, dict[str, Any]]) -> None:
        tmp = self.path.with_name(f".{FILE}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump({"devices": records}, fh, indent=1, sort_keys=True)
        os.replace(tmp, self.path)
        self._stamp = None  # read back on next use

    def issue(self, name: str) -> str:
        """A new credential for device ``name`` (replacing any earlier one), stored as its
        SHA-256. Returns the credential (64 hex characters); it is not kept anywhere else.

        Raises:
            ValueError: ``name`` is not a device name (:func:`check_name`).
        """
        check_name(name)
        credential = secrets.token_hex(CREDENTIAL_BYTES)
        records = dict(self.records())
        records[name] = {"sha256": _digest(credential), "issuedAt": int(time.time())}
        self._save(records)
        return credential

    def revoke(self, name: str) -> bool:
        """Remove device ``name``'s credential. Returns whether there was one."""
        records = dict(self.records())
        if records.pop(name, None) is None:
            return False
        self._save(records)
        return True

    # -- the bridge side ----------------------------------------------------------------

    def admits(self, hello: Hello, ws: Any = None) -> bool:
        """Whether ``hello`` is the driver or the extension of a device whose credential
        it carries (its connection ``ws`` is then remembered, to close on revoke)."""
        if hello.role not in ("driver", "extension") or hello.device is None:
            return False
        record = self.records().get(hello.device)
        if record is None or not hmac.compare_digest(
                _digest(hello.token).encode(), str(record["sha256"]).encode()):
            return False
        if ws is not None:
            self._live[ws] = (hello.device, str(record["sha256"]))
        return True

    def sweep(self) -> list[str]:
        """Close the open connections whose credential was revoked or replaced since they
        said hello. Returns the devices whose connections were closed."""
        if not self._live:
            return []
        records = self.records()
        closed = []
        for ws, (device, digest) in list(self._live.items()):
            if (records.get(device) or {}).get("sha256") != digest:
                del self._live[ws]
                closed.append(device)
                with contextlib.suppress(Exception):
                    asyncio.ensure_future(ws.close(CLOSE_REVOKED, "device credential revoked"))
        for device in sorted(set(closed)):
            log.warning("device %r: its credential was revoked; its connections are closed",
                        device)
        return sorted(set(closed))
