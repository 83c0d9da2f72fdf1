"""browser_emulate_media (Playwright MCP 0.0.86's core tool): the page's own matchMedia
listener sees the emulated color scheme arrive and leave, its CSS follows, null clears an
override while an omitted feature keeps its own, and the result says what the page
matches. Real headless browser, the MCP server on the stack's bridge
(tests/e2e/pages/media)."""

from __future__ import annotations

import pytest

from .conftest import Origins, Stack
from .test_mcp_tabs import call, mcp_on

pytestmark = pytest.mark.browser

BACKGROUND = "() => getComputedStyle(document.body).backgroundColor"


async def test_color_scheme_and_media_type_reach_the_page(stack: Stack, origins: Origins,
                                                          browser: str) -> None:
    async with mcp_on(stack) as mcp:
        await call(mcp, "browser_navigate", url=f"{origins.main}/media/index.html")
        if browser == "firefox":
            # Playwright 1.62 over WebDriver BiDi takes the call and applies nothing: the
            # read-back says so instead of a success.
            got = await mcp.call_tool("browser_emulate_media", {"colorScheme": "dark"})
            text = got.content[0].text
            assert got.is_error and "did not apply" in text and "light" in text, text
            # The arguments were right: the next step must not send the agent to them.
            step = text.split("Next step: ", 1)[1]
            assert "input schema" not in step and "Chromium" in step, step
            assert "rgb(255, 255, 255)" in await call(mcp, "browser_evaluate",
                                                      function=BACKGROUND)
            return
        dark = await call(mcp, "browser_emulate_media", colorScheme="dark", media="print")
        assert "colorScheme: dark" in dark and "media: print" in dark, dark
        assert "rgb(0, 0, 0)" in await call(mcp, "browser_evaluate", function=BACKGROUND)
        assert "none" in await call(mcp, "browser_evaluate", function=(
            "() => getComputedStyle(document.getElementById('screen-only')).display"))
        # media cleared, colorScheme left out: still dark, back on screen
        kept = await call(mcp, "browser_emulate_media", media=None)
        assert "colorScheme: dark" in kept and "media: screen" in kept, kept
        light = await call(mcp, "browser_emulate_media", colorScheme="light")
        assert "colorScheme: light" in light, light
        assert "rgb(255, 255, 255)" in await call(mcp, "browser_evaluate", function=BACKGROUND)
    page = next(p for p in stack.supervisor.context.pages if "/media/" in p.url)
    assert await page.evaluate("window.darkChanges") == [True, False]


async def test_a_value_out_of_the_enum_is_refused(stack: Stack, origins: Origins) -> None:
    """A value Playwright MCP's schema does not allow is an argument error; the page
    keeps what it had."""
    async with mcp_on(stack) as mcp:
        await call(mcp, "browser_navigate", url=f"{origins.main}/media/index.html")
        bad = await mcp.call_tool("browser_emulate_media", {"colorScheme": "purple"})
        assert bad.is_error
        assert "rgb(255, 255, 255)" in await call(mcp, "browser_evaluate", function=BACKGROUND)
