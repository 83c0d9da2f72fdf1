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
"""

from __future__ import annotations

from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Request


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
