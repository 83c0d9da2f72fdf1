"""Wire models of the trustbridge protocol: the one definition every part uses.

Every WebSocket text frame holds one JSON object, a :data:`Message`:

- ``hello`` (peer → bridge, first frame) and ``welcome`` (bridge → peer);
- ``request`` ``{id, method, params}`` in either direction;
- ``response`` ``{id, ok, result | error}`` answering a request by ``id``.

Which model a method's params and result use, and every other fact about a method,
is in :mod:`bridge.protocol.methods`. The JSON Schema the
extension relies on is generated from this module by ``scripts/gen_schema.py``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import (BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, TypeAdapter,
                      model_serializer, model_validator)

from .errors import ErrorPayload

PROTOCOL_VERSION = 6
"""Bumped on any incompatible change; a hello with another version gets PROTOCOL_MISMATCH.
2: ``snapshotAfter`` on page.act / page.batch / page.wait (a bridge of version 1 refused
the field on every request; now the hello says so, once).
3: ``driver.act`` carries ``quietReceipt`` and ``notifyDispatched``, ``page.receipt`` says
``quiet`` and ``download``, ``page.snapshot`` may be ``provisional`` (a driver of version 2
refused every act of a version-3 bridge; a bridge of version 2 dropped a version-3
extension's receipts).
4: ``quietReceipt``, ``driver.quiet`` and the receipt's ``quiet`` are gone (the sign saved
no measurable time and could not see every effect of a click: docs/design.md §2.3); the
receipt says ``navigates`` and the bridge may ask ``driver.navigation``.
5: ``page.receipt`` may say ``intercepted`` (the fast path's press guard stopped a press
that something else on top would have taken; an older bridge refused the field).
6: the receipt's ``download`` also says the click followed a download link, and the
driver no longer looks for a focused download link after a click (a version-5 extension
never said it: with a version-6 driver a download link's file would have come late, with
the next action)."""

FRAME_TOKEN_ATTRIBUTE = "data-mcjug"
"""Attribute of ``document.documentElement`` that carries a frame's token (design.md §3):
the supervisor writes it, the extension reads it (generated into the extension's
``src/generated/protocol.js``)."""

Role = Literal["extension", "driver", "client"]
RequestId = Annotated[str, Field(min_length=1, max_length=64)] | Annotated[int, Field(ge=0)]
DeviceId = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")]
Ref = Annotated[str, Field(min_length=2, max_length=32, pattern=r"^(f\d+)?e\d+$")]
Modifier = Literal["Alt", "Control", "ControlOrMeta", "Meta", "Shift"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class _Humanizable(_Model):
    """An action with the optional ``humanize`` field: left off the wire when unset, so an
    action that does not ask is the same message as before the field existed."""

    @model_serializer(mode="wrap")
    def _drop_unset_humanize(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out = handler(self)
        if out.get("humanize", 0) is None:
            del out["humanize"]
        return out


# --------------------------------------------------------------------------- envelopes


class Hello(_Model):
    """First frame of every connection."""

    type: Literal["hello"] = "hello"
    role: Role = Field(description="What the peer is: extension, driver or client.")
    device: DeviceId | None = Field(
        default=None,
        description="Device id (one browser). Required for extension and driver peers.",
    )
    protocolVersion: int = Field(description="The PROTOCOL_VERSION the peer speaks.")
    token: str = Field(max_length=256, description="The bridge token (see docs/security.md).")
    browser: str | None = Field(
        default=None, max_length=64, description="Browser name and version, for doctor."
    )
    capabilities: dict[str, bool] = Field(
        default_factory=dict, description="What this peer can do, e.g. trustedInput."
    )
    operator: str | None = Field(
        default=None, max_length=256,
        description="Clients only: the operator credential (the state directory's "
        "operator-token file, docs/security.md). Its connection may stop other sessions "
        "and sees every session's label; a wrong one is UNAUTHORIZED.")


class Welcome(_Model):
    """The bridge's answer to a good hello."""

    type: Literal["welcome"] = "welcome"
    protocolVersion: int
    peerId: str = Field(description="The bridge's name for this connection.")


class PairRequest(_Model):
    """Instead of a hello, the first frame of a pairing exchange (bridge/pairing.py): an
    unpaired extension trades the one-time code ``trustbridge pair`` showed for its device
    credential. The bridge answers :class:`Paired`, or an error response (UNAUTHORIZED:
    wrong, used or expired code), and closes the connection either way."""

    type: Literal["pair"] = "pair"
    code: str = Field(min_length=1, max_length=32,
                      description="The code as typed (case, spaces and dashes ignored).")
    protocolVersion: int = Field(description="The PROTOCOL_VERSION the extension speaks.")
    browser: str | None = Field(default=None, max_length=64,
                                description="Browser name and version, for the bridge's log.")


class Paired(_Model):
    """The bridge's answer to a good :class:`PairRequest`: the device the code was made
    for and its credential (the token of that device's extension hellos, nothing else)."""

    type: Literal["paired"] = "paired"
    device: DeviceId
    credential: str = Field(description="Secret of this device's extension; keep it in "
                            "extension storage only.")
    protocolVersion: int


class Request(_Model):
    """A call; answered by exactly one Response with the same id."""

    type: Literal["request"] = "request"
    id: RequestId
    method: str = Field(max_length=64)
    params: dict[str, Any] = Field(default_factory=dict)


class Response(_Model):
    """The answer to a Request: ``ok`` with ``result``, or not ``ok`` with ``error``."""

    type: Literal["response"] = "response"
    id: RequestId | None = Field(description="Id of the request; null if it had none.")
    ok: bool
    result: dict[str, Any] | None = None
    error: ErrorPayload | None = None


class Event(_Model):
    """A one-way notice from a peer (e.g. the driver's ``dialog.opened``); never answered."""

    type: Literal["event"] = "event"
    event: str = Field(max_length=64)
    params: dict[str, Any] = Field(default_factory=dict)


Message = Annotated[Union[Hello, Welcome, Request, Response, Event], Field(discriminator="type")]
MESSAGE_ADAPTER: TypeAdapter[Hello | Welcome | Request | Response | Event] = TypeAdapter(Message)


# --------------------------------------------------------------------------- actions


class Point(_Model):
    """A point in CSS px."""

    x: float = Field(ge=0, le=100_000)
    y: float = Field(ge=0, le=100_000)


