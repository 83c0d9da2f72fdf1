"""What an action caused beyond its target, watched while it runs (supervisor/driver.py).

:func:`run_watching` runs one action's work and reports, in the driver's answer:

- ``dialog``: a JavaScript dialog opened (the answer comes at once; the input call
  finishes once the dialog is answered, and is never re-sent);
- ``popups: [{url}]``: pages the action opened;
- ``downloads: [{suggestedFilename, path, bytes}]``: downloads it started, each saved
  under :func:`downloads_dir` (issue 15 item 3); the page stays where it was;
- ``navigationWasDownload: true``: every navigation request the action started was for
  the URL of one of its downloads, so the page kept its document (``postActionDocumentChanged``, set by
  the driver's NavigationWatch from the request alone, is then not a document change);
- ``fileChooser: {multiple}``: a file chooser it opened (issue 15 item 1). The chooser
  is held for its page until :func:`answer_file_chooser` gives it files (an upload
  action with no ref), another chooser replaces it, its input's document is replaced
  (the page navigated: :func:`_check_chooser`), or the page closes. One announced
  within :data:`CHOOSER_TAIL_S` after the answer is held too, and reported by the next
  action with ``late: true`` (unless that action answers it).

A chooser announced after the answer, and the sign that makes the bridge wait for it:
the watch reads the page's choosers after :data:`CLICK_CHOOSER_ROUND_TRIPS` round trip
after a click (:data:`CHOOSER_ROUND_TRIPS` after a key press, which has no receipt), but
Chromium's chooser comes only once the browser opened it and Playwright resolved its
input element (more protocol round trips), so under load it can come after the answer.
Waiting longer after every click would cost every click (issue 18), so the wait is paid
only on a sign: the extension's receipt says ``fileInput`` when a file input got a click
right after the press (a "Choose file" button whose handler calls ``input.click()``;
extension/src/page/receipt.js). The bridge then calls ``driver.fileChooser``, served by
:func:`await_file_chooser`: the chooser held late for the page (its late flag cleared, so
the next action does not report it again), waiting for it up to the bridge's bound
(2000 ms, bridge/after_input.py FILE_CHOOSER_WAIT_MS) on an event set by the page's
``filechooser`` listener; ``{}`` when none came (the result then claims none: true).

When a download starts: Chromium announces a download a few ms *after* the click that
started it returned (measured 1-6 ms), so the watch waits for one (up to
:data:`DOWNLOAD_START_S`) only when the action gave a sign of it: a navigation request
of the page aborted during the action (a response the browser turned into a download;
``net::ERR_ABORTED``, Firefox ``NS_BINDING_ABORTED``; then up to
:data:`DOWNLOAD_AFTER_ABORT_S`), a navigation of the action that has neither committed
nor failed when the action returned (until it does, or a download starts). After a
click on an element that followed a download link, or whose handler clicked one, the
bridge waits instead, on its receipt's download sign (extension/src/page/receipt.js),
through :func:`await_download`: Chromium announces such a download after the click's
answer. No other action waits. A download that
still starts within :data:`DOWNLOAD_TAIL_S` after the answer (a script's delayed
download) is saved all the same and reported by the next action on that page, with
``late: true``.

Each download is copied out of Playwright's temporary file into the downloads folder by
supervisor/downloads.py. Chromium's persistent context accepts downloads by default
(Playwright's ``acceptDownloads``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import Download, FileChooser, Frame, Page, Request
from playwright.async_api import Error as PlaywrightError

from trustbridge.bridge.protocol import errors as E

from .dialogs import DialogTracker
from .downloads import configure_downloads, downloads_dir, reports, save
from .upload import refusal_of

__all__ = ["answer_file_chooser", "await_download", "await_file_chooser", "configure_downloads",
           "downloads_dir", "run_watching"]

log = logging.getLogger("trustbridge.driver")

DOWNLOAD_START_S = 1.0
"""How long after an action that gave a sign of a download to wait for it to start, s."""
DOWNLOAD_AFTER_ABORT_S = 0.3
"""How long after a navigation of the action was aborted to wait for its download (the
browser announces it within ms of the abort; a 204 or a stopped load never does), s."""
DOWNLOAD_TAIL_S = 2.0
"""How long after the answer a download the page starts is still kept, s (reported by
the next action on that page)."""
CHOOSER_ROUND_TRIPS = 2
"""Round trips to the page after a key press (or typing that submits) before its file
choosers are read: Playwright resolves a chooser's input element (one more protocol round
trip) before announcing it, so one round trip was not always enough on Chromium under
load."""
CLICK_CHOOSER_ROUND_TRIPS = 1
"""The same after a click (once the look for a focused download link; since protocol
6 the receipt's download sign says that, and the round trip is a bare one). A chooser a click
opens later is not lost: the click's receipt says ``fileInput`` and the bridge asks for
it (:func:`await_file_chooser`); a key press has no receipt, so it keeps
CHOOSER_ROUND_TRIPS. Measured (headless Chromium, 25 clicks each, load 3-4): the chooser
of a direct click on a file input and of a button calling ``input.click()`` was reported
by every click's result, 72-88 % of them through ``driver.fileChooser`` (2 % with two
round trips); a plain button click took 8.9 against 9.6 ms median."""
CHOOSER_TAIL_S = 2.0
"""How long after an answer a file chooser that opens is still held for the agent, s."""
PROBE_S = 0.5
"""Bound on the one look at the page after an action (focused element, round trip), s."""
ABORTED = ("ERR_ABORTED", "NS_BINDING_ABORTED")
"""How a navigation request that became a download fails (Chromium, Firefox)."""
GONE_DOCUMENT = re.compile(r"Execution context was destroyed|Cannot find context with "
                           r"specified id|JSHandle is disposed|no such node", re.IGNORECASE)
"""Playwright's errors (Chromium; Firefox BiDi's ``no such node``) for a chooser whose
input's document is gone (``FileChooser.set_files``)."""
@dataclass
class _PageState:
    """What :mod:`watch` holds for one page between actions."""

    chooser: FileChooser | None = None
    catching: list[list[FileChooser]] = field(default_factory=list)
    """One list per action running on the page: the choosers it opened."""
    listening: bool = False
    held_until: float = 0.0
    """Until when (loop time, s) a chooser that opens after an answer is still held."""
    late_chooser: bool = False
    """A chooser opened after the last answer and is held, not reported yet."""
    late_came: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when a late chooser is held (:func:`await_file_chooser` waits on it)."""
    late: list[asyncio.Task[dict[str, Any]]] = field(default_factory=list)
    """Saves of downloads that started after an answer, for the next answer."""
    download_came: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when a download starts after an answer (:func:`await_download` waits on it)."""
    tail: asyncio.Task[None] | None = None
    tail_listener: Callable[[Download], None] | None = None
    chooser_check: asyncio.Task[None] | None = None
    """The look, after a frame of the page navigated, at whether the held chooser's
    input still lives (:func:`_check_chooser`)."""

    def end_tail(self, page: Page) -> None:
        """Stop keeping late downloads (the next action's are its own)."""
        if self.tail is not None:
            self.tail.cancel()
            self.tail = None
        if self.tail_listener is not None:
            _off(page, "download", self.tail_listener)
            self.tail_listener = None


