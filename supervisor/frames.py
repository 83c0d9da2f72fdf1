"""Frame tokens (design.md §3): stamp every frame's document, map token → Playwright Frame.

The supervisor writes a fresh random token into ``document.documentElement`` as
``data-mcjug="<token>"``, from an isolated world, when a page appears, a frame attaches, a
frame navigates to a new document, and on ``domcontentloaded`` (for documents that had no
root element at commit). A document that page script rewrote with ``document.open()``
(no event here) gets its token back from the content script, which copies it from the
removed root to the new one (extension/src/page/reopen.js, design.md §3).
The extension reads the attribute in the frame that owns a ref; the driver turns it back
into the ``Frame`` here. A re-stamped frame's old token is dropped; a closed page's tokens
are all forgotten. A crashed page's tokens (or, after the browser died, every token) are
remembered as crashed, so a ref taken before the crash fails BROWSER_CRASHED (issue 13
item 3) rather than FRAME_TOKEN_UNKNOWN.

Stamping, navigation and an action request are not one transaction: this gives detection
(an unknown token is an error, never a guess), not a proof that no race exists.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections import OrderedDict
from typing import Any, Literal

from playwright.async_api import BrowserContext, Error as PlaywrightError, Frame, Page

from trustbridge.bridge.protocol.errors import (
    BrowserCrashed,
    BrowserDocumentChanged,
    ElementTargetAmbiguous,
    FrameTokenUnknown,
    TrustbridgeError,
)
from trustbridge.bridge.protocol.models import FRAME_TOKEN_ATTRIBUTE

from .isolated_eval import evaluate_isolated

log = logging.getLogger("trustbridge.frames")

ATTRIBUTE = FRAME_TOKEN_ATTRIBUTE
CRASHED_KEPT = 1024
"""How many tokens of crashed pages are remembered (oldest dropped first)."""
Crash = Literal["renderer", "browser"]

# Keeps the token when the document is the one stamped before (same-document navigation,
# a repeated event); otherwise writes the fresh one. Returns the token in force, or null
# when the document got no root element within ROOT_WAIT_MS. A document without a root (a
# frame's document between page script's document.open() and its write(), which may come
# in a later task) is waited for: no load event follows document.open(), so this stamp may
# be the frame's last. Runs in an isolated world (supervisor/isolated_eval.py), so the
# page's own Element.prototype.setAttribute, which page script may have patched, never sees
# the call or the token (docs/security.md).
_STAMP_JS = """() => {
  const [attr, old, fresh, waitMs] = %s;
  const stamp = (root) => {
    const current = root.getAttribute(attr);
    if (old && current === old) return old;
    root.setAttribute(attr, fresh);
    return fresh;
  };
  if (document.documentElement) return stamp(document.documentElement);
  return new Promise((resolve) => {
    const done = (value) => { watcher.disconnect(); clearTimeout(limit); resolve(value); };
    const watcher = new MutationObserver(() => {
      if (document.documentElement) done(stamp(document.documentElement));
    });
    watcher.observe(document, { childList: true });
    const limit = setTimeout(() => done(null), waitMs);
  });
}"""
ROOT_WAIT_MS = 3000
"""How long a stamp waits for a document without a root element to get one, ms."""
STAMP_TIMEOUT_S = 5.0
BLANK_SETTLE_S = 2.0
"""How long :meth:`FrameRegistry.blank_page` waits for this browser's count of blank
pages to agree with the extension's before it refuses, s."""
"""Bound on one stamp, s (it waits at most ROOT_WAIT_MS; this only bounds a stuck page)."""


