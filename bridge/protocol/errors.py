"""Errors of the trustbridge protocol: one class per wire code (docs/design.md §6).

Hierarchy (each class: its wire code; its typed facts, read from ``details``)::

    TrustbridgeError                      base: code, message, details, next_step
     ├── TrustedInputUnavailable          TRUSTED_INPUT_UNAVAILABLE     device
     ├── FrameTokenUnknown                FRAME_TOKEN_UNKNOWN           frameToken
     ├── LocatorNotUnique                 LOCATOR_NOT_UNIQUE            count
     ├── ClosedShadowRoot                 CLOSED_SHADOW_ROOT            ref
     ├── RefNotFound                      REF_NOT_FOUND                 ref, tabId
     ├── ElementTargetDetached            ELEMENT_TARGET_DETACHED       ref
     ├── ElementTargetAmbiguous           ELEMENT_TARGET_AMBIGUOUS      ref, candidates
     ├── ElementTargetDisabled            ELEMENT_TARGET_DISABLED       timeoutMs
     ├── ElementNotEditable               ELEMENT_NOT_EDITABLE          timeoutMs
     ├── ElementObscured                  ELEMENT_OBSCURED              coveredBy, timeoutMs
     ├── BrowserTabClosed                 BROWSER_TAB_CLOSED            tabId
     ├── BrowserDocumentChanged           BROWSER_DOCUMENT_CHANGED      ref, reason
     ├── BrowserOperationUncertain        BROWSER_OPERATION_UNCERTAIN   device, method, timeoutS
     ├── DeviceNotConnected               DEVICE_NOT_CONNECTED          device, method
     ├── Unauthorized                     UNAUTHORIZED
     ├── BadRequest                       BAD_REQUEST                   method, errors
     ├── ProtocolMismatch                 PROTOCOL_MISMATCH             peer, bridge
     ├── DialogOpen                       DIALOG_OPEN                   dialog
     ├── Timeout                          TIMEOUT                       method, timeoutMs, timeoutS
     ├── Cancelled                        CANCELLED
     ├── InternalError                    INTERNAL_ERROR                method
     ├── BrowserCrashed                   BROWSER_CRASHED               tabId, what
     ├── ElementValueNotSet               ELEMENT_VALUE_NOT_SET         expected, actual, cause
     ├── TabClaimed                       TAB_CLAIMED                   tabId, owner, person
     ├── TabBusy                          TAB_BUSY                      tabId, inFlight
     ├── SessionStopped                   SESSION_STOPPED               label, by
     ├── HandedToPerson                   HANDED_TO_PERSON              tabId, handoverId
     ├── ResultTooLarge                   RESULT_TOO_LARGE              bytes, limitBytes
     └── PageUnresponsive                 PAGE_UNRESPONSIVE             tabId, method, timeoutMs, device

On the wire an error is ``{"code", "message", "details", "nextStep"}``
(:class:`ErrorPayload`); :func:`error_from_payload` turns it back into the same class,
so a caller of the SDK catches ``RefNotFound`` (and reads ``err.ref``) whether the
extension, the bridge or the driver raised it.

Facts: every class names its facts as typed attributes. They live in ``details`` (the
wire form) and are read from there, so both constructor forms give the same error::

    RefNotFound("Ref e9 is unknown.", {"ref": "e9", "tabId": 3})
    RefNotFound("Ref e9 is unknown.", ref="e9", tabId=3)

A fact the raiser did not give is None. Details must hold only safe values (ids, roles,
counts), never page content or secrets.

Next step: each class has a ``DEFAULT_NEXT_STEP`` (what the agent should do about an
error of that code); a raiser that knows better passes ``next_step=``. The wire always
carries one (``nextStep``); ``err.next_step`` holds only a step given for this error
(None when it is the class default, so a surface such as the MCP server may phrase the
general advice in its own terms), and :attr:`TrustbridgeError.advice` is the one to show.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, Field

class ErrorCode(StrEnum):
    """Wire names of every error (design.md §6)."""

    TRUSTED_INPUT_UNAVAILABLE = "TRUSTED_INPUT_UNAVAILABLE"
    FRAME_TOKEN_UNKNOWN = "FRAME_TOKEN_UNKNOWN"
    LOCATOR_NOT_UNIQUE = "LOCATOR_NOT_UNIQUE"
    CLOSED_SHADOW_ROOT = "CLOSED_SHADOW_ROOT"
    REF_NOT_FOUND = "REF_NOT_FOUND"
    ELEMENT_TARGET_DETACHED = "ELEMENT_TARGET_DETACHED"
    ELEMENT_TARGET_AMBIGUOUS = "ELEMENT_TARGET_AMBIGUOUS"
    ELEMENT_TARGET_DISABLED = "ELEMENT_TARGET_DISABLED"
    ELEMENT_NOT_EDITABLE = "ELEMENT_NOT_EDITABLE"
    ELEMENT_OBSCURED = "ELEMENT_OBSCURED"
    BROWSER_TAB_CLOSED = "BROWSER_TAB_CLOSED"
    BROWSER_DOCUMENT_CHANGED = "BROWSER_DOCUMENT_CHANGED"
    BROWSER_OPERATION_UNCERTAIN = "BROWSER_OPERATION_UNCERTAIN"
    DEVICE_NOT_CONNECTED = "DEVICE_NOT_CONNECTED"
    UNAUTHORIZED = "UNAUTHORIZED"
    BAD_REQUEST = "BAD_REQUEST"
    PROTOCOL_MISMATCH = "PROTOCOL_MISMATCH"
    DIALOG_OPEN = "DIALOG_OPEN"
    TIMEOUT = "TIMEOUT"
    CANCELLED = "CANCELLED"
    INTERNAL_ERROR = "INTERNAL_ERROR"
    BROWSER_CRASHED = "BROWSER_CRASHED"
    ELEMENT_VALUE_NOT_SET = "ELEMENT_VALUE_NOT_SET"
    TAB_CLAIMED = "TAB_CLAIMED"
    TAB_BUSY = "TAB_BUSY"
    SESSION_STOPPED = "SESSION_STOPPED"
    HANDED_TO_PERSON = "HANDED_TO_PERSON"
    RESULT_TOO_LARGE = "RESULT_TOO_LARGE"
    PAGE_UNRESPONSIVE = "PAGE_UNRESPONSIVE"


class ErrorPayload(BaseModel):
    """An error as it travels on the wire."""

    code: ErrorCode = Field(description="Stable wire name of the error (design.md §6).")
    message: str = Field(description="What went wrong and what the agent can do next.")
    details: dict[str, Any] = Field(
        default_factory=dict,
        description="Safe structured facts (ids, roles, counts); never page content or secrets.",
    )
    nextStep: str | None = Field(
        default=None, max_length=1000,
        description="What the agent should do now (absent from older peers: then the "
        "default of the code).",
    )


class TrustbridgeError(Exception):
    """Base of every project error.

    Args:
        message: human text: what went wrong.
        details: safe structured facts, JSON-serialisable (the wire form of the facts).
        next_step: what the agent should do, when the raiser knows better than the
            class's ``DEFAULT_NEXT_STEP``.
        **facts: the class's typed facts by name (merged into ``details``; None skipped).

    Attributes:
        code: the wire code (:class:`ErrorCode`).
        message, details, next_step: as given.

    Raises:
        TypeError: a keyword that is not one of the class's facts.
    """

    code: ClassVar[ErrorCode] = ErrorCode.INTERNAL_ERROR
    DEFAULT_NEXT_STEP: ClassVar[str] = "Take a new snapshot to see the page's current state."
    FACTS: ClassVar[tuple[str, ...]] = ()
    """The names of the class's typed facts (from its annotations)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = [n for n, t in cls.__dict__.get("__annotations__", {}).items()
               if "ClassVar" not in str(t)]
        cls.FACTS = tuple(dict.fromkeys([*cls.FACTS, *own]))

    def __init__(self, message: str, details: dict[str, Any] | None = None, *,
                 next_step: str | None = None, **facts: Any) -> None:
        unknown = set(facts) - set(self.FACTS)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no facts {sorted(unknown)}")
        super().__init__(message)
        self.message = message
        self.details = {**(details or {}), **{k: v for k, v in facts.items() if v is not None}}
        self.next_step = next_step if next_step != self.DEFAULT_NEXT_STEP else None
        for name in self.FACTS:
            setattr(self, name, self.details.get(name))

    @property
    def advice(self) -> str:
        """The next step to show: the one given for this error, else the class's."""
        return self.next_step or self.DEFAULT_NEXT_STEP

    def __str__(self) -> str:
        return f"{self.code.value}: {self.message}"

    def to_payload(self) -> ErrorPayload:
        """Return the wire form ``{code, message, details, nextStep}``."""
        return ErrorPayload(code=self.code, message=self.message, details=self.details,
                            nextStep=self.advice)


