"""Trusted mouse input at viewport points, with no ref (issue 15 item 1, MouseAction): the
SDK's ``Tab.mouse`` and the ``--caps vision`` MCP tools against real headless browsers.

Every test asserts what the page itself recorded (``event.isTrusted``, the point, the
scroll offset) and what the hit test named at the point (through a cross-origin iframe and
a closed shadow root). The page (pages/vision/index.html) lays its targets out at fixed
CSS px positions; the coordinates below follow from its stylesheet.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.mcp import Session
from trustbridge.bridge.mcp.options import McpOptions
from trustbridge.bridge.mcp.server import build_server
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.routing import RoutingPolicy
from trustbridge.bridge.server import BridgeServer
from trustbridge.supervisor.runner import Supervisor

from .conftest import Origins, Stack, ref_of, wait_until

# The page's layout (pages/vision/index.html), CSS px of the top-level viewport.
BOARD = (20, 20)  # canvas top-left
FRAME_CONTENT = (360 + 5 + 7, 20 + 5 + 7)  # iframe left/top + border + padding
FRAMED_BUTTON_CENTRE = (40 + 80, 50 + 25)  # in the frame's viewport
SHADOW_BUTTON_CENTRE = (720 + 90, 20 + 30)
SCROLLER_POINT = (170, 320)
PAD = (360, 220)
PRESS = (720, 220)


def vision_url(origins: Origins) -> str:
    """The vision page with its iframe on the other origin (a real cross-origin frame)."""
    return f"{origins.main}/vision/index.html?frame={origins.other}/vision/frame.html"


async def records(stack: Stack, name: str) -> list[dict[str, Any]]:
    """What the top page recorded under ``window.records[name]``."""
    return await stack.page.evaluate(f"window.records[{name!r}]")


async def framed_clicks(stack: Stack) -> list[dict[str, Any]]:
    """The clicks the iframe's button recorded."""
    frame = next(f for f in stack.page.frames
                 if f.parent_frame is not None and f.url.endswith("/vision/frame.html"))
    return await frame.evaluate("window.clicks")


async def open_page(stack: Stack, origins: Origins) -> None:
    await stack.tab.goto(vision_url(origins))
    await stack.snapshot()  # every frame stamped and announced


async def test_a_click_on_a_canvas_lands_at_the_point(stack: Stack, origins: Origins) -> None:
    """A click at a canvas point: the canvas gets one trusted click at that offset; the
    hit names the canvas with a ref, and the receipt says it was delivered."""
    await open_page(stack, origins)
    result = await stack.tab.mouse("click", BOARD[0] + 100, BOARD[1] + 50)
    assert await records(stack, "board") == [
        {"isTrusted": True, "x": 100, "y": 50, "detail": 1, "button": 0}]
    hit = result["hit"]
    assert hit["tag"] == "canvas" and re.fullmatch(r"e\d+", hit["ref"]), hit
    assert result["inputPath"] == "trusted" and result["delivered"] is True, result


async def test_a_double_click_at_a_point_counts_two(stack: Stack,
                                                           origins: Origins) -> None:
    """clickCount reaches the page: a double click is two trusted clicks, detail 1 then 2.
    Firefox over BiDi would deliver two single clicks: refused there, nothing sent."""
    await open_page(stack, origins)
    if stack.browser == "firefox":
        with pytest.raises(E.TrustedInputUnavailable, match="single clicks"):
            await stack.tab.mouse("click", BOARD[0] + 10, BOARD[1] + 10, click_count=2)
        assert await records(stack, "board") == []
        return
    await stack.tab.mouse("click", BOARD[0] + 10, BOARD[1] + 10, click_count=2)
    seen = await records(stack, "board")
    assert [r["detail"] for r in seen] == [1, 2] and all(r["isTrusted"] for r in seen)