class FrameRegistry:
    """token → Frame for every frame of a browser context."""

    def __init__(self) -> None:
        self._by_token: dict[str, Frame] = {}
        self._by_frame: dict[Frame, str] = {}
        self._locks: dict[Frame, asyncio.Lock] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._crashed: OrderedDict[str, Crash] = OrderedDict()
        self._contexts: list[BrowserContext] = []

    def __len__(self) -> int:
        return len(self._by_token)

    def attach(self, context: BrowserContext) -> None:
        """Watch ``context``: its current pages and every page it opens later."""
        self._contexts.append(context)
        context.on("page", self.watch_page)
        for page in context.pages:
            self.watch_page(page)

    def watch_page(self, page: Page) -> None:
        """Stamp ``page``'s frames now and whenever they attach or navigate."""
        page.on("frameattached", self._spawn_stamp)
        page.on("framenavigated", self._spawn_stamp)
        page.on("framedetached", self.forget_frame)
        page.on("domcontentloaded", lambda p: [self._spawn_stamp(f) for f in p.frames])
        page.on("close", self.forget_page)
        page.on("crash", self.page_crashed)
        for frame in page.frames:
            self._spawn_stamp(frame)

    def frame_for(self, token: str) -> Frame:
        """Return the Frame holding ``token``.

        Raises:
            BrowserCrashed: it was stamped in a page whose renderer crashed, or in a
                browser that died (``details.what``: ``renderer`` / ``browser``).
            FrameTokenUnknown: no live frame holds it (never stamped here, re-stamped
                since, or its page closed).
        """
        what = self._crashed.get(token)
        if what is not None:
            raise BrowserCrashed(
                "The page of this ref crashed (its renderer died)." if what == "renderer"
                else "The browser of this ref died and was started again.",
                {"what": what, "tabId": None})
        frame = self._by_token.get(token)
        if frame is None or frame.is_detached():
            raise FrameTokenUnknown(
                "The frame of this ref is not known to the input driver (it navigated, "
                "closed or was never stamped). Take a new snapshot and use its refs.",
                {"frameToken": token[:8] + "…"},
            )
        return frame

    async def stamp(self, frame: Frame) -> str | None:
        """Stamp ``frame`` unless its current document already holds its token.

        Returns:
            The token in force, or None if the frame could not be stamped (detached,
            no root element within ROOT_WAIT_MS, or its execution context went away).
        """
        lock = self._locks.setdefault(frame, asyncio.Lock())
        async with lock:
            if frame.is_detached():
                return None
            old = self._by_frame.get(frame)
            fresh = secrets.token_hex(16)
            # Registered before it is written, so a resolve that reads it at once finds it.
            self._by_token[fresh] = frame
            try:
                got = await evaluate_isolated(
                    frame, None, _STAMP_JS % json.dumps([ATTRIBUTE, old, fresh, ROOT_WAIT_MS]),
                    STAMP_TIMEOUT_S)
            except (PlaywrightError, TrustbridgeError) as exc:
                self._by_token.pop(fresh, None)
                log.debug("stamp failed for %s: %s", frame.url, exc)
                return None
            if got != fresh:
                self._by_token.pop(fresh, None)
                return got
            if old is not None:
                self._by_token.pop(old, None)
            self._by_frame[frame] = fresh
            return fresh

    async def blank_page(self, index: int, count: int) -> str:
        """The token of the top frame of the page at ``index`` among the ``count`` pages
        whose top document is about:blank, oldest first (as Playwright lists a context's
        pages, in the order they were opened), stamped now if it holds none. The
        extension runs no script in a top-level about:blank, so it names such a tab by
        its place among its blank tabs instead (driver.blankPage).

        Raises:
            ElementTargetAmbiguous: this browser shows another number of blank pages than
                the extension counted (a tab opening or navigating meanwhile): the place
                names no page for sure, and nothing is guessed.
            BrowserDocumentChanged: the page's top frame could not be stamped (it
                navigated away from about:blank meanwhile).
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + BLANK_SETTLE_S
        while True:
            pages = [p for c in self._contexts for p in c.pages
                     if not p.is_closed() and p.main_frame.url in ("", "about:blank")]
            if len(pages) == count or loop.time() >= deadline:
                break
            # A tab the extension already counts reaches Playwright's page list a moment
            # later (its "page" event), and a closing one leaves it a moment later:
            # right after browser_tabs new the counts disagree for a few ms.
            await asyncio.sleep(0.05)
        if len(pages) != count or not 0 <= index < count:
            raise ElementTargetAmbiguous(
                f"The tab shows about:blank, and the driver sees {len(pages)} blank "
                f"page(s) where the extension counted {count}: it cannot tell which is "
                "this tab's, so nothing was sent.", {"candidates": len(pages)},
                next_step="Navigate this tab to a page first (browser_navigate), or "
                "close the other blank tabs, then retry.")
        top = pages[index].main_frame
        token = self._by_frame.get(top) or await self.stamp(top)
        if token is None:
            raise BrowserDocumentChanged("The blank tab's page changed before it could be "
                                         "reached (it navigated or closed).", {})
        return token

    def forget_frame(self, frame: Frame) -> None:
        """Drop a detached frame's token."""
        token = self._by_frame.pop(frame, None)
        if token is not None:
            self._by_token.pop(token, None)
        self._locks.pop(frame, None)

    def forget_page(self, page: Page) -> None:
        """Drop every token of a closed page."""
        for frame in [f for f, _ in self._by_frame.items() if f.page is page]:
            self.forget_frame(frame)

    def page_crashed(self, page: Page) -> None:
        """Remember ``page``'s tokens as crashed (renderer), then drop them."""
        self._mark_crashed([t for f, t in self._by_frame.items() if f.page is page], "renderer")
        self.forget_page(page)

    def browser_gone(self) -> None:
        """The browser died: remember every token as crashed (browser) and drop them all
        (the pages' own close events may come later, or never)."""
        self._mark_crashed(list(self._by_frame.values()), "browser")
        for frame in list(self._by_frame):
            self.forget_frame(frame)
        self._by_token.clear()

    def _mark_crashed(self, tokens: list[str], what: Crash) -> None:
        for token in tokens:
            self._crashed[token] = what
        while len(self._crashed) > CRASHED_KEPT:
            self._crashed.popitem(last=False)

    def _spawn_stamp(self, frame: Frame) -> None:
        task = asyncio.ensure_future(self.stamp(frame))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def settle(self) -> None:
        """Wait for stamps in flight (used by tests and start-up)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