class ClickAction(_Humanizable):
    """Press and release a mouse button at the centre of the target."""

    kind: Literal["click"] = "click"
    button: Literal["left", "right", "middle"] = Field(
        default="left", description="Button to click, defaults to left.")
    clickCount: int = Field(default=1, ge=1, le=3, description="2 for a double click.")
    modifiers: list[Modifier] = Field(
        default_factory=list, max_length=5,
        description="Modifier keys held during the click (pressed before, released after).")
    position: Point | None = Field(
        default=None,
        description="Click point as an offset in CSS px from the top-left corner of the "
        "target's border box; the centre if omitted.",
    )
    humanize: bool | None = Field(
        default=None,
        description="A person's rhythm for this action (the driver's --humanize when omitted): "
        "an eased path of integer pointer moves to a point inside the target's visible box and "
        "the button held; typed keys held and spaced (supervisor/humanize.py).")


class HoverAction(_Model):
    """Move the pointer over the target's centre and leave it there."""

    kind: Literal["hover"] = "hover"


class TypeAction(_Humanizable):
    """Focus the target and type text key by key through the keyboard (keydown, keypress,
    beforeinput, input, keyup per character, all trusted). Characters are keys of a US
    layout: ``\n`` and ``\r`` press Enter (which may submit a form) and ``\t`` presses Tab
    (which moves the focus); other characters are inserted as text input. The focus is
    checked before every key: a page that moves it on to the next empty box (one-time
    codes) is followed and the boxes are read back together (``focusFollowed``); one that
    moves it anywhere else stops the typing (ELEMENT_VALUE_NOT_SET ``focusMoved``). A
    date-like input takes the text as its value, as ``fill`` sets it; a focusable element
    that is not a text field (a canvas, a terminal surface) gets the keys and the result
    says ``keysOnly`` (no value to read back)."""

    kind: Literal["type"] = "type"
    text: str = Field(max_length=100_000)
    submit: bool = Field(default=False, description="Press Enter after the text.")
    humanize: bool | None = Field(
        default=None,
        description="A person's rhythm for this action (the driver's --humanize when omitted): "
        "an eased path of integer pointer moves to a point inside the target's visible box and "
        "the button held; typed keys held and spaced (supervisor/humanize.py).")


class PressAction(_Model):
    """Press a key or chord (``Enter``, ``Control+A``) in the focused element, or the target."""

    kind: Literal["press"] = "press"
    key: str = Field(min_length=1, max_length=64)


class FillAction(_Model):
    """Replace the field's content in one edit (select all, then the value over the
    selection), never setting ``.value`` from script; every event is trusted. Chromium and
    Camoufox: the keys of Control/Meta+A, then one ``beforeinput``/``input`` (inputType
    insertText) with the value but its last character, then that character's key
    (keydown, keypress, input, keyup) when it is printable ASCII, so pages that listen to
    keys see the last keystroke with the value in (use ``type`` when the page needs a key
    per character). A value longer than the field's ``maxlength`` (one box of a multi-box
    code) and Firefox: typed key by key. The focus is checked before the text and before
    the last key (see ``TypeAction``). Empty value: Delete. ``<input type=date>``:
    ``YYYY-MM-DD``, typed per segment in the page locale's order (supervisor/actions.py
    ``fill``)."""

    kind: Literal["fill"] = "fill"
    value: str = Field(max_length=100_000)


class SelectAction(_Model):
    """Choose options of a native ``<select>`` by value (or, failing that, by label)."""

    kind: Literal["select"] = "select"
    values: list[Annotated[str, Field(max_length=1000)]] = Field(max_length=100)


class CheckAction(_Model):
    """Set a checkbox, radio or switch (native or ARIA) to ``checked``; verified after.
    Already in that state: nothing is clicked."""

    kind: Literal["check"] = "check"
    checked: bool = True


class DragAction(_Model):
    """Drag the target onto ``to`` as a real pointer path: press, intermediate moves, release."""

    kind: Literal["drag"] = "drag"
    to: Ref = Field(description="Ref of the drop target, from the same tab's snapshot.")
    steps: int = Field(default=12, ge=1, le=200, description="Intermediate pointer moves.")


class ScrollAction(_Model):
    """Turn the mouse wheel over the target (a scroll container) by dx, dy CSS px."""

    kind: Literal["scroll"] = "scroll"
    dx: float = Field(default=0, ge=-100_000, le=100_000)
    dy: float = Field(default=0, ge=-100_000, le=100_000)


class UploadAction(_Model):
    """Provide files through the target: a file input (or a label of one), or a control
    whose click opens a file chooser (another form field is BAD_REQUEST, unclicked; a
    click that opens no chooser is BAD_REQUEST saying it was delivered); with no target,
    to the file chooser an earlier click opened. Paths are on the supervisor's machine."""

    kind: Literal["upload"] = "upload"
    files: list[Annotated[str, Field(min_length=1, max_length=4096)]] = Field(max_length=50)


class FocusAction(_Model):
    """Move keyboard focus to the target."""

    kind: Literal["focus"] = "focus"


class MouseAction(_Model):
    """Trusted mouse input at a point of the tab's viewport, with no ref (Playwright MCP's
    ``--caps vision`` tools): CSS px from the top-left of the top-level viewport, the
    coordinate space of a viewport screenshot divided by its ``scale``. The bridge hit-tests
    the point through the extension first (across frames, open and closed shadow roots);
    the result names the element found (``hit``) and, for a click, its delivery receipt
    (supervisor/mouse.py; bridge/executor.py)."""

    kind: Literal["mouse"] = "mouse"
    op: Literal["move", "click", "down", "up", "wheel", "drag"]
    x: float | None = Field(
        default=None, ge=0, le=100_000, description="CSS px of the top-level viewport. "
        "down, up and wheel: null for where the pointer is (the last point the driver sent "
        "it to on this tab, by any pointer action; (0, 0) before any).")
    y: float | None = Field(
        default=None, ge=0, le=100_000, description="CSS px of the top-level viewport; as x.")
    toX: float | None = Field(default=None, ge=0, le=100_000, description="drag: end x.")
    toY: float | None = Field(default=None, ge=0, le=100_000, description="drag: end y.")
    button: Literal["left", "right", "middle"] = "left"
    clickCount: int = Field(default=1, ge=1, le=3)
    delay: float = Field(default=0, ge=0, le=10_000,
                         description="click: ms between press and release.")
    deltaX: float = Field(default=0, ge=-100_000, le=100_000, description="wheel, CSS px.")
    deltaY: float = Field(default=0, ge=-100_000, le=100_000, description="wheel, CSS px.")
    modifiers: list[Modifier] = Field(default_factory=list, max_length=5)

    @model_validator(mode="after")
    def _needs_a_point(self) -> MouseAction:
        if self.op in ("move", "click", "drag") and (self.x is None or self.y is None):
            raise ValueError(f"A mouse {self.op} needs its point (x, y).")
        return self


