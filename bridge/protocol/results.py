"""Result models: what each method's answer holds (registered in methods.py).

Written from what the peers really send: the extension (extension/src/background/main.js,
tabs.js, snapshot.js, content/main.js, page/synthetic.js, page/receipt.js), the driver
(supervisor/driver.py, actions.py, dialogs.py) and the fields the bridge adds on the way
to the client (bridge/executor.py: ``device`` on every routed answer, ``inputPath``,
``ref``, ``delivered`` ... on input).

One model serves a method both where the peer answers the bridge and where the bridge
answers the client, so the fields only the bridge adds (``device`` and the like) are
optional. Every result model allows fields it does not name (``extra="allow"``): the
documented fields are typed and checked, any other field passes through untouched
(:func:`~bridge.protocol.validate.validate_result` never rewrites an answer), so a
peer's new field is never dropped on its way to a client.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .errors import ErrorPayload
from .models import DeviceInfo


class _Result(BaseModel):
    model_config = ConfigDict(extra="allow")


class _Routed(_Result):
    device: str | None = Field(
        default=None, description="The device that served it (added by the bridge).")


# --------------------------------------------------------------------------- tabs


class TabInfo(_Result):
    """One tab as ``tabs.list`` lists it (extension/src/background/tabs.js ``list``)."""

    tabId: int
    url: str = Field(description="The tab's URL, or its pending URL while it loads.")
    title: str
    active: bool
    openerTabId: int | None = Field(default=None, description="The tab that opened it.")
    openedAt: float | None = Field(
        default=None, description="When the extension saw it open, ms since the epoch.")
    crashed: bool | None = Field(
        default=None, description="True while the tab's renderer has crashed (its page is "
        "gone; navigate or reload it to recover); absent otherwise.")
    owner: str | None = Field(
        default=None, description="The label of the session that owns the tab (added by "
        "the bridge; absent: free).")
    mine: bool | None = Field(
        default=None, description="True when the asking session owns the tab.")
    person: bool | None = Field(
        default=None, description="True for a free tab a person opened: a session must "
        "claim it explicitly (tabs.claim) before acting in it.")
    current: bool | None = Field(
        default=None, description="Whether this is the asking session's current tab on "
        "the device, where its requests without tabId go (added by the bridge; absent "
        "when the session has none there: they go to the active tab).")
    status: str | None = Field(
        default=None, max_length=32, description="The browser's load status of the tab: "
        "loading, complete (tabs API ``status``).")
    windowId: int | None = Field(
        default=None, description="The browser window the tab is in (``tabs.new {window: "
        "true}`` opens a window per tab; tabs API ``windowId``).")


class TabsListResult(_Routed):
    """``tabs.list``: every tab of the device's browser."""

    tabs: list[TabInfo]


class TabResult(_Routed):
    """``tabs.new`` / ``tabs.select``: the tab and what it shows."""

    tabId: int
    url: str
    title: str


# --------------------------------------------------------------------------- pages


class DialogInfo(_Result):
    """A JavaScript dialog open on the page (supervisor/dialogs.py)."""

    type: str = Field(description="alert, confirm, prompt or beforeunload.")
    message: str
    defaultValue: str | None = None
    url: str | None = None


class TabClosedResult(_Routed):
    """``tabs.close``."""

    tabId: int
    closed: Literal[True]
    acceptedBeforeUnload: DialogInfo | None = Field(
        default=None, description="The page asked to confirm leaving (beforeunload) and "
        "the bridge accepted, since the close was asked for (issue 32 item 5; off with "
        "TRUSTBRIDGE_BEFOREUNLOAD=ask).")


