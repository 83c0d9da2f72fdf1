"""A file chooser the browser announces after the click's answer is still reported by
that click, through the receipt's ``fileInput`` sign (extension/src/page/receipt.js →
bridge/executor.py → ``driver.fileChooser``, supervisor/watch.py ``await_file_chooser``).

Under load, Playwright on Chromium announced the chooser of a button whose handler calls
``input.click()`` after the driver answered (CI). The test makes that race certain: the
driver's chooser listener hears of every chooser DELAY_S late, long after the click's
answer; the click's result must still name it, and not as an earlier action's ``late``
one."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from trustbridge.supervisor import watch

from .conftest import Origins, Stack, ref_of, wait_until
from .test_mcp_tabs import call, mcp_on, page_state, pw_page

UPLOAD_ROOTS = (Path(__file__).parent, Path(tempfile.gettempdir()))
"""The MCP server's --allowed-roots here: these tests upload this file and tmp_path files
(tests/bridge/test_files.py covers the refusals)."""
DELAY_S = 0.4
"""How late the driver's listener hears of a chooser, s (well after the click's answer,
well within the bridge's 2 s bound)."""


@pytest.fixture
def late_choosers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every page's ``filechooser`` reaches the watch DELAY_S after Playwright emitted it."""
    real_listen = watch._listen

    def slow_listen(page: Any, state: Any) -> None:
        real_on = page.on

        def on(event: str, fn: Callable[..., Any]) -> Any:
            if event != "filechooser":
                return real_on(event, fn)
            loop = asyncio.get_running_loop()
            return real_on(event, lambda chooser: loop.call_later(DELAY_S, fn, chooser))

        page.on = on
        try:
            real_listen(page, state)
        finally:
            del page.on

    monkeypatch.setattr(watch, "_listen", slow_listen)


@pytest.mark.usefixtures("late_choosers")
async def test_a_chooser_announced_after_the_answer_is_the_click_s_own(
        stack: Stack, origins: Origins, tmp_path: Path) -> None:
    """The chooser comes DELAY_S after Playwright saw it: the click's own result shows it
    (the page clicked its file input once); an upload with no ref gives the page the file;
    the next click does not report the chooser again."""
    async with mcp_on(stack, UPLOAD_ROOTS) as mcp:
        text = await call(mcp, "browser_navigate", url=f"{origins.main}/chooser_sign/index.html")
        await wait_until(lambda: any(p.url.endswith("/chooser_sign/index.html")
                                     for p in stack.supervisor.context.pages))
        page = pw_page(stack, "chooser_sign")
        clicked = await call(mcp, "browser_click", element="Choose file",
                             ref=ref_of(page_state(text), "button", "Choose file"))
        assert "Opened a file chooser" in clicked, clicked
        assert "### Modal state\n- [File chooser]" in clicked, clicked
        assert (await page.evaluate("window.__seen.inputClicks")) == 1
        upload = tmp_path / "notes.txt"
        upload.write_bytes(b"twelve bytes")
        done = await call(mcp, "browser_file_upload", paths=[str(upload)])
        assert "Gave 1 file(s) to the open file chooser" in done, done
        assert await page.evaluate("window.__seen.picked") == {
            "name": "notes.txt", "size": 12, "trusted": True}
        plain = await call(mcp, "browser_click", element="Plain button",
                           ref=ref_of(page_state(text), "button", "Plain button"))
        assert "File chooser" not in plain and "file chooser" not in plain, plain
        assert await page.evaluate("window.__seen.plain") == 1


@pytest.mark.usefixtures("late_choosers")
async def test_a_click_with_no_file_input_claims_no_chooser(
        stack: Stack, origins: Origins) -> None:
    """A plain button (no file input clicked): no sign, no wait, no chooser claimed, and
    no upload is accepted."""
    async with mcp_on(stack, UPLOAD_ROOTS) as mcp:
        text = await call(mcp, "browser_navigate", url=f"{origins.main}/chooser_sign/index.html")
        await wait_until(lambda: any(p.url.endswith("/chooser_sign/index.html")
                                     for p in stack.supervisor.context.pages))
        plain = await call(mcp, "browser_click", element="Plain button",
                           ref=ref_of(page_state(text), "button", "Plain button"))
        assert "file chooser" not in plain.lower(), plain
        assert await pw_page(stack, "chooser_sign").evaluate("window.__seen.plain") == 1
        refused = await mcp.call_tool("browser_file_upload", {"paths": [__file__]})
        assert refused.is_error and "No file chooser is open" in str(refused.content)


