"""What a page can see of the automation (issue 13 item 12, docs/security.md): the page
reads ``navigator.webdriver`` and ``navigator.userAgent`` itself, in a real browser."""

from __future__ import annotations

import pytest

from .conftest import Origins, Stack, page_eval

pytestmark = [pytest.mark.browser, pytest.mark.timeout(90)]

_READ = "[navigator.webdriver, navigator.userAgent]"


async def test_the_page_sees_no_webdriver_flag_and_no_headless_user_agent(
        stack: Stack, origins: Origins) -> None:
    """navigator.webdriver is false and the user agent names no "Headless" browser; on
    Chromium it is the binary's own Chrome user agent (same major version)."""
    await stack.tab.goto(f"{origins.main}/index.html")
    webdriver, agent = await page_eval(stack.page, _READ)
    if stack.browser == "firefox" and webdriver is True:
        pytest.skip("Firefox ESR under WebDriver BiDi reports navigator.webdriver === true "
                    "and no pref turns it off (docs/security.md)")
    assert webdriver is False
    assert "Headless" not in agent, agent
    if stack.browser == "chromium":
        version = stack.supervisor.context.browser.version
        assert f" Chrome/{version.split('.')[0]}.0.0.0 " in agent, agent


async def test_a_child_frame_and_a_worker_see_the_same_user_agent(
        stack: Stack, origins: Origins) -> None:
    """The user agent is the browser's (a launch flag), not a per-page override: a
    cross-origin frame and a dedicated worker see the same one as the top page."""
    await stack.tab.goto(f"{origins.main}/index.html")
    page = stack.page
    top = await page_eval(page, "navigator.userAgent")
    worker = await page_eval(page, """() => new Promise((resolve) => {
        const src = 'postMessage(navigator.userAgent)';
        const w = new Worker(URL.createObjectURL(new Blob([src], {type: 'text/javascript'})));
        w.onmessage = (e) => resolve(e.data);
    })""")
    assert worker == top
    assert "Headless" not in worker

