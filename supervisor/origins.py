"""``--allowed-origins`` / ``--blocked-origins`` enforced in the browser.

The policy itself (the list forms, Playwright MCP's rule) is plain and shared with the
bridge: :mod:`bridge.protocol.origins`, re-exported here. :func:`install` enforces it in a
browser context with ``context.route``, so a blocked request really fails in the page
(``net::ERR_BLOCKED_BY_CLIENT`` in Chromium) and a navigation to a blocked origin fails
to load (the bridge refuses an agent's own navigation to one before it is sent,
bridge/urls.py). Like Playwright MCP's, this is a guard rail, not a security boundary:
WebSockets and the targets of redirects are not checked.
"""

from __future__ import annotations

import logging
import sys

from playwright.async_api import BrowserContext, Route

from trustbridge.bridge.protocol.origins import (
    CHECKED_SCHEMES,
    DEFAULT_PORTS,
    OriginPattern,
    OriginPolicy,
    parse_origin_list,
    parse_origin_pattern,
)
from trustbridge.bridge.urls import redact_credentials

__all__ = ["CHECKED_SCHEMES", "DEFAULT_PORTS", "OriginPattern", "OriginPolicy", "install",
           "parse_origin_list", "parse_origin_pattern"]

log = logging.getLogger("trustbridge.supervisor.origins")


async def install(context: BrowserContext, policy: OriginPolicy) -> None:
    """Enforce ``policy`` in ``context``: a blocked request is aborted
    (``blockedbyclient``), every other one falls through to any other route handler.

    Nothing is installed for an inactive policy: a route makes Playwright disable the
    HTTP cache and costs a round trip per request.
    """
    if not policy.active:
        return

    async def handle(route: Route) -> None:
        request = route.request
        reason = policy.refusal(request.url)
        if reason is None:
            await route.fallback()
            return
        shown = redact_credentials(request.url)[:200]  # never user:password@ in a log
        if request.is_navigation_request():
            # Said where the user reads it: the page only shows a network error.
            print(f"supervisor: blocked a navigation to {shown}: {reason}",
                  file=sys.stderr, flush=True)
        log.info("blocked %s: %s", shown, reason)
        await route.abort("blockedbyclient")

    await context.route("**/*", handle)