Action = Annotated[
    Union[
        ClickAction, HoverAction, TypeAction, PressAction, FillAction, SelectAction,
        CheckAction, DragAction, ScrollAction, UploadAction, FocusAction, MouseAction,
    ],
    Field(discriminator="kind"),
]


# --------------------------------------------------------------------------- client methods


class DeviceParams(_Model):
    device: DeviceId | None = Field(
        default=None, description="Device to address; optional when exactly one is connected."
    )


class TabParams(DeviceParams):
    tabId: int | None = Field(default=None, description="Tab id; the active tab if omitted.")


class NavigateParams(TabParams):
    url: str = Field(min_length=1, max_length=8192, description="Absolute URL to load.")
    timeoutMs: int = Field(default=30_000, ge=1, le=300_000, description="Load timeout, ms.")


SNAPSHOT_DEFAULT_MAX_CHARS = 50_000
"""Default snapshot budget, characters (about 12k tokens)."""


class SnapshotParams(TabParams):
    """An accessibility-style outline of the tab (all frames), or its text, or a diff.

    The result (bridge/protocol/results.py ``SnapshotResult``) is ``{snapshot, url, title,
    tabId, mode, frames, refs, chars, truncated, cursor, diff?}``: ``snapshot`` is the text; ``truncated`` is true and ``cursor`` names
    the next page when the budget cut it (the text then ends with a ``# truncated`` line);
    ``diff`` is ``{baseline, added, removed}`` in diff mode.
    Errors: BAD_REQUEST (unknown or expired cursor, diff with a ref), REF_NOT_FOUND,
    BROWSER_DOCUMENT_CHANGED (the ref or cursor belongs to a document that is gone).
    """

    mode: Literal["snapshot", "read", "diff"] = Field(
        default="snapshot",
        description="snapshot: outline with refs, states, values, link URLs. read: the "
        "visible text, one line per block. diff: changes since this tab's previous complete "
        "snapshot in this session (a truncated snapshot is not a baseline until its cursor "
        "is followed to the end); the new snapshot becomes the baseline.",
    )
    maxChars: int = Field(
        default=SNAPSHOT_DEFAULT_MAX_CHARS, ge=1_000, le=10_000_000,
        description="Budget in characters. A longer snapshot is cut at a line boundary and "
        "returns a cursor; a page may exceed the budget by one line plus the trailer.",
    )
    ref: Ref | None = Field(
        default=None,
        description="Snapshot only the subtree of this element (and frames inside it).",
    )
    cursor: str | None = Field(
        default=None, min_length=1, max_length=64,
        description="Continue a truncated snapshot or diff from where it stopped (mode, "
        "ref and session come from the cursor; maxChars applies to this page).",
    )
    session: str | None = Field(
        default=None, min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$",
        description="Diff baseline key: snapshots of one tab share a baseline per session "
        "(default: one shared session).",
    )
    depth: int | None = Field(
        default=None, ge=0, le=1000,
        description="Outline only: leave out nodes nested deeper than this below the "
        "root (0: the root's own line); the cut is marked, never silent.")
    timeBudgetMs: int | None = Field(
        default=None, ge=50, le=120_000,
        description="Stop walking after this many ms and return what was walked, "
        "truncated with its cursor, as for the character budget.")


class FindParams(TabParams):
    """Find elements without a full snapshot (issue 14 item 5): walk every frame, open and
    closed shadow roots, and return matching outline lines with refs and their ancestry.

    At least one of ``role``, ``name``, ``text`` is required (BAD_REQUEST otherwise).
    Result (results.py ``FindResult``): ``{matches: [{ref, line, ancestry}], text,
    truncated, url, title, tabId}``.
    Errors: BAD_REQUEST (no criterion, bad regex), REF_NOT_FOUND (``within``).
    """

    role: str | None = Field(default=None, max_length=64, description="ARIA role, e.g. button.")
    name: str | None = Field(default=None, max_length=1000,
                             description="Accessible name: substring, case-insensitive "
                             "(a regular expression when regex is true).")
    text: str | None = Field(default=None, max_length=1000,
                             description="Text shown in or on the element (its text, or a "
                             "name attribute: aria-label, alt, title, placeholder): "
                             "substring, case-insensitive (a regular expression when "
                             "regex is true). Alone, it also finds plain text lines (no "
                             "ref).")
    regex: bool = Field(default=False, description="name and text are JavaScript regexes.")
    within: Ref | None = Field(default=None, description="Search only inside this element.")
    limit: int = Field(default=20, ge=1, le=500, description="Most matches returned.")
    timeoutMs: int = Field(default=3_000, ge=10, le=60_000,
                           description="Walk time budget, ms; past it the result is truncated.")


class SnapshotAfter(_Model):
    """The page's snapshot taken right after an action or a wait, in the same request
    (issue 18: an MCP tool answers with the page state, and asking for it with a second
    request cost a bridge round trip per tool). The result carries it as
    ``snapshotAfter`` (a ``page.snapshot`` result of the tab the request ran on), or, when
    it could not be taken, ``snapshotAfterError`` (``{code, message}``; the action's own
    result stands). None is taken when the action opened a JavaScript dialog (the result
    names the dialog) or failed."""

    mode: Literal["snapshot", "diff"] = Field(
        default="snapshot", description="As page.snapshot's mode.")
    maxChars: int = Field(default=SNAPSHOT_DEFAULT_MAX_CHARS, ge=1_000, le=10_000_000,
                          description="As page.snapshot's maxChars.")
    session: str | None = Field(
        default=None, min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$",
        description="As page.snapshot's session (default: the connection's session).")
    timeBudgetMs: int | None = Field(
        default=None, ge=50, le=120_000, description="As page.snapshot's timeBudgetMs.")