_pages: weakref.WeakKeyDictionary[Page, _PageState] = weakref.WeakKeyDictionary()


def _state(page: Page) -> _PageState:
    """The page's state; from its first action on (:func:`_listen`), its file choosers
    are caught.

    The ``filechooser`` listener stays on the page once added: Playwright intercepts a
    page's file choosers while any listener is on, and over WebDriver BiDi (Firefox) a
    listener added again after the last one was removed was not told of the next
    chooser (measured). A chooser that opens while no action runs is not held (a script
    opening one at some later time is no action of the agent's)."""
    state = _pages.get(page)
    if state is None:
        state = _pages[page] = _PageState()
    return state


def _listen(page: Page, state: _PageState) -> None:
    """Catch the page's file choosers from now on (see :func:`_state`)."""
    def on_chooser(chooser: FileChooser) -> None:
        for caught in state.catching:
            caught.append(chooser)
        if not state.catching and asyncio.get_running_loop().time() < state.held_until:
            # Announced after the click's answer (under load): held all the same, so an
            # upload with no ref answers it; the next action's result reports it (or the
            # click's own, when the bridge asks: await_file_chooser).
            _hold_late(state, chooser)

    def on_navigated(_frame: Frame) -> None:
        if state.chooser is not None:  # each navigation is judged (a check may be past it)
            state.chooser_check = asyncio.ensure_future(_check_chooser(state, state.chooser))

    page.on("filechooser", on_chooser)
    page.on("framenavigated", on_navigated)
    page.on("close", lambda closed: _pages.pop(closed, None))  # its chooser dies too
    state.listening = True


