"""Trusted-input routing policy (design.md §2), as plain Python with no I/O.

The bridge server feeds this module joins, leaves and requests and executes the
:class:`Route` it returns; nothing here touches sockets or an event loop, so every rule
is tested by calling it (tests/bridge/test_routing.py).

Two pieces of state are kept apart and never merged:

- ``drivers``: device → the driver peer online right now;
- ``required_trusted_input``: devices whose input must go through a driver. A driver's
  hello adds its device; its disconnect does not remove it (rule 1). The set is seeded
  from ``BRIDGE_REQUIRE_TRUSTED_INPUT`` (rule 2).
"""

from __future__ import annotations

import time

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from .dialogs import DialogBook, OpenDialog
from .protocol.errors import (
    BadRequest,
    DeviceNotConnected,
    DialogOpen,
    TrustedInputUnavailable,
    Unauthorized,
    a_dialog,
)
from .protocol.methods import (
    ALLOWED_UNDER_DIALOG,
    CLIENT_INPUT_METHODS as INPUT_METHODS,
    CLIENT_METHODS,
    DRIVER_METHODS,
    ESCAPES_DIALOG,
    METHODS,
)
from .protocol.models import DeviceInfo

ENV_REQUIRE_TRUSTED_INPUT = "BRIDGE_REQUIRE_TRUSTED_INPUT"


def parse_device_list(value: str | None) -> set[str]:
    """Parse a comma-separated device list (``"dev1, dev2"``); blanks are ignored."""
    return {part.strip() for part in (value or "").split(",") if part.strip()}


@dataclass(frozen=True)
class ToExtension:
    """Send the request as is to the device's extension.

    ``synthetic`` is true for input on a device that never asked for trusted input:
    the result must then say ``inputPath: "synthetic"`` (rule 5).
    """

    device: str
    extension: str
    synthetic: bool = False


@dataclass(frozen=True)
class TrustedInput:
    """Resolve the ref on ``extension`` (``page.resolveTarget``), then act on ``driver``."""

    device: str
    extension: str
    driver: str


@dataclass(frozen=True)
class ToDriver:
    """A method only the driver can serve (dialogs, screenshots, evaluate): the extension
    names the tab's frame (``page.resolveTarget``), the driver does the work."""

    device: str
    extension: str
    driver: str


@dataclass(frozen=True)
class Local:
    """Answered by the bridge itself (``devices.list``)."""


Route = ToExtension | TrustedInput | ToDriver | Local


@dataclass
class _Peer:
    role: str
    device: str | None
    browser: str | None
    capabilities: dict[str, bool] = field(default_factory=dict)