class ActParams(TabParams):
    ref: Ref | None = Field(
        default=None, description="Target from the latest snapshot (e.g. e7, f1e3)."
    )
    action: Action
    timeoutMs: int = Field(default=10_000, ge=1, le=300_000, description="Action timeout, ms.")
    allowCoordinates: bool = Field(
        default=False,
        description="Opt-in for a click on an element inside a closed shadow root: the "
        "extension proves by hit test that the element is topmost at its centre and the "
        "driver clicks that point (inputPath \"trusted-coordinates\"). Never taken without it.",
    )
    allowScript: bool = Field(
        default=False,
        description="Opt-in for a control no trusted input can set (e.g. <input type=color>, "
        "which opens an OS picker): the value is set by script and the result says "
        "inputPath \"script\". Never taken without it; without it such a control is refused "
        "with TRUSTED_INPUT_UNAVAILABLE.",
    )
    snapshotAfter: SnapshotAfter | None = Field(
        default=None, description="Also return the page's snapshot taken right after the "
        "action (result field snapshotAfter).")


class WaitParams(TabParams):
    ms: int | None = Field(default=None, ge=0, le=300_000, description="Fixed wait, ms.")
    text: str | None = Field(default=None, max_length=1000, description="Wait until shown.")
    textGone: str | None = Field(default=None, max_length=1000,
                                 description="Wait until no longer shown.")
    timeoutMs: int = Field(default=10_000, ge=1, le=300_000)
    snapshotAfter: SnapshotAfter | None = Field(
        default=None, description="Also return the page's snapshot taken right after the "
        "wait (result field snapshotAfter).")


class EmptyParams(_Model):
    pass


class BatchItem(_Model):
    ref: Ref | None = None
    action: Action
    timeoutMs: int = Field(default=10_000, ge=1, le=300_000)


class BatchParams(TabParams):
    """Several actions run in order in one tab; stops at the first failure."""

    actions: list[BatchItem] = Field(min_length=1, max_length=200)
    snapshotAfter: SnapshotAfter | None = Field(
        default=None, description="Also return the page's snapshot taken right after the "
        "last action that ran (result field snapshotAfter).")


class DialogParams(TabParams):
    """Answer the open JavaScript dialog (alert, confirm, prompt, beforeunload)."""

    accept: bool = Field(description="true: OK / leave page; false: Cancel / stay.")
    promptText: str | None = Field(default=None, max_length=10_000,
                                   description="Text for a prompt() before accepting.")


class ScreenshotParams(TabParams):
    ref: Ref | None = Field(default=None, description="Element to capture; the viewport if omitted.")
    fullPage: bool = Field(default=False, description="Whole scrollable page (no ref).")
    type: Literal["png", "jpeg"] = Field(default="png", description="Image format.")


class ConsoleParams(TabParams):
    """The tab's console messages and uncaught page errors since it loaded (driver,
    supervisor/page_logs.py). Result: ``{messages: [{type, text, url?, line?, at}], total,
    errors, warnings, tabId}`` (the counts: every message kept, before the level filter)."""

    level: Literal["error", "warning", "info", "debug"] = Field(
        default="info", description="Least severe level returned.")
    all: bool = Field(default=False, description="Since the page was opened, not only since "
                      "its last navigation (Playwright MCP's ``all``).")
    clear: bool = Field(default=False, description="Forget the messages returned.")


class NetworkParams(TabParams):
    """The tab's network requests since it loaded (driver, supervisor/page_logs.py).
    Result: ``{requests: [{id, method, url, status?, resourceType, failure?}], tabId}``;
    with ``requestId``: ``{request: {..., requestHeaders, responseHeaders, postData?}}``."""

    includeStatic: bool = Field(default=False, description="Include images, fonts, "
                                "stylesheets and scripts.")
    all: bool = Field(default=False, description="Since the page was opened, not only since "
                      "its last navigation (Playwright MCP's ``all``).")
    requestId: int | None = Field(default=None, ge=0, description="One request in detail.")
    body: bool = Field(default=False, description="With requestId: include the response "
                       "body if it is text (``responseBody``, cut at 100,000 characters).")
    clear: bool = Field(default=False, description="Forget the requests returned.")


class ResizeParams(TabParams):
    """Set the tab's viewport size, CSS px (driver). Result: ``{width, height, tabId}``."""

    width: int = Field(ge=100, le=10_000)
    height: int = Field(ge=100, le=10_000)


ColorScheme = Literal["light", "dark", "no-preference", "no-override"]
ReducedMotion = Literal["reduce", "no-preference", "no-override"]
ForcedColors = Literal["active", "none", "no-override"]
Contrast = Literal["more", "no-preference", "no-override"]
MediaType = Literal["screen", "print", "no-override"]


class EmulateMediaParams(TabParams):
    """Emulate CSS media features for the tab's page (driver: Playwright's
    ``page.emulate_media``). A feature left out keeps its emulation; ``"no-override"``
    ends it (the browser's own value again). Result: :class:`EmulateMediaResult`, what
    the page's ``matchMedia`` answers afterwards. Errors: BAD_REQUEST when the browser
    cannot emulate a feature (it refused, or the page still does not match what was set:
    Firefox over WebDriver BiDi)."""

    colorScheme: ColorScheme | None = Field(
        default=None, description="prefers-color-scheme; no-override ends the emulation.")
    reducedMotion: ReducedMotion | None = Field(
        default=None, description="prefers-reduced-motion; no-override ends the emulation.")
    forcedColors: ForcedColors | None = Field(
        default=None, description="forced-colors; no-override ends the emulation.")
    contrast: Contrast | None = Field(
        default=None, description="prefers-contrast; no-override ends the emulation.")
    media: MediaType | None = Field(
        default=None, description="The CSS media type; no-override ends the emulation.")


class PdfParams(TabParams):
    """Print the tab to PDF (driver: headless Chromium, Firefox). Result: ``{pdf: base64,
    bytes, tabId}``. Errors: BAD_REQUEST in a browser that cannot print to PDF."""


class TracingParams(TabParams):
    """Start or stop a Playwright trace of the tab's browser context (driver,
    supervisor/recording.py). Result: ``{tracing, path?, bytes?, tabId}``: ``stop`` saves
    ``trace-<time>.zip`` in the driver's output folder (where downloads go), which
    ``playwright show-trace`` opens. The context is the whole browser's: every tab's
    actions, DOM snapshots and screenshots are in the trace, not only this one's."""

    action: Literal["start", "stop"] = Field(description="start or stop the trace.")


class EvaluateParams(TabParams):
    ref: Ref | None = Field(default=None, description="Runs in this ref's frame, with the element as argument.")
    expression: str = Field(min_length=1, max_length=100_000,
                            description="A JavaScript function or expression, run in the world ``world`` names.")
    world: Literal["isolated", "main"] = Field(
        default="main", description="main (default, as Playwright's evaluate): the page's "
        "own world, with its globals; isolated: the page's DOM without its JavaScript (page "
        "script cannot see or forge the result; supervisor/isolated_eval.py).")


