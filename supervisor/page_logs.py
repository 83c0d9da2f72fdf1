"""Console messages, network requests, viewport size and PDF of a page (driver).

NOT BUILT YET (issue 15 item 1): each is refused with BAD_REQUEST until it is.
"""

from __future__ import annotations

from typing import Any

from playwright.async_api import BrowserContext, Frame

from bridge.protocol import errors as E


def attach(context: BrowserContext) -> None:
    """Start recording console messages and requests of ``context``'s pages (not yet)."""


async def console(frame: Frame, params: Any) -> dict[str, Any]:
    raise E.BadRequest("page.console is not available yet.")


async def network(frame: Frame, params: Any) -> dict[str, Any]:
    raise E.BadRequest("page.network is not available yet.")


async def resize(frame: Frame, params: Any) -> dict[str, Any]:
    raise E.BadRequest("page.resize is not available yet.")


async def pdf(frame: Frame, params: Any) -> dict[str, Any]:
    raise E.BadRequest("page.pdf is not available yet.")
