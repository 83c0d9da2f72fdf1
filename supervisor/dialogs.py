"""JavaScript dialogs (alert, confirm, prompt, beforeunload): reported, never auto-answered.

Registering a ``dialog`` listener turns off Playwright's default auto-dismiss, so a
dialog stays open until the agent answers it with an explicit call (``page.dialog``).
While one is open the page's main thread is blocked; the driver answers the action that
opened it at once (with the dialog's type and message) instead of hanging, and tells the
bridge (``dialog.opened`` / ``dialog.closed`` events) so that other requests to the device
fail fast with ``DIALOG_OPEN``.

A dialog blocks only its own page (issue 13, item 6), so every dialog carries an id
(``dialogId``, counted per tracker) and its page's URL: the bridge places it on the tab
showing that URL (bridge/dialogs.py), asks for it by id (``driver.dialog {dialogId}``),
and an action on another page neither waits for it nor reports it. A dialog whose page
closes or loads another document (the browser dismisses it then) is reported closed.

A page shows at most one dialog at a time: when a page opens a new one while an older one
of that page is recorded open, the browser has already closed the older one (Chromium
dismisses an open dialog when a navigation starts, and the page's script went on to the
next ``confirm()``), so the older one is reported closed first. An answer Playwright
refuses (it raises) is never reported as given: see :meth:`DialogTracker.answer`.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from playwright.async_api import BrowserContext, Dialog, Page
from playwright.async_api import Error as PlaywrightError

from trustbridge.bridge.protocol import errors as E

MAX_MESSAGE_CHARS = 2000


@dataclass
class PendingDialog:
    id: int
    dialog: Dialog
    page: Page | None
    info: dict[str, Any]


class DialogTracker:
    """Open dialogs of one browser context, oldest first.

    Args:
        notify: called with ``(event, params)``: ``dialog.opened``, ``dialog.closed`` and
            ``page.opened`` (a page the driver can now see, dialogs included).
    """

    def __init__(self, notify: Callable[[str, dict[str, Any]], None]) -> None:
        self.notify = notify
        self.pending: list[PendingDialog] = []
        self._waiters: dict[asyncio.Event, Page | None] = {}
        self._ids = itertools.count(1)

    def attach(self, context: BrowserContext) -> None:
        # The context's listener, not each page's: a page that alerts while it is being
        # set up (before a "page" handler could add its own listener) would otherwise be
        # auto-dismissed by Playwright, unseen (tests/e2e/test_dialogs.py alert loop).
        context.on("dialog", self._on_dialog)
        context.on("page", self.watch_page)
        for page in context.pages:
            self.watch_page(page)

    def watch_page(self, page: Page) -> None:
        page.on("close", self._on_page_closed)
        page.on("framenavigated", lambda frame: self._on_navigated(page, frame))
        # Playwright reports a page once it has set it up; from then on its dialogs are
        # seen. The bridge waits for this before it loads a URL into a tab it just
        # opened (bridge/executor.py ``_new_tab_then_load``).
        self.notify("page.opened", {})

    def opened_event(self, page: Page | None = None) -> asyncio.Event:
        """An event set when the next dialog opens (on ``page`` only, when given); give it
        back with :meth:`discard`."""
        ev = asyncio.Event()
        self._waiters[ev] = page
        return ev

    def discard(self, ev: asyncio.Event) -> None:
        self._waiters.pop(ev, None)

    def first_for(self, page: Page) -> dict[str, Any] | None:
        """The info of ``page``'s oldest open dialog (what an action there reports)."""
        return next((p.info for p in self.pending if p.page is page), None)

    def _on_dialog(self, dialog: Dialog) -> None:
        page = dialog.page
        dialog_id = next(self._ids)
        info = {
            "type": dialog.type,
            "message": dialog.message[:MAX_MESSAGE_CHARS],
            "defaultValue": dialog.default_value,
            "url": page.url if page else None,
        }
        # One dialog per page: an older one of this page is already gone (see above).
        self._drop(page)
        self.pending.append(PendingDialog(dialog_id, dialog, page, info))
        for ev, only in self._waiters.items():
            if only is None or only is page:
                ev.set()
        self.notify("dialog.opened", {**info, "dialogId": dialog_id})

    def _drop(self, page: Page | None) -> None:
        for item in [p for p in self.pending if p.page is page]:
            self.pending.remove(item)
            self.notify("dialog.closed", {"dialogId": item.id})

    def _on_page_closed(self, page: Page) -> None:
        self._drop(page)

    def _on_navigated(self, page: Page, frame: Any) -> None:
        # A new top document: the browser dismissed the old document's dialogs (the way
        # out of an alert loop). A dialog the new document raises comes after this event.
        if frame is page.main_frame:
            self._drop(page)

    async def answer(self, accept: bool, prompt_text: str | None = None,
                     dialog_id: int | None = None) -> dict[str, Any]:
        """Accept (with ``prompt_text`` for a prompt) or dismiss a dialog: the one with
        ``dialog_id``, else the oldest.

        Returns:
            ``{"type", "message", "accepted", "dialogId"}`` of the dialog answered.

        Raises:
            BadRequest: no dialog is open (or none with ``dialog_id``), or it was already
                closed (``details.alreadyClosed``): the answer reached no dialog.
            DialogOpen: the browser refused the answer (``details.refused``) and the dialog
                stays open (a navigation of its page is pending).
        """
        item = next((p for p in self.pending if dialog_id in (None, p.id)), None)
        if item is None:
            raise E.BadRequest("No JavaScript dialog is open." if dialog_id is None else
                               "That JavaScript dialog is no longer open.",
                               {"dialogId": dialog_id})
        self.pending.remove(item)
        try:
            if accept:
                await item.dialog.accept(prompt_text) if prompt_text is not None \
                    else await item.dialog.accept()
            else:
                await item.dialog.dismiss()
        except PlaywrightError as exc:
            # Nothing was answered. Either the dialog is gone (its page closed, or
            # Playwright already answered it), or Chromium refuses to answer it: after a
            # navigation of its page started, CDP's Page.handleJavaScriptDialog fails with
            # "Not attached to an active page" while the dialog stays open (checked by hand
            # against headless Chromium; tests/e2e/test_dialog_sync.py).
            gone = (item.page is None or item.page.is_closed()
                    or "already handled" in str(exc))
            if gone:
                raise E.BadRequest(
                    f"The {item.info['type']} dialog {item.info['message'][:200]!r} was "
                    "already closed; this answer reached no dialog.",
                    {"dialogId": item.id, "alreadyClosed": True, "reason": str(exc)[:300]},
                ) from exc
            self.pending.insert(0, item)  # still shown: it keeps blocking its page
            raise E.DialogOpen(
                f"The browser refused the answer to the {item.info['type']} dialog "
                f"{item.info['message'][:200]!r}; nothing was answered. Chromium cannot "
                "answer a dialog while a navigation of its page is pending; close that tab "
                "to escape (other tabs still work).",
                {"dialogId": item.id, "refused": True, "dialog": {"type": item.info["type"]},
                 "reason": str(exc)[:300]},
            ) from exc
        # The caller announces dialog.closed {dialogId} before it answers.
        return {"type": item.info["type"], "message": item.info["message"], "accepted": accept,
                "dialogId": item.id}