class TabNewParams(DeviceParams):
    url: str | None = Field(default=None, max_length=8192)
    window: bool = Field(
        default=False, description="Open the tab in a new window of its own, so it is the "
        "foreground tab there (parallel sessions: a headed browser throttles background "
        "tabs; docs/sessions.md).")


class TabIdParams(DeviceParams):
    tabId: int


SessionLabel = Annotated[str, Field(min_length=1, max_length=64,
                                    pattern=r"^[A-Za-z0-9_.:@-][A-Za-z0-9_.:@ -]*$")]
"""A session's label: what people and other sessions see (TAB_CLAIMED names it)."""


class SessionOpenParams(_Model):
    """Open a session for this connection, or resume a kept one (docs/sessions.md).

    Every request of a connection belongs to its session; a connection that sends none
    gets one of its own at its first request (label ``client-<peer id>``, stopped when it
    disconnects). A second ``session.open`` on a connection that already has a session is
    BAD_REQUEST. Errors: BAD_REQUEST (label in use by a live session and no matching
    ``secret``).
    """

    label: SessionLabel
    leaseMs: int = Field(
        default=120_000, ge=5_000, le=3_600_000,
        description="How long the session lives without any request or session.renew, ms; "
        "clients renew every leaseMs/3 (heartbeatMs in the answer).")
    onDisconnect: Literal["stop", "keep"] = Field(
        default="stop", description="stop: the session stops when this connection closes "
        "(MCP, SDK). keep: it waits for its lease to run out, and a later connection may "
        "resume it with its label and secret (the CLI's --session NAME).")
    secret: str | None = Field(
        default=None, min_length=16, max_length=128,
        description="Resume the kept session of this label: the secret its session.open "
        "answered with.")


class SessionReleaseParams(DeviceParams):
    """Give up a tab this session owns (``tabId``), or all of them (no ``tabId``); the
    tabs stay open and become free."""

    tabId: int | None = None


class SessionHandoffParams(DeviceParams):
    """Give one of this session's tabs to the live session labelled ``to``. Refused with
    TAB_BUSY while this session has requests queued or running on the tab."""

    tabId: int | None = Field(default=None, description="Default: this session's current tab.")
    to: SessionLabel


class SessionStopParams(_Model):
    """Stop a session: its queued requests answer CANCELLED (they never run), a running
    one finishes and reports what it did, its tabs are released (never closed), and its
    later requests answer SESSION_STOPPED. Default: the caller's own session.

    Another session may be stopped only by an operator connection (hello ``operator``)
    or with that session's own ``secret`` (its ``session.open`` answer); anyone else is
    UNAUTHORIZED (``details.reason``: ``notOperator``) before the label is looked up."""

    label: SessionLabel | None = None
    secret: str | None = Field(default=None, max_length=256,
                               description="The named session's secret: the holder is "
                               "that session, so it may stop it.")


class TabClaimParams(DeviceParams):
    """Claim a free tab explicitly, e.g. one a person opened (sessions claim tabs they
    create or act on first by themselves, but never a person's). A tab another session
    owns is TAB_CLAIMED."""

    tabId: int


class SessionsEvent(_Model):
    """Bridge → extension, event ``sessions.owners``: which session owns which of the
    device's tabs, sent whenever that changes (the action badge and popup show it)."""

    tabs: list[dict[str, Any]] = Field(default_factory=list, max_length=10_000,
                                       description="[{tabId, label}] for every owned tab.")


class SessionStopEvent(_Model):
    """Extension → bridge, event ``session.stop``: a person pressed Stop for the session
    that owns a tab (the popup's button)."""

    label: SessionLabel


class PairingCreateParams(_Model):
    """``pairing.create``: a one-time code that pairs an extension in a person's own
    browser with this bridge as ``device`` (bridge/pairing.py, docs/attach.md)."""

    device: DeviceId | None = Field(
        default=None, description="Device name the paired extension gets; pairing a name "
        "again replaces its credential. Default: the first free browser-N.")


class CancelParams(_Model):
    """Withdraw an earlier request of this connection that is still queued."""

    requestId: RequestId


class HistoryParams(TabParams):
    direction: Literal["back", "forward", "reload"]
    timeoutMs: int = Field(default=30_000, ge=1, le=300_000)


# --------------------------------------------------------------------------- peer methods


class ResolveTargetParams(_Model):
    """Bridge → extension: turn a ref into what the driver needs."""

    tabId: int | None = None
    ref: Ref | None = Field(default=None, description="None: the tab's top frame.")
    receipt: bool = Field(default=False, description="Arm a delivery receipt on the target.")
    allowCoordinates: bool = Field(
        default=False, description="Closed shadow root: answer with a hit-tested point.")
    at: Point | None = Field(
        default=None, description="No ref: hit-test this point (CSS px of the top-level "
        "viewport) through frames and shadow roots; answer ``hit`` and, with receipt, arm "
        "the receipt on the element found (MouseAction).")
    fastPoint: bool = Field(
        default=False, description="Measure a verified click point for the fast path "
        "(issue 18): answer ``fastPoint`` when the target is in view, stable and topmost "
        "there, else ``fastRefused`` naming the failed check.")
    settle: bool = Field(
        default=False, description="With fastPoint: wait one animation frame and measure "
        "again even for an element measured for the first time (hover: no delivery "
        "receipt catches a target that script moves; a review's probe was answered done "
        "for a hover the target never saw).")


class TabProbeParams(_Model):
    """Bridge → extension: does the tab's page still run script? (issue 32 item 4: asked
    only after a request on the tab timed out)."""

    tabId: int
    timeoutMs: int = Field(default=1500, ge=100, le=10_000,
                           description="How long the page has to run a trivial script, ms.")


class ReceiptParams(_Model):
    """Bridge → extension: read (and forget) a delivery receipt."""

    tabId: int | None = None
    ref: Ref
    receiptId: str = Field(min_length=1, max_length=32)


