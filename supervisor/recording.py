"""Recording what happens in the browser: a Playwright trace of the context
(``driver.tracing``; MCP ``browser_start_tracing`` / ``browser_stop_tracing`` under
``--caps devtools``, as Playwright MCP 0.0.86 names them).

The trace is Playwright's own (``BrowserContext.tracing``, with DOM snapshots and
screenshots): every call the driver makes through Playwright for an action (the trusted
mouse and keyboard input, its locators, its reads) is in it, with the pages' snapshots
around them, and ``playwright show-trace`` opens it. It records the whole browser
context, so every tab's pages, another session's included (docs/security.md says so).
The file goes where downloads go (supervisor/downloads.py ``downloads_dir``: the
supervisor's ``--output-dir`` when it was given), never to a path a client names.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame

from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import DriverTracingParams

from .downloads import free_path, downloads_dir

__all__ = ["tracing"]


async def tracing(frame: Frame, params: DriverTracingParams) -> dict[str, Any]:
    """Start or stop the trace of ``frame``'s browser context.

    Returns:
        ``{tracing: True}`` after ``start``; after ``stop``, ``{tracing: False, path,
        bytes}``: the absolute path of ``trace-<UTC time>.zip`` and its size in bytes.

    Raises:
        BadRequest: ``start`` while a trace is already being recorded, or ``stop`` with
            none (Playwright's refusal, quoted); nothing changed.
    """
    context = frame.page.context
    try:
        if params.action == "start":
            await context.tracing.start(screenshots=True, snapshots=True,
                                        title="trustbridge")
            return {"tracing": True}
        stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H-%M-%S-%f")[:-3] + "Z"
        target = free_path(downloads_dir(), f"trace-{stamp}.zip")
        await context.tracing.stop(path=target)
    except PlaywrightError as exc:
        said = str(exc).splitlines()[0][:200]
        if "already" in said.lower() or "must start" in said.lower() or "not started" in said.lower():
            state = "is already being recorded" if params.action == "start" else \
                "is not being recorded"
            raise E.BadRequest(f"A trace {state} in this browser ({said}).",
                               {"action": params.action}) from exc
        raise
    return {"tracing": False, "path": str(target), "bytes": target.stat().st_size}
