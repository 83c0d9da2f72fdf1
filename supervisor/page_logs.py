"""Console messages, network requests, viewport size and PDF of a page (driver; issue 15
item 1, Playwright MCP's browser_console_messages, browser_network_requests,
browser_resize and browser_pdf_save).

:func:`attach` is called for every browser context (supervisor/runner.py). Each page of
it gets a :class:`PageLog`: its console messages and uncaught page errors, and its
requests, each in a ring buffer of :data:`MAX_ENTRIES` (the oldest entries go first), and
the count of its main-frame navigations. A page's log is forgotten when the page closes.

Nothing new is exposed to the page: the log is fed by Playwright's own ``console``,
``pageerror``, ``request``, ``response``, ``requestfinished`` and ``requestfailed``
events, which Playwright's protocol connection receives whether or not anyone listens
(docs/security.md "What a page can see of us", row 11: console arguments are not
serialised by reading them). Headers and bodies are read on demand, from the browser's
network layer, never from the page.

Levels are Playwright MCP's (its ``consoleLevelForMessageType``): ``assert`` and
``error`` are errors, ``warning`` a warning, ``debug``, ``trace``, ``clear``, groups and
profiles debug, everything else info. An uncaught page error is an error. "Static"
requests are Playwright MCP's too: a request that is neither ``fetch`` nor ``xhr`` and
succeeded (status below 400, no failure).
"""

from __future__ import annotations

import base64
import collections
import time
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import BrowserContext, ConsoleMessage, Frame, Page, Request
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Response as PwResponse

from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.limits import check_result
from trustbridge.bridge.protocol.models import (
    DriverConsoleParams,
    DriverEmulateMediaParams,
    DriverNetworkParams,
    DriverPdfParams,
    DriverResizeParams,
)

from .errors import map_error, map_playwright_errors
from .isolated_eval import evaluate_isolated

NARROW_CONSOLE = ("Ask for less: a more severe level (error), only since the last navigation "
                  "(no all), or clear the kept messages.")
NARROW_NETWORK = ("Ask for less: leave out static resources, only since the last navigation "
                  "(no all), one request by its id, or without its body.")
MAX_ENTRIES = 1000
"""Console messages, and separately requests, kept per page; older ones are dropped."""
MAX_TEXT_CHARS = 10_000
"""Characters of one console message's text (or error stack) kept."""
MAX_BODY_CHARS = 100_000
"""Characters of a response body returned by ``page.network`` with ``body``."""
READ_TIMEOUT_S = 10.0
"""How long the viewport read-back after a resize may take, s."""

LEVELS = ("error", "warning", "info", "debug")
"""Most to least severe; a level asked for includes every more severe one."""
_LEVEL_OF_TYPE = {
    "assert": "error", "error": "error", "warning": "warning",
    "clear": "debug", "debug": "debug", "endGroup": "debug", "profile": "debug",
    "profileEnd": "debug", "startGroup": "debug", "startGroupCollapsed": "debug",
    "trace": "debug",
}
_TEXTUAL = ("text/", "application/json", "application/javascript", "application/xml",
            "application/x-www-form-urlencoded", "+json", "+xml")


def level_of(kind: str) -> str:
    """The level of a console message type (``log`` → ``info``; see the module doc)."""
    return _LEVEL_OF_TYPE.get(kind, "info")


@dataclass
class _RequestEntry:
    id: int
    request: Request
    nav: int
    at: float
    response: PwResponse | None = None
    failure: str | None = None

    def static(self) -> bool:
        ok = self.failure is None and self.response is not None and self.response.status < 400
        return ok and self.request.resource_type not in ("fetch", "xhr")

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "method": self.request.method,
                               "url": self.request.url,
                               "resourceType": self.request.resource_type, "at": self.at}
        if self.response is not None:
            out.update(status=self.response.status, statusText=self.response.status_text)
        if self.failure is not None:
            out["failure"] = self.failure
        return out


