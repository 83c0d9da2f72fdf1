"""JavaScript dialogs (alert, confirm, prompt, beforeunload): reported, never auto-answered.

Registering a ``dialog`` listener turns off Playwright's default auto-dismiss, so a
dialog stays open until the agent answers it with an explicit call (``page.dialog``).
While one is open the page's main thread is blocked; the driver answers the action that
opened it at once (with the dialog's type and message) instead of hanging, and tells the
bridge (``dialog.opened`` / ``dialog.closed`` events) so that other requests to the device
fail fast with ``DIALOG_OPEN``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from playwright.async_api import BrowserContext, Dialog, Error as PlaywrightError, Page

from bridge.protocol import errors as E

MAX_MESSAGE_CHARS = 2000


@dataclass
class PendingDialog:
    dialog: Dialog
    info: dict[str, Any]


class DialogTracker:
    """Open dialogs of one browser context, oldest first.

    Args:
        notify: called with ``(event, params)`` when a dialog opens or the last one closes.
    """

    def __init__(self, notify: Callable[[str, dict[str, Any]], None]) -> None:
        self.notify = notify
        self.pending: list[PendingDialog] = []
        self._waiters: set[asyncio.Event] = set()

    def attach(self, context: BrowserContext) -> None:
        context.on("page", self.watch_page)
        for page in context.pages:
            self.watch_page(page)

    def watch_page(self, page: Page) -> None:
        page.on("dialog", self._on_dialog)
        page.on("close", self._on_page_closed)

    def opened_event(self) -> asyncio.Event:
        """An event set when the next dialog opens; give it back with :meth:`discard`."""
        ev = asyncio.Event()
        self._waiters.add(ev)
        return ev

    def discard(self, ev: asyncio.Event) -> None:
        self._waiters.discard(ev)

    def _on_dialog(self, dialog: Dialog) -> None:
        info = {
            "type": dialog.type,
            "message": dialog.message[:MAX_MESSAGE_CHARS],
            "defaultValue": dialog.default_value,
            "url": dialog.page.url if dialog.page else None,
        }
        self.pending.append(PendingDialog(dialog, info))
        for ev in self._waiters:
            ev.set()
        self.notify("dialog.opened", info)

    def _on_page_closed(self, page: Page) -> None:
        before = len(self.pending)
        self.pending = [p for p in self.pending if p.dialog.page is not page]
        if before and not self.pending:
            self.notify("dialog.closed", {})

    async def answer(self, accept: bool, prompt_text: str | None = None) -> dict[str, Any]:
        """Accept (with ``prompt_text`` for a prompt) or dismiss the oldest dialog.

        Returns:
            ``{"type", "message", "accepted"}`` of the dialog answered.

        Raises:
            BadRequest: no dialog is open.
        """
        if not self.pending:
            raise E.BadRequest("No JavaScript dialog is open.")
        item = self.pending.pop(0)
        with contextlib.suppress(PlaywrightError):  # the page may have gone meanwhile
            if accept:
                await item.dialog.accept(prompt_text) if prompt_text is not None \
                    else await item.dialog.accept()
            else:
                await item.dialog.dismiss()
        # The caller announces dialog.closed (before it answers) when nothing is pending.
        return {"type": item.info["type"], "message": item.info["message"], "accepted": accept}
