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
import itertools
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
"""How long after an action's answer a navigation of its frame is still followed
(:func:`await_navigation`), s: longer than the bridge's wait (bridge/after_input.py
NAVIGATION_WAIT_MS) plus its round trips."""
FIRST_REQUEST_S = 0.3
"""How long after the answer the planned navigation's request may take to show before
:func:`await_navigation` says none came, s (Chromium starts it a task after the click: a
few ms; a ``new FormData(form)`` in a handler also fires the receipt's sign, with no
navigation to come)."""
NO_CONTENT = (204, 205)
"""Statuses of a navigation response that leaves the document in place (HTML §7.4.2.3)."""


class _LateNavigation:
    """What became, after an action answered with no document change, of its frame's (or
    an ancestor's) navigation requests for LATE_NAVIGATION_S: a commit, a detach, or each
    request's end without one (failed or aborted: a download, an error; a 204 / 205)."""

    def __init__(self, watch: NavigationWatch, watch_id: str) -> None:
        self.id = watch_id
        self.page = watch.page
        self.frame = watch.frame
        self.chain = watch.chain
        self.began = asyncio.get_running_loop().time()
        self.pending: set[Request] = set()
        self.requests = 0
        self.committed = False
        self.changed = asyncio.Event()  # a request came or ended, or a commit: look again
        _PageEvents.of(self.page).late = self
        self._end = asyncio.get_running_loop().call_later(LATE_NAVIGATION_S, self.stop)

    def _ours(self, request: Request) -> bool:
        try:
            return request.is_navigation_request() and request.frame in self.chain
        except PlaywrightError:  # a request of a frame already gone
            return False

    def _on_request(self, request: Request) -> None:
        if self._ours(request):
            self.pending.add(request)
            self.requests += 1
            self.changed.set()

    def _on_ended(self, request: Request) -> None:
        if request in self.pending:
            self.pending.discard(request)
            self.changed.set()

    def _on_finished(self, request: Request) -> None:
        # A 204 / 205 ends the navigation with no commit; one that commits ends in
        # framenavigated (before or after this).
        if request in self.pending:
            asyncio.ensure_future(self._finished(request))

    async def _finished(self, request: Request) -> None:
        with contextlib.suppress(PlaywrightError):
            response = await request.response()
            if response is not None and response.status in NO_CONTENT:
                self._on_ended(request)

    def _on_commit(self, frame: Frame) -> None:
        # After one of our requests only: Playwright also says framenavigated for a
        # same-document move (pushState, a fragment), which replaces nothing.
        if frame in self.chain and self.requests:
            self.committed = True
            self.changed.set()

    def verdict(self) -> bool | None:
        """True: the document changed (committed, detached, or a request still on its
        way); False: every request ended without a commit; None: nothing seen yet."""
        if self.committed or self.frame.is_detached():
            return True
        if self.pending:
            return None
        return False if self.requests else None

    def stop(self) -> None:
        self._end.cancel()
        events = _PageEvents.of(self.page)
        if events.late is self:
            events.late = None
        if _late.get(self.page) is self:
            del _late[self.page]
        _by_id.pop(self.id, None)


class _PageEvents:
    """The page's request and commit events, listened to once for the page's life and
    handed to its current late watch: adding and removing listeners per click toggled
    Playwright's event subscriptions (a protocol message each way), measured +0.5 ms a
    click."""

    _all: weakref.WeakKeyDictionary[Page, _PageEvents] = weakref.WeakKeyDictionary()

    def __init__(self, page: Page) -> None:
        self.late: _LateNavigation | None = None
        page.on("request", lambda r: self.late and self.late._on_request(r))
        page.on("requestfailed", lambda r: self.late and self.late._on_ended(r))
        page.on("requestfinished", lambda r: self.late and self.late._on_finished(r))
        page.on("framenavigated", lambda f: self.late and self.late._on_commit(f))

    @classmethod
    def of(cls, page: Page) -> _PageEvents:
        events = cls._all.get(page)
        if events is None:
            events = cls._all[page] = cls(page)
        return events


_late: weakref.WeakKeyDictionary[Page, _LateNavigation] = weakref.WeakKeyDictionary()
_by_id: dict[str, _LateNavigation] = {}
_ids = itertools.count(1)


def stop_late(page: Page) -> None:
    """An action begins on ``page``: the late watch of the one before ends (what comes now
    is this action's)."""
    if (old := _late.get(page)) is not None:
        old.stop()


def watch_late(watch: NavigationWatch) -> str:
    """Keep following ``watch``'s frame's navigations after its action answered (call
    before leaving the watch, so the page's request listener count never drops to zero in
    between). Replaces the page's previous late watch.

    Returns:
        The late watch's id, for ``driver.navigation`` (the bridge passes it back: a watch
        answers only for its own action).
    """
    stop_late(watch.page)
    watch_id = f"n{next(_ids)}"
    _late[watch.page] = _by_id[watch_id] = _LateNavigation(watch, watch_id)
    return watch_id


async def await_navigation(watch_id: str, timeout_s: float) -> dict[str, Any]:
    """``driver.navigation``: whether the action whose answer gave ``watch_id`` changed its
    frame's document after all (the bridge asks when the click's receipt says a form is
    being submitted: extension/src/page/receipt.js ``navigates``).

    Waits up to FIRST_REQUEST_S after the answer for a navigation request of the frame or
    an ancestor, then up to ``timeout_s`` in all for its outcome: a commit (or the frame
    detaching) is a change; a request that failed, was aborted (it became a download:
    watch.py reports that download) or got a 204 / 205 is none; one still on its way at the
    end counts as a change, as NavigationWatch counts a request during the action.

    Returns:
        ``{"postActionDocumentChanged": bool}``; False for an unknown or ended watch
        (another action ran on the page since, or LATE_NAVIGATION_S passed).
    """
    late = _by_id.get(watch_id)
    if late is None:
        return {"postActionDocumentChanged": False}
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while (verdict := late.verdict()) is None:
        until = deadline if late.requests else min(deadline, late.began + FIRST_REQUEST_S)
        if (left := until - loop.time()) <= 0:
            break
        late.changed.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(late.changed.wait(), left)
    if verdict is None:
        verdict = bool(late.pending)  # still on its way: the document is being replaced
    return {"postActionDocumentChanged": verdict}