@dataclass
class PageLog:
    """What one page logged and requested, bounded by :data:`MAX_ENTRIES` each."""

    nav: int = 0
    """Main-frame navigations so far (the epoch of each entry)."""
    console: collections.deque[dict[str, Any]] = field(
        default_factory=lambda: collections.deque(maxlen=MAX_ENTRIES))
    requests: collections.deque[_RequestEntry] = field(
        default_factory=lambda: collections.deque(maxlen=MAX_ENTRIES))
    next_id: int = 1
    by_request: dict[Request, _RequestEntry] = field(default_factory=dict)
    """Requests not finished yet → their entry (finished ones leave; bounded by the
    buffer too: an entry dropped from it is dropped here)."""

    def add_console(self, entry: dict[str, Any]) -> None:
        self.console.append({**entry, "nav": self.nav})

    def add_request(self, request: Request) -> None:
        if len(self.requests) == MAX_ENTRIES:
            self.by_request.pop(self.requests[0].request, None)
        entry = _RequestEntry(self.next_id, request, self.nav, _now_ms())
        self.next_id += 1
        self.requests.append(entry)
        self.by_request[request] = entry

    def navigated(self, frame: Frame) -> None:
        """A main-frame navigation committed: a new epoch. The document request that
        brought it (already logged) belongs to the new epoch."""
        self.nav += 1
        for entry in reversed(self.requests):
            req = entry.request
            if req.is_navigation_request() and req.frame == frame and req.url == frame.url:
                entry.nav = self.nav
                break


_logs: dict[Page, PageLog] = {}
"""Every open page of every attached context → its log."""


def _now_ms() -> float:
    return round(time.time() * 1000, 1)


def attach(context: BrowserContext) -> None:
    """Start recording console messages, page errors and requests of every page of
    ``context``, now and later; each page's log is forgotten when it closes."""
    for page in context.pages:
        _watch(page)
    context.on("page", _watch)
    # A browser that dies may not say "close" for each page: drop the context's pages.
    context.on("close", lambda _ctx: [_logs.pop(p, None) for p in list(_logs)
                                      if p.context == context])


def _watch(page: Page) -> None:
    if page in _logs:
        return
    log = _logs[page] = PageLog()

    def on_console(msg: ConsoleMessage) -> None:
        where = msg.location or {}
        log.add_console({"type": msg.type, "text": msg.text[:MAX_TEXT_CHARS],
                         "url": where.get("url") or None,
                         "line": where.get("lineNumber"), "at": _now_ms()})

    def on_page_error(err: PlaywrightError) -> None:
        # Playwright MCP's page-error entry: type error, the message; its stack shown.
        log.add_console({"type": "error", "text": (err.message or str(err))[:MAX_TEXT_CHARS],
                         "stack": (err.stack or "")[:MAX_TEXT_CHARS] or None,
                         "pageError": True, "at": _now_ms()})

    def on_response(response: PwResponse) -> None:
        if (entry := log.by_request.get(response.request)) is not None:
            entry.response = response

    def on_done(request: Request) -> None:
        log.by_request.pop(request, None)

    def on_failed(request: Request) -> None:
        if (entry := log.by_request.pop(request, None)) is not None:
            entry.failure = request.failure or "failed"

    def on_nav(frame: Frame) -> None:
        if frame == page.main_frame:
            log.navigated(frame)

    page.on("console", on_console)
    page.on("pageerror", on_page_error)
    page.on("request", log.add_request)
    page.on("response", on_response)
    page.on("requestfinished", on_done)
    page.on("requestfailed", on_failed)
    page.on("framenavigated", on_nav)
    page.on("close", lambda _page: _logs.pop(page, None))


def _log_of(frame: Frame) -> PageLog:
    """The log of the frame's page (an empty one for a page opened before attach)."""
    page = frame.page
    if page not in _logs:
        _watch(page)
    return _logs[page]


async def console(frame: Frame, params: DriverConsoleParams) -> dict[str, Any]:
    """The page's console messages and uncaught errors of ``params.level`` or more severe.

    Returns:
        ``{messages: [{type, text, url?, line?, stack?, pageError?, at}], total, errors,
        warnings}``, oldest first; ``at`` ms since the epoch (the supervisor's clock);
        ``line`` 0-based as Playwright reports it. The counts are of every message kept
        for the same span (since the last navigation, or ``all``), whatever the level.
        With ``clear`` the page's messages are forgotten after this answer.

    Raises:
        ResultTooLarge: the listing is over RESULT_CAP_BYTES (1 MB) as JSON
            (bridge/protocol/limits.py); nothing was cleared.
    """
    log = _log_of(frame)
    kept = [m for m in log.console if params.all or m["nav"] == log.nav]
    worst = LEVELS.index(params.level)
    shown = [{k: v for k, v in m.items() if k != "nav" and v is not None}
             for m in kept if LEVELS.index(level_of(m["type"])) <= worst]
    levels = [level_of(m["type"]) for m in kept]
    out = {"messages": shown, "total": len(kept), "errors": levels.count("error"),
           "warnings": levels.count("warning")}
    # issue 32 item 3: measured here; over the cap nothing is sent and nothing cleared.
    check_result(out, "The console listing", NARROW_CONSOLE)
    if params.clear:
        log.console.clear()
    return out


