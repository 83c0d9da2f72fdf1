"""MCP server for agents: ``browser_*`` tools in the Playwright MCP conventions.

One file per capability: :mod:`.snapshot` (browser_snapshot), :mod:`.navigate`
(browser_navigate, browser_navigate_back), :mod:`.input` (browser_click, browser_type,
browser_hover, browser_press_key, browser_select_option, browser_drag), :mod:`.form`
(browser_fill_form, browser_file_upload), :mod:`.dialogs` (browser_handle_dialog),
:mod:`.batch` (browser_actions), :mod:`.tabs` (browser_tabs: list, new, close, select),
:mod:`.wait` (browser_wait_for), :mod:`.screenshot` (browser_take_screenshot),
:mod:`.evaluate` (browser_evaluate), :mod:`.code` (browser_exec, ``--caps code``: a
persistent Python worker, not a sandbox; bridge/code/). :mod:`.tool` holds what a tool is (argument models
derived from the protocol models, errors as tool results), :mod:`.session` the
:class:`Connection` (bridge connection, embedded launch, current tab), :mod:`.response`
the :class:`Response` each tool call fills and renders, :mod:`.report` how its sections
read (input path, delivery, dialogs, tabs, page state), :mod:`.server` the ``mcp`` server
and its stdio transport, :mod:`.http` streamable HTTP behind a bearer token.

Run it with ``trustbridge mcp`` (stdio) or ``trustbridge mcp --http PORT``; see docs/mcp.md.
"""

from .http import run_http
from .response import Response
from .server import TOOLS, build_server, run_stdio
from .session import Connection, Session
from .tool import Tool

__all__ = ["TOOLS", "Connection", "Response", "Session", "Tool", "build_server", "run_http",
           "run_stdio"]
