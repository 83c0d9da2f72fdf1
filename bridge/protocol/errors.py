"""Errors of the trustbridge protocol: one class per wire code.

Hierarchy::

    TrustbridgeError                      base; carries code, message, details
     ├── TrustedInputUnavailable          TRUSTED_INPUT_UNAVAILABLE
     ├── FrameTokenUnknown                FRAME_TOKEN_UNKNOWN
     ├── LocatorNotUnique                 LOCATOR_NOT_UNIQUE
     ├── ClosedShadowRoot                 CLOSED_SHADOW_ROOT
     ├── RefNotFound                      REF_NOT_FOUND
     ├── ElementTargetDetached            ELEMENT_TARGET_DETACHED
     ├── ElementTargetAmbiguous           ELEMENT_TARGET_AMBIGUOUS
     ├── ElementTargetDisabled            ELEMENT_TARGET_DISABLED
     ├── ElementNotEditable               ELEMENT_NOT_EDITABLE
     ├── ElementObscured                  ELEMENT_OBSCURED
     ├── BrowserTabClosed                 BROWSER_TAB_CLOSED
     ├── BrowserDocumentChanged           BROWSER_DOCUMENT_CHANGED
     ├── BrowserOperationUncertain        BROWSER_OPERATION_UNCERTAIN
     ├── DeviceNotConnected               DEVICE_NOT_CONNECTED
     ├── Unauthorized                     UNAUTHORIZED
     ├── BadRequest                       BAD_REQUEST
     ├── ProtocolMismatch                 PROTOCOL_MISMATCH
     ├── DialogOpen                       DIALOG_OPEN
     ├── Timeout                          TIMEOUT
     ├── Cancelled                        CANCELLED
     └── InternalError                    INTERNAL_ERROR

On the wire an error is ``{"code", "message", "details"}`` (:class:`ErrorPayload`);
:func:`error_from_payload` turns it back into the same class, so a caller of the SDK
catches ``RefNotFound`` whether the extension, the bridge or the driver raised it.
Details must hold only safe values (ids, roles, counts), never page content or secrets
(design.md §6).
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


class ErrorPayload(BaseModel):
    """An error as it travels on the wire."""

    code: ErrorCode = Field(description="Stable wire name of the error (design.md §6).")
    message: str = Field(description="What went wrong and what the agent can do next.")
    details: dict[str, Any] = Field(
        default_factory=dict,
        description="Safe structured facts (ids, roles, counts); never page content or secrets.",
    )


class TrustbridgeError(Exception):
    """Base of every project error.

    Attributes:
        code: the wire code (:class:`ErrorCode`).
        message: human text that says what to do next.
        details: safe structured facts, JSON-serialisable.
    """

    code: ClassVar[ErrorCode] = ErrorCode.INTERNAL_ERROR

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = dict(details or {})

    def __str__(self) -> str:
        return f"{self.code.value}: {self.message}"

    def to_payload(self) -> ErrorPayload:
        """Return the wire form ``{code, message, details}``."""
        return ErrorPayload(code=self.code, message=self.message, details=self.details)


def _error_class(name: str, code: ErrorCode, doc: str) -> type[TrustbridgeError]:
    return type(name, (TrustbridgeError,), {"code": code, "__doc__": doc})


TrustedInputUnavailable = _error_class(
    "TrustedInputUnavailable",
    ErrorCode.TRUSTED_INPUT_UNAVAILABLE,
    "The device requires trusted input and its driver is offline; nothing was sent.",
)
FrameTokenUnknown = _error_class(
    "FrameTokenUnknown",
    ErrorCode.FRAME_TOKEN_UNKNOWN,
    "The frame has no token yet, or the driver does not hold it; take a new snapshot.",
)
LocatorNotUnique = _error_class(
    "LocatorNotUnique",
    ErrorCode.LOCATOR_NOT_UNIQUE,
    "The CSS locator matched zero or several elements at action time (design.md §4).",
)
ClosedShadowRoot = _error_class(
    "ClosedShadowRoot",
    ErrorCode.CLOSED_SHADOW_ROOT,
    "The target lives in a closed shadow root; no locator path is allowed there.",
)
RefNotFound = _error_class(
    "RefNotFound", ErrorCode.REF_NOT_FOUND, "The ref is unknown in this tab; take a new snapshot."
)
ElementTargetDetached = _error_class(
    "ElementTargetDetached",
    ErrorCode.ELEMENT_TARGET_DETACHED,
    "The element behind the ref left the document.",
)
ElementTargetAmbiguous = _error_class(
    "ElementTargetAmbiguous",
    ErrorCode.ELEMENT_TARGET_AMBIGUOUS,
    "The ref's element was replaced and several equivalent candidates exist.",
)
ElementTargetDisabled = _error_class(
    "ElementTargetDisabled", ErrorCode.ELEMENT_TARGET_DISABLED, "The target is disabled."
)
ElementNotEditable = _error_class(
    "ElementNotEditable", ErrorCode.ELEMENT_NOT_EDITABLE, "The target cannot take text."
)
ElementObscured = _error_class(
    "ElementObscured",
    ErrorCode.ELEMENT_OBSCURED,
    "Another element covers the target's action point.",
)
BrowserTabClosed = _error_class(
    "BrowserTabClosed", ErrorCode.BROWSER_TAB_CLOSED, "The tab is gone."
)
BrowserDocumentChanged = _error_class(
    "BrowserDocumentChanged",
    ErrorCode.BROWSER_DOCUMENT_CHANGED,
    "The ref belongs to an earlier document of the frame; take a new snapshot.",
)
BrowserOperationUncertain = _error_class(
    "BrowserOperationUncertain",
    ErrorCode.BROWSER_OPERATION_UNCERTAIN,
    "The action may have reached the page; it is never replayed (design.md §2 rule 7).",
)
DeviceNotConnected = _error_class(
    "DeviceNotConnected",
    ErrorCode.DEVICE_NOT_CONNECTED,
    "No extension (or no such device) is connected to the bridge.",
)
Unauthorized = _error_class(
    "Unauthorized", ErrorCode.UNAUTHORIZED, "Missing or wrong bridge token."
)
BadRequest = _error_class(
    "BadRequest", ErrorCode.BAD_REQUEST, "The message does not fit the protocol models."
)
ProtocolMismatch = _error_class(
    "ProtocolMismatch",
    ErrorCode.PROTOCOL_MISMATCH,
    "Peer and bridge speak different protocol versions.",
)
DialogOpen = _error_class(
    "DialogOpen",
    ErrorCode.DIALOG_OPEN,
    "A JavaScript dialog blocks the page; answer it (page.dialog) before anything else.",
)
Timeout = _error_class("Timeout", ErrorCode.TIMEOUT, "The operation did not finish in time.")
Cancelled = _error_class("Cancelled", ErrorCode.CANCELLED, "The caller cancelled the request.")
InternalError = _error_class(
    "InternalError", ErrorCode.INTERNAL_ERROR, "A bug: the bridge failed unexpectedly."
)

_BY_CODE: dict[ErrorCode, type[TrustbridgeError]] = {
    cls.code: cls
    for cls in (
        TrustedInputUnavailable,
        FrameTokenUnknown,
        LocatorNotUnique,
        ClosedShadowRoot,
        RefNotFound,
        ElementTargetDetached,
        ElementTargetAmbiguous,
        ElementTargetDisabled,
        ElementNotEditable,
        ElementObscured,
        BrowserTabClosed,
        BrowserDocumentChanged,
        BrowserOperationUncertain,
        DeviceNotConnected,
        Unauthorized,
        BadRequest,
        ProtocolMismatch,
        DialogOpen,
        Timeout,
        Cancelled,
        InternalError,
    )
}


def error_class(code: ErrorCode | str) -> type[TrustbridgeError]:
    """Return the exception class for a wire code (unknown codes map to InternalError)."""
    try:
        return _BY_CODE[ErrorCode(code)]
    except ValueError:
        return InternalError


def error_from_payload(payload: ErrorPayload) -> TrustbridgeError:
    """Turn a wire error back into the exception class of its code."""
    return error_class(payload.code)(payload.message, payload.details)
