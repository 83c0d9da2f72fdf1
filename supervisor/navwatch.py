"""Did an action make its frame leave its document? (``postActionDocumentChanged``)

The driver wraps each action in a :class:`NavigationWatch` on the target frame. A
navigation request for that frame or one of its ancestors (an ancestor's navigation
replaces this frame too) during the action, or the frame detaching, means the refs of
the target's document are gone; the action result says
``postActionDocumentChanged: true`` so the agent takes a new snapshot instead of finding
out on its next action (design.md §5).

Playwright's element actions wait for a navigation they started to commit before they
return, so a link click reports it reliably. A navigation the page starts later (from a
timer) is not part of the action; the extension fences refs then
(``BROWSER_DOCUMENT_CHANGED``). Same-document history changes (pushState, fragment) are
not document changes here (they issue no request); a history navigation served from the
back/forward cache issues none either and is not seen.

A form submission's navigation is planned a task after the click, so on Chromium its
request sometimes comes after the action answered. :func:`watch_late` keeps listening
after a click that saw none; the bridge asks :func:`await_navigation` when the click's
receipt says a form is being submitted (bridge/after_input.py ``awaited_navigation``).
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Page, Request


class NavigationWatch:
    """Context manager: ``changed`` is true once ``frame`` or an ancestor navigated.

    Args:
        frame: the Playwright frame the action targets.
    """

    def __init__(self, frame: Frame) -> None:
        self.frame = frame
        self.page = frame.page
        self.chain: list[Frame] = []
        f: Frame | None = frame
        while f is not None:
            self.chain.append(f)
            f = f.parent_frame
        self.changed = False

    def _on_request(self, request: Request) -> None:
        try:
            if request.is_navigation_request() and request.frame in self.chain:
                self.changed = True
        except PlaywrightError:  # a request of a frame that is already gone
            return

    def __enter__(self) -> NavigationWatch:
        self.page.on("request", self._on_request)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.page.remove_listener("request", self._on_request)
        if self.frame.is_detached():
            self.changed = True


LATE_NAVIGATION_S = 2.5
"""How long after an action's answer a navigation request of its frame is still caught
(:func:`await_navigation`), s: longer than the bridge's wait (bridge/after_input.py
NAVIGATION_WAIT_MS) plus its round trips."""


class _LateNavigation:
    """Listens, after an action answered with no document change, for a navigation
    request of its frame or an ancestor (a form submission's planned navigation, which
    Chromium starts a task after the click) for LATE_NAVIGATION_S."""

    def __init__(self, watch: NavigationWatch) -> None:
        self.page = watch.page
        self.frame = watch.frame
        self.chain = watch.chain
        self.came = asyncio.Event()
        self.page.on("request", self._on_request)
        self._end = asyncio.get_running_loop().call_later(LATE_NAVIGATION_S, self.stop)

    def _on_request(self, request: Request) -> None:
        try:
            if request.is_navigation_request() and request.frame in self.chain:
                self.came.set()
        except PlaywrightError:
            return

    def stop(self) -> None:
        self._end.cancel()
        with contextlib.suppress(KeyError, ValueError):
            self.page.remove_listener("request", self._on_request)
        if _late.get(self.page) is self:
            del _late[self.page]


_late: weakref.WeakKeyDictionary[Page, _LateNavigation] = weakref.WeakKeyDictionary()


def watch_late(watch: NavigationWatch) -> None:
    """Keep catching ``watch``'s frame's navigation after its action answered (call
    before leaving the watch, so the page's request listener count never drops to zero in
    between). Replaces the page's previous late watch."""
    if (old := _late.get(watch.page)) is not None:
        old.stop()
    _late[watch.page] = _LateNavigation(watch)


async def await_navigation(frame: Frame, timeout_s: float) -> dict[str, Any]:
    """``driver.navigation``: whether a navigation request of ``frame`` or an ancestor came
    (or the frame detached) since the last action on its page answered, waiting up to
    ``timeout_s`` for it (the bridge asks when the click's receipt says a form is being
    submitted: extension/src/page/receipt.js ``navigates``).

    Returns:
        ``{"postActionDocumentChanged": bool}``; False when the page had no late watch for
        this frame (another action ran since) or nothing came within ``timeout_s``.
    """
    late = _late.get(frame.page)
    if late is None or frame not in late.chain:
        return {"postActionDocumentChanged": False}
    if not late.came.is_set() and not frame.is_detached():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(late.came.wait(), timeout_s)
    return {"postActionDocumentChanged": late.came.is_set() or frame.is_detached()}