async def network(frame: Frame, params: DriverNetworkParams) -> dict[str, Any]:
    """The page's requests since its last navigation (``all``: since the page opened), or
    one request in detail.

    Returns:
        ``{requests: [{id, method, url, resourceType, at, status?, statusText?,
        failure?}], hiddenStatic}`` oldest first (``id`` counts the page's requests from
        1 and stays the request's number while the page is open); with ``requestId``:
        ``{request: {..., requestHeaders, responseHeaders?, postData?, durationMs?,
        responseBody?, responseBodyTruncated?}}``.

    Raises:
        BadRequest: ``requestId`` is not a request of this page that is still kept.
        ResultTooLarge: the answer is over RESULT_CAP_BYTES (1 MB) as JSON
            (bridge/protocol/limits.py); nothing was cleared.
    """
    log = _log_of(frame)
    if params.requestId is not None:
        entry = next((r for r in log.requests if r.id == params.requestId), None)
        if entry is None:
            raise E.BadRequest(
                f"Request {params.requestId} is not among this page's requests (they are "
                "numbered since the page opened; the oldest beyond "
                f"{MAX_ENTRIES} are dropped).", {"requestId": params.requestId})
        detail = {"request": await _detail(entry, params.body)}
        check_result(detail, "The request's detail", NARROW_NETWORK)
        return detail
    current = [r for r in log.requests if params.all or r.nav == log.nav]
    shown = [r for r in current if params.includeStatic or not r.static()]
    out = {"requests": [r.summary() for r in shown], "hiddenStatic": len(current) - len(shown)}
    # issue 32 item 3: measured here; over the cap nothing is sent and nothing cleared.
    check_result(out, "The network listing", NARROW_NETWORK)
    if params.clear:
        log.requests.clear()
        log.by_request.clear()
    return out


async def _detail(entry: _RequestEntry, body: bool) -> dict[str, Any]:
    out = entry.summary()
    req, resp = entry.request, entry.response
    try:
        out["requestHeaders"] = await req.all_headers()
        if resp is not None:
            out["responseHeaders"] = await resp.all_headers()
    except PlaywrightError:  # the network records went away: the headers Playwright has
        out["requestHeaders"] = req.headers
        if resp is not None:
            out["responseHeaders"] = resp.headers
    if (post := req.post_data) is not None:
        out["postData"] = post[:MAX_BODY_CHARS]
    timing = req.timing
    if timing and timing.get("responseEnd", -1) >= 0:
        out["durationMs"] = round(timing["responseEnd"])
    if body and resp is not None:
        kind = (out.get("responseHeaders") or {}).get("content-type", "")
        if not any(t in kind for t in _TEXTUAL):
            out["responseBodyOmitted"] = f"not text ({kind or 'no content-type'})"
        else:
            try:
                text = await resp.text()
            except PlaywrightError as exc:  # no body (a redirect, 204) or evicted
                out["responseBodyOmitted"] = str(exc).splitlines()[0][:200]
            else:
                out["responseBody"] = text[:MAX_BODY_CHARS]
                if len(text) > MAX_BODY_CHARS:
                    out["responseBodyTruncated"] = len(text)
    return out


async def resize(frame: Frame, params: DriverResizeParams) -> dict[str, Any]:
    """Set the page's viewport to ``width`` x ``height`` CSS px (``page.set_viewport_size``)
    and read the size back from the page (its isolated world: page script cannot forge it).

    Returns:
        ``{width, height}``: ``innerWidth`` / ``innerHeight`` of the top-level window
        after the resize, CSS px.

    Raises:
        BrowserOperationUncertain: the page reports another size than the one set.
    """
    page = frame.page
    with map_playwright_errors():
        await page.set_viewport_size({"width": params.width, "height": params.height})
        width, height = await evaluate_isolated(page.main_frame, None,
                                                "[innerWidth, innerHeight]", READ_TIMEOUT_S)
    if (width, height) != (params.width, params.height):
        raise E.BrowserOperationUncertain(
            f"The viewport was set to {params.width}x{params.height} but the page reports "
            f"{width}x{height} CSS px.", {"width": width, "height": height})
    return {"width": width, "height": height}


