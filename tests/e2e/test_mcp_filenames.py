"""``filename`` on browser_snapshot, browser_find and browser_evaluate (Playwright MCP
0.0.86's arguments, refused as unknown before): the file holds what the answer would have
shown (the snapshot, the matches, the whole result uncut), the answer names the file and
does not repeat it, and a name leaving the output directory is refused. Real headless
Chromium (the files are the bridge's; the browser only supplies the page)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import CHROMIUM_ONLY, Origins, Stack
from .test_mcp_tabs import call, mcp_on

pytestmark = [pytest.mark.browser, CHROMIUM_ONLY]


def saved_path(text: str) -> Path:
    found = re.search(r"(/\S+?\.(?:yaml|txt|json))\b", text)
    assert found, text
    return Path(found.group(1))


async def test_snapshot_find_and_evaluate_save_to_files(stack: Stack, origins: Origins) -> None:
    async with mcp_on(stack) as mcp:
        await call(mcp, "browser_navigate", url=f"{origins.main}/mcp_form.html")
        said = await call(mcp, "browser_snapshot", filename="tb-test/snap.yaml")
        snap = saved_path(said)
        try:
            body = snap.read_text()
            assert 'button "Save"' in body and "[ref=" in body, body
            assert "saved to" in said and 'button "Save"' not in said, said
            assert "- Page URL:" in said and "mcp_form.html" in said

            found = await call(mcp, "browser_find", role="button", filename="tb-test/found.txt")
            matches = saved_path(found).read_text()
            assert 'button "Save"' in matches and 'button "Delete"' in matches, matches
            assert "2 matches" in found and 'button "Save"' not in found, found

            big = "() => Array.from({length: 3000}, (_, i) => 'item ' + i)"
            evald = await call(mcp, "browser_evaluate", function=big,
                               filename="tb-test/result.json")
            result = saved_path(evald).read_text()
            assert '"item 2999"' in result and "cut" not in result  # whole, not cut at 20,000
            assert "item 1" not in evald, evald

            escape = await mcp.call_tool("browser_snapshot", {"filename": "../escape.yaml"})
            assert escape.is_error and "inside the output directory" in escape.content[0].text
        finally:
            for name in ("snap.yaml", "found.txt", "result.json"):
                (snap.parent / name).unlink(missing_ok=True)
            snap.parent.rmdir()


async def test_a_file_name_with_a_nul_byte_is_a_bad_request_and_the_server_goes_on(
        stack: Stack, origins: Origins) -> None:
    """A NUL byte cannot be in a file name: the answer is a BAD_REQUEST naming the file
    name (was INTERNAL_ERROR "The MCP server failed: ValueError: embedded null byte"),
    nothing is written, and the next call works."""
    async with mcp_on(stack) as mcp:
        await call(mcp, "browser_navigate", url=f"{origins.main}/mcp_form.html")
        for tool, args in (("browser_evaluate", {"function": "() => 1"}),
                           ("browser_snapshot", {}),
                           ("browser_take_screenshot", {"type": "png"})):
            bad = await mcp.call_tool(tool, {**args, "filename": "a\x00b.png"})
            text = bad.content[0].text
            assert bad.is_error and "BAD_REQUEST" in text and "INTERNAL" not in text, text
        assert "returned" in await call(mcp, "browser_evaluate", function="() => 1")
