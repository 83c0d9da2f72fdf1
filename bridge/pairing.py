"""Pairing a person's own browser with the bridge: one-time codes and device credentials.

A person loads the extension into their own Chromium or Firefox (``trustbridge
extension`` prints the folder). That copy has no ``config.json`` (the file a supervisor
writes into its private copy), so it is *unpaired* and connects to nothing. Pairing:

1. ``trustbridge pair [--device NAME]`` (a client holding the bridge token) calls
   ``pairing.create``: the bridge makes a code of :data:`CODE_LENGTH` characters from
   :data:`CODE_ALPHABET`, valid :data:`CODE_TTL_S` seconds and for one exchange.
2. The extension's options page opens a WebSocket to the bridge (loopback) and sends,
   instead of a hello, ``{"type": "pair", "code", "protocolVersion"}``
   (:class:`~bridge.protocol.models.PairRequest`). A good code is spent and answered
   ``{"type": "paired", "device", "credential"}``; anything else gets an UNAUTHORIZED
   error response. The bridge closes the connection either way (1000 / 1008).
3. The extension stores ``{bridgeUrl, credential, device}`` in its own storage and says
   hello as ``role=extension`` for that device with the credential in ``token``.

A credential admits exactly one thing: the extension of its device. It is not the bridge
token (which stays the master secret: clients and drivers need it) and cannot act as a
client or a driver. The bridge keeps only its SHA-256, in :data:`FILE` in the state
directory (mode 0600), so it survives a bridge restart; pairing the same device name
again replaces it (the old browser is disconnected and refused from then on).

Guessing: :data:`MAX_FAILURES` wrong codes void every outstanding code (a new
``trustbridge pair`` makes a new one), so an online guesser has that many tries at
``len(CODE_ALPHABET) ** CODE_LENGTH`` (about 6.6e11) codes.

The promise of trusted input (design.md §2 rule 1) is remembered per paired device too:
once a driver has said hello for it (``trustbridge attach``), its record says
``trustedInput`` and the extension's later hellos carry ``requiresTrustedInput``, so a
restarted bridge refuses its input (TRUSTED_INPUT_UNAVAILABLE) until a driver is back,
rather than sending it down the synthetic path. Pairing the name again clears it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import os
import secrets
import time
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pydantic
import pydantic_core
from websockets.asyncio.server import ServerConnection

from . import config
from .protocol import errors as E
from .protocol.models import (
    PROTOCOL_VERSION,
    Hello,
    Paired,
    PairRequest,
    Request,
    Response,
)
from .protocol.peer import encode
from .protocol.validate import error_locs, summarise, validate_params, validate_result

log = logging.getLogger("trustbridge.pairing")

FILE = "paired-devices.json"
"""The paired devices' records in the state directory: ``{"devices": {name: {"sha256",
"pairedAt", "trustedInput"}}}`` (mode 0600)."""
CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTVWXYZ"
"""Characters of a code: digits and capitals without 0/O, 1/I/L and U, which a person
misreads or mistypes (after Crockford's base 32)."""
CODE_LENGTH = 8
CODE_TTL_S = 300.0
"""How long a code is valid, s (5 minutes)."""
MAX_FAILURES = 5
"""Wrong codes tolerated before every outstanding code is voided."""
CREDENTIAL_BYTES = 32
METHOD = "pairing.create"


def normalise_code(code: str) -> str:
    """The code as the bridge compares it: capitals, without spaces and dashes."""
    return "".join(ch for ch in code.upper() if ch not in " -\t")


def show_code(code: str) -> str:
    """``ABCD2345`` → ``ABCD-2345`` (easier to read aloud and type)."""
    return f"{code[:4]}-{code[4:]}" if len(code) == 8 else code


def is_pair_request(raw: str) -> bool:
    """True when a first frame is a pairing exchange (``"type": "pair"``), not a hello."""
    try:
        obj = pydantic_core.from_json(raw)
    except ValueError:
        return False
    return isinstance(obj, dict) and obj.get("type") == "pair"


def _digest(credential: str) -> str:
    return hashlib.sha256(credential.encode()).hexdigest()


@dataclass
class _Code:
    device: str
    expires: float
    """time.monotonic() deadline, s."""


class Pairing:
    """Codes the bridge handed out and the credentials of paired devices.

    Args:
        path: the records file (default: :data:`FILE` in the state directory, resolved
            at first use so a bridge that never pairs never touches it).
        clock: monotonic seconds (tests move it).
    """

    def __init__(self, path: Path | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._path = path
        self._clock = clock
        self._codes: dict[str, _Code] = {}
        self._failures = 0
        self._records: dict[str, dict[str, Any]] | None = None
        self._live: dict[str, weakref.WeakSet[Any]] = {}
        """Device → the open connections its credential admitted (closed when re-paired)."""

    # -- records ----------------------------------------------------------------------

    @property
    def path(self) -> Path:
        if self._path is None:
            self._path = config.state_dir() / FILE
        return self._path

    def records(self) -> dict[str, dict[str, Any]]:
        """Device name → its record, read from :attr:`path` once (a missing or broken
        file: no device is paired; a broken one is logged and replaced at the next pair)."""
        if self._records is None:
            try:
                data = json.loads(self.path.read_text())
                devices = data.get("devices") if isinstance(data, dict) else None
                self._records = {k: v for k, v in (devices or {}).items()
                                 if isinstance(v, dict) and isinstance(v.get("sha256"), str)}
            except FileNotFoundError:
                self._records = {}
            except (OSError, ValueError) as exc:
                log.error("cannot read %s (%s): no device is paired", self.path, exc)
                self._records = {}
        return self._records

    def _save(self) -> None:
        """Write the records (mode 0600): a reader sees the old file or the new one."""
        tmp = self.path.with_name(f".{FILE}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump({"devices": self.records()}, fh, indent=1, sort_keys=True)
        os.replace(tmp, self.path)

    # -- codes ------------------------------------------------------------------------

    def create(self, device: str | None, online: Iterable[str] = ()) -> dict[str, Any]:
        """A new one-time code for ``device``.

        Args:
            device: the name the paired extension gets (None: the first free
                ``browser-N`` among paired and online devices).
            online: devices connected now (a supervised browser's name is refused).

        Returns:
            ``{"code", "device", "expiresInMs"}`` (the :class:`PairingCreateResult`).

        Raises:
            BadRequest: ``device`` is a connected device that was not paired (a browser
                a supervisor runs): its name is not the person's to take.
        """
        online = set(online)
        paired = self.records()
        if device is None:
            taken = online | set(paired) | {c.device for c in self._codes.values()}
            device = next(f"browser-{n}" for n in range(1, len(taken) + 2)
                          if f"browser-{n}" not in taken)
        elif device in online and device not in paired:
            raise E.BadRequest(
                f"Device {device!r} is a browser the bridge already runs; pair under "
                "another name.", {"device": device},
                next_step="Choose another --device name, or none for browser-N.")
        self._drop_expired()
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
        self._codes[code] = _Code(device, self._clock() + CODE_TTL_S)
        self._failures = 0
        log.info("pairing code made for device %r (valid %.0f s)", device, CODE_TTL_S)
        return {"code": show_code(code), "device": device,
                "expiresInMs": int(CODE_TTL_S * 1000)}

    def redeem(self, code: str) -> tuple[str, str]:
        """Spend ``code``: a new credential for its device, stored (its SHA-256) at once.

        Returns:
            ``(device, credential)``.

        Raises:
            Unauthorized: the code is wrong, used or expired (``details.reason``:
                ``pairingCodeRefused``); after :data:`MAX_FAILURES` of those every
                outstanding code is void.
        """
        self._drop_expired()
        wanted = normalise_code(code)
        match = next((c for c in list(self._codes)
                      if hmac.compare_digest(c.encode(), wanted.encode())), None)
        if match is None:
            self._failures += 1
            if self._failures >= MAX_FAILURES and self._codes:
                log.warning("%d wrong pairing codes: every outstanding code is void",
                            self._failures)
                self._codes.clear()
            raise E.Unauthorized(
                "Wrong, used or expired pairing code; nothing was paired.",
                {"reason": "pairingCodeRefused"},
                next_step="Run `trustbridge pair` for a new code (valid 5 minutes, once).")
        device = self._codes.pop(match).device
        credential = secrets.token_hex(CREDENTIAL_BYTES)
        self.records()[device] = {"sha256": _digest(credential), "pairedAt": int(time.time()),
                                  "trustedInput": False}
        self._save()
        self._revoke_live(device)
        log.info("device %r paired", device)
        return device, credential

    def _revoke_live(self, device: str) -> None:
        """Close the connections the device's replaced credential admitted: otherwise an
        old browser still connected could take the device back into routing once the new
        one leaves (a newer extension displaces an older one only while both are open)."""
        for ws in list(self._live.pop(device, ())):
            with contextlib.suppress(Exception):
                asyncio.ensure_future(ws.close(1008, "pairing replaced"))

    def _drop_expired(self) -> None:
        now = self._clock()
        for code in [c for c, v in self._codes.items() if v.expires <= now]:
            del self._codes[code]

    # -- hellos -----------------------------------------------------------------------

    def admits(self, hello: Hello, master: bool, ws: Any = None) -> bool:
        """Whether ``hello`` may join: it carries the bridge token (``master``), or it is
        the extension of a paired device with that device's credential (its connection
        ``ws`` is then remembered, and closed if the device is paired again).

        Side effects, both for paired devices only: a driver's hello (with the bridge
        token) records the device's ``trustedInput`` promise; a paired extension's hello
        gets ``capabilities.requiresTrustedInput`` when its record has that promise
        (module docstring).
        """
        if master:
            if hello.role == "driver" and hello.device is not None:
                record = self.records().get(hello.device)
                if record is not None and not record.get("trustedInput"):
                    record["trustedInput"] = True
                    with contextlib.suppress(OSError):
                        self._save()
            return True
        if hello.role != "extension" or hello.device is None:
            return False
        record = self.records().get(hello.device)
        if record is None or not hmac.compare_digest(
                _digest(hello.token).encode(), str(record["sha256"]).encode()):
            return False
        if record.get("trustedInput"):
            hello.capabilities["requiresTrustedInput"] = True
        if ws is not None:
            self._live.setdefault(hello.device, weakref.WeakSet()).add(ws)
        return True

    # -- wire -------------------------------------------------------------------------

    async def exchange(self, ws: ServerConnection, raw: str) -> None:
        """Serve a pairing exchange that came instead of a hello, then close.

        Raises:
            BadRequest: the frame is not a :class:`PairRequest`.
            ProtocolMismatch: another protocol version.
            Unauthorized: the code was refused (:meth:`redeem`).
            ConnectionClosed: always after a good exchange (the connection is done;
                the caller's hello handling ends there).
        """
        try:
            req = PairRequest.model_validate_json(raw)
        except pydantic.ValidationError as exc:
            raise E.BadRequest("A pairing request is {type: pair, code, protocolVersion}: "
                               + summarise(exc), {"errors": error_locs(exc)}) from exc
        if req.protocolVersion != PROTOCOL_VERSION:
            raise E.ProtocolMismatch(
                f"Peer speaks protocol {req.protocolVersion}, bridge speaks "
                f"{PROTOCOL_VERSION}.", {"peer": req.protocolVersion, "bridge": PROTOCOL_VERSION})
        device, credential = self.redeem(req.code)
        await ws.send(encode(Paired(device=device, credential=credential,
                                    protocolVersion=PROTOCOL_VERSION)))
        await ws.close(1000, "paired")
        await ws.recv()  # raises ConnectionClosedOK: nothing more on this connection

    def serve(self, req: Request, online: Iterable[str]) -> Response:
        """Answer a client's ``pairing.create`` (validated like every method)."""
        try:
            params = validate_params(METHOD, req.params)
            result = validate_result(METHOD, self.create(params.device, online),
                                     sender="The bridge")
        except E.TrustbridgeError as err:
            return Response(id=req.id, ok=False, error=err.to_payload())
        return Response(id=req.id, ok=True, result=result)