class ReceiptEvent(_Model):
    """Extension → bridge, event ``page.receipt``: a trusted click reached the target of
    the receipt ``receiptId`` (pushed from the page's ``click`` listener, so it usually
    arrives before the driver's answer; extension/src/page/receipt.js)."""

    tabId: int
    receiptId: str = Field(min_length=1, max_length=32)
    delivered: bool
    events: list[str] = Field(default_factory=list, max_length=8)
    fileInput: bool = Field(
        default=False,
        description="A file input was clicked right after the press (a button whose handler "
        "calls input.click()): the browser may announce a file chooser after the driver "
        "answered. Pushed a second time, same id, when this becomes true.")
    download: bool = Field(
        default=False,
        description="A navigation that is a download (the Navigation API's navigate event "
        "with a downloadRequest) started after the press, before this push: the browser "
        "may announce the download to the driver after its answer.")
    navigates: bool = Field(
        default=False,
        description="A form whose target is this frame or an ancestor is being submitted "
        "(a trusted formdata event within 1 s of the press): its navigation is planned a "
        "task later and its request may reach the driver after its answer. Pushed a second "
        "time, same id, when this becomes true after the first push.")
    pressedOn: dict[str, Any] | None = Field(
        default=None, description="results.ReceiptResult.pressedOn: a control inside the "
        "target that the press hit ({tag, text}).")


class TabOpenedEvent(_Model):
    """Extension → bridge, event ``tab.opened``: a page opened tab ``tabId`` (its opener is
    ``openerTabId``); sent from ``tabs.onCreated``, often before the driver's answer to the
    click that opened it."""

    tabId: int
    openerTabId: int
    url: str = Field(default="", max_length=8192)


class ResolveTarget(_Model):
    """Extension → bridge: a frame token and a CSS locator (design.md §4)."""

    model_config = ConfigDict(extra="allow")
    frameToken: str = Field(min_length=1, max_length=128)
    css: str | None = Field(default=None, max_length=20_000, description="None: no element.")
    tabId: int | None = None
    resolvedBy: Literal["original_ref", "semantic_rebind"] | None = Field(
        default=None,
        description="original_ref: the element the snapshot showed; semantic_rebind: the one "
        "equivalent element that replaced it (copied into the action result).",
    )
    rebound: bool | None = Field(
        default=None, description="This resolution replaced the original by an equivalent."
    )
    point: Point | None = Field(
        default=None, description="Coordinate route (allowCoordinates, closed shadow root): "
        "the hit-tested point, CSS px from the top-left of the frame's document element.")
    receiptId: str | None = Field(
        default=None, max_length=32, description="The delivery receipt armed (receipt: true).")
    sensitive: bool | None = Field(
        default=None, description="The target is a secret field (password, card number, "
        "API key ...; extension/src/page/sensitive.js): the bridge masks what is typed into "
        "it wherever it reappears (bridge/secrets.py).")
    hit: dict[str, Any] | None = Field(
        default=None, description="With ``at``: the element at the point ({ref, role, "
        "name, line}; null fields when nothing is there).")
    fastPoint: Point | None = Field(
        default=None, description="The verified click point, CSS px of the target frame's "
        "viewport (ResolveTargetParams.fastPoint).")
    fastRefused: str | None = Field(
        default=None, max_length=64, description="Why no fastPoint: moving, covered, "
        "outside-viewport, zero-size, ...")
    selectOption: int | None = Field(
        default=None, ge=0, description="The ref is an option of a collapsed <select>: "
        "its index; ``css`` then names the select, and a click selects that option.")


class DriverActParams(_Model):
    """Bridge → driver: perform one action with trusted input."""

    frameToken: str = Field(min_length=1, max_length=128)
    css: str | None = Field(default=None, max_length=20_000)
    action: Action
    timeoutMs: int = Field(default=10_000, ge=1, le=300_000)
    toFrameToken: str | None = Field(default=None, max_length=128, description="Drag target.")
    toCss: str | None = Field(default=None, max_length=20_000, description="Drag target.")
    point: Point | None = Field(
        default=None,
        description="Coordinate route: click here, CSS px from the top-left of the element "
        "``css`` names (the frame's document element), hit-tested by the extension.",
    )
    allowScript: bool = Field(
        default=False, description="The agent's opt-in (ActParams.allowScript): a control no "
        "trusted input can set may be set by script; the result then says inputPath \"script\".")
    fastPoint: Point | None = Field(
        default=None, description="Verified click point (ResolveTarget.fastPoint), CSS px "
        "of the target frame's viewport: the driver maps it to the top-level viewport and "
        "sends mouse input there, skipping Playwright's actionability waits.")
    selectOption: int | None = Field(
        default=None, ge=0, description="Click on an option of the collapsed select ``css`` "
        "names: select the option with this index (supervisor/select.py).")
    notifyDispatched: str | None = Field(
        default=None, min_length=1, max_length=32, pattern=r"^[A-Za-z0-9_-]+$",
        description="Send the event ``driver.dispatched {id: this}`` once the action's input "
        "has all reached the page and the page handled it, before the driver's own checks "
        "after it (its read-back, its look for downloads and file choosers): the bridge "
        "starts the page-state snapshot the request asked for then, provisional until the "
        "answer shows it stands (bridge/executor.py, issue 18).")


class DispatchedEvent(_Model):
    """Driver → bridge, event ``driver.dispatched``: the input of the ``driver.act`` whose
    ``notifyDispatched`` was ``id`` has all been sent and the page handled it; the
    driver's answer follows (supervisor/driver.py)."""

    id: str = Field(min_length=1, max_length=32)


class DriverDialogParams(_Model):
    """Bridge → driver: answer an open JavaScript dialog of the device: the one named by
    ``dialogId`` (from its ``dialog.opened``), else the oldest."""

    accept: bool
    promptText: str | None = Field(default=None, max_length=10_000)
    dialogId: int | None = Field(default=None, ge=0,
                                 description="The dialog to answer (supervisor/dialogs.py).")


class DriverScreenshotParams(_Model):
    """Bridge → driver: PNG of the tab's viewport, full page, or one element."""

    frameToken: str = Field(min_length=1, max_length=128)
    css: str | None = Field(default=None, max_length=20_000)
    fullPage: bool = False
    type: Literal["png", "jpeg"] = "png"


class _DriverTab(_Model):
    """Bridge → driver: a request about the page of ``frameToken`` (its top frame)."""

    frameToken: str = Field(min_length=1, max_length=128)
    css: str | None = Field(default=None, max_length=20_000)


class DriverConsoleParams(_DriverTab):
    level: Literal["error", "warning", "info", "debug"] = "info"
    all: bool = False
    clear: bool = False


class DriverNetworkParams(_DriverTab):
    includeStatic: bool = False
    all: bool = False
    requestId: int | None = Field(default=None, ge=0)
    body: bool = False
    clear: bool = False


