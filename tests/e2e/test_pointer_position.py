"""The pointer's position is one for every tool: a down, up or wheel without a point acts
where the last trusted pointer action left the pointer on that tab, whichever tool sent it
(supervisor/mouse.py keeps it per page; the bridge asks ``driver.pointer``).

Real headless browsers against pages/pointer/list.html: a lazy list that loads rows when
scrolled near its end and records every wheel event (``isTrusted``, over the list or not)
and its ``scrollTop``. Before the driver kept the position, a wheel after browser_hover
turned at (0, 0), over the page's heading: nothing scrolled and no row loaded.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from trustbridge.bridge.mcp import Session
from trustbridge.bridge.mcp.options import McpOptions
from trustbridge.bridge.mcp.server import build_server

from .conftest import Origins, Stack, ref_of

FEED_CENTRE = (40 + 1 + 160, 60 + 1 + 120)  # pages/pointer/list.html: #feed's box


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


@pytest.fixture
async def vision_mcp(stack: Stack) -> AsyncIterator[Session]:
    """An MCP server connection with ``--caps vision`` on this test's bridge."""
    session = Session(url=stack.server.url, token=stack.server.token, embedded=False,
                      options=McpOptions(caps=frozenset({"vision"})))
    try:
        yield session
    finally:
        await session.close()


async def _scrolled(stack: Stack, at_least: float) -> float:
    """The list's scrollTop once it reached ``at_least`` (wheel scrolling is applied
    asynchronously), or its value after 2 s."""
    top = 0.0
    for _ in range(40):
        top = await stack.page.evaluate("document.getElementById('feed').scrollTop")
        if top >= at_least:
            break
        await asyncio.sleep(0.05)
    return top


async def test_mcp_wheel_after_hover_turns_over_the_hovered_list(
        stack: Stack, origins: Origins, vision_mcp: Session) -> None:
    """browser_hover on the list, then browser_mouse_wheel with no x/y: the wheel turns
    over the list (trusted wheel events there), the list scrolls and loads more rows, and
    the result names the point. Then browser_click on a button elsewhere and
    browser_mouse_down / up with no point: they land on that button (its click counted)."""
    async with Client(build_server(vision_mcp)) as mcp:
        nav = await mcp.call_tool("browser_navigate", {"url": f"{origins.main}/pointer/list.html"})
        assert not nav.is_error, _text(nav)
        hovered = await mcp.call_tool("browser_hover", {
            "element": "Feed", "ref": ref_of(_text(nav), "list", "Feed")})
        assert not hovered.is_error, _text(hovered)
        wheel = await mcp.call_tool("browser_mouse_wheel", {"deltaY": 600})
        assert not wheel.is_error, _text(wheel)
        assert f"at ({FEED_CENTRE[0]}, {FEED_CENTRE[1]})" in _text(wheel), _text(wheel)
        assert await _scrolled(stack, 300) >= 300
        wheels = await stack.page.evaluate("window.wheels")
        assert wheels and all(w["isTrusted"] and w["inFeed"] for w in wheels), wheels
        assert await stack.page.evaluate("window.rowCount()") > 20  # the lazy list loaded
        clicked = await mcp.call_tool("browser_click", {
            "element": "Elsewhere", "ref": ref_of(_text(wheel), "button", "Elsewhere")})
        assert not clicked.is_error, _text(clicked)
        down = await mcp.call_tool("browser_mouse_down", {})
        up = await mcp.call_tool("browser_mouse_up", {})
        assert "Pressed the left button at (" in _text(down), _text(down)
        assert re.search(r"<button> - button \"Elsewhere\"", _text(up)), _text(up)
    assert await stack.page.evaluate("window.clicked") == 2


async def test_sdk_wheel_after_a_ref_scroll_and_a_click_at_a_point(
        stack: Stack, origins: Origins) -> None:
    """The SDK, on the driver's slow path too: ``Tab.scroll`` on the list (Playwright's
    hover, whose point the driver reads from the list's box) then ``Tab.mouse("wheel")``
    with no point scrolls the list further; after a click at a point elsewhere, a wheel
    with no point turns there and the list stays where it was."""
    tab = stack.tab
    await tab.goto(f"{origins.main}/pointer/list.html")
    ref = ref_of(await stack.snapshot(), "list", "Feed")
    await tab.scroll(ref, dy=90)
    first = await _scrolled(stack, 90)
    result = await tab.mouse("wheel", delta_y=200)
    assert result["at"] == {"x": FEED_CENTRE[0], "y": FEED_CENTRE[1]}, result
    after = await _scrolled(stack, first + 200)
    assert after >= first + 200, (first, after)
    wheels = await stack.page.evaluate("window.wheels")
    assert len(wheels) >= 2 and all(w["isTrusted"] and w["inFeed"] for w in wheels), wheels
    await tab.mouse("click", 600, 400)
    moved = await tab.mouse("wheel", delta_y=300)
    assert moved["at"] == {"x": 600, "y": 400}, moved
    assert await _scrolled(stack, after + 1) == after
    assert not (await stack.page.evaluate("window.wheels"))[-1]["inFeed"]
