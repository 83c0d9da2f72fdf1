"""Result types of the Python SDK (:mod:`bridge.sdk`, re-exported there).

Results are the bridge's result objects, typed here as ``TypedDict``\\ s: a field not
listed may be present (the protocol grows), a listed field marked ``NotRequired`` may not.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

MouseButton = Literal["left", "right", "middle"]
InputPath = Literal["trusted", "trusted-coordinates", "synthetic"]


class TabInfo(TypedDict):
    """One open tab, as ``tabs.list`` reports it."""

    tabId: int
    url: str
    title: str
    active: bool
    crashed: NotRequired[bool]
    """Its renderer crashed; navigate or reload it (it comes back as a new tab id)."""
    owner: NotRequired[str]
    """Label of the session that owns it (docs/sessions.md); absent: free."""
    mine: NotRequired[bool]
    """True when this connection's session owns it."""
    person: NotRequired[bool]
    """A free tab a person opened: claim it (:meth:`Browser.claim`) before acting in it."""
    windowId: NotRequired[int]
    """The browser window it is in (``new_tab(window=True)`` opens one per tab)."""


class TabsResult(TypedDict):
    """``tabs.list``: the device's open tabs and which device answered."""

    tabs: list[TabInfo]
    device: NotRequired[str]


class NavigateResult(TypedDict):
    """``page.navigate``: the tab after its load event."""

    tabId: int
    url: str
    title: str
    device: NotRequired[str]
    recoveredFromCrash: NotRequired[bool]
    """The tab's renderer had crashed; the page was loaded into a fresh tab, ``tabId``."""
    crashedTabId: NotRequired[int]
    """With ``recoveredFromCrash``: the crashed tab's id, which no longer exists."""


class SnapshotResult(TypedDict):
    """``page.snapshot``: the outline and where it came from."""

    snapshot: str
    """YAML-like outline, one ``- role "name" [ref=eN]`` line per node."""
    url: str
    title: str
    tabId: int
    frames: NotRequired[int]
    """Frames stitched into the outline (1 = top document only)."""
    refs: NotRequired[int]
    """Refs handed out by this snapshot."""
    device: NotRequired[str]
    mode: NotRequired[Literal["snapshot", "read", "diff"]]
    chars: NotRequired[int]
    """Characters in this page of the snapshot."""
    truncated: NotRequired[bool]
    """The budget cut the snapshot: follow ``cursor`` for the rest."""
    cursor: NotRequired[str | None]
    """Pass to :meth:`Tab.snapshot_result` to get the next page; None on the last page."""
    diff: NotRequired[dict[str, Any]]
    """Diff mode: ``{baseline: bool, added: int, removed: int}`` (lines)."""


class ActResult(TypedDict):
    """``page.act``: one input action done."""

    inputPath: InputPath
    """``trusted``: real browser input through the driver; ``synthetic``: DOM events from
    the extension, only on a device that never had a driver (the page sees isTrusted false)."""
    tabId: int
    device: NotRequired[str]
    ref: NotRequired[str | None]
    resolvedBy: NotRequired[Literal["original_ref", "semantic_rebind"]]
    """How the ref was found: the element the snapshot showed, or (after the page replaced
    it) the one equivalent element that took its place."""
    rebound: NotRequired[bool]
    """This action rebound the ref to an equivalent element (at most once per snapshot)."""
    postActionDocumentChanged: NotRequired[bool]
    """The action made the page load another document: take a new snapshot."""
    delivered: NotRequired[bool | None]
    """A trusted click on a ref: True if the target received it (pointerdown and click),
    False if something else did (e.g. an overlay), None if unknown (the page went away)."""
    deliveredEvents: NotRequired[list[str]]
    """Trusted event types the target received, e.g. ``["click", "mousedown", ...]``."""
    dialog: NotRequired[dict[str, Any]]
    """The JavaScript dialog the action opened (``{type, message, defaultValue, url}``):
    the page is blocked until :meth:`Tab.handle_dialog` answers it."""
    newTabs: NotRequired[list[dict[str, Any]]]
    """Tabs the action opened, as :meth:`Browser.tabs` lists them."""
    hit: NotRequired[dict[str, Any]]
    """Mouse input at a point (:meth:`Tab.mouse`): the element there, ``{ref, role, name,
    line, tag?, frame?}`` (null fields: nothing but the page); its ref works for :meth:`Tab.act`."""
    fastPath: NotRequired[bool]
    """A click or hover on a ref: True when the verified-point fast path sent the input,
    False when Playwright's full actionability path did."""
    fastRefused: NotRequired[str]
    """With ``fastPath`` False: the check that sent it the slow way."""
    downloads: NotRequired[list[dict[str, Any]]]
    """Downloads the action started, ``{suggestedFilename, path, bytes}`` each."""
    fileChooser: NotRequired[dict[str, Any]]
    """A file chooser the action opened, ``{multiple}``: answer it with an upload action
    with no ref."""


class WaitResult(TypedDict):
    """``page.wait``: how long it waited (ms) and, for a text wait, that it was found."""

    tabId: int
    waitedMs: int
    found: NotRequired[bool]
    device: NotRequired[str]


class TabRef(TypedDict):
    """A tab of a device: ``{device, tabId}``."""

    device: str
    tabId: int


class SessionOpenResult(TypedDict):
    """``session.open``: the session this connection's requests belong to."""

    sessionId: str
    label: str
    leaseMs: int
    heartbeatMs: int
    """The SDK renews the lease this often (ms) while idle."""
    secret: str
    """Resumes a kept session (``on_disconnect="keep"``); show it to nobody."""
    resumed: bool
    tabs: list[TabRef]
    """The tabs it owns (a resumed session's)."""


class SessionInfo(TypedDict):
    """One live session as ``sessions.list`` lists it (never its secret)."""

    label: str
    tabs: list[TabRef]
    connected: bool
    """A connection is attached to it (a kept session between CLI runs is not)."""
    onDisconnect: Literal["stop", "keep"]
    leaseMs: int
    expiresInMs: int | None
    """Ms until its lease runs out; None while a request of it is in flight."""
    lastAction: str | None
    """Method of its last request."""
    lastActionAgoMs: int | None
    inFlight: int
    """Its requests queued or running."""
    yours: bool
    """This connection's own session."""


class SessionTabsResult(TypedDict):
    """``session.release`` / ``session.handoff`` / ``tabs.claim``: the tabs concerned."""

    label: str
    """The session that gave (release, handoff) or took (claim) them."""
    tabs: list[TabRef]
    to: NotRequired[str | None]
    """Handoff: the receiving session's label."""
    person: NotRequired[bool | None]
    """Claim: the tab was a person's (no session had it)."""


class SessionStopResult(TypedDict):
    """``session.stop``."""

    label: str
    stopped: bool
    """False when it had stopped already."""
    cancelled: int
    """Its queued requests withdrawn: they never ran."""
    running: int
    """Its requests still running: each finishes and reports what it did."""
    released: list[TabRef]
    """Its tabs, now free (never closed)."""