async def _chooser_held_then_navigate(stack: Stack, origins: Origins, mcp: Any) -> Any:
    """Click "Choose later" (its chooser opens 300 ms after the answer and is held late),
    wait until the driver holds it, then navigate to index.html. Returns that page."""
    text = await call(mcp, "browser_navigate", url=f"{origins.main}/chooser_sign/later.html")
    await wait_until(lambda: any(p.url.endswith("/chooser_sign/later.html")
                                 for p in stack.supervisor.context.pages))
    page = pw_page(stack, "chooser_sign/later.html")
    await call(mcp, "browser_click", element="Choose later",
               ref=ref_of(page_state(text), "button", "Choose later"))
    await wait_until(lambda: (s := watch._pages.get(page)) is not None and s.chooser is not None)
    assert await page.evaluate("window.__seen.inputClicks") == 1
    await call(mcp, "browser_navigate", url=f"{origins.main}/chooser_sign/index.html")
    await wait_until(lambda: page.url.endswith("/chooser_sign/index.html"))
    return page


async def test_a_held_chooser_is_dropped_when_its_page_navigates(
        stack: Stack, origins: Origins) -> None:
    """A late chooser held for the page, then the page navigates: no later action reports
    it, and an upload without ref says no chooser is open (nothing was given to it)."""
    async with mcp_on(stack, UPLOAD_ROOTS) as mcp:
        page = await _chooser_held_then_navigate(stack, origins, mcp)
        text = await call(mcp, "browser_snapshot")
        plain = await call(mcp, "browser_click", element="Plain button",
                           ref=ref_of(text, "button", "Plain button"))
        assert "file chooser" not in plain.lower(), plain
        assert await page.evaluate("window.__seen.plain") == 1
        refused = await mcp.call_tool("browser_file_upload", {"paths": [__file__]})
        assert refused.is_error and "No file chooser is open" in str(refused.content), \
            refused.content
        assert await page.evaluate("window.__seen.picked") is None


async def test_an_upload_to_a_chooser_of_a_gone_document_is_document_changed(
        stack: Stack, origins: Origins, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the navigation was not seen yet (the look at the chooser's input is skipped
    here), Playwright's set_files fails on the gone document: the answer is
    BROWSER_DOCUMENT_CHANGED (nothing uploaded), never INTERNAL_ERROR, and the chooser is
    held no more."""
    async def unseen(_state: Any, _chooser: Any) -> None:
        return None

    monkeypatch.setattr(watch, "_check_chooser", unseen)
    async with mcp_on(stack, UPLOAD_ROOTS) as mcp:
        page = await _chooser_held_then_navigate(stack, origins, mcp)
        failed = await mcp.call_tool("browser_file_upload", {"paths": [__file__]})
        shown = str(failed.content)
        assert failed.is_error and "BROWSER_DOCUMENT_CHANGED" in shown, shown
        assert "nothing was uploaded" in shown, shown
        assert await page.evaluate("window.__seen.picked") is None
        again = await mcp.call_tool("browser_file_upload", {"paths": [__file__]})
        assert again.is_error and "No file chooser is open" in str(again.content), again.content


async def test_a_folder_for_the_chooser_of_a_plain_input_is_a_bad_request(
        stack: Stack, origins: Origins, tmp_path: Path) -> None:
    """The chooser of a file input without webkitdirectory refuses a folder: BAD_REQUEST
    (Playwright's refusal), nothing reaches the page, and the chooser stays open for the
    file given next."""
    async with mcp_on(stack, UPLOAD_ROOTS) as mcp:
        text = await call(mcp, "browser_navigate", url=f"{origins.main}/chooser_sign/index.html")
        await wait_until(lambda: any(p.url.endswith("/chooser_sign/index.html")
                                     for p in stack.supervisor.context.pages))
        page = pw_page(stack, "chooser_sign/index.html")
        clicked = await call(mcp, "browser_click", element="Choose file",
                             ref=ref_of(page_state(text), "button", "Choose file"))
        assert "Opened a file chooser" in clicked, clicked
        refused = await mcp.call_tool("browser_file_upload", {"paths": [str(tmp_path)]})
        shown = str(refused.content)
        assert refused.is_error and "BAD_REQUEST" in shown and "directories" in shown, shown
        assert await page.evaluate("window.__seen.picked") is None
        upload = tmp_path / "notes.txt"
        upload.write_bytes(b"twelve bytes")
        done = await call(mcp, "browser_file_upload", paths=[str(upload)])
        assert "Gave 1 file(s) to the open file chooser" in done, done
        assert (await page.evaluate("window.__seen.picked"))["name"] == "notes.txt"