_MEDIA_JS = """() => {
  const m = (q) => matchMedia(q).matches;
  return {
    colorScheme: m('(prefers-color-scheme: dark)') ? 'dark' : 'light',
    reducedMotion: m('(prefers-reduced-motion: reduce)') ? 'reduce' : 'no-preference',
    forcedColors: m('(forced-colors: active)') ? 'active' : 'none',
    contrast: m('(prefers-contrast: more)') ? 'more' : m('(prefers-contrast: less)') ? 'less'
      : m('(prefers-contrast: custom)') ? 'custom' : 'no-preference',
    media: m('print') ? 'print' : 'screen',
  };
}"""
_FEATURES = {"colorScheme": "color_scheme", "reducedMotion": "reduced_motion",
             "forcedColors": "forced_colors", "contrast": "contrast", "media": "media"}
"""Protocol name → keyword of Playwright's ``page.emulate_media``."""


async def emulate_media(frame: Frame, params: DriverEmulateMediaParams) -> dict[str, Any]:
    """Emulate the media features given (``page.emulate_media``; ``"no-override"`` is
    Playwright's ``"null"``: the emulation ends), then read what the page's
    ``matchMedia`` answers, in an isolated world (page script cannot forge it).

    Returns:
        ``{colorScheme, reducedMotion, forcedColors, contrast, media}``: what the page
        matches now (``light``/``dark``, ``reduce``/``no-preference``, ``active``/``none``,
        ``more``/``less``/``custom``/``no-preference``, ``screen``/``print``).

    Raises:
        BadRequest: the browser cannot emulate a feature given (Playwright's refusal), or
            took the call and the page still does not match a value that was set.
    """
    page = frame.page
    given = {name: getattr(params, name) for name in _FEATURES
             if getattr(params, name) is not None}
    kwargs = {_FEATURES[n]: ("null" if v == "no-override" else v) for n, v in given.items()}
    try:
        if kwargs:
            await page.emulate_media(**kwargs)
    except PlaywrightError as exc:
        raise E.BadRequest("This browser could not emulate those media features: "
                           f"{str(exc).splitlines()[0][:200]}.") from exc
    with map_playwright_errors():
        now = await evaluate_isolated(page.main_frame, None, _MEDIA_JS, READ_TIMEOUT_S)
    wrong = {n: now[n] for n, v in given.items()
             if v not in ("no-override", "no-preference") and now.get(n) != v}
    if wrong:
        # Read back, so not uncertain: the browser took the call and did not apply it
        # (Firefox over WebDriver BiDi, Playwright 1.62, applies none of them).
        raise E.BadRequest(
            f"This browser did not apply the emulation: its page still matches {wrong} "
            f"(asked: { {n: given[n] for n in wrong} }).", {"matches": now})
    return now


async def pdf(frame: Frame, params: DriverPdfParams) -> dict[str, Any]:
    """The page printed to PDF (``page.pdf``, Playwright's defaults: Letter, print media).
    Headless Chromium and Firefox over WebDriver BiDi print (both tested,
    tests/e2e/test_mcp_devtools.py); Playwright refuses headed Chromium.

    Returns:
        ``{pdf: base64, bytes}``.

    Raises:
        BadRequest: the browser cannot print to PDF (Playwright's refusal, quoted).
    """
    page = frame.page
    try:
        data = await page.pdf()
    except PlaywrightError as exc:
        text = str(exc)
        if "pdf" in text.lower() and ("support" in text.lower() or "headless" in text.lower()):
            raise E.BadRequest(
                "This browser cannot save a page as PDF here (headless Chromium and "
                f"Firefox can): {text.splitlines()[0][:200]}.") from exc
        raise map_error(exc) from exc
    if not data.startswith(b"%PDF"):
        raise E.InternalError("The browser returned something that is not a PDF.")
    return {"pdf": base64.b64encode(data).decode(), "bytes": len(data)}
