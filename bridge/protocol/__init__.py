"""The trustbridge wire protocol: pydantic models and errors, shared by every peer."""

from .errors import *  # noqa: F401,F403
from .errors import ErrorCode, ErrorPayload, TrustbridgeError, error_from_payload
from .models import *  # noqa: F401,F403
from .models import (
    MESSAGE_ADAPTER,
    METHOD_PARAMS,
    METHOD_RESULTS,
    PROTOCOL_VERSION,
    Hello,
    Request,
    Response,
    Welcome,
)

__all__ = [
    "ErrorCode",
    "ErrorPayload",
    "TrustbridgeError",
    "error_from_payload",
    "MESSAGE_ADAPTER",
    "METHOD_PARAMS",
    "METHOD_RESULTS",
    "PROTOCOL_VERSION",
    "Hello",
    "Request",
    "Response",
    "Welcome",
]
