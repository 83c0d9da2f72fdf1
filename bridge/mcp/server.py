"""The MCP server: the tools of every capability file on the ``mcp`` package's low-level
``Server``, served over stdio here, or over streamable HTTP on 127.0.0.1 behind a bearer
token (:mod:`.http`).

On stdio nothing but MCP messages may reach stdout: the transport (:mod:`.stdio`, as
``mcp.server.stdio.stdio_server`` does) points fd 1 at stderr while it serves, so the
browser started by the embedded default (a child process) cannot write into the
protocol stream either; progress goes to stderr.
A line that is not a JSON-RPC message gets a JSON-RPC error (:func:`answer_malformed`):
the ``mcp`` transport hands it over as an exception that its server only logs, and the
client would wait for its own timeout.
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import pydantic
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from opentelemetry import trace

from . import (
    batch,
    code,
    devtools,
    dialogs,
    evaluate,
    human,
    find,
    form,
    navigate,
    recording,
    screenshot,
    snapshot,
    tabs,
    vision,
    wait,
)
from .input import TOOLS as INPUT_TOOLS
from .session import Connection
from .stdio import LineTooLong, stdio_transport
from .tool import Tool

TOOLS: list[Tool] = [
    *snapshot.TOOLS,
    *find.TOOLS,
    *navigate.TOOLS,
    *INPUT_TOOLS,
    *vision.TOOLS,
    *form.TOOLS,
    *dialogs.TOOLS,
    *batch.TOOLS,
    *tabs.TOOLS,
    *wait.TOOLS,
    *screenshot.TOOLS,
    *evaluate.TOOLS,
    *devtools.TOOLS,
    *recording.TOOLS,
    *code.TOOLS,
    *human.TOOLS,
]
"""Every tool, in the order tools/list shows them."""

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "Drives a real browser with trusted input. Start with browser_snapshot; act on elements "
    "by the refs of the latest snapshot. Errors say what to do next."
)


def _version() -> str:
    try:
        return importlib.metadata.version("trustbridge")
    except importlib.metadata.PackageNotFoundError:  # running from a source tree
        return "0"


def tools_for(caps: Iterable[str] = (), tools: Sequence[Tool] = TOOLS) -> list[Tool]:
    """The tools listed with ``--caps`` ``caps``: those of no capability, and those whose
    ``cap`` is among ``caps`` (Playwright MCP's ``--caps vision,pdf``)."""
    wanted = set(caps)
    return [t for t in tools if t.cap is None or t.cap in wanted]


def build_server(conn: Connection, tools: Sequence[Tool] | None = None) -> Server[Any]:
    """An MCP ``Server`` whose tools act through ``conn``.

    Args:
        tools: the tools to serve; default: :func:`tools_for` the connection's ``caps``.

    Unknown tool names are a protocol error (JSON-RPC invalid params); everything that
    goes wrong inside a tool is a tool result with ``isError`` (see :mod:`.tool`).
    """
    if tools is None:
        tools = tools_for(getattr(conn, "caps", ()))
    by_name = {t.name: t for t in tools}
    listed = [t.describe() for t in tools]
    schemas = {t.name: t.input_schema() for t in tools}

    async def list_tools(_ctx: ServerRequestContext[Any],
                         _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: ServerRequestContext[Any],
                        params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = by_name.get(params.name)
        if tool is None:
            # A tool this server has behind a capability it was not started with.
            cap = next((t.cap for t in TOOLS if t.name == params.name and t.cap), None)
            hint = f" It needs a capability: start the server with --caps {cap}." if cap \
                else ""
            raise MCPError(types.INVALID_PARAMS,
                           f"Unknown tool {params.name!r}; tools/list shows the tools.{hint}")
        if getattr(conn, "client_name", None) is None:
            conn.client_name = _client_name(ctx)  # the session label's stem (session.py)
        token = human.REQUEST_CONTEXT.set(ctx)  # browser_request_human's notifications
        try:
            return await tool.call(conn, params.arguments)
        finally:
            human.REQUEST_CONTEXT.reset(token)

    return Server(
        "trustbridge",
        version=_version(),
        title="trustbridge browser",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=schemas.get,
    )


def _client_name(ctx: ServerRequestContext[Any]) -> str | None:
    """``clientInfo.name`` of the MCP client's ``initialize`` (e.g. ``claude-code``), if
    it sent one."""
    params = getattr(getattr(ctx, "session", None), "client_params", None)
    info = getattr(params, "client_info", None)
    name = getattr(info, "name", None)
    return name if isinstance(name, str) and name.strip() else None


def _request_id(value: Any) -> types.RequestId | None:
    """The id of a JSON object that looks like a request, if it is a valid id."""
    if isinstance(value, dict):
        rid = value.get("id")
        if isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool)):
            return rid
    return None


