"""Size limits of what travels to the bridge and on to the agent (issue 32 item 3).

- :data:`FRAME_LIMIT_BYTES`: the largest WebSocket frame the bridge accepts
  (``bridge/server.py`` DEFAULT_MAX_MESSAGE_BYTES). A peer that sends a larger one has
  its connection closed by the websockets library (close code 1009), so every
  driver / extension message is kept under it where it is made.
- :data:`RESULT_CAP_BYTES`: the largest page-derived result (an evaluate's value, a
  console or network listing) handed to the agent. Past it the producer (the supervisor,
  or the extension) answers RESULT_TOO_LARGE with the size, and the oversized payload
  never crosses the socket.

Sizes are bytes of the compact UTF-8 JSON of the value (``json.dumps(value,
separators=(",", ":"), ensure_ascii=False)``), which is what the frame carries.
"""

from __future__ import annotations

import json
from typing import Any

from . import errors as E

FRAME_LIMIT_BYTES = 32 * 1024 * 1024
"""32 MiB: the bridge's frame limit (a full-page PNG screenshot in base64 fits)."""

RESULT_CAP_BYTES = 1_000_000
"""1 MB: the largest evaluate value, console or network listing given to the agent
(issue 32 item 3: "above a cap, say 1 MB to the agent"). An agent's context cannot use
more, and a result this size takes milliseconds, not the 48 s a 20 MB one took."""

FRAME_MARGIN_BYTES = 64 * 1024
"""Room left under FRAME_LIMIT_BYTES for the envelope of a message (id, method, keys)."""


def json_bytes(value: Any) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON (what a frame carries).

    Raises:
        TypeError / ValueError: ``value`` is not JSON-serialisable.
    """
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def too_large(size: int, what: str, narrow: str, limit: int = RESULT_CAP_BYTES
              ) -> E.ResultTooLarge:
    """The RESULT_TOO_LARGE error for a result of ``size`` bytes.

    Args:
        size: the result's size, bytes (compact UTF-8 JSON).
        what: what the result was ("The script's value", "The console listing").
        narrow: how to get a smaller result (the error's next step).
        limit: the cap it went over, bytes.
    """
    return E.ResultTooLarge(
        f"{what} is {size:,} bytes, over the {limit:,}-byte limit; it was not sent and nothing "
        "else was affected.", next_step=narrow, bytes=size, limitBytes=limit)


def check_result(value: Any, what: str, narrow: str, limit: int = RESULT_CAP_BYTES) -> None:
    """Raise RESULT_TOO_LARGE when ``value`` is over ``limit`` bytes as JSON.

    Raises:
        ResultTooLarge: ``details.bytes`` the size, ``details.limitBytes`` the cap.
    """
    size = json_bytes(value)
    if size > limit:
        raise too_large(size, what, narrow, limit)