class NavigateResult(_Routed):
    """``page.navigate`` / ``page.history``: the tab's document once loaded, or
    ``transitionPending: true`` when it is not (yet): no entry to go to in time
    (history), or a dialog blocks the load (then ``dialog``, from the bridge)."""

    tabId: int | None = Field(default=None, description="Absent when a dialog blocks the load.")
    url: str | None = None
    title: str | None = None
    transitionPending: bool | None = None
    dialog: DialogInfo | None = None
    recoveredFromCrash: bool | None = Field(
        default=None, description="True when the tab's renderer had crashed and this load "
        "recovered it: the tab was discarded first, so ``tabId`` is its new id "
        "(extension/src/background/tabs.js recoverIfCrashed).")
    crashedTabId: int | None = Field(
        default=None, description="With ``recoveredFromCrash``: the tab's id before, "
        "which no longer exists.")
    acceptedBeforeUnload: DialogInfo | None = Field(
        default=None, description="The page asked to confirm leaving (beforeunload) and "
        "the bridge accepted, since the navigation was asked for (issue 32 item 5; off "
        "with TRUSTBRIDGE_BEFOREUNLOAD=ask).")


class SnapshotDiff(_Result):
    """What a diff compared (extension/src/background/diff.js)."""

    baseline: bool = Field(description="A previous complete snapshot existed to compare with.")
    added: int = Field(ge=0, description="Lines added.")
    removed: int = Field(ge=0, description="Lines removed.")


class SnapshotResult(_Routed):
    """``page.snapshot`` (extension/src/background/snapshot.js); see SnapshotParams."""

    snapshot: str = Field(description="The outline, text or diff.")
    url: str
    title: str
    tabId: int | None
    mode: Literal["snapshot", "read", "diff"]
    frames: int = Field(ge=0, description="Frames stitched in.")
    refs: int = Field(ge=0, description="Refs in this page of the snapshot.")
    chars: int = Field(ge=0, description="Characters of this page.")
    truncated: bool
    cursor: str | None = Field(description="The next page's cursor when truncated.")
    diff: SnapshotDiff | None = None


class _SnapshotAfter(_Routed):
    """A result that may carry the snapshot its request asked for (``snapshotAfter``,
    bridge/protocol/models.py ``SnapshotAfter``)."""

    snapshotAfter: SnapshotResult | None = Field(
        default=None, description="The page's snapshot taken right after (when asked).")
    snapshotAfterError: ErrorPayload | None = Field(
        default=None, description="Why the snapshot asked for could not be taken.")


class WaitResult(_SnapshotAfter):
    """``page.wait``: ``{tabId, waitedMs}`` after a fixed wait, ``found: true`` too when
    the text appeared, ``gone: true`` when ``textGone`` left every frame (a text that never
    appears, or never goes, is TIMEOUT, not a result)."""

    tabId: int
    waitedMs: int = Field(ge=0, description="How long it waited, ms.")
    found: Literal[True] | None = None
    gone: Literal[True] | None = None


class ActResult(_SnapshotAfter):
    """``page.act``, and each completed action of ``page.batch``.

    The verb adds its own fields (``changed``/``checked`` for check, ``selected`` /
    ``changeEvents`` for select, ``via`` for upload; supervisor/actions.py).
    """

    done: Literal[True]
    action: str | None = Field(default=None, description="The action's kind.")
    tabId: int | None = None
    inputPath: Literal["trusted", "trusted-coordinates", "synthetic", "script"] | None = Field(
        default=None, description="How the input reached the page (added by the bridge).")
    ref: str | None = None
    frameUrl: str | None = Field(default=None, description="URL of the target's frame (driver).")
    postActionDocumentChanged: bool | None = Field(
        default=None, description="The target's frame started loading another document.")
    resolvedBy: Literal["original_ref", "semantic_rebind"] | None = None
    rebound: bool | None = None
    dialog: DialogInfo | None = Field(default=None, description="A dialog the action opened.")
    popups: list[dict[str, Any]] | None = Field(
        default=None, description="Pages the action opened, as the driver saw them ({url}).")
    newTabs: list[dict[str, Any]] | None = Field(
        default=None, description="Those tabs as tabs.list lists them (added by the bridge).")
    delivered: bool | None = Field(
        default=None, description="A trusted click's receipt: the target got it (None: "
        "unknown, the page went away).")
    deliveredEvents: list[str] | None = None
    hit: dict[str, Any] | None = Field(
        default=None, description="MouseAction: the element at the point ({ref, role, "
        "name, line}).")
    fastPath: bool | None = Field(
        default=None, description="The verified-point fast path sent the input (issue 18); "
        "false: Playwright's full actionability path did.")
    fastRefused: str | None = Field(
        default=None, description="With fastPath false: the check that sent it the slow way.")
    downloads: list[dict[str, Any]] | None = Field(
        default=None, description="Downloads the action started ({suggestedFilename, path, "
        "bytes}; supervisor/watch.py).")
    fileChooser: dict[str, Any] | None = Field(
        default=None, description="A file chooser the action opened ({multiple}); answer it "
        "with an upload action with no ref.")
    viaLabel: dict[str, Any] | None = Field(
        default=None, description="A check or click on a checkbox or radio input that could "
        "not take the click itself (no size, hidden, covered): its shown label was clicked "
        "instead and the state read back ({label: its text, why: zero-size | hidden | "
        "covered}; supervisor/labels.py).")


