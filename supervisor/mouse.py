"""Trusted mouse input at a viewport point, with no ref (MouseAction; vision tools).

NOT BUILT YET (issue 15 item 1): every op is refused with BAD_REQUEST until it is.
"""

from __future__ import annotations

from typing import Any

from playwright.async_api import Page

from bridge.protocol import errors as E
from bridge.protocol.models import MouseAction


async def act(page: Page, action: MouseAction, pointer: Any) -> dict[str, Any]:
    """Perform ``action`` at its point (CSS px of the top-level viewport)."""
    raise E.BadRequest(f"mouse {action.op} is not available yet.")
