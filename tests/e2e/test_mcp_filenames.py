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
