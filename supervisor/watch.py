"""What an action caused beyond its target, watched while it runs (supervisor/driver.py).

:func:`run_watching` runs one action's work and reports, in the driver's answer:

- ``dialog``: a JavaScript dialog opened (the answer comes at once; the input call
  finishes once the dialog is answered, and is never re-sent);
- ``popups: [{url}]``: pages the action opened.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from playwright.async_api import Page

from .dialogs import DialogTracker

log = logging.getLogger("trustbridge.driver")


async def run_watching(page: Page, work: Any, dialogs: DialogTracker) -> dict[str, Any]:
    """Run ``work()``; answer early if a dialog opens (the page is blocked until it is
    answered, so the input call would not return), and report new pages.

    Returns:
        The verb's own fields, plus ``dialog`` and ``popups`` as above.
    """
    popups: list[Page] = []

    def on_popup(popup: Page) -> None:
        popups.append(popup)

    page.context.on("page", on_popup)
    task = asyncio.ensure_future(work())
    opened = dialogs.opened_event(page)  # issue 13 item 6: this page's dialogs only
    waiter = asyncio.ensure_future(opened.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        extra: dict[str, Any] = {}
        if task.done():
            extra.update(task.result() or {})
        else:
            # A dialog blocks the page: the input was delivered, the verb finishes
            # once the dialog is answered. Never re-sent.
            task.add_done_callback(_quiet)
        if (dialog := dialogs.first_for(page)) is not None:
            extra["dialog"] = dialog
        if popups:
            await asyncio.sleep(0)  # let the popup's first navigation register
            extra["popups"] = [{"url": p.url} for p in popups]
        return extra
    finally:
        waiter.cancel()
        dialogs.discard(opened)
        page.context.remove_listener("page", on_popup)


def _quiet(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.debug("action finished after its dialog with %r", task.exception())


async def answer_file_chooser(page: Page, action: Any) -> dict[str, Any]:
    """Give ``action.files`` to the file chooser an earlier action opened on ``page``.

    NOT BUILT YET: refused with BAD_REQUEST until it is.
    """
    from bridge.protocol import errors as E
    raise E.BadRequest("No file chooser is open; give the upload a ref (a file input).")