class CompletedAction(ActResult):
    index: int = Field(ge=0, description="Position in the batch.")


class InterruptedAction(_Result):
    index: int = Field(ge=0, description="Position in the batch of the action that failed.")
    error: ErrorPayload


class BatchResult(_SnapshotAfter):
    """``page.batch``: the actions done, and the one that failed (nothing after it ran)."""

    completedActions: list[CompletedAction]
    interruptedAction: InterruptedAction | None


class DialogResult(_Routed):
    """``page.dialog`` / ``driver.dialog``: the dialog that was answered."""

    type: str
    message: str
    accepted: bool


class Clip(_Result):
    """A rectangle in CSS px of the top-level page."""

    x: float
    y: float
    width: float = Field(ge=0)
    height: float = Field(ge=0)


class ScreenshotResult(_Routed):
    """``page.screenshot`` / ``driver.screenshot`` (supervisor/driver.py ``screenshot``)."""

    png: str = Field(description="The image, base64: a PNG, or a JPEG when ``type`` is jpeg.")
    type: Literal["png", "jpeg"] = Field(default="png", description="Its format.")
    width: int = Field(ge=0, description="Image px.")
    height: int = Field(ge=0, description="Image px.")
    scale: float = Field(gt=0, description="Image px per CSS px.")
    clip: Clip
    tabId: int | None = None


class EvaluateResult(_Routed):
    """``page.evaluate`` / ``driver.evaluate``: the script's JSON-serialisable value."""

    value: Any = Field(description="JSON null when the script returned nothing.")
    world: Literal["isolated", "main"] | None = Field(
        default=None, description="Where the script ran (driver).")
    tabId: int | None = None


class FindMatch(_Result):
    """One element ``page.find`` found (extension/src/page/find.js)."""

    ref: str | None = Field(description="Its ref (null for a line without one).")
    line: str = Field(description="Its outline line, as a snapshot prints it.")
    ancestry: list[str] = Field(default_factory=list,
                                description="Outline lines of its ancestors, outermost first.")


class FindResult(_Routed):
    """``page.find``: matching lines with refs (see FindParams)."""

    matches: list[FindMatch]
    text: str = Field(description="The matches as an indented outline, ancestry included.")
    truncated: bool = Field(description="The limit or the time budget cut the walk.")
    url: str
    title: str
    tabId: int | None


class ConsoleResult(_Routed):
    """``page.console`` (supervisor/page_logs.py)."""

    messages: list[dict[str, Any]]
    total: int | None = Field(default=None, ge=0, description="Messages kept, any level.")
    errors: int | None = Field(default=None, ge=0, description="Of those, errors.")
    warnings: int | None = Field(default=None, ge=0, description="Of those, warnings.")
    tabId: int | None = None


class NetworkResult(_Routed):
    """``page.network`` (supervisor/page_logs.py): ``requests``, or ``request`` in detail."""

    requests: list[dict[str, Any]] | None = None
    request: dict[str, Any] | None = None
    hiddenStatic: int | None = Field(
        default=None, ge=0, description="Successful static requests left out (no "
        "includeStatic).")
    tabId: int | None = None


