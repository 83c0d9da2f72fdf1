"""browser_start_tracing / browser_stop_tracing (``--caps devtools``, Playwright MCP
0.0.86's names): a Playwright trace of the browser context (supervisor/recording.py).

The trace holds every Playwright call the input driver made for the agent's actions (the
trusted mouse and keyboard input, locators, read-backs) with DOM snapshots and
screenshots; ``npx playwright show-trace <file>`` opens it. Differences from Playwright
MCP: the file is saved where the browser's downloads go (``--output-dir`` when given),
and the trace is the whole browser context's, so it also shows other sessions' tabs.
"""

from __future__ import annotations

from typing import Any

from .response import Response
from .session import Connection
from .tool import Tool, derive

NoArgs = derive("TracingArgs", "No arguments.")


async def _start(conn: Connection, args: Any, response: Response) -> None:
    tab = await conn.tab()
    await tab.start_tracing()
    response.add_result("Tracing started: every action from now on is recorded with DOM "
                        "snapshots and screenshots until browser_stop_tracing.")


async def _stop(conn: Connection, args: Any, response: Response) -> None:
    tab = await conn.tab()
    got = await tab.stop_tracing()
    response.add_result(f"Trace saved: {got['path']} ({got['bytes']} bytes). Open it with "
                        f"`python -m playwright show-trace {got['path']}` (trustbridge's "
                        "venv has Playwright; `npx playwright show-trace` works too).")


TOOLS = [
    Tool(
        name="browser_start_tracing",
        title="Start tracing",
        description="Start trace recording (a Playwright trace of the browser: actions, DOM "
        "snapshots, screenshots).",
        args=NoArgs,
        run=_start,
        read_only=True,
        cap="devtools",
    ),
    Tool(
        name="browser_stop_tracing",
        title="Stop tracing",
        description="Stop trace recording and save the trace file (opens in `playwright "
        "show-trace`).",
        args=NoArgs,
        run=_stop,
        read_only=True,
        cap="devtools",
    ),
]
