"""Page tools of Playwright MCP's core (and ``--caps pdf``) that are not input:
browser_console_messages, browser_network_requests, browser_network_request,
browser_resize, browser_close and browser_pdf_save (issue 15 item 1).

Console, network, resize and PDF are served by the input driver from Playwright's own
events and calls (supervisor/page_logs.py): they need the supervisor's driver and answer
DEVICE_NOT_CONNECTED on a browser without one. Names, argument names, defaults and the
text of the results follow Playwright MCP (microsoft/playwright-mcp README, v0.0.79, and
its tool sources). Differences, each also said in the tool's description where it
matters to the model:

- files (``filename``) are written only inside the output directory (``--output-dir``;
  default :data:`DEFAULT_OUTPUT_DIR`); a name that leaves it is BAD_REQUEST;
- browser_network_requests numbers a page's requests from 1 since the page opened, and a
  number stays the request's while the page is open (Playwright MCP renumbers the list);
  ``filter`` is a Python regular expression (Playwright MCP: JavaScript's);
- browser_network_request ``part: response-body`` returns text bodies only; a binary
  body is named, not saved;
- browser_close closes what this server started, never a user's browser: with the
  embedded browser (no bridge was running) it stops that browser and its bridge, and the
  next call starts a new one; on a shared bridge it closes the current tab only (a blank
  tab is opened first when it is the last one, so the user's browser stays open);
- at most 1,000 console messages and 1,000 requests are kept per page (the oldest go).
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ..files import default_output_dir, private_dir, write_private
from ..protocol import errors as E
from ..protocol.models import ResizeParams
from ..sdk import Browser
from .response import Response
from .session import Connection
from .tool import Tool, derive, with_next_step

DEFAULT_OUTPUT_DIR: Path | None = None
"""Where files go when ``--output-dir`` was not given; None: the per-user directory of
:func:`bridge.files.default_output_dir` (0700, never a fixed shared /tmp path: another
local user could pre-create it or a link there). Tests set it."""

FILENAME_FIELD = (str | None, Field(default=None, min_length=1, max_length=255,
                                    description="File name to save it to, relative to the "
                                    "output directory. If not given, it is returned as text."))


# ----------------------------------------------------------------------------- files


def output_dir(conn: Connection) -> Path:
    """The output directory: ``--output-dir`` (bridge/mcp/options.py), else
    :data:`DEFAULT_OUTPUT_DIR`, else the per-user default (bridge/files.py)."""
    chosen = getattr(getattr(conn, "options", None), "output_dir", None)
    if chosen:
        return Path(chosen)
    return DEFAULT_OUTPUT_DIR if DEFAULT_OUTPUT_DIR is not None else default_output_dir()


def upload_roots(conn: Connection) -> list[Path] | None:
    """The folders ``browser_file_upload`` takes files from: the output directory and
    ``--allowed-roots``; None with ``--allow-unrestricted-file-access`` (any path; the
    state directory is refused either way: bridge/files.py)."""
    options = getattr(conn, "options", None)
    if getattr(options, "unrestricted_file_access", False):
        return None
    return [output_dir(conn), *getattr(options, "allowed_roots", ())]


def default_name(prefix: str, ext: str) -> str:
    """``<prefix>-<ISO time>.<ext>``, Playwright MCP's default file name
    (``page-2026-12-01T12-57-35-123Z.pdf``)."""
    now = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return f"{prefix}-{re.sub(r'[:.]', '-', now)}.{ext}"


def save_file(conn: Connection, filename: str, data: bytes | str) -> Path:
    """Write ``data`` to ``filename`` inside the output directory (folders made).

    Returns:
        The absolute path written.

    Raises:
        BadRequest: ``filename`` is absolute, leaves the output directory (``..``, a
            symlink), holds a NUL character, or the file cannot be written.
    """
    chosen = output_dir(conn)
    if not getattr(getattr(conn, "options", None), "output_dir", None):
        private_dir(chosen)  # the default: this user's, 0700
    root = chosen.resolve()
    if "\x00" in filename:  # no OS takes it (resolve() would raise ValueError)
        raise E.BadRequest(f"The file name {filename!r} holds a NUL character, which no "
                           "file name can; give a name such as 'page.png'.",
                           {"outputDir": str(root)})
    path = (root / filename).resolve()
    if Path(filename).is_absolute() or not path.is_relative_to(root) or path == root:
        raise E.BadRequest(f"The file name {filename!r} must stay inside the output "
                           f"directory {root}; give a relative name such as "
                           "'page.png'.", {"outputDir": str(root)})
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_private(path, data)  # 0600: screenshots show what the page showed
    except OSError as exc:
        raise E.BadRequest(f"Cannot write {path}: {exc.strerror or exc}.",
                           {"path": str(path)}) from exc
    return path


def _text_or_file(conn: Connection, response: Response, what: str, text: str,
                  filename: str | None) -> None:
    if filename:
        path = save_file(conn, filename, text)
        response.add_result(f"Saved {what} to {path}")
    else:
        response.add_result(text)


# ----------------------------------------------------------------------------- console

ConsoleArgs = derive(
    "ConsoleArgs", "Which console messages.",
    level=(Literal["error", "warning", "info", "debug"],
           Field(default="info", description="Level of the console messages to return. Each "
                 "level includes the messages of more severe levels. Defaults to \"info\".")),
    all=(bool | None, Field(default=None, description="Return all console messages since "
                            "the page opened, not just since the last navigation.")),
    filename=FILENAME_FIELD,
)


def console_line(msg: dict[str, Any]) -> str:
    """One message as Playwright MCP prints it: ``[TYPE] text @ url:line`` (``line`` as
    the browser reports it, 0-based); an uncaught page error as its stack."""
    if msg.get("pageError"):
        # Chromium's stack starts with "Error: <message>"; Firefox's lists frames only.
        message, stack = msg.get("text", ""), msg.get("stack") or ""
        return stack if message and message in stack else f"Error: {message}\n{stack}".strip()
    line = f"[{str(msg.get('type', 'log')).upper()}] {msg.get('text', '')}"
    if msg.get("url"):
        line += f" @ {msg['url']}:{msg.get('line', 0)}"
    return line


async def _console(conn: Connection, args: Any, response: Response) -> None:
    tab = await conn.tab()
    got = await tab.console(args.level, all=bool(args.all))
    messages = got.get("messages") or []
    total = got.get("total", len(messages))
    header = (f"Total messages: {total} (Errors: {got.get('errors', 0)}, Warnings: "
              f"{got.get('warnings', 0)})")
    lines = [header]
    if len(messages) != total:
        lines.append(f"Returning {len(messages)} messages for level \"{args.level}\"")
    text = "\n".join([*lines, "", *map(console_line, messages)]).rstrip()
    _text_or_file(conn, response, "the console messages", text, args.filename)


# ----------------------------------------------------------------------------- network

RequestsArgs = derive(
    "RequestsArgs", "Which requests.",
    static=(bool, Field(default=False, description="Whether to include successful static "
                        "resources like images, fonts, scripts, etc. Defaults to false.")),
    filter=(str | None, Field(default=None, max_length=1000, description="Only return "
                              "requests whose URL matches this regexp (e.g. \"/api/.*user\").")),
    all=(bool | None, Field(default=None, description="Return all network requests since "
                            "the page opened, not just since the last navigation. Defaults "
                            "to false.")),
    filename=FILENAME_FIELD,
)

PARTS = ("request-headers", "request-body", "response-headers", "response-body")

RequestArgs = derive(
    "RequestArgs", "Which request, and which part of it.",
    index=(int, Field(ge=1, description="The number of the request, as printed by "
                      "browser_network_requests.")),
    part=(Literal[PARTS] | None, Field(default=None, description="Return only this part "
                                       "of the request. Omit to return full details.")),
    filename=FILENAME_FIELD,
)


def request_line(req: dict[str, Any]) -> str:
    """``[METHOD] url => [status] statusText`` or ``=> [FAILED] reason`` (Playwright MCP)."""
    line = f"[{str(req.get('method', '')).upper()}] {req.get('url', '')}"
    if req.get("status") is not None:
        line += f" => [{req['status']}] {req.get('statusText', '')}".rstrip()
    elif req.get("failure"):
        line += f" => [FAILED] {req['failure']}"
    return line


async def _requests(conn: Connection, args: Any, response: Response) -> None:
    try:
        pattern = re.compile(args.filter) if args.filter else None
    except re.error as exc:
        raise E.BadRequest(f"filter is not a regular expression: {exc}.") from exc
    tab = await conn.tab()
    got = await tab.network(include_static=args.static, all=bool(args.all))
    lines = [f"{r['id']}. {request_line(r)}" for r in got.get("requests") or []
             if pattern is None or pattern.search(str(r.get("url", "")))]
    hidden = got.get("hiddenStatic") or 0
    if hidden:
        lines.append(f"\nNote: {hidden} static request{'s' if hidden != 1 else ''} not "
                     f"shown, run with \"static\" option to see "
                     f"{'them' if hidden != 1 else 'it'}.")
    if not lines:
        lines = ["No network requests since the page " +
                 ("opened." if args.all else "loaded.")]
    _text_or_file(conn, response, "the network requests", "\n".join(lines).strip("\n"),
                  args.filename)


def _headers(headers: dict[str, str] | None) -> list[str]:
    return [f"{k}: {v}" for k, v in (headers or {}).items()]


def request_details(req: dict[str, Any]) -> str:
    """The details block of Playwright MCP's browser_network_request."""
    lines = [f"#{req['id']} {request_line(req).split(' => ')[0]}", "", "  General"]
    if req.get("status") is not None:
        lines.append(f"    status:    [{req['status']}] {req.get('statusText', '')}".rstrip())
    elif req.get("failure"):
        lines.append(f"    status:    [FAILED] {req['failure']}")
    if req.get("durationMs") is not None:
        lines.append(f"    duration:  {req['durationMs']}ms")
    lines.append(f"    type:      {req.get('resourceType', '')}")
    kind = (req.get("responseHeaders") or {}).get("content-type")
    if kind:
        lines.append(f"    mimeType:  {kind.split(';')[0].strip()}")
    for title, key in (("Request headers", "requestHeaders"),
                       ("Response headers", "responseHeaders")):
        if req.get(key):
            lines += ["", f"  {title}", *("    " + h for h in _headers(req[key]))]
    tips = []
    if req.get("postData"):
        tips.append('Call browser_network_request with part="request-body" to read the '
                    "request body.")
    if req.get("status") is not None and req["status"] not in (204, 304) \
            and not 100 <= req["status"] < 200:
        tips.append('Call browser_network_request with part="response-body" to read the '
                    "response body.")
    if tips:
        lines += ["", *tips]
    return "\n".join(lines)


