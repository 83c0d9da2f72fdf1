"""The MCP server: the tools of every capability file on the ``mcp`` package's low-level
``Server``, served over stdio or streamable HTTP on 127.0.0.1.

On stdio nothing but MCP messages may reach stdout: ``mcp.server.stdio.stdio_server``
points fd 1 at stderr while it serves, so the browser started by the embedded default
(a child process) cannot write into the protocol stream either; progress goes to stderr.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Sequence
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from . import batch, dialogs, evaluate, form, navigate, screenshot, snapshot, tabs, wait
from .input import TOOLS as INPUT_TOOLS
from .session import Connection
from .tool import Tool

TOOLS: list[Tool] = [
    *snapshot.TOOLS,
    *navigate.TOOLS,
    *INPUT_TOOLS,
    *form.TOOLS,
    *dialogs.TOOLS,
    *batch.TOOLS,
    *tabs.TOOLS,
    *wait.TOOLS,
    *screenshot.TOOLS,
    *evaluate.TOOLS,
]
"""Every tool, in the order tools/list shows them."""

INSTRUCTIONS = (
    "Drives a real browser with trusted input. Start with browser_snapshot; act on elements "
    "by the refs of the latest snapshot. Errors say what to do next."
)


def _version() -> str:
    try:
        return importlib.metadata.version("trustbridge")
    except importlib.metadata.PackageNotFoundError:  # running from a source tree
        return "0"


def build_server(conn: Connection, tools: Sequence[Tool] = TOOLS) -> Server[Any]:
    """An MCP ``Server`` whose tools act through ``conn``.

    Unknown tool names are a protocol error (JSON-RPC invalid params); everything that
    goes wrong inside a tool is a tool result with ``isError`` (see :mod:`.tool`).
    """
    by_name = {t.name: t for t in tools}
    listed = [t.describe() for t in tools]
    schemas = {t.name: t.input_schema() for t in tools}

    async def list_tools(_ctx: ServerRequestContext[Any],
                         _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(_ctx: ServerRequestContext[Any],
                        params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = by_name.get(params.name)
        if tool is None:
            raise MCPError(types.INVALID_PARAMS,
                           f"Unknown tool {params.name!r}; tools/list shows the tools.")
        return await tool.call(conn, params.arguments)

    return Server(
        "trustbridge",
        version=_version(),
        title="trustbridge browser",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=schemas.get,
    )


async def run_stdio(conn: Connection) -> None:
    """Serve MCP on stdin/stdout until the client closes stdin; then close ``conn``.

    Cancelled (e.g. on SIGTERM), ``conn`` is closed first, but leaving the transport
    then waits for the thread blocked reading stdin: a process that must stop while its
    stdin is still open closes the connection itself and exits (see ``trustbridge mcp``).
    """
    server = build_server(conn)
    async with stdio_server() as (read_stream, write_stream):
        try:
            await server.run(read_stream, write_stream, server.create_initialization_options())
        finally:
            with anyio.CancelScope(shield=True):
                await conn.close()


async def run_http(conn: Connection, port: int, host: str = "127.0.0.1") -> None:
    """Serve MCP over streamable HTTP at ``http://host:port/mcp`` until cancelled.

    Binds 127.0.0.1 (design.md §8); the SDK's DNS-rebinding protection accepts only
    loopback Host and Origin headers.
    """
    import uvicorn

    server = build_server(conn)
    app = server.streamable_http_app(host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    try:
        await uvicorn.Server(config).serve()
    finally:
        with anyio.CancelScope(shield=True):
            await conn.close()