def malformed_reply(exc: Exception) -> types.JSONRPCError | None:
    """The JSON-RPC error that answers a line the ``mcp`` stdio transport could not read.

    The transport validates each line with ``jsonrpc_message_adapter.validate_json`` and
    hands over the ``pydantic.ValidationError``; its errors carry what was read (the
    whole line for broken JSON, the offending object for a missing field). Rules
    (JSON-RPC 2.0 §5.1): a line that is not JSON gets -32700 with ``id: null``; JSON that
    is not a JSON-RPC message gets -32600 with the request's id when one can be read (so
    the client's pending call ends), else ``null``. A lone surrogate escape (``"\\ud800"``)
    is valid JSON syntax but not Unicode text, which the package's parser refuses: it is
    an invalid request, answered with its id. Messages never quote the input (it may
    hold a secret).

    A line over the transport's limit (:class:`.stdio.LineTooLong`) is an invalid
    request too, with the id found at its start or end.

    Returns:
        The error to send, or None for an exception that says nothing about a line.
    """
    if isinstance(exc, LineTooLong):
        return types.JSONRPCError(jsonrpc="2.0", id=exc.request_id, error=types.ErrorData(
            code=types.INVALID_REQUEST, message=f"Invalid Request: the line is {exc.size} "
            f"bytes, over the {exc.limit}-byte limit of one message on stdio; it was not "
            "read (send large data in smaller calls)."))
    if not isinstance(exc, pydantic.ValidationError):
        return None
    details = exc.errors(include_url=False)
    if details and details[0]["type"] == "json_invalid":
        try:
            # The stdlib parser accepts lone surrogates: tells them apart from broken JSON.
            value = json.loads(str(details[0].get("input", "")))
        except ValueError:
            return types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(
                code=types.PARSE_ERROR, message=f"Parse error: the line is not JSON "
                f"({details[0]['msg']}); send one JSON-RPC message per line."))
        return types.JSONRPCError(jsonrpc="2.0", id=_request_id(value), error=types.ErrorData(
            code=types.INVALID_REQUEST, message="Invalid Request: a string holds a lone "
            "surrogate escape (e.g. \\ud800), which is not Unicode text; send UTF-8 text."))
    rid = next((r for d in details if (r := _request_id(d.get("input"))) is not None), None)
    return types.JSONRPCError(jsonrpc="2.0", id=rid, error=types.ErrorData(
        code=types.INVALID_REQUEST, message="Invalid Request: not a JSON-RPC 2.0 request, "
        "notification or response (one object per line; batches are not supported)."))


