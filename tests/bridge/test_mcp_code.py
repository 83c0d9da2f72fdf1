"""browser_exec through the MCP server in-process, on a real bridge with no browser: the
result's sections, isError for an exception and a timeout, paging by cursor, argument
errors, the capped timeout and --code-timeout-max (bridge/mcp/code.py, options.py)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from trustbridge.bridge.code import ExecResult
from trustbridge.bridge.mcp import code as code_tool
from trustbridge.bridge.mcp.options import McpOptions, OptionsError, build_options
from trustbridge.bridge.mcp.server import build_server, tools_for
from trustbridge.bridge.mcp.session import Connection
from trustbridge.bridge.server import BridgeServer

ROOT = Path(__file__).resolve().parents[2]


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


def test_every_page_says_kept_of_printed_in_one_wording() -> None:
    """10,000,000 characters printed, 1,000,000 kept: the first page and a cursor page
    both say 'kept 1000000 of 10000000 printed' and one span of the kept text; no page
    names two different totals."""
    first = code_tool.render(ExecResult(output="x" * 20000, cursor="c1.20000",
                                        total_chars=10_000_000, dropped_chars=9_000_000))
    page = code_tool.render(ExecResult(output="x" * 20000, cursor="c1.40000", offset=20000,
                                       total_chars=10_000_000, dropped_chars=9_000_000),
                            page=True)
    assert "characters 0–20000 of 1000000: kept 1000000 of 10000000 printed" in first
    assert "characters 20000–40000 of 1000000: kept 1000000 of 10000000 printed" in page
    assert "10600000" not in page and page.count(" of 10000000") == 1
    plain = code_tool.render(ExecResult(output="y" * 20000, cursor="c2.20000",
                                        total_chars=40000))
    assert "characters 0–20000 of 40000)" in plain and "printed;" not in plain


def test_reset_before_and_death_during_are_told_apart() -> None:
    """A call that raised in a fresh worker is not 'died during this call'; a death says
    so; a fresh worker is said in either case. Late output has its own heading."""
    fresh = code_tool.render(ExecResult(error="NameError: a", reset=True, reset_before=True))
    assert "died" not in fresh and "fresh worker" in fresh and "raised an exception" in fresh
    died = code_tool.render(ExecResult(error="WorkerDied: ...", reset=True, died=True))
    assert "The worker died during this call" in died and "fresh worker" not in died
    late = code_tool.render(ExecResult(output="own\n", late_output="old\n", late_chars=4))
    head, rest = late.split("Printed after an earlier call ended", 1)
    assert "own" in head and "old" not in head and "old" in rest


async def test_a_stale_cursor_says_to_re_run(bridge: BridgeServer) -> None:
    """A stale or made-up cursor's next step is to re-run the code, not the schema."""
    async with exec_client(bridge) as mcp:
        for cursor in ("c99.10", "garbage"):
            text = _text(await mcp.call_tool("browser_exec", {"cursor": cursor}))
            assert "Re-run the code" in text and "last 8 calls" in text, text
            assert "input schema" not in text


async def test_unknown_tool_behind_a_cap_names_the_cap(bridge: BridgeServer) -> None:
    """browser_exec on a server without --caps code: the error says how to get it; a
    made-up name does not."""
    conn = Connection(url=bridge.url, token=bridge.token, embedded=False,
                      options=McpOptions())
    try:
        async with Client(build_server(conn)) as mcp:
            with pytest.raises(MCPError, match="start the server with --caps code"):
                await mcp.call_tool("browser_exec", {"code": "1"})
            with pytest.raises(MCPError) as info:
                await mcp.call_tool("browser_nothing", {})
            assert "--caps" not in str(info.value)
    finally:
        await conn.close()


async def test_stdio_server_survives_lone_surrogates(bridge: BridgeServer,
                                                     tmp_path: Path) -> None:
    """``trustbridge mcp --caps code`` over stdio: an error and a value with a lone
    surrogate come back escaped, and the server answers the next call (it died in its
    JSON writer)."""
    token = tmp_path / "token"
    token.write_text(bridge.token)
    token.chmod(0o600)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "trustbridge", "mcp", "--caps", "code", "--bridge",
                                      bridge.url, "--token-file", str(token)],
        env=dict(os.environ, TRUSTBRIDGE_HOME=str(tmp_path)), cwd=str(ROOT))
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog),
                          read_timeout_seconds=60) as client:
            err = await client.call_tool("browser_exec", {"code": "raise ValueError('\\ud800')"})
            assert err.is_error and "ValueError: \\ud800" in _text(err)
            val = await client.call_tool("browser_exec", {
                "code": "class R:\n    def __repr__(self): return 'bad\\ud800'\nR()"})
            assert "bad\\ud800" in _text(val)
            assert "42" in _text(await client.call_tool("browser_exec", {"code": "42"}))
