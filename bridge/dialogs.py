"""Which tab each open JavaScript dialog blocks (docs/design.md §2.1; issue 13, item 6), as
plain Python with no I/O.

A dialog (alert, confirm, prompt, beforeunload) blocks the main thread of its own page,
not the browser: other tabs still load, answer and take input. The driver sees the
dialog on a Playwright ``Page`` and reports it (supervisor/dialogs.py: ``dialog.opened
{dialogId, type, message, defaultValue, url}``, ``dialog.closed {dialogId}``); it does not
know the extension's tab ids. The bridge *places* the dialog on a tab by the tab's URL:
the page's URL when the dialog opened is the top document's committed URL, which is what
the extension's ``tabs.list`` reports for that tab (its background answers while the page
is blocked; the content script does not). Why not the top frame token: the extension can
read a tab's token only through that tab's content script, which the dialog blocks, and a
page that alerts in its head was never resolved before.

Until a dialog is placed it blocks the whole device (the answer "DIALOG_OPEN" is then at
worst too cautious, never false). When several tabs show the dialog's URL it is placed on
all of them. Answering a dialog through ``page.dialog`` removes it here at once (the
driver's ``dialog.closed`` may come after its answer).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_DIALOGS_PER_DEVICE = 64
"""Open dialogs remembered per device; the oldest are forgotten beyond it (a page cannot
grow the bridge's memory by opening dialogs in many tabs)."""


@dataclass(eq=False)
class OpenDialog:
    """One open dialog.

    Attributes:
        id: the driver's ``dialogId`` (None from a driver that sends none).
        info: ``{type, message, defaultValue, url}`` as the driver reported it.
        tabs: the tab(s) it blocks; None until placed (it then blocks every tab).
        looked_up: the bridge has tried to place it (placed or not).
    """

    id: int | None
    info: dict[str, Any]
    tabs: frozenset[int] | None = None
    looked_up: bool = False

    def blocks(self, tab: int | None) -> bool:
        """True if a request on ``tab`` (None: the tab is not known) cannot run."""
        return self.tabs is None or tab is None or tab in self.tabs

    def public(self) -> dict[str, Any]:
        """The dialog as results and ``devices.list`` show it: its info and, once placed on
        one tab, ``tabId``."""
        out = {k: v for k, v in self.info.items() if k != "dialogId"}
        if self.tabs is not None and len(self.tabs) == 1:
            out["tabId"] = next(iter(self.tabs))
        return out


@dataclass
class DialogBook:
    """Open dialogs per device, oldest first."""

    by_device: dict[str, list[OpenDialog]] = field(default_factory=dict)

    def opened(self, device: str, params: Mapping[str, Any]) -> OpenDialog:
        """Record a driver's ``dialog.opened``; the new dialog is not placed yet."""
        raw_id = params.get("dialogId")
        dialog_id = raw_id if isinstance(raw_id, int) and not isinstance(raw_id, bool) else None
        dialogs = self.by_device.setdefault(device, [])
        if dialog_id is not None:
            dialogs[:] = [d for d in dialogs if d.id != dialog_id]
        dialog = OpenDialog(dialog_id, {k: v for k, v in params.items() if k != "dialogId"})
        dialogs.append(dialog)
        del dialogs[:-MAX_DIALOGS_PER_DEVICE]
        return dialog

    def closed(self, device: str, dialog_id: Any = None) -> None:
        """Forget one dialog (by ``dialogId``), or every dialog of the device when the
        driver names none (a driver that predates dialog ids)."""
        dialogs = self.by_device.get(device, [])
        if isinstance(dialog_id, int) and not isinstance(dialog_id, bool):
            dialogs[:] = [d for d in dialogs if d.id != dialog_id]
        else:
            dialogs.clear()
        if not dialogs:
            self.by_device.pop(device, None)

    def drop(self, device: str, dialog: OpenDialog) -> None:
        """Forget one dialog (its tab loaded another document or closed)."""
        dialogs = self.by_device.get(device, [])
        if dialog in dialogs:
            dialogs.remove(dialog)
        if not dialogs:
            self.by_device.pop(device, None)

    def forget_device(self, device: str) -> None:
        """Its driver left: nobody reports or answers its dialogs any more."""
        self.by_device.pop(device, None)

    def place(self, device: str, dialog: OpenDialog, tabs: Iterable[Mapping[str, Any]]) -> bool:
        """Place ``dialog`` on the tab(s) of ``tabs`` (``tabs.list``'s entries) showing its
        URL. Returns True if it was placed; a dialog no listed tab shows stays unplaced."""
        dialog.looked_up = True
        url = dialog.info.get("url")
        if not url or dialog not in self.by_device.get(device, []):
            return False
        found = frozenset(t["tabId"] for t in tabs if t.get("url") == url
                          and isinstance(t.get("tabId"), int))
        if not found:
            return False
        dialog.tabs = found
        return True

    def all(self, device: str) -> list[OpenDialog]:
        """The device's open dialogs, oldest first."""
        return list(self.by_device.get(device, []))

    def blocking(self, device: str, tab: int | None) -> OpenDialog | None:
        """The oldest dialog that blocks a request on ``tab`` (None: the tab is unknown, so
        any open dialog may be on it)."""
        return next((d for d in self.by_device.get(device, []) if d.blocks(tab)), None)

    def to_answer(self, device: str, tab: int | None, active: int | None) -> OpenDialog | None:
        """The dialog ``page.dialog`` answers: the oldest one placed on ``tab``, else (no
        tab named) the active tab's, else the device's oldest. None: none fits (for a
        named tab, an unplaced dialog may still be its own)."""
        dialogs = self.by_device.get(device, [])
        if tab is not None:
            return (next((d for d in dialogs if d.tabs is not None and tab in d.tabs), None)
                    or next((d for d in dialogs if d.tabs is None), None))
        if active is not None:
            mine = next((d for d in dialogs if d.tabs is not None and active in d.tabs), None)
            if mine is not None:
                return mine
        return dialogs[0] if dialogs else None

    def first(self, device: str) -> dict[str, Any] | None:
        """The device's oldest dialog as ``devices.list`` shows it, or None."""
        dialogs = self.by_device.get(device)
        return dialogs[0].public() if dialogs else None