class _Answering(ObjectReceiveStream[SessionMessage | Exception]):
    """``read_stream`` without its exceptions: each is answered on ``write_stream``
    (:func:`malformed_reply`) in the reader's own ``receive()``, with no task between
    (a hop from task to task costs about 15 µs a message)."""

    def __init__(self, read_stream: ObjectReceiveStream[SessionMessage | Exception],
                 write_stream: ObjectSendStream[SessionMessage],
                 on_initialize: Callable[[], None] | None = None) -> None:
        self._read = read_stream
        self._write = write_stream
        self._ended = False
        self._closed = False
        self._on_initialize = on_initialize

    async def receive(self) -> SessionMessage | Exception:
        while True:
            if self._closed:
                raise anyio.ClosedResourceError
            if self._ended:
                raise anyio.EndOfStream
            try:
                item = await self._read.receive()
                reply = malformed_reply(item) if isinstance(item, Exception) else None
                if reply is None:
                    if self._on_initialize is not None and _is_request(item):
                        on_initialize, self._on_initialize = self._on_initialize, None
                        on_initialize()
                    return item
                log.warning("answered an unreadable stdin line with JSON-RPC error %d",
                            reply.error.code)
                await self._write.send(SessionMessage(reply))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._ended = True  # the transport stopped reading or writing: the end

    async def aclose(self) -> None:
        self._closed = True


def _is_request(item: SessionMessage | Exception) -> bool:
    """``item`` is a well-formed request or notification: a client speaking MCP (its
    first one is ``initialize``, or ``server/discover`` from clients of the mcp 2.x
    package)."""
    message = getattr(item, "message", None)
    return isinstance(getattr(message, "method", None), str)


@asynccontextmanager
async def answer_malformed(
    read_stream: ObjectReceiveStream[SessionMessage | Exception],
    write_stream: ObjectSendStream[SessionMessage],
    on_initialize: Callable[[], None] | None = None,
) -> AsyncIterator[ObjectReceiveStream[SessionMessage | Exception]]:
    """``read_stream`` with every exception it yields answered on ``write_stream``
    (:func:`malformed_reply`) instead of passed on; messages pass through in order.
    ``on_initialize`` is called once, when the client's first well-formed message passes
    (``initialize``, or ``server/discover``): the client has connected.

    Yields:
        The stream to give ``Server.run``; it ends when ``read_stream`` does.
    """
    answering = _Answering(read_stream, write_stream, on_initialize)
    try:
        yield answering
    finally:
        await answering.aclose()


def _drop_idle_tracing(server: Server[Any]) -> None:
    """Leave out the ``mcp`` package's OpenTelemetry middleware when no OpenTelemetry SDK
    is configured: its span per request then goes nowhere, and costs about 9 µs (measured
    on the 2-core dev machine, about 1% of a tool call's round trip). The package's own
    opt-out: the middleware "ships on by default [...] Drop it from this list to opt
    out" (``Server.middleware``, mcp/server/lowlevel/server.py, mcp 2.3). Matched by
    class name, so a package that renames it keeps its spans rather than losing other
    middleware."""
    if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        server.middleware = [m for m in server.middleware
                             if type(m).__name__ != "OpenTelemetryMiddleware"]


async def run_stdio(conn: Connection) -> None:
    """Serve MCP on stdin/stdout (:func:`.stdio.stdio_transport`) until the client closes
    stdin; then close ``conn``.

    Cancelled (e.g. on SIGTERM), ``conn`` is closed and the transport left at once: stdin
    is read on the event loop, so nothing waits for a line that may never come. (Only
    the ``mcp`` package's transport, the fallback for a regular-file stdin or
    ``TRUSTBRIDGE_MCP_STDIO=package``, waits for its thread blocked reading stdin, which
    is why ``trustbridge mcp`` exits by itself on a signal.)
    """
    server = build_server(conn)
    _drop_idle_tracing(server)
    async with stdio_transport() as (read_stream, write_stream), \
            answer_malformed(read_stream, write_stream,
                             getattr(conn, "client_connected", None)) as messages:
        try:
            await server.run(messages, write_stream, server.create_initialization_options())
        finally:
            with anyio.CancelScope(shield=True):
                await code.close_runtime(conn)  # its worker, if browser_exec started one
                await conn.close()