def _part(req: dict[str, Any], part: str) -> str:
    number = f"Request #{req['id']}"
    if part == "request-headers":
        return "\n".join(_headers(req.get("requestHeaders")))
    if part == "request-body":
        return req["postData"] if req.get("postData") is not None else \
            f"{number}: the browser reported no request body."
    if req.get("status") is None:
        return f"{number} has no response ({req.get('failure') or 'not answered yet'})."
    if part == "response-headers":
        return "\n".join(_headers(req.get("responseHeaders")))
    if "responseBody" in req:
        body = req["responseBody"]
        if req.get("responseBodyTruncated"):
            body += f"\n… (cut: {req['responseBodyTruncated']} characters in all)"
        return body
    return f"{number}'s response body is not available: {req.get('responseBodyOmitted')}."


async def _request(conn: Connection, args: Any, response: Response) -> None:
    tab = await conn.tab()
    try:
        got = await tab.network(request_id=args.index, body=args.part == "response-body")
    except E.BadRequest as err:
        raise E.BadRequest(f"Request #{args.index} not found. Use browser_network_requests "
                           "to see available numbers.", err.details) from err
    req = got["request"]
    text = _part(req, args.part) if args.part else request_details(req)
    _text_or_file(conn, response, f"request #{args.index}", text, args.filename)