class TrustedInputUnavailable(TrustbridgeError):
    """The device requires trusted input and its driver is offline; nothing was sent."""

    code = ErrorCode.TRUSTED_INPUT_UNAVAILABLE
    DEFAULT_NEXT_STEP = ("Nothing was sent. Wait for the device's input driver to come back "
                         "(check `trustbridge doctor`); do not retry before.")
    device: str | None


class FrameTokenUnknown(TrustbridgeError):
    """The frame has no token yet, or the driver does not hold it; take a new snapshot."""

    code = ErrorCode.FRAME_TOKEN_UNKNOWN
    DEFAULT_NEXT_STEP = "Take a new snapshot and retry with a ref from it."
    frameToken: str | None


class LocatorNotUnique(TrustbridgeError):
    """The CSS locator matched zero or several elements at action time (design.md §4)."""

    code = ErrorCode.LOCATOR_NOT_UNIQUE
    DEFAULT_NEXT_STEP = "The page changed since the snapshot: take a new one and use its refs."
    count: int | None


class ClosedShadowRoot(TrustbridgeError):
    """The target lives in a closed shadow root; no locator path is allowed there."""

    code = ErrorCode.CLOSED_SHADOW_ROOT
    DEFAULT_NEXT_STEP = ("Act on a control outside the closed root, use the keyboard, or, "
                         "for a click, retry with allowCoordinates: true.")
    ref: str | None


