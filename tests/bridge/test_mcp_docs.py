"""docs/mcp.md's tool table against the real tool lists: every trustbridge tool (TOOLS) with
its capability and every argument, and every Playwright MCP 0.0.86 tool with its arguments
(scripts/conformance/playwright-mcp-0.0.86-tools.json, itself checked against the installed
server when node and the npm package are there), and the table is the one
scripts/conformance/tool_table.py generates."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import shutil
from pathlib import Path

import pytest

from trustbridge.bridge.mcp.server import TOOLS

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "mcp.md"
PEER = REPO / "scripts" / "conformance" / "playwright-mcp-0.0.86-tools.json"
TABLE_SCRIPT = REPO / "scripts" / "conformance" / "tool_table.py"
PEER_CLI = REPO / "scripts" / "conformance" / "node_modules" / "@playwright" / "mcp" / "cli.js"


def _rows() -> list[list[str]]:
    text = DOC.read_text()
    m = re.search(r"<!-- tool-table:start -->\n(.*?)<!-- tool-table:end -->", text, re.DOTALL)
    assert m, "docs/mcp.md has no tool table between the tool-table markers"
    lines = [ln for ln in m.group(1).splitlines() if ln.startswith("|")][2:]
    rows = [[c.strip() for c in re.split(r"(?<!\\)\|", ln)[1:-1]] for ln in lines]
    assert all(len(r) == 5 for r in rows), "each row: tool | caps | arguments | peer | differences"
    return rows


def _names(cell: str) -> set[str]:
    return set(re.findall(r"`(\w+)`", cell))


def test_every_tool_has_a_row_with_its_caps_and_arguments() -> None:
    """Each tool in TOOLS has one row naming its --caps and every argument of its schema."""
    rows = {r[0].strip("`"): r for r in _rows() if r[0] != "—"}
    assert set(rows) == {t.name for t in TOOLS}
    for tool in TOOLS:
        row = rows[tool.name]
        assert row[1] == (tool.cap or "core"), tool.name
        assert _names(row[2]) >= set(tool.input_schema()["properties"]), tool.name


def test_every_playwright_mcp_tool_is_in_the_table() -> None:
    """Each Playwright MCP tool appears in the peer column with all its arguments."""
    peer = json.loads(PEER.read_text())
    cells = [r[3] for r in _rows()]
    for tool in peer:
        cell = next((c for c in cells if c.startswith(f"`{tool['name']}`")), None)
        assert cell is not None, tool["name"]
        assert _names(cell) >= set(tool["inputSchema"].get("properties", {})), tool["name"]


def _table_module():
    spec = importlib.util.spec_from_file_location("tool_table", TABLE_SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_table_is_the_generated_one() -> None:
    """The table is what scripts/conformance/tool_table.py makes from the tool lists and
    the notes (rerun it with --write after changing a tool), with a note for every tool."""
    text, missing = _table_module().table()
    assert not missing, f"no note in scripts/conformance/tool_notes.json for {missing}"
    doc = DOC.read_text()
    assert f"<!-- tool-table:start -->\n{text}<!-- tool-table:end -->" in doc, \
        "docs/mcp.md's tool table is stale: run scripts/conformance/tool_table.py --write"


def test_rows_state_the_argument_differences() -> None:
    """Each row of a tool both servers have starts its differences with the argument
    differences computed from both schemas."""
    peer = {t["name"]: t for t in json.loads(PEER.read_text())}
    rows = {r[0].strip("`"): r for r in _rows() if r[0] != "—"}
    for tool in TOOLS:
        if tool.name in peer:
            want = _table_module().arg_differences(tool.input_schema(), peer[tool.name]["inputSchema"])
            assert rows[tool.name][4].startswith(want), (tool.name, want)


def test_peer_snapshot_matches_installed_playwright_mcp() -> None:
    """The stored Playwright MCP tool list is the installed server's own (--caps vision,pdf,devtools)."""
    node = shutil.which("node")
    if node is None or not PEER_CLI.exists():
        pytest.skip("Playwright MCP not installed (npm ci --prefix scripts/conformance)")
    from mcp import Client, StdioServerParameters

    async def listing() -> list[dict]:
        params = StdioServerParameters(
            command=node, args=[str(PEER_CLI), "--headless", "--isolated", "--caps", "vision,pdf,devtools"])
        async with Client(params, read_timeout_seconds=60) as client:
            return [t.model_dump(by_alias=True, mode="json", exclude_none=True)
                    for t in (await client.list_tools()).tools]

    assert asyncio.run(listing()) == json.loads(PEER.read_text())