# ----------------------------------------------------------------------------- resize, pdf

ResizeArgs = derive(
    "ResizeArgs", "The new viewport size.",
    take={ResizeParams: ["width", "height"]},
    describe={"width": "Width of the browser window", "height": "Height of the browser window"},
)


async def _resize(conn: Connection, args: Any, response: Response) -> None:
    tab = await conn.tab()
    got = await tab.resize(args.width, args.height)
    response.add_result(f"Resized the viewport to {got['width']}x{got['height']} CSS px "
                        "(as the page reports its innerWidth and innerHeight).")


EmulateMediaArgs = derive(
    "EmulateMediaArgs", "Media features to emulate; omitted ones are left unchanged, null "
    "clears an override.",
    colorScheme=(Literal["light", "dark"] | None, Field(
        default=None, description="Emulates the prefers-color-scheme media feature")),
    reducedMotion=(Literal["reduce", "no-preference"] | None, Field(
        default=None, description="Emulates the prefers-reduced-motion media feature")),
    forcedColors=(Literal["active", "none"] | None, Field(
        default=None, description="Emulates the forced-colors media feature")),
    contrast=(Literal["more", "no-preference"] | None, Field(
        default=None, description="Emulates the prefers-contrast media feature")),
    media=(Literal["screen", "print"] | None, Field(
        default=None, description="Changes the CSS media type of the page")),
)
MEDIA_FEATURES = ("colorScheme", "reducedMotion", "forcedColors", "contrast", "media")