class DriverResizeParams(_DriverTab):
    width: int = Field(ge=100, le=10_000)
    height: int = Field(ge=100, le=10_000)


class DriverEmulateMediaParams(_DriverTab):
    colorScheme: ColorScheme | None = None
    reducedMotion: ReducedMotion | None = None
    forcedColors: ForcedColors | None = None
    contrast: Contrast | None = None
    media: MediaType | None = None


class DriverPdfParams(_DriverTab):
    pass


class DriverTracingParams(_DriverTab):
    action: Literal["start", "stop"]


class DriverEvaluateParams(_Model):
    """Bridge → driver: run a script in a frame's isolated or main world (explicit tool only)."""

    frameToken: str = Field(min_length=1, max_length=128)
    css: str | None = Field(default=None, max_length=20_000)
    expression: str = Field(min_length=1, max_length=100_000)
    world: Literal["isolated", "main"] = "main"


class DriverFileChooserParams(_Model):
    """Bridge → driver: wait, at most ``timeoutMs``, for the file chooser a click on the
    page of ``frameToken`` opened after its answer (supervisor/watch.py
    ``await_file_chooser``), asked when the click's receipt says ``fileInput``."""

    frameToken: str = Field(min_length=1, max_length=128)
    timeoutMs: int = Field(default=2000, ge=0, le=10_000)


class DriverPointerParams(_Model):
    """Bridge → driver: where the driver last sent the pointer of the page of
    ``frameToken`` (supervisor/mouse.py ``last``), for a down, up or wheel without a
    point."""

    frameToken: str = Field(min_length=1, max_length=128)


class DriverPointerResult(_Model):
    """Driver → bridge: the pointer's position, CSS px of the top-level viewport ((0, 0)
    before any pointer input on the page)."""

    x: float
    y: float


class DriverBlankPageParams(_Model):
    """Bridge → driver: the page of a tab whose top document is about:blank, where the
    extension has no script to read a frame token from: the one at ``index`` among the
    browser's ``count`` blank pages, oldest first (the extension's blank tabs, sorted by
    tab id, which grows with creation, as Playwright lists pages). Answered only when the
    driver sees as many blank pages; otherwise it cannot tell them apart."""

    index: int = Field(ge=0, le=10_000)
    count: int = Field(ge=1, le=10_000)


class DriverBlankPageResult(_Model):
    """Driver → bridge: the frame token of that page's top frame."""

    frameToken: str = Field(min_length=1, max_length=128)


AX_FACTS_MAX = 500
"""Most refs one ``driver.axFacts`` reads (a snapshot's candidates beyond are left as the
walker printed them)."""


class DriverAxFactsParams(_Model):
    """Bridge → driver: the browser's own accessibility facts (computed role, name,
    states) of elements of one frame, named by the frame's local refs (issue 30 item 8;
    supervisor/frames.py ``ax_facts``). The elements are the snapshot's ``axCandidates``:
    custom elements whose role and name may come from ElementInternals."""

    frameToken: str = Field(min_length=1, max_length=128)
    refs: list[Annotated[str, Field(min_length=1, max_length=64)]] = Field(
        min_length=1, max_length=AX_FACTS_MAX, description="Local refs (no frame prefix).")


class AxFact(_Model):
    """One element as Chromium's accessibility tree computes it."""

    role: str = Field(max_length=64, description="ARIA role (Chromium's internal names mapped).")
    name: str = Field(default="", max_length=10_000)
    states: list[str] = Field(default_factory=list, description="Snapshot states: checked, "
                              "checked=mixed, pressed, expanded, selected, disabled.")


class DriverAxFactsResult(_Model):
    """Driver → bridge: facts by local ref; a ref left out has none to give (gone, ignored
    by the accessibility tree, or a browser whose tree the driver cannot read)."""

    facts: dict[str, AxFact] = Field(default_factory=dict)
    source: Literal["chromium-ax", "none"] = Field(
        default="none", description="chromium-ax: CDP Accessibility.getPartialAXTree; none: "
        "this browser's tree is not readable by the driver (Firefox, Camoufox).")


class DriverDownloadParams(_Model):
    """Bridge → driver: wait, at most ``timeoutMs``, for the download a click on the page of
    ``frameToken`` started after its answer (supervisor/watch.py ``await_download``), asked
    when the click's receipt says ``download``."""

    frameToken: str = Field(min_length=1, max_length=128)
    timeoutMs: int = Field(default=2000, ge=0, le=10_000)


class DriverNavigationParams(_Model):
    """Bridge → driver: wait, at most ``timeoutMs``, for the outcome of the navigation a
    click started after its answer (supervisor/navwatch.py ``await_navigation``), asked
    when the click's receipt says ``navigates`` and the driver's answer said no document
    change. ``watch``: the answer's ``lateNavigation`` (a watch answers for its own click
    only)."""

    watch: str = Field(min_length=1, max_length=32)
    timeoutMs: int = Field(default=2000, ge=0, le=10_000)


class DriverNavigationResult(_Model):
    """Driver → bridge: ``postActionDocumentChanged``: the click's frame (or an ancestor)
    committed another document, detached, or has its navigation still on its way at the
    bound; false when none came or each ended without a commit (a download, an error, a
    204)."""

    postActionDocumentChanged: bool


class DriverDownloadResult(_Model):
    """Driver → bridge: ``downloads: [{suggestedFilename, path, bytes}]`` saved since the
    click's answer (no longer reported late by the next action), or nothing when none came
    within the bound."""

    downloads: list[dict[str, Any]] | None = None


class DriverFileChooserResult(_Model):
    """Driver → bridge: ``fileChooser: {multiple}`` for the chooser held for that page, or
    nothing when none opened within the bound."""

    fileChooser: dict[str, Any] | None = None


class CdpEndpointParams(DeviceParams):
    """``cdp.endpoint`` (issue 19, docs/cdp.md): the loopback CDP URL of a Chromium device,
    issued to the calling session (the bridge sets ``session`` to its label)."""

    session: SessionLabel | None = Field(
        default=None, description="Set by the bridge: the calling session's label.")


class DriverCdpEndpointParams(_Model):
    """Bridge → driver: the CDP endpoint of this device's browser for session ``session``
    (supervisor/cdp_proxy.py)."""

    session: SessionLabel | None = None


class DriverCdpCloseParams(_Model):
    """Bridge → driver: close this device's CDP door (supervisor/cdp_proxy.py): every URL
    issued stops working and every client connection ends. Sent when the person
    withdraws their consent in the extension's options page (docs/cdp.md)."""


