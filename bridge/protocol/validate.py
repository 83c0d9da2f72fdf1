"""Validation of wire payloads against the method table (bridge/protocol/methods.py).

Every peer validates what it receives with these, so a malformed message becomes a
BAD_REQUEST (from a client) or an INTERNAL_ERROR naming the peer's method (from a peer
the bridge asked), never a crash or a silently wrong result (docs/design.md §8).
"""

from __future__ import annotations

from typing import Any

import pydantic

from . import errors as E
from .methods import CLIENT_METHODS, METHOD_PARAMS, METHOD_RESULTS


def validate_params(method: str, params: dict[str, Any], *, client: bool = True) -> Any:
    """Parse a request's params with its method's model.

    Args:
        method: the wire method name.
        params: the request's ``params`` object.
        client: the request comes from an agent (only CLIENT_METHODS are allowed).

    Returns:
        The params model instance.

    Raises:
        BadRequest: unknown method (for this sender) or invalid params; ``details``
            holds ``{"method"}`` or ``{"errors": [loc, ...]}``.
    """
    model = METHOD_PARAMS.get(method)
    if model is None or (client and method not in CLIENT_METHODS):
        raise E.BadRequest(f"Unknown method {method!r}.", {"method": method})
    try:
        return model.model_validate(params)
    except pydantic.ValidationError as exc:
        raise E.BadRequest(
            f"Invalid params for {method}: " + summarise(exc), {"errors": error_locs(exc)}
        ) from exc


def validate_result(method: str, result: dict[str, Any], sender: str = "A peer") -> dict[str, Any]:
    """Check an answer against its method's result model.

    Args:
        method: the wire method answered.
        result: the answer's ``result`` object.
        sender: who answered, for the error text (``"The driver of device 'd1'"``).

    Returns:
        ``result`` itself, unchanged: a check, never a rewrite (no field dropped, none
        added), so every field a peer sends reaches the client.

    Raises:
        InternalError: the answer does not fit the model (a peer bug or version drift);
            ``details``: ``{"method", "errors": [loc, ...]}``.
    """
    model = METHOD_RESULTS.get(method)
    if model is None:
        return result
    try:
        model.model_validate(result)
    except pydantic.ValidationError as exc:
        raise E.InternalError(
            f"{sender} answered {method} with a malformed result: " + summarise(exc),
            {"method": method, "errors": error_locs(exc)},
        ) from exc
    return result


def summarise(exc: pydantic.ValidationError) -> str:
    """The first three validation errors as ``loc: msg`` text."""
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(p) for p in err["loc"]) or "(message)"
        parts.append(f"{loc}: {err['msg']}")
    more = exc.error_count() - len(parts)
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def error_locs(exc: pydantic.ValidationError) -> list[str]:
    """Where each of the first ten validation errors is (``"action.kind"``)."""
    return [".".join(str(p) for p in err["loc"]) for err in exc.errors()[:10]]