async def _emulate_media(conn: Connection, args: Any, response: Response) -> None:
    # Playwright MCP's contract: an argument given as null clears that override, one
    # left out keeps it (so "given" is read from the fields the client sent).
    given = {name: ("no-override" if getattr(args, name) is None else getattr(args, name))
             for name in MEDIA_FEATURES if name in args.model_fields_set}
    tab = await conn.tab()
    try:
        now = await tab.emulate_media(**{
            {"colorScheme": "color_scheme", "reducedMotion": "reduced_motion",
             "forcedColors": "forced_colors"}.get(k, k): v for k, v in given.items()})
    except E.BadRequest as err:
        if "matches" not in err.details:
            raise
        # The browser took the call and applied nothing (Firefox over WebDriver BiDi):
        # the arguments were right, so "check the input schema" would mislead.
        raise with_next_step(err, "This browser does not emulate these media features; "
                             "nothing changed. Go on without the emulation, or use a "
                             "Chromium browser (trustbridge mcp --browser chromium) where "
                             "it is needed.") from err
    said = ", ".join(f"{k} {'cleared' if v == 'no-override' else v}" for k, v in given.items())
    matches = ", ".join(f"{k}: {now[k]}" for k in MEDIA_FEATURES)
    response.add_result(f"{'Emulated ' + said if said else 'Nothing to change'}; the page "
                        f"now matches {matches}.")


PdfArgs = derive(
    "PdfArgs", "Where to save the PDF.",
    filename=(str | None, Field(default=None, min_length=1, max_length=255,
                                description="File name to save the pdf to. Defaults to "
                                "`page-{timestamp}.pdf` if not specified. Relative to the "
                                "output directory.")),
)


async def _pdf(conn: Connection, args: Any, response: Response) -> None:
    tab = await conn.tab()
    data = await tab.pdf()
    path = save_file(conn, args.filename or default_name("page", "pdf"), data)
    response.add_result(f"Saved the page as PDF ({len(data)} bytes) to {path}")


# ----------------------------------------------------------------------------- close

CloseArgs = derive("CloseArgs", "No arguments.")


async def _close(conn: Connection, args: Any, response: Response) -> None:
    if conn.launched is not None:
        # The embedded default: stop its browser, supervisor and bridge (Embedded.stop
        # ends the whole process group); Connection.client starts a new one on demand.
        await conn.close()
        conn.select(None, None)
        response.add_result("Closed the browser this server started (every tab is gone). "
                            "The next tool call starts a new browser; use browser_navigate "
                            "to open a page.")
        return
    listing = await conn.tab_list()
    current = next(((dev, t) for dev, t in listing.rows if conn.is_current(dev, t)), None)
    if current is None:
        raise E.BrowserTabClosed("There is no current tab to close.", {"tabId": conn.tab_id})
    device, tab = current
    same_device = [t for dev, t in listing.rows if dev == device]
    on_device = Browser((await conn.browser()).client, device)
    if len(same_device) == 1:
        # The last tab: closing it would quit the user's browser.
        await on_device.new_tab("about:blank")
    await on_device.close_tab(int(tab["tabId"]))
    conn.select(None, None)
    name = tab.get("title") or tab.get("url") or f"tab {tab['tabId']}"
    response.add_result(f"Closed the current tab ({name}). "
                        "The browser is shared through a running bridge, so it stays open; "
                        "the next tool call acts on its active tab.")


TOOLS = [
    Tool(
        name="browser_console_messages",
        title="Get console messages",
        description="Returns the page's console messages and uncaught errors since its last "
        "navigation (all: since it opened; at most 1,000 kept).",
        args=ConsoleArgs,
        run=_console,
        read_only=True,
    ),
    Tool(
        name="browser_network_requests",
        title="List network requests",
        description="Returns a numbered list of network requests since loading the page. "
        "Use browser_network_request with the number to get full details.",
        args=RequestsArgs,
        run=_requests,
        read_only=True,
    ),
    Tool(
        name="browser_network_request",
        title="Show network request details",
        description="Returns full details (headers, status, timing) of one network request, "
        "or one part if `part` is set (a response body: text only). Use the number from "
        "browser_network_requests.",
        args=RequestArgs,
        run=_request,
        read_only=True,
    ),
    Tool(
        name="browser_resize",
        title="Resize browser window",
        description="Resize the browser window (its viewport, CSS px)",
        args=ResizeArgs,
        run=_resize,
    ),
    Tool(
        name="browser_emulate_media",
        title="Emulate media features",
        description="Emulate CSS media features for the page, for example switch between "
        "the light and dark color scheme. Omitted parameters are left unchanged; null clears "
        "an override.",
        args=EmulateMediaArgs,
        run=_emulate_media,
    ),
    Tool(
        name="browser_close",
        title="Close browser",
        description="Close the page: the browser this server started (the next call starts "
        "a new one), or only the current tab of a shared browser.",
        args=CloseArgs,
        run=_close,
    ),
    Tool(
        name="browser_pdf_save",
        title="Save as PDF",
        description="Save page as PDF in the output directory.",
        args=PdfArgs,
        run=_pdf,
        read_only=True,
        cap="pdf",
    ),
]
