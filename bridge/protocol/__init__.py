"""The trustbridge wire protocol: pydantic models and errors, shared by every peer."""

from .errors import *  # noqa: F401,F403
from .errors import ErrorCode, ErrorPayload, TrustbridgeError, error_from_payload
from .models import *  # noqa: F401,F403
from .results import *  # noqa: F401,F403
from .methods import METHOD_PARAMS, METHOD_RESULTS, METHODS, MethodFacts
from .models import (
    MESSAGE_ADAPTER,
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
    "METHODS",
    "MethodFacts",
    "PROTOCOL_VERSION",
    "Hello",
    "Request",
    "Response",
    "Welcome",
]