async def _check_chooser(state: _PageState, chooser: FileChooser) -> None:
    """Drop the held ``chooser`` when its input's document is gone: a frame of the page
    navigated (``framenavigated`` fires for a same-document navigation too, so the event
    alone does not say). Playwright's chooser is bound to its input's execution context:
    once that document is replaced, ``set_files`` fails ("Execution context was
    destroyed") and no later action may report the chooser as open. One bounded round
    trip; a page too busy to answer keeps its chooser (the upload maps the failure then,
    :func:`answer_file_chooser`)."""
    try:
        await asyncio.wait_for(chooser.element.evaluate("e => e.isConnected"), PROBE_S)
    except TimeoutError:
        pass
    except PlaywrightError:
        _drop_chooser(state, chooser)


def _drop_chooser(state: _PageState, chooser: FileChooser) -> None:
    """Hold ``chooser`` no more (its document is gone), if it is still the one held."""
    if state.chooser is chooser:
        state.chooser, state.late_chooser = None, False
        state.late_came.clear()


async def _chooser_checked(state: _PageState) -> None:
    """Wait for the last :func:`_check_chooser` (bounded by PROBE_S)."""
    check, state.chooser_check = state.chooser_check, None
    if check is not None:
        with contextlib.suppress(Exception):
            await check


async def run_watching(page: Page, work: Any, dialogs: DialogTracker,
                       action: Any = None,
                       on_done: Callable[[], None] | None = None) -> dict[str, Any]:
    """Run ``work()``; answer early if a dialog opens (the page is blocked until it is
    answered, so the input call would not return), and report new pages, downloads and
    a file chooser.

    Args:
        action: the protocol action ``work`` performs, when the caller passes it: a
            click on an element makes CLICK_CHOOSER_ROUND_TRIPS round trips after it,
            anything else that may activate an element CHOOSER_ROUND_TRIPS, typing and
            hovering none (any action counts as activating when None).
        on_done: called once ``work`` finished without a dialog opening, before the looks
            for downloads and choosers that follow it (the driver's ``driver.dispatched``
            signal: bridge/dispatch_signals.py).

    Returns:
        The verb's own fields, plus ``dialog``, ``popups``, ``downloads`` and
        ``fileChooser`` as in the module docstring.
    """
    state = _state(page)
    if not state.listening:
        _listen(page, state)
        # Playwright turns the page's chooser interception on asynchronously; one round
        # trip lets it take effect before this first action (measured: without it,
        # Chromium missed the chooser of the first click about 1 time in 3).
        await _round_trip(page)
    popups: list[Page] = []
    saves: list[asyncio.Task[dict[str, Any]]] = []
    choosers: list[FileChooser] = []
    navigations: list[Request] = []  # navigation requests of the page's frames
    aborted: list[Request] = []  # those aborted (Chromium: one that became a download)
    failed: list[Request] = []  # those that failed, aborted or not
    committed: list[Frame] = []  # frames that committed a new document meanwhile
    changed = asyncio.Event()  # a download, a commit or a failure came

    def on_navigated(frame: Frame) -> None:
        committed.append(frame)
        changed.set()

    def on_request(request: Request) -> None:
        with contextlib.suppress(PlaywrightError):  # a request of a frame already gone
            if request.is_navigation_request():
                navigations.append(request)

    def on_popup(popup: Page) -> None:
        popups.append(popup)

    urls: set[str] = set()  # of this action's downloads

    def on_download(download: Download) -> None:
        saves.append(asyncio.ensure_future(save(download)))
        urls.add(download.url)
        changed.set()

    def on_failed(request: Request) -> None:
        try:
            if request.is_navigation_request():
                failed.append(request)
                if any(code in (request.failure or "") for code in ABORTED):
                    aborted.append(request)
                changed.set()
        except PlaywrightError:
            return

    reported: FileChooser | None = None  # the chooser this answer names as its own
    upload = getattr(action, "kind", None) == "upload"  # it answers a chooser, opens none
    state.end_tail(page)  # this action's downloads are its own from now on
    page.context.on("page", on_popup)
    page.on("download", on_download)
    state.catching.append(choosers)
    page.on("requestfailed", on_failed)
    page.on("request", on_request)
    page.on("framenavigated", on_navigated)
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
        elif on_done is not None and task.done():
            on_done()
        if dialog is None and _may_activate(action):  # typing, hovering, selecting open no chooser
            # No look for a focused download link: a click's receipt says whether it
            # followed one (extension/src/page/receipt.js, the download sign) and the
            # bridge then asks for its download (await_download).
            # The first round trip always runs (it lets the click's navigation request,
            # download or popup reach the driver); the later ones only until a chooser came.
            trips = CLICK_CHOOSER_ROUND_TRIPS if _receipted(action) else CHOOSER_ROUND_TRIPS
            for trip in range(trips):
                if trip and choosers:
                    break
                await _round_trip(page)

            def download_may_come() -> float:
                """How long a download may still be waited for (0: none is expected)."""
                if saves:
                    return 0.0
                if any(r not in failed and r.frame not in committed for r in navigations):
                    return DOWNLOAD_START_S  # neither committed nor failed: it may become one
                return DOWNLOAD_AFTER_ABORT_S if aborted else 0.0

            now = asyncio.get_running_loop().time
            began = now()
            while (wait := download_may_come()) > 0:
                changed.clear()
                left = began + wait - now()
                if left <= 0:
                    break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), left)
        if popups:
            await asyncio.sleep(0)  # let the popup's first navigation register
            extra["popups"] = [{"url": p.url} for p in popups]
        await _chooser_checked(state)  # a held chooser whose document went is no more
        if choosers and extra.get("via") != "file-chooser":  # an upload answers its own
            state.chooser = reported = choosers[-1]
            extra["fileChooser"] = {"multiple": choosers[-1].is_multiple()}
        elif state.late_chooser and state.chooser is not None \
                and extra.get("via") != "file-chooser":
            extra["fileChooser"] = {"multiple": state.chooser.is_multiple(), "late": True}
        state.late_chooser = False
        state.late_came.clear()
        state.held_until = asyncio.get_running_loop().time() + CHOOSER_TAIL_S
        downloads = await reports(state.late, late=True) + await reports(saves)
        state.late = []
        if downloads:
            extra["downloads"] = downloads
            if navigations and all(r.url in urls for r in navigations):
                # Every navigation the action started became a download (Chromium aborts
                # its request, Firefox completes it): the document stayed, though
                # NavigationWatch counts the request as a document change.
                extra["navigationWasDownload"] = True
        return extra
    finally:
        waiter.cancel()
        dialogs.discard(opened)
        page.context.remove_listener("page", on_popup)
        state.catching.remove(choosers)
        if choosers and choosers[-1] is not reported and not upload:
            # Announced while the answer was being put together (after the look at
            # choosers): held late, not lost.
            _hold_late(state, choosers[-1])
        for event, listener in (("download", on_download), ("requestfailed", on_failed),
                                ("request", on_request), ("framenavigated", on_navigated)):
            _off(page, event, listener)
        _start_tail(page, state)


