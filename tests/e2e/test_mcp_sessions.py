"""Two MCP servers on one real browser (issue 16; bridge/mcp/session.py, tabs.py): each is a
session; the first uses the launch's blank tab, the second gets a window of its own, each
clicks in its own page only, and the second is refused on the first's tab. What the pages
counted is asserted (tests/e2e/pages/sessions/counter.html counts trusted clicks)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from typing import Any

import mcp_types as types
from mcp import Client

from trustbridge.bridge.mcp.server import build_server
from trustbridge.bridge.mcp.session import Connection

from .conftest import Origins, Stack, ref_of, wait_until


@contextlib.asynccontextmanager
async def mcp_on(stack: Stack, name: str) -> AsyncIterator[tuple[Connection, Client]]:
    """An MCP server on the stack's bridge and an in-process client named ``name``."""
    conn = Connection(url=stack.server.url, token=stack.server.token, embedded=False)
    try:
        async with Client(build_server(conn), read_timeout_seconds=60,
                          client_info=types.Implementation(name=name, version="1")) as client:
            yield conn, client
    finally:
        await conn.close()


async def call(client: Client, tool: str, **args: Any) -> str:
    result = await client.call_tool(tool, args)
    text = "\n".join(c.text for c in result.content if c.type == "text")
    assert not result.is_error, text
    return text


async def counted(stack: Stack, who: str) -> int:
    """Trusted clicks the counter page of ``who`` saw."""
    pages = [p for p in stack.supervisor.context.pages if p.url.endswith(f"who={who}")]
    assert len(pages) == 1, [p.url for p in stack.supervisor.context.pages]
    return await pages[0].evaluate("window.__seen")


async def test_two_mcp_servers_each_work_in_their_own_tab(stack: Stack, origins: Origins) -> None:
    async with mcp_on(stack, "agent-a") as (conn_a, a), mcp_on(stack, "agent-b") as (conn_b, b):
        shown_a = await call(a, "browser_navigate",
                             url=f"{origins.main}/sessions/counter.html?who=A")
        assert "window" not in shown_a.split("### Page state")[0], shown_a
        assert len(stack.supervisor.context.pages) == 1  # the launch's own blank tab
        label_a = conn_a.label
        assert label_a and label_a.startswith("agent-a-")

        shown_b = await call(b, "browser_navigate",
                             url=f"{origins.main}/sessions/counter.html?who=B")
        first = shown_b.split("\n")[1]
        assert re.fullmatch(
            r"Opened a new window for this session \(tab \d+\): the tab the browser had "
            rf'active \(tab {conn_a.tab_id}\) belongs to session "{re.escape(label_a)}"\.',
            first), shown_b
        await wait_until(lambda: len(stack.supervisor.context.pages) == 2)
        tabs = (await stack.client.call("tabs.list", {}))["tabs"]
        windows = {t["tabId"]: t.get("windowId") for t in tabs}
        assert windows[conn_b.tab_id] != windows[conn_a.tab_id], tabs
        assert all(t["active"] for t in tabs), tabs  # each the foreground of its window

        # Each clicks Count in its own page; neither page sees the other's click.
        ref_b = ref_of(shown_b, "button", "Count")
        await call(b, "browser_click", element="Count", target=ref_b)
        ref_a = ref_of(shown_a, "button", "Count")
        await call(a, "browser_click", element="Count", target=ref_a)
        assert (await counted(stack, "A"), await counted(stack, "B")) == (1, 1)

        # B's list marks A's tab; B selecting it is refused naming A; A's page saw nothing.
        listed = await call(b, "browser_tabs", action="list")
        line_a = next(ln for ln in listed.splitlines() if f"tab {conn_a.tab_id}" in ln)
        assert line_a.endswith(f'(session "{label_a}")'), listed
        index_a = int(line_a.split(":", 1)[0].lstrip("- "))
        refused = await b.call_tool("browser_tabs", {"action": "select", "index": index_a})
        text = "\n".join(c.text for c in refused.content if c.type == "text")
        assert refused.is_error and "TAB_CLAIMED" in text and label_a in text, text
        # Each list marks one tab "(current)": its own. A third server that has no tab
        # yet sees one too (the tab last seen active), though each window has an active
        # tab (the bridge's tabs.list ``current``, not the browser's ``active``).
        assert listed.count("(current)") == 1 and "(current)" in next(
            ln for ln in listed.splitlines() if f"tab {conn_b.tab_id}" in ln), listed
        async with mcp_on(stack, "agent-c") as (_conn_c, c):
            assert (await call(c, "browser_tabs", action="list")).count("(current)") == 1
        conn_b.select(conn_b.device, conn_a.tab_id)  # B aims at A's tab anyway
        click = await b.call_tool("browser_click", {"element": "Count", "target": ref_a})
        assert click.is_error and "TAB_CLAIMED" in click.content[0].text
        assert (await counted(stack, "A"), await counted(stack, "B")) == (1, 1)


async def test_a_first_snapshot_of_a_s_tab_does_not_pin_c_to_it(
        stack: Stack, origins: Origins) -> None:
    """C's first call reads A's tab (allowed: it shows A's page); C's first action there is
    refused before anything is sent and opens C's own window instead, where C's later
    calls land. A's page counts no click of C's."""
    async with mcp_on(stack, "agent-a") as (conn_a, a), mcp_on(stack, "agent-c") as (conn_c, c):
        shown_a = await call(a, "browser_navigate",
                             url=f"{origins.main}/sessions/counter.html?who=A")
        seen = await call(c, "browser_snapshot")
        assert "who=A" in seen and "window" not in seen, seen
        ref_a = ref_of(seen, "button", "Count")

        # C's click on A's button: refused on A's tab, run again in C's new (blank) window,
        # where that ref names nothing; the answer says both.
        clicked = await c.call_tool("browser_click", {"element": "Count", "target": ref_a})
        text = "\n".join(x.text for x in clicked.content if x.type == "text")
        assert clicked.is_error and "REF_NOT_FOUND" in text, text
        assert "Opened a new window for this session" in text, text
        assert f'belongs to session "{conn_a.label}"' in text, text
        await wait_until(lambda: len(stack.supervisor.context.pages) == 2)
        assert conn_c.tab_id is not None and conn_c.tab_id != conn_a.tab_id
        assert await counted(stack, "A") == 0

        shown_c = await call(c, "browser_navigate",
                             url=f"{origins.main}/sessions/counter.html?who=C")
        assert "window" not in shown_c.split("### Page state")[0], shown_c
        await call(c, "browser_click", element="Count", target=ref_of(shown_c, "button", "Count"))
        assert (await counted(stack, "A"), await counted(stack, "C")) == (0, 1)
        await call(a, "browser_click", element="Count", target=ref_of(shown_a, "button", "Count"))
        assert (await counted(stack, "A"), await counted(stack, "C")) == (1, 1)
        assert len(stack.supervisor.context.pages) == 2