class RoutingPolicy:
    """Who gets which request.

    Args:
        required_trusted_input: devices protected from the start (rule 2).
    """

    def __init__(self, required_trusted_input: Iterable[str] = ()) -> None:
        self.drivers: dict[str, str] = {}
        self.extensions: dict[str, str] = {}
        self.required_trusted_input: set[str] = set(required_trusted_input)
        self.dialogs = DialogBook()
        """Open JavaScript dialogs per device and the tabs they block (bridge/dialogs.py)."""
        self._peers: dict[str, _Peer] = {}
        self._browsers: dict[str, str] = {}
        self.recovering: dict[str, dict[str, object]] = {}
        """Device → the recovery running for a missing part of it (issue 32 item 2):
        ``{part, action, expectedWaitS, since}`` (``since``: time.monotonic() s). Set by
        whoever runs it (the supervisor through its driver's ``device.recovering`` event;
        ``trustbridge up`` for a dead supervisor), cleared when the part is back."""

    def recovery_note(self, device: str, part: str) -> tuple[str, dict[str, object]]:
        """``(sentence, details)`` naming the recovery running for ``device`` when its
        ``part`` (``extension`` or ``driver``) is missing, with the time it still
        expects; ``("", {})`` when none runs (the answer must not promise one)."""
        rec = self.recovering.get(device)
        if not rec:
            return "", {}
        waited = time.monotonic() - float(rec.get("since", time.monotonic()))  # type: ignore[arg-type]
        left = max(1, round(float(rec.get("expectedWaitS", 10)) - waited))  # type: ignore[arg-type]
        what = rec.get("part") or part
        return (f" Its {what} is being recovered ({rec.get('action')}); retry in about "
                f"{left} s.", {"recovering": {"part": what, "action": rec.get("action"),
                                              "expectedWaitS": left}})

    def recovered(self, device: str) -> None:
        """A part of ``device`` came back: the recovery is over once extension and driver
        (when it had one) are both online."""
        rec = self.recovering.get(device)
        if rec is None or device not in self.extensions:
            return
        if rec.get("needsDriver") and device not in self.drivers:
            return
        self.recovering.pop(device, None)

    # -- membership -------------------------------------------------------------------

    def join(self, peer: str, role: str, device: str | None, browser: str | None = None,
             capabilities: Mapping[str, bool] | None = None) -> None:
        """Record a peer after a good hello. A newer extension for the same device
        replaces the older one here; the server admits one only when the older one
        answered no ping (bridge/server.py ``_refuse_a_second_extension``: a restarted
        service worker may leave a half-closed socket behind). A driver never displaces a live one: whoever holds the token could
        otherwise take the real driver's place, receive the typed text and answer
        "done" (issue 13, item 5); replacing a driver needs the old one gone.
        ``capabilities`` (from hello) are reported by :meth:`devices` while the peer is
        connected.

        Raises:
            BadRequest: an extension or driver without a device id.
            Unauthorized: a driver for a device whose driver is online
                (``details.reason``: ``driverAlreadyConnected``).
        """
        if role in ("extension", "driver") and not device:
            raise BadRequest(f"A {role} must name its device in hello.", {"role": role})
        if role == "driver" and device in self.drivers:
            raise Unauthorized(
                f"Device {device!r} already has an input driver online; a second one is "
                "refused. Stop the supervisor that owns it first.",
                {"device": device, "reason": "driverAlreadyConnected"},
            )
        self._peers[peer] = _Peer(role, device, browser, dict(capabilities or {}))
        if role == "driver":
            assert device is not None
            self.drivers[device] = peer
            self.required_trusted_input.add(device)  # rule 1: the promise is made here
            self.recovered(device)
        elif role == "extension":
            assert device is not None
            self.extensions[device] = peer
            if (capabilities or {}).get("requiresTrustedInput"):
                # The extension of a supervised browser carries the promise too, so a
                # restarted bridge never sends its input down the synthetic path.
                self.required_trusted_input.add(device)
            if browser:
                self._browsers[device] = browser
            self.recovered(device)

    def leave(self, peer: str) -> None:
        """Forget a peer. A driver leaves ``drivers`` only; its device stays in
        ``required_trusted_input`` (rule 1)."""
        info = self._peers.pop(peer, None)
        if info is None or info.device is None:
            return
        table = {"driver": self.drivers, "extension": self.extensions}.get(info.role)
        if table is not None and table.get(info.device) == peer:
            del table[info.device]
            # An older connection of the same role and device that is still open takes
            # over again (a peer that displaced it and left must not strand the device).
            older = [p for p, i in self._peers.items()
                     if i.role == info.role and i.device == info.device]
            if older:
                table[info.device] = older[-1]
            elif info.role == "driver":
                self.dialogs.forget_device(info.device)

    def dialog_event(self, peer: str, event: str, params: dict[str, object]) -> OpenDialog | None:
        """Record the driver's ``dialog.opened`` / ``dialog.closed`` for its device.

        Returns:
            The dialog a ``dialog.opened`` recorded (still to be placed on its tab, see
            bridge/dialogs.py), else None.
        """
        info = self._peers.get(peer)
        if info is None or info.role != "driver" or info.device is None:
            return None
        if event == "dialog.opened":
            return self.dialogs.opened(info.device, params)
        if event == "dialog.closed":
            self.dialogs.closed(info.device, params.get("dialogId"))
        return None

    @property
    def open_dialogs(self) -> dict[str, dict[str, object]]:
        """Device → its oldest open dialog, as ``devices.list`` shows it (a read-only view
        of :attr:`dialogs`)."""
        return {d: info for d in list(self.dialogs.by_device)
                if (info := self.dialogs.first(d)) is not None}

    def role_of(self, peer: str) -> str | None:
        info = self._peers.get(peer)
        return info.role if info else None

    # -- routing ----------------------------------------------------------------------

    def pick_device(self, device: str | None) -> str:
        """Return the device a request addresses.

        Raises:
            DeviceNotConnected: no device is known (or the named one is unknown).
            BadRequest: several devices are connected and none was named.
        """
        known = sorted(set(self.extensions) | set(self.drivers) | self.required_trusted_input)
        if device is not None:
            if device not in known:
                raise DeviceNotConnected(
                    f"Device {device!r} is not connected. Known devices: {known or 'none'}.",
                    {"device": device, "known": known},
                )
            return device
        online = sorted(set(self.extensions) | set(self.drivers))
        if len(online) == 1:
            return online[0]
        if not online:
            for dev in sorted(self.recovering):
                note, more = self.recovery_note(dev, "browser")
                raise DeviceNotConnected(
                    f"No browser is connected to the bridge now (device {dev!r}).{note}",
                    {"known": known, "device": dev, **more})
            raise DeviceNotConnected(
                "No browser is connected to the bridge. Start one with `trustbridge up`.",
                {"known": known},
            )
        raise BadRequest(
            f"Several devices are connected ({', '.join(online)}); name one with `device`.",
            {"known": online},
        )

    def route(self, method: str, device: str | None, tab: int | None = None,
              active: Callable[[str], int | None] | None = None) -> Route:
        """Decide where a client request goes.

        Args:
            method: a client method name (``page.act`` is input).
            device: the device named by the request, or None.
            tab: the ``tabId`` the request names, or None (the device's active tab).
            active: device → its active tab as last seen (bridge/tabqueue.py), for a
                request that names no tab; None or an unknown answer: any open dialog of
                the device may be on it.

        Returns:
            The route to execute.

        Raises:
            BadRequest: unknown method or ambiguous device.
            DeviceNotConnected: the extension needed is not connected.
            DialogOpen: a JavaScript dialog blocks the tab the request addresses and the
                method neither runs under a dialog nor escapes it (bridge/dialogs.py).
            TrustedInputUnavailable: input for a device that requires trusted input while
                its driver is offline (rule 4); nothing is to be sent anywhere.
        """
        if method not in CLIENT_METHODS:
            raise BadRequest(f"Unknown method {method!r}.", {"method": method})
        if METHODS[method].served_by == "bridge":  # devices.list
            return Local()
        dev = self.pick_device(device)
        if method not in ALLOWED_UNDER_DIALOG | ESCAPES_DIALOG:
            target = tab if tab is not None else (active(dev) if active else None)
            dialog = self.dialogs.blocking(dev, target)
            if dialog is not None:
                shown = dialog.public()
                where = f"tab {shown['tabId']}" if "tabId" in shown else "the page"
                raise DialogOpen(
                    f"{a_dialog(shown.get('type'))} blocks {where} "
                    f"({str(shown.get('message'))[:200]!r}). Answer it (accept or "
                    "dismiss), close that tab, or navigate it (which dismisses the dialog; "
                    "a page that opens another at once stays blocked) first; other tabs "
                    "still work.",
                    {"dialog": {"type": shown.get("type")}, "tabId": shown.get("tabId")},
                )
        if method in DRIVER_METHODS:
            driver = self.drivers.get(dev)
            if driver is None:
                note, more = self.recovery_note(dev, "driver")
                raise DeviceNotConnected(
                    f"{method} needs the input driver of device {dev!r}, which is offline "
                    f"(or the device has none: a browser without the supervisor).{note}",
                    {"device": dev, "method": method, **more},
                )
            return ToDriver(dev, self._extension(dev), driver)
        if method in INPUT_METHODS and dev in self.required_trusted_input:
            driver = self.drivers.get(dev)
            if driver is None:  # rule 4, checked before anything else is asked
                note, more = self.recovery_note(dev, "driver")
                raise TrustedInputUnavailable(
                    f"Device {dev!r} requires trusted input and its input driver is offline; "
                    "the action was not sent." + (note or " Restart its driver (`trustbridge "
                    "up`, or `trustbridge attach --cdp URL` for a browser you started) and "
                    "retry."), {"device": dev, **more},
                )
            return TrustedInput(dev, self._extension(dev), driver)  # rule 3
        return ToExtension(dev, self._extension(dev), synthetic=method in INPUT_METHODS)

    def _extension(self, device: str) -> str:
        ext = self.extensions.get(device)
        if ext is None:
            note, more = self.recovery_note(device, "extension")
            raise DeviceNotConnected(
                f"The extension of device {device!r} is not connected; "
                + (note.strip() if note else "wait for it to reconnect or restart the "
                   "browser."),
                {"device": device, **more},
            )
        return ext

    def devices(self) -> list[DeviceInfo]:
        """Every known device with what is connected for it (for doctor)."""
        names = sorted(set(self.extensions) | set(self.drivers) | self.required_trusted_input)
        return [
            DeviceInfo(
                device=d,
                extension=d in self.extensions,
                driver=d in self.drivers,
                requiresTrustedInput=d in self.required_trusted_input,
                browser=self._browsers.get(d),
                capabilities=self._capabilities(d),
                dialog=self.dialogs.first(d),
                dialogs=[o.public() for o in self.dialogs.all(d)],
            )
            for d in names
        ]

    def driver_capabilities(self, device: str) -> dict[str, bool]:
        """What the device's online driver said it can do in its hello ({}: none online)."""
        peer = self._peers.get(self.drivers.get(device, ""))
        return dict(peer.capabilities) if peer is not None else {}

    def extension_capabilities(self, device: str) -> dict[str, bool]:
        """What the device's connected extension said in its hello, updated by its
        ``consent.cdp`` events ({}: none online)."""
        peer = self._peers.get(self.extensions.get(device, ""))
        return dict(peer.capabilities) if peer is not None else {}

    def consent_cdp(self, peer: str, allowed: object) -> bool:
        """The extension ``peer``'s ``consent.cdp {allowed}``: the person turned the CDP
        door on or off in its options page. Returns whether it was recorded (an extension
        peer and a boolean ``allowed``)."""
        info = self._peers.get(peer)
        if info is None or info.role != "extension" or not isinstance(allowed, bool):
            return False
        info.capabilities["cdpAllowed"] = allowed
        return True

    def driver_browser(self, device: str) -> str | None:
        """The browser the device's online driver named in its hello (None: none online)."""
        peer = self._peers.get(self.drivers.get(device, ""))
        return peer.browser if peer is not None else None

    def capabilities(self, device: str) -> dict[str, bool]:
        """What the device's connected peers said they can do (extension's, then the
        driver's: the driver wins on a shared key)."""
        return self._capabilities(device)

    def _capabilities(self, device: str) -> dict[str, bool]:
        """The connected extension's capabilities, then the connected driver's (the driver
        wins on a shared key: it is the one that delivers input)."""
        merged: dict[str, bool] = {}
        for table in (self.extensions, self.drivers):
            peer = self._peers.get(table.get(device, ""))
            if peer is not None:
                merged.update(peer.capabilities)
        return merged
