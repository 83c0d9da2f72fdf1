"""browser_exec (``--caps code``) through the real MCP server against a real browser:
code navigates and clicks with trusted input (the page counts ``isTrusted`` clicks), a
ref from browser_snapshot works in code, variables persist, the tool is absent without
the capability, and an MCP cancellation stops a running call (tests/e2e/pages/code)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp import Client

from trustbridge.bridge.mcp.code import _runtimes
from trustbridge.bridge.mcp.options import McpOptions
from trustbridge.bridge.mcp.server import build_server
from trustbridge.bridge.mcp.session import Connection

from .conftest import CHROMIUM_ONLY, Origins, Stack, page_eval, ref_of

pytestmark = CHROMIUM_ONLY  # bridge logic (tests/e2e/conftest.py)

COUNTER = "/code/counter.html"


@asynccontextmanager
async def mcp_on(stack: Stack, caps: frozenset[str] = frozenset({"code"}),
                 ) -> AsyncIterator[tuple[Connection, Client]]:
    """An MCP client on a server with ``caps`` whose Connection uses the stack's bridge."""
    conn = Connection(url=stack.server.url, token=stack.server.token, embedded=False,
                      options=McpOptions(caps=caps))
    try:
        async with Client(build_server(conn), read_timeout_seconds=60) as client:
            yield conn, client
    finally:
        runtime = _runtimes.pop(conn, None)
        if runtime is not None:
            await runtime.close()
        await conn.close()


async def call(client: Client, tool: str, **args: Any) -> str:
    result = await client.call_tool(tool, args)
    text = "\n".join(c.text for c in result.content if c.type == "text")
    assert not result.is_error, text
    return text


async def seen(stack: Stack) -> dict[str, int]:
    """What the counter page saw: ``{trusted, untrusted}`` click counts."""
    pages = [p for p in stack.supervisor.context.pages if COUNTER in p.url]
    assert len(pages) == 1, [p.url for p in stack.supervisor.context.pages]
    return await page_eval(pages[0], "window.__seen")


def value_of(text: str) -> str:
    """The ``Value:`` block of a browser_exec result."""
    m = re.search(r"^Value:\n`{3,}\n(.*?)\n`{3,}$", text, flags=re.MULTILINE | re.DOTALL)
    assert m, text
    return m.group(1)


async def test_code_navigates_and_clicks_with_trusted_input(stack: Stack,
                                                            origins: Origins) -> None:
    """``await tab.goto(url)`` then a click by a ref the code read from its own snapshot:
    the page counts one trusted click; the result has the value and no page state."""
    url = origins.main + COUNTER
    code = (f"r = await tab.goto({url!r})\n"
            "snap = await tab.snapshot()\n"
            "import re\n"
            "ref = re.search(r'button \"Count\" \\[ref=(\\w+)\\]', snap).group(1)\n"
            "clicked = await tab.click(ref)\n"
            "print('path', clicked['inputPath'])\n"
            "clicked['delivered']")
    async with mcp_on(stack) as (_conn, mcp):
        text = await call(mcp, "browser_exec", code=code)
        assert value_of(text) == "True", text
        assert "path trusted" in text and "### Page state" not in text
        assert "browser_snapshot" in text
        assert await seen(stack) == {"trusted": 1, "untrusted": 0}


async def test_a_snapshot_ref_works_in_code_and_variables_persist(stack: Stack,
                                                                  origins: Origins) -> None:
    """A ref from browser_snapshot is clicked from code (``tab`` is the tab the other tools
    act on); ``x = 41`` then ``x + 1`` is 42."""
    async with mcp_on(stack) as (_conn, mcp):
        await call(mcp, "browser_navigate", url=origins.main + COUNTER)
        snap = await call(mcp, "browser_snapshot")
        ref = ref_of(snap, "button", "Count")
        text = await call(mcp, "browser_exec", code=f"r = await tab.click({ref!r})\nx = 41")
        assert "Value:" not in text, text
        assert await seen(stack) == {"trusted": 1, "untrusted": 0}
        assert value_of(await call(mcp, "browser_exec", code="x + 1")) == "42"


async def test_the_tool_is_listed_only_with_caps_code(stack: Stack) -> None:
    """Without ``--caps code`` there is no browser_exec (and calling it is an error)."""
    async with mcp_on(stack, frozenset()) as (_conn, mcp):
        names = {t.name for t in (await mcp.list_tools()).tools}
        assert "browser_exec" not in names and "browser_snapshot" in names
    async with mcp_on(stack) as (_conn, mcp):
        assert "browser_exec" in {t.name for t in (await mcp.list_tools()).tools}


async def test_an_mcp_cancellation_stops_a_running_call(stack: Stack, origins: Origins) -> None:
    """A call that clicks in a loop is cancelled by the client (notifications/cancelled):
    the next call runs (so the loop no longer does), says how many clicks it made, and
    once the session has nothing in flight the page saw that many (or one more: the one
    the bridge was running when cancelled), and no more after that."""
    async with mcp_on(stack) as (_conn, mcp):
        await call(mcp, "browser_navigate", url=origins.main + COUNTER)
        ref = ref_of(await call(mcp, "browser_snapshot"), "button", "Count")
        loop = f"n = 0\nwhile True:\n    await tab.click({ref!r})\n    n += 1\n"
        async with anyio.create_task_group() as tg:
            tg.start_soon(mcp.call_tool, "browser_exec", {"code": loop, "timeout": 120})
            for _ in range(600):  # bounded: 60 s
                if (await seen(stack))["trusted"] >= 2:
                    break
                await asyncio.sleep(0.1)
            assert (await seen(stack))["trusted"] >= 2
            tg.cancel_scope.cancel()
        n = int(value_of(await call(mcp, "browser_exec", code="n")))
        # The click in flight when the call was cancelled was withdrawn; one the bridge
        # was already running finishes there (BridgeClient.call): wait (bounded) until the
        # session has nothing in flight (sessions.list itself is not counted).
        idle = await call(mcp, "browser_exec", code=(
            "for _ in range(400):\n"
            "    me = [s for s in await browser.sessions() if s['yours']][0]\n"
            "    if me['inFlight'] == 0:\n        break\n"
            "    await asyncio.sleep(0.05)\n"
            "me['inFlight']"))
        assert value_of(idle) == "0", idle
        first = await seen(stack)
        assert first["trusted"] in (n, n + 1), (n, first)
        assert value_of(await call(mcp, "browser_exec", code="n")) == str(n)
        assert await seen(stack) == first