def _hold_late(state: _PageState, chooser: FileChooser) -> None:
    """Hold ``chooser``, announced after an answer, for the agent (see the module
    docstring) and wake :func:`await_file_chooser`."""
    state.chooser, state.late_chooser = chooser, True
    state.late_came.set()


async def await_file_chooser(page: Page, timeout_s: float) -> dict[str, Any]:
    """The file chooser a click opened on ``page`` after its answer (``driver.fileChooser``,
    asked by the bridge when the click's receipt says a file input was clicked).

    Args:
        timeout_s: how long to wait for one, s (the bridge's bound: 2 s).

    Returns:
        ``{"fileChooser": {"multiple": bool}}`` for the chooser held late for the page
        (its late flag cleared: the next action does not report it again; it stays held
        for an upload with no ref), or ``{}`` when none came within ``timeout_s``.
    """
    state = _pages.get(page)
    if state is None:
        return {}
    if not state.late_chooser:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(state.late_came.wait(), timeout_s)
    if not state.late_chooser or state.chooser is None:
        return {}
    state.late_chooser = False
    state.late_came.clear()
    return {"fileChooser": {"multiple": state.chooser.is_multiple()}}


async def await_download(page: Page, timeout_s: float) -> dict[str, Any]:
    """The downloads a click started on ``page`` after its answer (``driver.download``,
    asked by the bridge when the click's receipt says ``download``: the click followed a
    download link, or the page's handler clicked one; the browser announces it after the
    click returned, with no navigation request to wait on).

    Args:
        timeout_s: how long to wait for the first, s (the bridge's bound: 2 s).

    Returns:
        ``{"downloads": [{suggestedFilename, path, bytes}]}`` for those saved since the
        answer (no longer reported late by the next action), or ``{}`` when none came.
    """
    state = _pages.get(page)
    if state is None:
        return {}
    if not state.late:
        state.download_came.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(state.download_came.wait(), timeout_s)
    if not state.late:
        return {}
    downloads, state.late = await reports(state.late), []
    return {"downloads": downloads}


