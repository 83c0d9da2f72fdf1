"""browser_file_upload without paths cancels the file chooser a click opened (Playwright
MCP's behaviour): the page gets no file, and the next click opens a chooser again."""

from __future__ import annotations

from pathlib import Path

from .conftest import Origins, Stack, ref_of, wait_until
from .test_mcp_tabs import call, mcp_on, page_state, pw_page


async def test_upload_without_paths_cancels_the_chooser(stack: Stack, origins: Origins,
                                                        tmp_path: Path) -> None:
    """Click → chooser; upload {} cancels it (the input gets no file, the result says so); the
    chooser is released, so a second click's chooser takes a file."""
    async with mcp_on(stack, (tmp_path,)) as mcp:
        text = await call(mcp, "browser_navigate",
                          url=f"{origins.main}/upload_cancel/index.html")
        await wait_until(lambda: any(p.url.endswith("/upload_cancel/index.html")
                                     for p in stack.supervisor.context.pages))
        button = ref_of(page_state(text), "button", "Choose file")
        clicked = await call(mcp, "browser_click", target=button)
        assert "### Modal state\n- [File chooser]" in clicked, clicked
        cancelled = await call(mcp, "browser_file_upload")
        assert "Cancelled the open file chooser" in cancelled, cancelled
        page = pw_page(stack, "upload_cancel")
        # set_files([]) (Playwright MCP's cancel) leaves the input empty; Chromium fires a
        # change with no files, as a person's cancel after an earlier pick would.
        assert all(c == [] for c in (await page.evaluate("window.__seen"))["changes"])
        upload = tmp_path / "a.txt"
        upload.write_bytes(b"x")
        again = await call(mcp, "browser_click", target=button)
        if stack.browser == "firefox":
            # Firefox over BiDi announces no chooser for a click after a cancelled one
            # (observed); the result then shows none, and an upload is refused, never
            # passed off as done.
            assert "[File chooser]" not in again, again
            refused = await mcp.call_tool("browser_file_upload", {"paths": [str(upload)]})
            assert refused.is_error and "No file chooser is open" in str(refused.content)
            return
        assert "### Modal state\n- [File chooser]" in again, again
        done = await call(mcp, "browser_file_upload", paths=[str(upload)])
        assert "Gave 1 file(s) to the open file chooser" in done, done
        assert (await page.evaluate("window.__seen"))["changes"][-1] == ["a.txt"]