class RefNotFound(TrustbridgeError):
    """The ref is unknown in this tab; take a new snapshot."""

    code = ErrorCode.REF_NOT_FOUND
    DEFAULT_NEXT_STEP = ("Take a new snapshot of the tab and use a ref from it (a ref from "
                         "another tab needs that tab's id).")
    ref: str | None
    tabId: int | None


class ElementTargetDetached(TrustbridgeError):
    """The element behind the ref left the document."""

    code = ErrorCode.ELEMENT_TARGET_DETACHED
    DEFAULT_NEXT_STEP = "The element left the page: take a new snapshot."
    ref: str | None


class ElementTargetAmbiguous(TrustbridgeError):
    """The ref's element was replaced and several equivalent candidates exist."""

    code = ErrorCode.ELEMENT_TARGET_AMBIGUOUS
    DEFAULT_NEXT_STEP = "Take a new snapshot and pick the exact element's new ref."
    ref: str | None
    candidates: int | None


class ElementTargetDisabled(TrustbridgeError):
    """The target is disabled."""

    code = ErrorCode.ELEMENT_TARGET_DISABLED
    DEFAULT_NEXT_STEP = "Wait until it is enabled (page.wait), or choose another element."
    timeoutMs: int | None


class ElementNotEditable(TrustbridgeError):
    """The target cannot take text."""

    code = ErrorCode.ELEMENT_NOT_EDITABLE
    DEFAULT_NEXT_STEP = "Choose an editable element (a textbox) from a snapshot."
    timeoutMs: int | None


class ElementObscured(TrustbridgeError):
    """Another element covers the target's action point."""

    code = ErrorCode.ELEMENT_OBSCURED
    DEFAULT_NEXT_STEP = "Close or scroll away what covers the target, then retry."
    coveredBy: str | None
    timeoutMs: int | None


class BrowserTabClosed(TrustbridgeError):
    """The tab is gone."""

    code = ErrorCode.BROWSER_TAB_CLOSED
    DEFAULT_NEXT_STEP = "List the tabs (tabs.list) and pick one that is open."
    tabId: int | None


class BrowserDocumentChanged(TrustbridgeError):
    """The ref belongs to an earlier document of the frame; take a new snapshot."""

    code = ErrorCode.BROWSER_DOCUMENT_CHANGED
    DEFAULT_NEXT_STEP = "The page changed: wait for it to load, then take a new snapshot."
    ref: str | None
    reason: str | None


