"""MCP server for agents: ``browser_*`` tools in the Playwright MCP conventions.

One file per capability: :mod:`.snapshot` (browser_snapshot), :mod:`.navigate`
(browser_navigate, browser_navigate_back), :mod:`.input` (browser_click, browser_type,
browser_hover, browser_press_key, browser_select_option, browser_drag), :mod:`.form`
(browser_fill_form, browser_file_upload), :mod:`.dialogs` (browser_handle_dialog),
:mod:`.batch` (browser_actions), :mod:`.tabs` (browser_tabs: list, new, close, select),
:mod:`.wait` (browser_wait_for), :mod:`.screenshot` (browser_take_screenshot),
:mod:`.evaluate` (browser_evaluate). :mod:`.tool` holds what a tool is (argument models
derived from the protocol models, errors as tool results), :mod:`.report` how results
read (input path, delivery, dialogs, new tabs), :mod:`.session` the bridge connection and
the current tab, :mod:`.server` the ``mcp`` server and its transports.

Run it with ``trustbridge mcp`` (stdio) or ``trustbridge mcp --http PORT``; see docs/mcp.md.
"""

from .server import TOOLS, build_server, run_http, run_stdio
from .session import Session
from .tool import Tool

__all__ = ["TOOLS", "Session", "Tool", "build_server", "run_http", "run_stdio"]
