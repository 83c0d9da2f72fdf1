"""Downloads an action starts (issue 15 item 3): the driver saves each one under the
downloads folder (supervisor/watch.py, supervisor/downloads.py) and the result names it, its size and its path;
the page that started it stays where it was, with its state (tests/e2e/pages/tabs)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from trustbridge.supervisor.downloads import DOWNLOADS_ENV

from .conftest import PAGES, Origins, Stack, ref_of
from .test_mcp_tabs import call, mcp_on, open_main, page_state, pw_page

# Firefox names a download after the ones it made before in its session ("report(1).txt"
# after a "report.txt" of an earlier test): each test gets a browser of its own.
pytestmark = pytest.mark.own_browser


@pytest.fixture
def downloads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The downloads folder for this test ($TRUSTBRIDGE_DOWNLOADS_DIR)."""
    folder = tmp_path / "downloads"
    monkeypatch.setenv(DOWNLOADS_ENV, str(folder))
    return folder


@pytest.mark.parametrize(("link", "served"), [
    ("Download report", "report.txt"),  # <a download>: starts a few ms after the click
    ("Export data", "export.bin"),  # a navigation to application/octet-stream
])
async def test_a_click_that_downloads_reports_the_saved_file(
        stack: Stack, origins: Origins, downloads: Path,
        link: str, served: str) -> None:
    """The click's result names the file, its size and where it was saved; the file
    there has the served bytes; the page kept its URL and state and still counts clicks."""
    expected = (PAGES / "tabs" / served).read_bytes()
    async with mcp_on(stack) as mcp:
        text = await open_main(stack, mcp, origins)
        clicked = await call(mcp, "browser_click", element=link,
                             ref=ref_of(page_state(text), "link", link))
        found = re.search(rf'Downloaded "{re.escape(served)}": (\d+) bytes, saved as (\S+)',
                          clicked)
        assert found, clicked
        saved = Path(found[2])
        assert int(found[1]) == len(expected) and saved.parent == downloads
        assert saved.read_bytes() == expected
        assert "loaded a new document" not in clicked
        main = pw_page(stack, "main.html")
        assert main.url.endswith("/tabs/main.html")
        assert await main.evaluate("window.__seen.state") == "kept"


@pytest.mark.parametrize("link", ["Download report", "Export data"])
async def test_the_page_still_takes_clicks_after_a_download(
        stack: Stack, origins: Origins, downloads: Path, browser: str, link: str) -> None:
    """After the download the page's refs still work: a click on Count counts there."""
    if browser != "chromium":
        pytest.skip("Firefox reports no end of a navigation that became a download "
                    "(webNavigation has no onCommitted / onErrorOccurred for it), so the "
                    "extension keeps fencing the page's refs as navigating")
    async with mcp_on(stack) as mcp:
        text = await open_main(stack, mcp, origins)
        clicked = await call(mcp, "browser_click", element=link,
                             ref=ref_of(page_state(text), "link", link))
        assert "Downloaded" in clicked
        await call(mcp, "browser_click", element="Count",
                   ref=ref_of(page_state(clicked), "button", "Count"))
        assert await pw_page(stack, "main.html").evaluate("window.__seen.count") == 1


async def test_two_downloads_of_one_name_are_both_kept(
        stack: Stack, origins: Origins, downloads: Path, browser: str) -> None:
    """The second download of the same name is saved beside the first, not over it."""
    await stack.tab.goto(f"{origins.main}/tabs/main.html")
    ref = ref_of(await stack.snapshot(), "link", "Download report")
    first = await stack.act(ref, kind="click")
    if browser != "chromium":  # the extension fences the page's refs after a download
        await stack.tab.goto(f"{origins.main}/tabs/main.html")
        ref = ref_of(await stack.snapshot(), "link", "Download report")
    second = await stack.act(ref, kind="click")
    paths = [d["path"] for r in (first, second) for d in r["downloads"]]
    # Firefox names the second "report(1).txt" itself; Chromium suggests the same name.
    assert Path(paths[0]).name == "report.txt" and len(set(paths)) == 2
    assert {Path(p).parent for p in paths} == {downloads}
    assert all(Path(p).read_bytes() == (PAGES / "tabs" / "report.txt").read_bytes()
               for p in paths)