async def test_a_click_inside_a_cross_origin_iframe_names_its_button(
        stack: Stack, origins: Origins) -> None:
    """The point is converted into the iframe's viewport (its box, border and padding):
    the framed button gets the trusted click at its centre, the hit names it with a ref of
    that frame, the receipt is delivered, and the ref works for a later click."""
    await open_page(stack, origins)
    x = FRAME_CONTENT[0] + FRAMED_BUTTON_CENTRE[0]
    y = FRAME_CONTENT[1] + FRAMED_BUTTON_CENTRE[1]
    result = await stack.tab.mouse("click", x, y)
    assert await framed_clicks(stack) == [{"isTrusted": True, "x": 120, "y": 75}]
    hit = result["hit"]
    assert (hit["role"], hit["name"]) == ("button", "Framed button"), hit
    assert re.fullmatch(r"f\d+e\d+", hit["ref"]) and f"[ref={hit['ref']}]" in hit["line"]
    assert result["delivered"] is True, result
    await stack.tab.click(hit["ref"])
    assert len(await framed_clicks(stack)) == 2


async def test_a_click_inside_a_closed_shadow_root_names_its_button(
        stack: Stack, origins: Origins) -> None:
    """The hit test descends into a closed shadow root: the hit is its button (marked
    closed-shadow), the page saw a trusted click, and the receipt was delivered there."""
    await open_page(stack, origins)
    result = await stack.tab.mouse("click", *SHADOW_BUTTON_CENTRE)
    assert await records(stack, "shadow") == [{"isTrusted": True}]
    hit = result["hit"]
    assert (hit["role"], hit["name"]) == ("button", "Shadow press"), hit
    assert "[closed-shadow]" in hit["line"]
    assert result["delivered"] is True, result


async def test_the_wheel_scrolls_an_inner_virtualized_list(stack: Stack,
                                                           origins: Origins) -> None:
    """A wheel over the inner list scrolls that list (not the page): its scrollTop moves
    and rows far down are rendered; the hit names the row under the pointer."""
    await open_page(stack, origins)
    result = await stack.tab.mouse("wheel", *SCROLLER_POINT, delta_y=900)
    assert result["hit"]["role"] == "listitem" and ": Row " in result["hit"]["line"], result
    scroll = "document.getElementById('scroller').scrollTop"
    for _ in range(40):
        if await stack.page.evaluate(scroll) >= 600:
            break
        await asyncio.sleep(0.05)
    assert await stack.page.evaluate(scroll) >= 600
    assert await stack.page.evaluate("scrollY") == 0
    rows = [int(n) for n in re.findall(r"Row (\d+)", await stack.snapshot())]
    assert rows and min(rows) >= 20, rows  # the rows now rendered are far down the list


async def test_a_drag_by_coordinates_presses_moves_and_releases(stack: Stack,
                                                                origins: Origins) -> None:
    """A drag: trusted pointerdown at the start, moves while pressed, pointerup at the end."""
    await open_page(stack, origins)
    await stack.tab.mouse("drag", PAD[0] + 40, PAD[1] + 30, to_x=PAD[0] + 240, to_y=PAD[1] + 160)
    seen = await records(stack, "pad")
    assert all(r["isTrusted"] for r in seen)
    assert (seen[0]["type"], seen[0]["x"], seen[0]["y"]) == ("pointerdown", 40, 30)
    assert (seen[-1]["type"], seen[-1]["x"], seen[-1]["y"]) == ("pointerup", 240, 160)
    assert sum(r["type"] == "pointermove" for r in seen) >= 3


async def test_move_down_and_up_each_land_at_their_point(stack: Stack,
                                                         origins: Origins) -> None:
    """move, down and up (right button) are separate trusted events at their points."""
    await open_page(stack, origins)
    tab = stack.tab
    moved = await tab.mouse("move", PRESS[0] + 20, PRESS[1] + 20)
    assert moved["hit"]["name"] == "Press pad" or moved["hit"]["tag"] == "div", moved
    await tab.mouse("down", PRESS[0] + 60, PRESS[1] + 60, button="right")
    await tab.mouse("up", PRESS[0] + 80, PRESS[1] + 80, button="right")
    seen = await records(stack, "press")
    assert all(r["isTrusted"] for r in seen)
    down = next(r for r in seen if r["type"] == "mousedown")
    up = next(r for r in seen if r["type"] == "mouseup")
    assert (down["x"], down["y"], down["button"]) == (60, 60, 2)
    assert (up["x"], up["y"], up["button"]) == (80, 80, 2)
    assert any(r["type"] == "mousemove" and (r["x"], r["y"]) == (20, 20) for r in seen)


