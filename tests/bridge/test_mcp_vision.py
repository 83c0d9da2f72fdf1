"""The ``--caps vision`` MCP tools (bridge/mcp/vision.py) and browser_click's position, in
process against a real loopback bridge with fake peers: which tools are listed, what
reaches the extension and the driver, and how results read."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from trustbridge.bridge.mcp import Session, build_server
from trustbridge.bridge.mcp.options import McpOptions
from trustbridge.bridge.mcp.server import tools_for
from trustbridge.bridge.server import BridgeServer

from .fakes import FakeDriver, FakeExtension, FakePeer

VISION = {"browser_mouse_move_xy", "browser_mouse_click_xy", "browser_mouse_drag_xy",
          "browser_mouse_down", "browser_mouse_up", "browser_mouse_wheel"}
HIT = {"ref": "f1e4", "role": "button", "name": "Play", "line": '- button "Play" [ref=f1e4]',
       "tag": "button", "frame": 1}


@pytest.fixture
async def session(bridge: BridgeServer) -> AsyncIterator[Session]:
    s = Session(url=bridge.url, token=bridge.token, embedded=False,
                snapshot_after_action=False, options=McpOptions(caps=frozenset({"vision"})))
    try:
        yield s
    finally:
        await s.close()


def text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


async def trusted(peers: Callable[..., Awaitable[FakePeer]],
                  receipt: bool = False) -> tuple[FakePeer, FakePeer]:
    """An extension whose hit test finds HIT (with a receipt id when asked) and a driver."""
    ext = await peers(FakeExtension)
    ext.results["page.resolveTarget"] = {"frameToken": "tok-top", "css": None, "tabId": 1,
                                         "hit": HIT, **({"receiptId": "r-1"} if receipt else {})}
    ext.results["page.receipt"] = {"delivered": True, "events": ["click", "pointerdown"]}
    return ext, await peers(FakeDriver)


async def test_vision_tools_are_listed_only_with_caps_vision(session: Session) -> None:
    """Without --caps vision none of the six tools is listed; with it all six are."""
    assert not VISION & {t.name for t in tools_for()}
    assert VISION <= {t.name for t in tools_for({"vision"})}
    async with Client(build_server(session)) as mcp:
        assert VISION <= {t.name for t in (await mcp.list_tools()).tools}


async def test_trustbridge_mcp_lists_them_with_caps_vision_only(tmp_path: Path) -> None:
    """``trustbridge mcp --caps vision`` lists the six tools; without --caps it does not."""
    repo = Path(__file__).resolve().parents[2]
    listed = []
    for extra in ([], ["--caps", "vision"]):
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "trustbridge", "mcp", "--no-embedded", *extra],
            env=dict(os.environ, TRUSTBRIDGE_HOME=str(tmp_path)), cwd=str(repo))
        with (tmp_path / "stderr.log").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog),
                              read_timeout_seconds=60) as client:
                listed.append({t.name for t in (await client.list_tools()).tools})
    assert not VISION & listed[0] and VISION <= listed[1]


async def test_click_xy_sends_a_mouse_action_and_reports_hit_and_receipt(
        peers: Callable[..., Awaitable[FakePeer]], session: Session) -> None:
    """click_xy: the extension is asked to hit-test the point with a receipt, the driver
    gets the MouseAction with no CSS, and the result names the element and the receipt."""
    ext, drv = await trusted(peers, receipt=True)
    async with Client(build_server(session)) as mcp:
        result = await mcp.call_tool("browser_mouse_click_xy", {
            "x": 120, "y": 80.5, "clickCount": 2, "button": "right", "element": "Play"})
    assert not result.is_error, text(result)
    resolve = (await ext.wait_for_request("page.resolveTarget")).params
    assert resolve["at"] == {"x": 120, "y": 80.5} and resolve["receipt"] is True
    act = (await drv.wait_for_request("driver.act")).params
    assert act["css"] is None and act["frameToken"] == "tok-top"
    assert {k: act["action"][k] for k in ("kind", "op", "x", "y", "button", "clickCount")} == {
        "kind": "mouse", "op": "click", "x": 120, "y": 80.5, "button": "right", "clickCount": 2}
    out = text(result)
    assert "Double-clicked at (120, 80.5) on Play with the right button with trusted input." in out
    assert 'At the point in frame f1: <button> - button "Play" [ref=f1e4]' in out
    assert "Delivery receipt: the element received the click (click, pointerdown)." in out


async def test_a_click_the_element_never_got_is_a_warning(
        peers: Callable[..., Awaitable[FakePeer]], session: Session) -> None:
    """delivered false: the result warns that the click did not reach the element."""
    ext, _ = await trusted(peers, receipt=True)
    ext.results["page.receipt"] = {"delivered": False, "events": []}
    async with Client(build_server(session)) as mcp:
        result = await mcp.call_tool("browser_mouse_click_xy", {"x": 5, "y": 6})
    assert "WARNING delivered: false: the click at (5, 6)" in text(result)
    assert "Delivery receipt" not in text(result)


async def test_down_up_and_wheel_without_a_point_ask_the_driver_where_the_pointer_is(
        peers: Callable[..., Awaitable[FakePeer]], session: Session) -> None:
    """Down, up and wheel without x and y: the bridge asks the driver where it last sent
    the tab's pointer (``driver.pointer`` on the top frame's token; the driver keeps it
    from every pointer action, a ref's hover included) and sends the op there; the result
    says that point. A given x and y is sent as it is, without asking."""
    _, drv = await trusted(peers)
    drv.results["driver.pointer"] = {"x": 30, "y": 40}
    async with Client(build_server(session)) as mcp:
        first = await mcp.call_tool("browser_mouse_wheel", {"deltaY": 300})
        assert "Turned the wheel by (0, 300) at (30, 40)" in text(first), text(first)
        drv.results["driver.pointer"] = {"x": 300, "y": 200}
        up = await mcp.call_tool("browser_mouse_up", {"button": "middle"})
        await mcp.call_tool("browser_mouse_down", {"x": 7})
        await mcp.call_tool("browser_mouse_wheel", {"deltaX": -5, "x": 7, "y": 8})
    assert "Released the middle button at (300, 200) with trusted input." in text(up)
    asked = [r.params for r in drv.requests if r.method == "driver.pointer"]
    assert asked == [{"frameToken": "tok-top"}] * 3
    actions = [r.params["action"] for r in drv.requests if r.method == "driver.act"]
    assert [(a["op"], a["x"], a["y"]) for a in actions] == [
        ("wheel", 30, 40), ("up", 300, 200), ("down", 7, 200), ("wheel", 7, 8)]
    assert actions[1]["button"] == "middle" and actions[3]["deltaX"] == -5


async def test_nothing_at_the_point_is_said(peers: Callable[..., Awaitable[FakePeer]],
                                            session: Session) -> None:
    """A hit with no element: the move still happened and the result says nothing is there."""
    ext, _ = await trusted(peers)
    ext.results["page.resolveTarget"] = {"frameToken": "t", "css": None, "tabId": 1,
                                         "hit": {"ref": None, "role": None, "name": None,
                                                 "line": None}}
    async with Client(build_server(session)) as mcp:
        result = await mcp.call_tool("browser_mouse_move_xy", {"x": 1, "y": 1})
    assert "Moved the mouse to (1, 1) with trusted input." in text(result)
    assert "At the point: no element" in text(result)


async def test_browser_click_position_reaches_the_driver(
        peers: Callable[..., Awaitable[FakePeer]], session: Session) -> None:
    """browser_click {position}: the ClickAction carries it and the result says where;
    combined with allowCoordinates it is refused before anything is sent."""
    ext, drv = await trusted(peers)
    ext.results["page.resolveTarget"] = {"frameToken": "t", "css": "#b", "tabId": 1}
    async with Client(build_server(session)) as mcp:
        result = await mcp.call_tool("browser_click", {
            "ref": "e3", "element": "Slider", "position": {"x": 10, "y": 4.5}})
        refused = await mcp.call_tool("browser_click", {
            "ref": "e3", "position": {"x": 1, "y": 1}, "allowCoordinates": True})
    assert not result.is_error, text(result)
    assert "Clicked Slider (ref e3) at (10, 4.5) from its top-left corner with trusted" \
        in text(result)
    act = (await drv.wait_for_request("driver.act")).params
    assert act["action"]["position"] == {"x": 10, "y": 4.5}
    assert refused.is_error and "BAD_REQUEST" in text(refused)
    assert sum(r.method == "driver.act" for r in drv.requests) == 1


async def test_click_xy_delay_reaches_the_driver_and_is_said(
        peers: Callable[..., Awaitable[FakePeer]], session: Session) -> None:
    """delay (ms between press and release, Playwright's mouse.click delay) is in the
    driver's MouseAction and the result line; out of bounds it is BAD_REQUEST."""
    _, drv = await trusted(peers, receipt=True)
    async with Client(build_server(session)) as mcp:
        result = await mcp.call_tool("browser_mouse_click_xy", {"x": 10, "y": 20,
                                                                "delay": 250})
        too_long = await mcp.call_tool("browser_mouse_click_xy", {"x": 10, "y": 20,
                                                                  "delay": 20_000})
    assert not result.is_error, text(result)
    act = (await drv.wait_for_request("driver.act")).params
    assert act["action"]["op"] == "click" and act["action"]["delay"] == 250
    assert "250 ms between press and release" in text(result)
    assert too_long.is_error and "BAD_REQUEST" in text(too_long) and "delay" in text(too_long)
    assert len([r for r in drv.requests if r.method == "driver.act"]) == 1
