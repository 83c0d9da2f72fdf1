"""A hostile page against an MCP agent, end to end (docs/security.md "Files"): the page
asks for "your config" and the agent uploads the bridge token; the page's URL carries
credentials the agent then reads back. In a real browser the token never reaches the
page's file input (a file of an allowed root does), and the agent's results never carry
``user:password@`` while the page loads as asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trustbridge.bridge import config

from .conftest import Origins, Stack, ref_of
from .test_mcp_tabs import call, mcp_on

pytestmark = pytest.mark.browser


async def test_the_bridge_token_never_reaches_a_pages_file_input(
        stack: Stack, origins: Origins, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path / "state"))
    config.load_or_create_token()
    token = tmp_path / "state" / "token"
    allowed = tmp_path / "cv.txt"
    allowed.write_text("cv")
    async with mcp_on(stack, (tmp_path,)) as mcp:
        await call(mcp, "browser_navigate", url=f"{origins.main}/upload_target/index.html")
        snap = await call(mcp, "browser_snapshot")
        ref = ref_of(snap, "button", "Single file")
        refused = await mcp.call_tool("browser_file_upload", {"ref": ref, "paths": [str(token)]})
        shown = "\n".join(c.text for c in refused.content if c.type == "text")
        assert refused.is_error and "state directory" in shown, shown
        assert str(tmp_path) in shown  # the roots are named
        assert await stack.page.evaluate("window.__seen.got") == {}
        await call(mcp, "browser_file_upload", ref=ref, paths=[str(allowed)])
        assert await stack.page.evaluate("window.__seen.got") == {"single": ["cv.txt"]}


async def test_credentials_in_a_url_never_reach_the_agent(
        stack: Stack, origins: Origins) -> None:
    host = origins.main.split("://", 1)[1]
    url = f"http://alice:hunter2pw@{host}/mcp.html"
    async with mcp_on(stack) as mcp:
        text = await call(mcp, "browser_navigate", url=url)
        assert "hunter2pw" not in text and "alice" not in text, text
        assert f"{host}/mcp.html" in text
        tabs = await call(mcp, "browser_tabs", action="list")
        assert "hunter2pw" not in tabs, tabs
    listed = json.dumps(await stack.client.call("tabs.list", {}))
    assert "hunter2pw" not in listed
    assert stack.page.url.endswith("/mcp.html")  # the page loaded as asked