class BrowserOperationUncertain(TrustbridgeError):
    """The action may have reached the page; it is never replayed (design.md §2 rule 7)."""

    code = ErrorCode.BROWSER_OPERATION_UNCERTAIN
    DEFAULT_NEXT_STEP = ("It may or may not have happened and was not repeated: take a new "
                         "snapshot to check before doing anything again.")
    device: str | None
    method: str | None
    timeoutS: float | None


class DeviceNotConnected(TrustbridgeError):
    """No extension (or no such device) is connected to the bridge."""

    code = ErrorCode.DEVICE_NOT_CONNECTED
    DEFAULT_NEXT_STEP = ("Start the bridge and the browser (`trustbridge up`), or run "
                         "`trustbridge doctor` to see what is missing.")
    device: str | None
    method: str | None


class Unauthorized(TrustbridgeError):
    """Missing or wrong bridge token."""

    code = ErrorCode.UNAUTHORIZED
    DEFAULT_NEXT_STEP = "Use the token from the bridge's state directory (docs/security.md)."


class BadRequest(TrustbridgeError):
    """The message does not fit the protocol models."""

    code = ErrorCode.BAD_REQUEST
    DEFAULT_NEXT_STEP = "Check the request against the method's params (docs/protocol.schema.json)."
    method: str | None
    errors: list[str] | None


class ProtocolMismatch(TrustbridgeError):
    """Peer and bridge speak different protocol versions."""

    code = ErrorCode.PROTOCOL_MISMATCH
    DEFAULT_NEXT_STEP = "Update the older side so both speak the same protocol version."
    peer: int | None
    bridge: int | None


class DialogOpen(TrustbridgeError):
    """A JavaScript dialog blocks the page; answer it (page.dialog) before anything else.
    Each surface names its own way to answer (the CLI's ``trustbridge dialog accept``,
    MCP's browser_handle_dialog); this default is the wire method's."""

    code = ErrorCode.DIALOG_OPEN
    DEFAULT_NEXT_STEP = "Answer the dialog with page.dialog (accept true or false) first."
    dialog: dict[str, Any] | None


def a_dialog(kind: object) -> str:
    """``"An alert dialog"``, ``"A confirm dialog"``: a dialog of ``kind`` (its ``type``:
    alert, confirm, prompt, beforeunload) with the article English gives it, capitalised
    to start a message."""
    word = str(kind or "JavaScript")
    return f"{'An' if word[:1].lower() in 'aeiou' else 'A'} {word} dialog"


class Timeout(TrustbridgeError):
    """The operation did not finish in time."""

    code = ErrorCode.TIMEOUT
    DEFAULT_NEXT_STEP = "Take a new snapshot to see the page; retry, or wait longer if it is loading."
    method: str | None
    timeoutMs: int | None
    timeoutS: float | None


class Cancelled(TrustbridgeError):
    """The caller cancelled the request."""

    code = ErrorCode.CANCELLED
    DEFAULT_NEXT_STEP = "Nothing was sent; send the request again if it is still wanted."


class InternalError(TrustbridgeError):
    """A bug: the bridge failed unexpectedly."""

    code = ErrorCode.INTERNAL_ERROR
    DEFAULT_NEXT_STEP = ("A bug: take a new snapshot to see the page's state, and report the "
                         "bridge's log.")
    method: str | None


class BrowserCrashed(TrustbridgeError):
    """The tab's renderer or the whole browser crashed; what was in flight did not finish."""

    code = ErrorCode.BROWSER_CRASHED
    DEFAULT_NEXT_STEP = ("Reload or navigate the tab (a crashed renderer recovers on its next "
                         "load), then take a new snapshot: every ref of the crashed page is gone.")
    tabId: int | None
    what: str | None
    """``"renderer"`` (one page) or ``"browser"`` (the whole process)."""


class ElementValueNotSet(TrustbridgeError):
    """The input was delivered but the control's value is not the one the action promised
    (a field that rejects, reformats or ignores what was typed). Secrets are never echoed:
    ``expected`` and ``actual`` are lengths or kinds for masked fields."""

    code = ErrorCode.ELEMENT_VALUE_NOT_SET
    DEFAULT_NEXT_STEP = ("Take a snapshot to see the control's value; the page changed or "
                         "refused it. Try another verb (type key by key, select_option).")
    expected: Any
    actual: Any
    cause: str | None