class ResizeResult(_Routed):
    """``page.resize``: the viewport size now, CSS px."""

    width: int
    height: int
    tabId: int | None = None


class EmulateMediaResult(_Routed):
    """``page.emulateMedia``: the media features the page matches afterwards (its own
    ``matchMedia``, read where page script cannot forge it)."""

    colorScheme: Literal["light", "dark"]
    reducedMotion: Literal["reduce", "no-preference"]
    forcedColors: Literal["active", "none"]
    contrast: Literal["more", "less", "custom", "no-preference"]
    media: Literal["screen", "print"]
    tabId: int | None = None


class PdfResult(_Routed):
    """``page.pdf``: the PDF, base64, and its size in bytes."""

    pdf: str
    bytes: int = Field(ge=0)
    tabId: int | None = None


class TracingResult(_Routed):
    """``page.tracing``: whether a trace is being recorded now; after ``stop``, the trace
    file's absolute path on the driver's machine and its size in bytes."""

    tracing: bool
    path: str | None = None
    bytes: int | None = Field(default=None, ge=0)
    tabId: int | None = None


class DevicesResult(_Result):
    """``devices.list``."""

    devices: list[DeviceInfo]


class ReceiptIntercepted(_Result):
    """The element that was topmost at a guarded press's point (ReceiptResult.intercepted)."""

    tag: str | None = Field(default=None, max_length=64)
    text: str = Field(default="", max_length=200, description="Its visible text or "
                      "aria-label, at most 80 characters; empty for a field.")
    targetGone: bool = Field(default=False, description="The target had left the page "
                             "by the press (a page that re-renders it on hover).")
    afterPresses: int = Field(default=0, ge=0, le=3, description="Presses of the same "
                              "action the guard let through to the target before this one "
                              "(a double click's first).")


class TabProbeResult(_Result):
    """``tabs.probe`` (extension/src/background/main.js): whether the tab's page ran a
    trivial script (``scripting.executeScript``) within ``timeoutMs``."""

    tabId: int
    responsive: bool | None = Field(
        description="True: it ran; False: no answer within the time (main thread stuck, "
        "renderer hung); null: the page cannot be scripted (a browser page), so unknown.")
    ms: int = Field(ge=0, description="How long the probe took, ms.")


class ReceiptResult(_Result):
    """``page.receipt`` (extension/src/page/receipt.js): whether a trusted click reached
    its target; ``delivered: null`` when the document went away meanwhile."""

    delivered: bool | None
    events: list[str] = Field(max_length=16)
    fileInput: bool = Field(default=False, description="A file input was clicked right "
                            "after the press (models.ReceiptEvent).")
    download: bool = Field(default=False, description="models.ReceiptEvent.download.")
    navigates: bool = Field(default=False, description="models.ReceiptEvent.navigates.")
    pressedOn: ReceiptIntercepted | None = Field(
        default=None, description="A control inside the target (a link, a button, an "
        "element with such a role) that the press hit: the click reached the target by "
        "bubbling, but that control got it first and may have acted (a menu the hover "
        "opened inside the target; a card's inner link).")
    intercepted: ReceiptIntercepted | None = Field(
        default=None, description="The fast path's press guard stopped the press: another "
        "element was topmost at the point when the press came (page/receipt.js, 'Press "
        "guard'); the page never got the press or the click.")


class CancelResult(_Result):
    """``request.cancel`` (bridge/server.py): ``cancelled`` when the request was still
    queued and never runs; ``running`` ones finish, ``unknown`` ids were not in progress."""

    requestId: str
    cancelled: bool
    state: Literal["queued", "running", "unknown"]


# --------------------------------------------------------------------------- sessions


class TabRef(_Result):
    """A tab of a device."""

    device: str
    tabId: int