class DriverCdpCloseResult(_Model):
    """Driver → bridge: ``closed``: a door was open and is closed now."""

    closed: bool


class DriverActResult(_Model):
    """Driver → bridge: the action was performed (supervisor/driver.py ``act``); the
    verb's own fields (bridge/protocol/results.py ActResult) pass through."""

    model_config = ConfigDict(extra="allow")
    done: Literal[True] = True
    action: str | None = Field(default=None, description="The action's kind.")
    frameUrl: str | None = Field(default=None, description="URL of the target's frame.")
    postActionDocumentChanged: bool | None = Field(
        default=None,
        description="The target's frame (or an ancestor) started loading another document "
        "during the action: refs of the old document are gone.",
    )
    lateNavigation: str | None = Field(
        default=None, max_length=32,
        description="A click that saw no document change: the id of the watch that follows "
        "its frame's navigations for 2.5 s more (``driver.navigation``); the bridge keeps it "
        "from the client's result.")


class DeviceInfo(_Model):
    device: str
    extension: bool = Field(description="An extension is connected for this device.")
    driver: bool = Field(description="A driver is online for this device now.")
    requiresTrustedInput: bool = Field(
        description="Input must go through a driver; fails if the driver is offline."
    )
    browser: str | None = None
    host: str | None = Field(
        default=None,
        description="The address its driver (else its extension) connected from; None "
        "while neither is connected.")
    remote: bool = Field(
        default=False,
        description="It connected through the bridge's wss:// listener: a device on "
        "another machine (docs/deploy.md).")
    latencyMs: float | None = Field(
        default=None,
        description="Round trip of the bridge's last keep-alive ping to its driver (else "
        "its extension), ms: pinged every 2 s through the wss:// listener, every 20 s on "
        "loopback; None: not connected, or no pong yet.")
    capabilities: dict[str, bool] = Field(
        default_factory=dict,
        description="What the connected peers of this device can do, from their hello: "
        "extension (closedShadowVisible, syntheticInput) then driver (trustedInput, "
        "coordinateRoute).",
    )
    dialog: dict[str, Any] | None = Field(
        default=None,
        description="The JavaScript dialog open on this device now ({type, message, "
        "defaultValue, url}), if any; answer it with page.dialog.",
    )
    dialogs: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Every JavaScript dialog open on this device, oldest first, each with "
        "the tabId it blocks once the bridge has placed it (a dialog blocks only its tab).")


# --------------------------------------------------------------------------- hand-off to a person
# issue 37, docs/mcp.md "browser_request_human": a person takes over a tab through the live
# view (bridge/live_view.py) and hands it back.


class HumanRequestParams(TabParams):
    """``human.request``: hand the tab to a person, with ``reason`` shown to them. Answers
    at once with the live-view link (``liveUrl``) to give to the person; ``human.wait``
    then waits for the end of the hand-off. Until it ends, every agent request on the tab
    is refused with HANDED_TO_PERSON."""

    reason: str = Field(min_length=1, max_length=500,
                        description="What the person should do, shown in the live view.")
    timeoutMs: int = Field(default=300_000, ge=1_000, le=3_600_000,
                           description="How long the person has, ms; the link expires then "
                           "and the hand-off ends as timedOut.")


class HumanWaitParams(DeviceParams):
    """``human.wait``: wait until the hand-off ``handoverId`` ends (handed back,
    cancelled, live view closed, timed out, session stopped) and answer what changed."""

    handoverId: str = Field(min_length=1, max_length=64)


class HumanEndParams(DeviceParams):
    """``human.end``: the agent takes its tab back before the person handed it back (it
    stops waiting, or no longer needs the person): the hand-off ends as ``withdrawn`` and
    the live view takes no more input."""

    handoverId: str = Field(min_length=1, max_length=64)


LiveMouseButton = Literal["left", "right", "middle"]


class LiveInput(_Model):
    """One input event of the person in the live view, CSS px of the tab's top-level
    viewport. ``key``: a KeyboardEvent.key value (``a``, ``Enter``, ``Shift``)."""

    type: Literal["move", "down", "up", "wheel", "keydown", "keyup"]
    x: float | None = Field(default=None, ge=0, le=100_000)
    y: float | None = Field(default=None, ge=0, le=100_000)
    button: LiveMouseButton = "left"
    clickCount: int = Field(default=1, ge=1, le=3)
    deltaX: float = Field(default=0, ge=-100_000, le=100_000)
    deltaY: float = Field(default=0, ge=-100_000, le=100_000)
    key: str | None = Field(default=None, min_length=1, max_length=32)


class DriverLiveStartParams(_Model):
    """Bridge → driver: start streaming the page of ``frameToken`` for hand-off
    ``handoverId``: the driver pushes ``live.frame`` events (Chromium: CDP
    ``Page.startScreencast``; Firefox: a JPEG screenshot every ``intervalMs``)."""

    frameToken: str = Field(min_length=1, max_length=128)
    handoverId: str = Field(min_length=1, max_length=64)
    quality: int = Field(default=70, ge=10, le=100, description="JPEG quality.")
    maxWidth: int = Field(default=1280, ge=100, le=4096, description="Image px.")
    maxHeight: int = Field(default=1024, ge=100, le=4096, description="Image px.")
    intervalMs: int = Field(default=200, ge=50, le=5_000,
                            description="Firefox: ms between two screenshots.")


class DriverLiveStartResult(_Model):
    """Driver → bridge: how frames come (``screencast`` or ``screenshots``)."""

    mode: Literal["screencast", "screenshots"]


class DriverLiveInputParams(_Model):
    """Bridge → driver: the person's input events for hand-off ``handoverId``, in order,
    as trusted input on its page (Playwright's mouse and keyboard)."""

    handoverId: str = Field(min_length=1, max_length=64)
    events: list[LiveInput] = Field(min_length=1, max_length=64)


class DriverLiveInputResult(_Model):
    """Driver → bridge: how many events were sent, and how many were refused (a key
    Playwright does not know); never which keys."""

    sent: int
    refused: int = 0


class DriverLiveStopParams(_Model):
    """Bridge → driver: stop streaming for hand-off ``handoverId`` (idempotent)."""

    handoverId: str = Field(min_length=1, max_length=64)


class DriverLiveStopResult(_Model):
    """Driver → bridge: ``stopped``: a stream was running; ``frames`` sent; ``navigations``
    of the page's main frame while it ran."""

    stopped: bool
    frames: int = 0
    navigations: int = 0