async def test_a_point_outside_the_viewport_is_refused(stack: Stack, origins: Origins) -> None:
    """Outside the viewport: BAD_REQUEST naming the viewport size; nothing reached the page."""
    await open_page(stack, origins)
    with pytest.raises(E.BadRequest, match="outside the viewport"):
        await stack.tab.mouse("click", 5000, 10)
    with pytest.raises(E.BadRequest, match="outside the viewport"):
        await stack.tab.mouse("drag", PAD[0] + 10, PAD[1] + 10, to_x=9000, to_y=10)
    assert await records(stack, "board") == [] and await records(stack, "pad") == []


async def test_a_click_on_nothing_still_clicks_and_says_so(stack: Stack,
                                                           origins: Origins) -> None:
    """A point over the bare page: the click is sent (the document gets it) and the hit
    says nothing was there; no receipt is claimed."""
    await open_page(stack, origins)
    await stack.page.evaluate(
        "window.bare = []; document.addEventListener('click', e => "
        "window.bare.push(e.isTrusted && (e.target === document.body || e.target === document.documentElement)))")
    result = await stack.tab.mouse("click", 1100, 700)
    assert result["hit"]["ref"] is None and result["hit"]["line"] is None, result
    assert "delivered" not in result or result["delivered"] is None
    assert await stack.page.evaluate("window.bare") == [True]


async def test_click_with_a_position_clicks_that_offset(stack: Stack, origins: Origins) -> None:
    """browser_click's position: the button is clicked at (10, 15) from its top-left."""
    await open_page(stack, origins)
    ref = ref_of(await stack.snapshot(), "button", "Where")
    await stack.tab.click_at(ref, 10, 15)
    assert await records(stack, "where") == [{"isTrusted": True, "x": 10, "y": 15}]


@pytest.fixture
async def synthetic_stack() -> AsyncIterator[Stack]:
    """Chromium with the extension and no input driver (the synthetic path)."""
    token = secrets.token_hex(16)
    device = "chromium-synthetic"
    server = BridgeServer(token, port=0, policy=RoutingPolicy())
    await server.start()
    sup = Supervisor(server.url, token, device, trusted_input=False)
    try:
        await sup.start()
        await wait_until(lambda: device in server.policy.extensions)
        client = await BridgeClient.connect(server.url, token)
        try:
            yield Stack(server, sup, client, device)
        finally:
            await client.close()
    finally:
        await sup.stop()
        await server.stop()


async def test_no_driver_means_no_mouse_input_at_all(synthetic_stack: Stack,
                                                     origins: Origins) -> None:
    """Without a driver a point click is refused (TRUSTED_INPUT_UNAVAILABLE), never faked
    with synthetic events: the canvas recorded nothing."""
    stack = synthetic_stack
    await stack.tab.goto(f"{origins.main}/vision/index.html")
    with pytest.raises(E.TrustedInputUnavailable, match="no synthetic events"):
        await stack.tab.mouse("click", BOARD[0] + 5, BOARD[1] + 5)
    assert await records(stack, "board") == []


# -- the same through MCP (the --caps vision tools, the mcp client library) ---------------


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