class SessionOpenResult(_Result):
    """``session.open``: the session this connection's requests now belong to."""

    sessionId: str
    label: str
    leaseMs: int
    heartbeatMs: int = Field(description="Send session.renew this often (ms) when idle.")
    secret: str = Field(description="Resumes a kept session (onDisconnect keep); show it "
                        "to nobody: other sessions never see it.")
    resumed: bool
    tabs: list[TabRef] = Field(default_factory=list, description="Tabs it owns (resumed).")


class SessionRenewResult(_Result):
    """``session.renew``: the lease runs ``leaseMs`` from now."""

    label: str
    leaseMs: int


class SessionTabsResult(_Result):
    """``session.release`` / ``session.handoff`` / ``tabs.claim``: the tabs concerned."""

    label: str
    tabs: list[TabRef]
    to: str | None = None
    person: bool | None = Field(default=None, description="tabs.claim: the tab was a "
                                "person's (no session had it).")


class SessionStopResult(_Result):
    """``session.stop``."""

    label: str
    stopped: bool = Field(description="False when it had stopped already.")
    cancelled: int = Field(description="Queued requests withdrawn (they never ran).")
    running: int = Field(description="Requests still running; each reports what it did.")
    released: list[TabRef]


class SessionInfo(_Result):
    """One session as ``sessions.list`` lists it (never its secret)."""

    label: str
    tabs: list[TabRef]
    connected: bool
    onDisconnect: Literal["stop", "keep"]
    leaseMs: int
    expiresInMs: int | None = Field(description="None while a request of it is in flight.")
    lastAction: str | None = Field(description="Method of its last request.")
    lastActionAgoMs: int | None
    inFlight: int
    yours: bool = Field(description="The asking connection's own session.")


class SessionsListResult(_Result):
    """``sessions.list``: every live session of the bridge to an operator connection;
    to any other, its own session only and how many others there are."""

    sessions: list[SessionInfo]
    others: int | None = Field(default=None, description="Live sessions not listed (their "
                               "labels are shown to operator connections only).")


class CdpEndpointResult(_Routed):
    """``cdp.endpoint`` (docs/cdp.md): where Playwright's ``connect_over_cdp`` or
    Puppeteer connect; valid while the device's input driver runs."""

    url: str = Field(description="ws://127.0.0.1:PORT/devtools/browser/<token>")
    httpUrl: str = Field(description="The same endpoint for clients that read "
                         "/json/version first (Playwright's http:// form).")
    session: str | None = Field(default=None,
                                description="The session label it was issued to.")


class PairingCreateResult(_Result):
    """``pairing.create``: the code to type into the extension's options page."""

    code: str = Field(description="One-time code (8 characters), shown as XXXX-XXXX.")
    device: str = Field(description="The device the extension is paired as.")
    expiresInMs: int = Field(description="How long the code stays valid, ms (single use).")


class HumanRequestResult(_Routed):
    """``human.request`` (issue 37): the tab is handed to a person now."""

    handoverId: str
    liveUrl: str = Field(description="The live-view link for the person only: single use, "
                         "expires at expiresAt; the agent relays it and never opens it.")
    expiresAt: float = Field(description="ms since the epoch.")
    tabId: int | None = None
    reason: str


class HumanPage(_Result):
    url: str | None = None
    title: str | None = None


class HumanWaitResult(_Routed):
    """``human.wait``: how the hand-off ended and what changed on the tab meanwhile; never
    what the person typed (only how many keys)."""

    handoverId: str
    state: str = Field(description="handedBack | cancelled | closed | timedOut | stopped | "
                       "withdrawn | tabClosed")
    tabId: int | None = None
    before: HumanPage
    after: HumanPage | None = Field(default=None,
                                    description="None: the tab is gone (closed meanwhile).")
    personInput: dict[str, int] = Field(
        description="Counts of the person's input: clicks, keys, wheels (no key names).")
    navigations: int = Field(description="Documents the tab's main frame loaded meanwhile.")
    opened: bool = Field(description="The person opened the live view.")


class HumanEndResult(_Routed):
    """``human.end``: ``ended`` is false when the hand-off had already ended (``state``
    says how)."""

    handoverId: str
    ended: bool
    state: str