class TabClaimed(TrustbridgeError):
    """Another session owns the tab (docs/sessions.md): nothing was sent to the page.
    ``owner`` is the owning session's label (never its secret); ``person`` is true for a
    tab a person opened that no session has claimed (it must be claimed explicitly)."""

    code = ErrorCode.TAB_CLAIMED
    DEFAULT_NEXT_STEP = ("Work in a tab of your own (tabs.new), or ask the owner to release "
                         "or hand off the tab; a person's tab needs an explicit tabs.claim.")
    tabId: int | None
    owner: str | None
    person: bool | None


class TabBusy(TrustbridgeError):
    """A handoff of a tab with this session's work still queued or running on it is
    refused (docs/sessions.md): the new owner would inherit half-done work."""

    code = ErrorCode.TAB_BUSY
    DEFAULT_NEXT_STEP = "Wait until your requests on the tab have answered, then hand it off."
    tabId: int | None
    inFlight: int | None


class SessionStopped(TrustbridgeError):
    """The session this request belongs to was stopped (by a person, ``session.stop``,
    lease expiry or its client's disconnect); its queued work was cancelled and its tabs
    released. Nothing of this request was sent."""

    code = ErrorCode.SESSION_STOPPED
    DEFAULT_NEXT_STEP = ("The session is over: open a new one (session.open) if the work "
                         "should go on — a person may have stopped it on purpose.")
    label: str | None
    by: str | None


class HandedToPerson(TrustbridgeError):
    """The tab is handed to a person (``human.request``, docs/mcp.md
    ``browser_request_human``): until the person hands it back, cancels, or the hand-off
    times out, every agent request on it (any session's, input and reads) is refused.
    Nothing of this request was sent."""

    code = ErrorCode.HANDED_TO_PERSON
    DEFAULT_NEXT_STEP = ("A person is working in this tab: wait for the hand-off's answer "
                         "(human.wait / browser_request_human returns when the person hands "
                         "back), then take a new snapshot; work in another tab meanwhile.")
    tabId: int | None
    handoverId: str | None


class ResultTooLarge(TrustbridgeError):
    """A page-derived result (an evaluate's value, a console or network listing) is over
    the cap given to the agent (bridge/protocol/limits.py RESULT_CAP_BYTES, 1 MB). It was
    measured where it was made and never sent on; nothing else was affected (issue 32
    item 3)."""

    code = ErrorCode.RESULT_TOO_LARGE
    DEFAULT_NEXT_STEP = ("Ask for less: return a slice or a summary (e.g. .slice(0, 10000), "
                         "a count, selected fields), or filter the listing.")
    bytes: int | None
    limitBytes: int | None


class PageUnresponsive(TrustbridgeError):
    """The tab's page does not answer: its main thread is busy (a script in an endless
    loop) or the renderer hung. Found after one timeout by a short probe (issue 32 item 4,
    bridge/hang_watch.py); other tabs are not affected. The request got no answer from
    the page."""

    code = ErrorCode.PAGE_UNRESPONSIVE
    DEFAULT_NEXT_STEP = ("Close the tab (browser_tabs close / tabs.close), which always "
                         "works; a reload works in Firefox, not in Chromium. Other tabs keep working.")
    tabId: int | None
    method: str | None
    timeoutMs: int | None
    device: str | None


_BY_CODE: dict[ErrorCode, type[TrustbridgeError]] = {
    cls.code: cls for cls in TrustbridgeError.__subclasses__()
}


def error_class(code: ErrorCode | str) -> type[TrustbridgeError]:
    """Return the exception class for a wire code (unknown codes map to InternalError)."""
    try:
        return _BY_CODE[ErrorCode(code)]
    except ValueError:
        return InternalError


def error_from_payload(payload: ErrorPayload) -> TrustbridgeError:
    """Turn a wire error back into the exception class of its code, facts and next
    step included."""
    return error_class(payload.code)(payload.message, payload.details,
                                     next_step=payload.nextStep)