async def test_mcp_click_xy_on_canvas_frame_and_closed_shadow(
        stack: Stack, origins: Origins, vision_mcp: Session) -> None:
    """browser_mouse_click_xy on the canvas, the framed button and the closed-shadow
    button: each got one trusted click, and each result names the element and its
    delivered receipt."""
    async with Client(build_server(vision_mcp)) as mcp:
        nav = await mcp.call_tool("browser_navigate", {"url": vision_url(origins)})
        assert not nav.is_error, _text(nav)
        canvas = await mcp.call_tool("browser_mouse_click_xy",
                                     {"x": BOARD[0] + 30, "y": BOARD[1] + 40})
        framed = await mcp.call_tool("browser_mouse_click_xy", {
            "x": FRAME_CONTENT[0] + FRAMED_BUTTON_CENTRE[0],
            "y": FRAME_CONTENT[1] + FRAMED_BUTTON_CENTRE[1], "element": "Framed button"})
        shadow = await mcp.call_tool("browser_mouse_click_xy", {
            "x": SHADOW_BUTTON_CENTRE[0], "y": SHADOW_BUTTON_CENTRE[1]})
    assert await records(stack, "board") == [
        {"isTrusted": True, "x": 30, "y": 40, "detail": 1, "button": 0}]
    assert await framed_clicks(stack) == [{"isTrusted": True, "x": 120, "y": 75}]
    assert await records(stack, "shadow") == [{"isTrusted": True}]
    receipt = "Delivery receipt: the element received the click"
    assert "<canvas>" in _text(canvas) and receipt in _text(canvas), _text(canvas)
    assert re.search(r'in frame f\d+: <button> - button "Framed button" \[ref=f\d+e\d+\]',
                     _text(framed)), _text(framed)
    assert receipt in _text(framed)
    assert '- button "Shadow press" [closed-shadow]' in _text(shadow), _text(shadow)
    assert receipt in _text(shadow) and "with trusted input" in _text(shadow)


async def test_mcp_wheel_drag_and_move_down_up(stack: Stack, origins: Origins,
                                                vision_mcp: Session) -> None:
    """browser_mouse_wheel where browser_mouse_move_xy left the pointer scrolls the inner
    list; browser_mouse_drag_xy drags across the pad; down and up land where the pointer
    was moved: all trusted, as the page recorded."""
    async with Client(build_server(vision_mcp)) as mcp:
        await mcp.call_tool("browser_navigate", {"url": vision_url(origins)})
        await mcp.call_tool("browser_mouse_move_xy",
                            {"x": SCROLLER_POINT[0], "y": SCROLLER_POINT[1]})
        wheel = await mcp.call_tool("browser_mouse_wheel", {"deltaY": 900})
        assert not wheel.is_error, _text(wheel)
        assert f"at ({SCROLLER_POINT[0]}, {SCROLLER_POINT[1]})" in _text(wheel)
        drag = await mcp.call_tool("browser_mouse_drag_xy", {
            "startX": PAD[0] + 20, "startY": PAD[1] + 20,
            "endX": PAD[0] + 200, "endY": PAD[1] + 100})
        assert not drag.is_error, _text(drag)
        await mcp.call_tool("browser_mouse_move_xy", {"x": PRESS[0] + 50, "y": PRESS[1] + 50})
        down = await mcp.call_tool("browser_mouse_down", {})
        await mcp.call_tool("browser_mouse_move_xy", {"x": PRESS[0] + 90, "y": PRESS[1] + 70})
        up = await mcp.call_tool("browser_mouse_up", {})
        assert "Pressed the left button at (770, 270)" in _text(down), _text(down)
        assert "Released the left button at (810, 290)" in _text(up), _text(up)
    assert await stack.page.evaluate("document.getElementById('scroller').scrollTop") >= 600
    pad = await records(stack, "pad")
    assert (pad[0]["type"], pad[0]["x"], pad[0]["y"]) == ("pointerdown", 20, 20)
    assert (pad[-1]["type"], pad[-1]["x"], pad[-1]["y"]) == ("pointerup", 200, 100)
    press = await records(stack, "press")
    assert all(r["isTrusted"] for r in pad + press)
    assert [(r["x"], r["y"]) for r in press if r["type"] == "mousedown"] == [(50, 50)]
    assert [(r["x"], r["y"]) for r in press if r["type"] == "mouseup"] == [(90, 70)]


async def test_mcp_click_with_position(stack: Stack, origins: Origins,
                                       vision_mcp: Session) -> None:
    """browser_click {ref, position}: the button is clicked at that offset, trusted."""
    async with Client(build_server(vision_mcp)) as mcp:
        nav = await mcp.call_tool("browser_navigate", {"url": vision_url(origins)})
        ref = ref_of(_text(nav), "button", "Where")
        result = await mcp.call_tool("browser_click", {"ref": ref, "position": {"x": 150, "y": 8}})
        assert "at (150, 8) from its top-left corner with trusted input" in _text(result)
    assert await records(stack, "where") == [{"isTrusted": True, "x": 150, "y": 8}]