def _start_tail(page: Page, state: _PageState) -> None:
    """Keep listening for downloads for DOWNLOAD_TAIL_S after an answer; each one that
    starts is saved and waits in ``state.late`` for the next answer on the page."""
    def on_download(download: Download) -> None:
        state.late.append(asyncio.ensure_future(save(download)))
        state.download_came.set()

    async def end() -> None:
        await asyncio.sleep(DOWNLOAD_TAIL_S)
        _off(page, "download", on_download)
        if state.tail_listener is on_download:
            state.tail_listener = None

    page.on("download", on_download)
    state.tail_listener = on_download
    state.tail = asyncio.ensure_future(end())


def _off(page: Page, event: str, listener: Callable[..., None]) -> None:
    with contextlib.suppress(KeyError, ValueError):
        page.remove_listener(event, listener)


def _may_activate(action: Any) -> bool:
    """Whether ``action`` may activate an element, and so open a file chooser or start a
    download: a click, a key press, mouse input at a point, typing that submits (any
    action when the caller did not say which)."""
    kind = getattr(action, "kind", None)
    return action is None or kind in ("click", "press", "mouse") \
        or (kind == "type" and bool(getattr(action, "submit", False)))


def _receipted(action: Any) -> bool:
    """Whether ``action`` is a click on an element, for which the bridge arms a delivery
    receipt whose ``fileInput`` sign makes it ask for a chooser announced after the answer
    (bridge/executor.py). Mouse input at a point keeps CHOOSER_ROUND_TRIPS: its receipt
    exists only when the extension found an element at the point."""
    return getattr(action, "kind", None) == "click"


async def _round_trip(page: Page) -> None:
    """One bounded script round trip to the page: an event the browser sent before its
    answer (a file chooser that opened during the click) has then been delivered.
    Firefox over BiDi announced a chooser ~35 ms after the click returned in 1 of 6
    clicks, and always before this round trip's answer (6 of 6, measured); a page that
    does not answer is left alone. An action that opened no chooser pays
    CHOOSER_ROUND_TRIPS of them (median 2 ms each, p90 3-5 ms, headless Chromium and
    Firefox on this 2-core machine, measured)."""
    with contextlib.suppress(PlaywrightError, TimeoutError):
        await asyncio.wait_for(page.evaluate("0"), PROBE_S)


def _quiet(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.debug("action finished after its dialog with %r", task.exception())


async def answer_file_chooser(page: Page, action: Any) -> dict[str, Any]:
    """Give ``action.files`` to the file chooser an earlier action opened on ``page``
    (Playwright MCP's click → chooser → ``browser_file_upload {paths}``); no files cancels
    the chooser (``set_files([])``, as Playwright MCP does for ``browser_file_upload``
    without paths: the page sees the chooser dismissed).

    Returns:
        ``{via: "file-chooser", files: N}``; N is 0 for a cancelled chooser.

    Raises:
        BadRequest: no chooser is open on this page (none was opened, it was answered
            already, or its page navigated), or several files for a chooser that takes
            one, or paths the chooser's input refuses (a folder for a plain input, files
            for a ``webkitdirectory`` one). The chooser stays open after this error.
        BrowserDocumentChanged: the chooser's input's document was replaced before this
            upload saw it (Playwright: "Execution context was destroyed"); nothing was
            uploaded and the chooser is held no more.
    """
    state = _pages.get(page)
    if state is not None:
        await _chooser_checked(state)
    chooser = state.chooser if state is not None else None
    if chooser is None:
        raise E.BadRequest("No file chooser is open on this tab. Click the control that "
                           "opens one first, or give the upload a ref (a file input).")
    if len(action.files) > 1 and not chooser.is_multiple():
        raise E.BadRequest(f"The open file chooser takes one file; {len(action.files)} "
                           "were given. Nothing was uploaded.",
                           {"files": len(action.files), "multiple": False})
    try:
        await chooser.set_files(action.files)
    except PlaywrightError as exc:
        if (refused := refusal_of(exc)) is not None:  # e.g. a folder: the chooser stays
            raise refused from exc
        if not GONE_DOCUMENT.search(str(exc)):
            raise
        # Its input's document was replaced (the page navigated) before the check above
        # saw it: the chooser is gone with it; no file reached any page.
        _drop_chooser(state, chooser)
        raise E.BrowserDocumentChanged(
            "The file chooser belonged to a document this tab has left (it navigated): "
            "the chooser is gone and nothing was uploaded.",
            {"ref": None, "reason": "file chooser's document replaced"},
            next_step="Take a new snapshot, click the control that opens a file chooser "
            "again, then upload.") from exc
    state.chooser = None  # used once, as the browser's own chooser is
    return {"via": "file-chooser", "files": len(action.files)}


