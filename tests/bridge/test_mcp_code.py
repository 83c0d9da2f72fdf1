"""browser_exec through the MCP server in-process, on a real bridge with no browser: the
result's sections, isError for an exception and a timeout, paging by cursor, argument
errors, the capped timeout and --code-timeout-max (bridge/mcp/code.py, options.py)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from bridge.mcp import code as code_tool
from bridge.mcp.options import McpOptions, OptionsError, build_options
from bridge.mcp.server import build_server, tools_for
from bridge.mcp.session import Connection
from bridge.server import BridgeServer


@contextlib.asynccontextmanager
async def exec_client(bridge: BridgeServer, **options: Any) -> AsyncIterator[Client]:
    conn = Connection(url=bridge.url, token=bridge.token, embedded=False,
                      options=McpOptions(caps=frozenset({"code"}), **options))
    try:
        async with Client(build_server(conn)) as client:
            yield client
    finally:
        await code_tool.close_runtime(conn)
        await conn.close()


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


async def test_result_sections_and_is_error(bridge: BridgeServer) -> None:
    """Output and value under ``### Result``, the traceback under ``### Error`` with
    isError; no page state, and a pointer to browser_snapshot."""
    async with exec_client(bridge) as mcp:
        ok = await mcp.call_tool("browser_exec", {"code": "print('hi ```')\nx = 41\nx + 1"})
        text = _text(ok)
        assert not ok.is_error, text
        assert text.startswith("### Result\nThe code ran in ")
        assert "Output:\n````\nhi ```\n````" in text and "Value:\n```\n42\n```" in text
        assert "### Page state" not in text and "browser_snapshot" in text
        bad = await mcp.call_tool("browser_exec", {"code": "1 / 0"})
        assert bad.is_error and "### Error" in _text(bad)
        assert "ZeroDivisionError" in _text(bad)


async def test_timeout_is_an_error_that_keeps_the_output(bridge: BridgeServer) -> None:
    """A timeout: isError, what was printed before, the state lost said; a timeout above
    --code-timeout-max is capped and said."""
    async with exec_client(bridge, code_timeout_max_s=1.0) as mcp:
        result = await mcp.call_tool("browser_exec", {
            "code": "print('before')\nwhile True: pass", "timeout": 5})
        text = _text(result)
        assert result.is_error and "Timed out after 1 s" in text and "before" in text
        assert "capped" in text and "state (variables, imports) is lost" in text
        after = await mcp.call_tool("browser_exec", {"code": "'fresh'"})
        assert not after.is_error and "'fresh'" in _text(after)


async def test_long_output_pages_by_cursor(bridge: BridgeServer) -> None:
    """Output over the budget: the first page and a cursor; browser_exec with the cursor
    gives the next pages; a stale or made-up cursor is a BAD_REQUEST."""
    async with exec_client(bridge) as mcp:
        first = _text(await mcp.call_tool("browser_exec", {
            "code": "for i in range(5000): print(f'{i:07d}')"}))
        assert "characters 0–20000 of 40000" in first
        cursor = first.split('cursor "', 1)[1].split('"', 1)[0]
        second = _text(await mcp.call_tool("browser_exec", {"cursor": cursor}))
        assert "0002500\n" in second and "0004999" in second
        assert "More output" not in second
        stale = await mcp.call_tool("browser_exec", {"cursor": "c99.10"})
        assert stale.is_error and "BAD_REQUEST" in _text(stale) and "stale" in _text(stale)


@pytest.mark.parametrize("args", [{}, {"code": "1", "cursor": "c1.0"},
                                  {"cursor": "c1.0", "timeout": 3}, {"code": "1", "timeout": 0},
                                  {"code": 1}])
async def test_bad_arguments_are_bad_requests(bridge: BridgeServer, args: dict) -> None:
    async with exec_client(bridge) as mcp:
        result = await mcp.call_tool("browser_exec", args)
        assert result.is_error and "BAD_REQUEST" in _text(result), _text(result)


def test_listed_only_with_caps_code_and_the_option() -> None:
    """The tool has cap ``code``; --code-timeout-max (and its variable) is read, checked."""
    assert "browser_exec" not in {t.name for t in tools_for(())}
    assert "browser_exec" in {t.name for t in tools_for(("code",))}
    assert build_options({"caps": "code"}, env={}).caps == frozenset({"code"})
    assert build_options({"code_timeout_max_s": "12.5"}, env={}).code_timeout_max_s == 12.5
    assert build_options({}, env={"TRUSTBRIDGE_CODE_TIMEOUT_MAX": "60"}).code_timeout_max_s == 60
    assert build_options({}, env={}).code_timeout_max_s == 300
    for bad in ("0", "-1", "soon", "100000"):
        with pytest.raises(OptionsError, match="--code-timeout-max"):
            build_options({"code_timeout_max_s": bad}, env={})
