"""The refusals of supervisor/browser_limits.py, without a browser: a verb a browser
would deliver as something else fails with TRUSTED_INPUT_UNAVAILABLE before dispatch."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from trustbridge.bridge import sdk
from trustbridge.bridge.mcp import Session, build_server
from trustbridge.bridge.mcp.options import McpOptions
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import (
    ClickAction,
    DragAction,
    DriverActParams,
    FillAction,
    HoverAction,
    MouseAction,
    PressAction,
    Request,
    Response,
    TypeAction,
)
from trustbridge.bridge.protocol.peer import encode
from trustbridge.bridge.server import BridgeServer
from trustbridge.supervisor.browser_limits import (
    _INTO_FRAME_JS,
    _NATIVE_DRAG_JS,
    KEYED_CHARACTERS,
    driver_capabilities,
    refuse_undeliverable,
)
from tests.bridge.fakes import FakeDriver, FakeExtension

FIREFOX = driver_capabilities("firefox")
CHROMIUM = driver_capabilities("chromium")


class _Source:
    """Stands in for the drag source's ElementHandle: answers the native-drag probe."""

    def __init__(self, native: bool) -> None:
        self.native = native
        self.asked = 0

    async def evaluate(self, _js: str) -> bool:
        self.asked += 1
        return self.native


@pytest.mark.parametrize("count", [2, 3])
async def test_firefox_refuses_multi_clicks(count: int) -> None:
    """clickCount 2 or 3 on Firefox: refused with the capability and count in details."""
    with pytest.raises(E.TrustedInputUnavailable) as info:
        await refuse_undeliverable(FIREFOX, "firefox 153", ClickAction(clickCount=count), None)
    assert info.value.details == {"browser": "firefox 153", "capability": "multiClick",
                                  "clickCount": count}
    assert "docs/browsers.md" in info.value.message


async def test_single_clicks_and_other_verbs_pass_on_firefox() -> None:
    """A single click, hover, press and ASCII typing are not refused."""
    for action in (ClickAction(), HoverAction(), PressAction(key="Enter"),
                   TypeAction(text="Hello, world! 123 ~{}\n"), FillAction(value="")):
        await refuse_undeliverable(FIREFOX, "firefox", action, None)


@pytest.mark.parametrize("text,count", [("né", 1), ("✓✓", 2), ("日本", 2), ("a\tb", 1),
                                        ("😀", 1), ("\u00a0", 1)])
async def test_firefox_refuses_text_beyond_the_us_layout(text: str, count: int) -> None:
    """type and fill with characters Playwright would insert by script are refused; the
    details count them and never carry the text."""
    for action in (TypeAction(text=text), FillAction(value=text)):
        with pytest.raises(E.TrustedInputUnavailable) as info:
            await refuse_undeliverable(FIREFOX, "firefox", action, None)
        assert info.value.details == {"browser": "firefox", "capability": "unicodeText",
                                      "characters": count}
        assert text not in info.value.message


async def test_firefox_refuses_native_drags_only() -> None:
    """A drag whose source starts an HTML5 drag session is refused; a pointer-only drag
    is let through. The page is probed once per drag."""
    native, pointer = _Source(True), _Source(False)
    with pytest.raises(E.TrustedInputUnavailable) as info:
        await refuse_undeliverable(FIREFOX, "firefox", DragAction(to="e2"), native)  # type: ignore[arg-type]
    assert info.value.details["capability"] == "html5DragDrop"
    await refuse_undeliverable(FIREFOX, "firefox", DragAction(to="e2"), pointer)  # type: ignore[arg-type]
    assert (native.asked, pointer.asked) == (1, 1)


async def test_chromium_refuses_nothing_and_does_not_probe() -> None:
    """Chromium has every capability: nothing is refused and the page is not probed."""
    source = _Source(True)
    for action in (ClickAction(clickCount=3), TypeAction(text="né✓😀"), FillAction(value="日本"),
                   DragAction(to="e2")):
        await refuse_undeliverable(CHROMIUM, "chromium", action, source)  # type: ignore[arg-type]
    assert source.asked == 0


# --- MouseAction (the vision tools): a viewport point, no ref ---------------------------


class _Element:
    """Stands in for an ElementHandle under the point: an <iframe> (``child`` set, its
    content box at ``offset``) or an element that is natively draggable or not."""

    def __init__(self, native: bool = False, child: _Frame | None = None,
                 offset: tuple[float, float] = (0, 0)) -> None:
        self.native, self.child, self.offset = native, child, offset
        self.disposed = False

    def as_element(self) -> _Element:
        return self

    async def content_frame(self) -> _Frame | None:
        return self.child

    async def evaluate(self, js: str, arg: Any = None) -> Any:
        if js == _INTO_FRAME_JS:
            return [arg[0] - self.offset[0], arg[1] - self.offset[1]]
        assert js == _NATIVE_DRAG_JS
        return self.native

    async def dispose(self) -> None:
        self.disposed = True


class _Frame:
    """A frame whose element at any point is ``element`` (None: nothing there); records
    the points it was asked about."""

    def __init__(self, element: _Element | None) -> None:
        self.element, self.points = element, []

    async def evaluate_handle(self, _js: str, point: list[float]) -> Any:
        self.points.append(tuple(point))
        return self.element if self.element is not None else _Nothing()


class _Nothing:
    def as_element(self) -> None:
        return None


class _Page:
    def __init__(self, main: _Frame) -> None:
        self.main_frame = main


def _drag(x: float = 50, y: float = 60) -> MouseAction:
    return MouseAction(op="drag", x=x, y=y, toX=200, toY=200)


@pytest.mark.parametrize("count", [2, 3])
async def test_firefox_refuses_mouse_multi_clicks(count: int) -> None:
    """A mouse click at a point with clickCount 2 or 3 is refused as a ClickAction's is."""
    with pytest.raises(E.TrustedInputUnavailable) as info:
        await refuse_undeliverable(FIREFOX, "firefox", MouseAction(op="click", x=1, y=2,
                                                                   clickCount=count), None)
    assert info.value.details == {"browser": "firefox", "capability": "multiClick",
                                  "clickCount": count}
    assert "single clicks" in info.value.message


async def test_single_mouse_ops_pass_on_firefox() -> None:
    """A single mouse click, move, down, up, wheel and a drag from a plain element pass."""
    element = _Element(native=False)
    page = _Page(_Frame(element))
    for op in ("click", "move", "down", "up", "wheel"):
        await refuse_undeliverable(FIREFOX, "firefox", MouseAction(op=op, x=1, y=2), None,
                                   page)  # type: ignore[arg-type]
    await refuse_undeliverable(FIREFOX, "firefox", _drag(), None, page)  # type: ignore[arg-type]
    assert page.main_frame.points == [(50, 60)] and element.disposed


async def test_firefox_refuses_a_mouse_drag_from_a_draggable_element() -> None:
    """A mouse drag whose start point is on a natively draggable element is refused (its
    drop would never fire); the details name the start point."""
    page = _Page(_Frame(_Element(native=True)))
    with pytest.raises(E.TrustedInputUnavailable) as info:
        await refuse_undeliverable(FIREFOX, "firefox", _drag(), None, page)  # type: ignore[arg-type]
    assert info.value.details == {"browser": "firefox", "capability": "html5DragDrop",
                                  "x": 50, "y": 60}


async def test_the_start_point_is_looked_up_inside_frames() -> None:
    """The element under the start point is found in the child frame, at the point in the
    child's viewport; the iframe's own handle is let go."""
    inner = _Frame(_Element(native=True))
    iframe = _Element(child=inner, offset=(30, 40))
    page = _Page(_Frame(iframe))
    with pytest.raises(E.TrustedInputUnavailable):
        await refuse_undeliverable(FIREFOX, "firefox", _drag(50, 60), None, page)  # type: ignore[arg-type]
    assert inner.points == [(20, 20)] and iframe.disposed


async def test_a_drag_over_nothing_and_chromium_drags_are_not_probed_or_refused() -> None:
    """Nothing under the start point: let through. Chromium: the page is never asked."""
    empty = _Page(_Frame(None))
    await refuse_undeliverable(FIREFOX, "firefox", _drag(), None, empty)  # type: ignore[arg-type]
    native = _Page(_Frame(_Element(native=True)))
    await refuse_undeliverable(CHROMIUM, "chromium", _drag(), None, native)  # type: ignore[arg-type]
    await refuse_undeliverable(CHROMIUM, "chromium", MouseAction(op="click", x=1, y=1,
                                                                 clickCount=3), None, native)  # type: ignore[arg-type]
    assert native.main_frame.points == []


# --- through the bridge: the SDK and the MCP vision tools get the driver's refusal ------


class _FirefoxDriver(FakeDriver):
    """A fake driver that runs the real refusal with Firefox's capabilities on every
    ``driver.act`` (against a page where everything is natively draggable) before
    answering done."""

    async def _answer(self, ws: Any, req: Request) -> None:
        if req.method == "driver.act":
            action = DriverActParams.model_validate(req.params).action
            page = _Page(_Frame(_Element(native=True)))
            try:
                await refuse_undeliverable(FIREFOX, "firefox", action, None, page)  # type: ignore[arg-type]
            except E.TrustbridgeError as err:
                await ws.send(encode(Response(id=req.id, ok=False, error=err.to_payload())))
                return
        await super()._answer(ws, req)


@pytest.fixture
async def firefox_bridge() -> AsyncIterator[tuple[BridgeServer, FakeExtension, FakeDriver]]:
    """A real loopback bridge, a fake extension whose hit test finds a button, and the
    Firefox-refusing fake driver, for device ``ff``."""
    async with contextlib.AsyncExitStack() as stack:
        server = BridgeServer("limits-token-0123456789abcdef", host="127.0.0.1", port=0)
        await asyncio.wait_for(server.start(), 5)
        stack.push_async_callback(server.stop)
        ext = FakeExtension(server.url, server.token, "ff")
        ext.results["page.resolveTarget"] = {
            "frameToken": "tok-top", "css": None, "tabId": 1,
            "hit": {"ref": "e4", "role": "img", "name": "Logo", "line": '- img "Logo"',
                    "tag": "img"}}
        drv = _FirefoxDriver(server.url, server.token, "ff")
        for fake in (ext, drv):
            await asyncio.wait_for(fake.connect(), 5)
            stack.push_async_callback(fake.close)
        yield server, ext, drv


async def test_sdk_mouse_multi_click_and_native_drag_are_refused_by_the_driver(
        firefox_bridge: tuple[BridgeServer, FakeExtension, FakeDriver]) -> None:
    """Tab.mouse: clickCount 2 and a drag from a draggable element come back as the
    driver's TRUSTED_INPUT_UNAVAILABLE; a single click goes through."""
    server, _ext, drv = firefox_bridge
    browser = await sdk.Browser.connect(server.url, server.token, device="ff")
    try:
        tab = await browser.tab()
        with pytest.raises(E.TrustedInputUnavailable) as info:
            await tab.mouse("click", 10, 10, click_count=2)
        assert info.value.details["capability"] == "multiClick"
        with pytest.raises(E.TrustedInputUnavailable) as info:
            await tab.mouse("drag", 10, 10, to_x=90, to_y=90)
        assert info.value.details["capability"] == "html5DragDrop"
        await tab.mouse("click", 10, 10)
    finally:
        await browser.close()
    assert [r.params["action"]["op"] for r in drv.requests if r.method == "driver.act"] \
        == ["click", "drag", "click"]


async def test_mcp_click_xy_double_click_is_refused_by_the_driver(
        firefox_bridge: tuple[BridgeServer, FakeExtension, FakeDriver]) -> None:
    """browser_mouse_click_xy clickCount 2 and browser_mouse_drag_xy from a draggable
    element are tool errors naming the capability problem."""
    server, _ext, _drv = firefox_bridge
    session = Session(url=server.url, token=server.token, embedded=False,
                      snapshot_after_action=False, options=McpOptions(caps=frozenset({"vision"})))
    try:
        async with Client(build_server(session)) as mcp:
            double = await mcp.call_tool("browser_mouse_click_xy", {
                "x": 10, "y": 10, "clickCount": 2, "element": "Logo"})
            drag = await mcp.call_tool("browser_mouse_drag_xy", {
                "startX": 10, "startY": 10, "endX": 90, "endY": 90, "element": "Logo"})
    finally:
        await session.close()
    for result, said in ((double, "single clicks"), (drag, "drop would never fire")):
        shown = "\n".join(c.text for c in result.content if c.type == "text")
        assert result.is_error and said in shown, shown


def test_keyed_characters_are_printable_ascii_and_newlines() -> None:
    """The characters typed as real keys: printable ASCII, newline and return; not Tab."""
    assert len(KEYED_CHARACTERS) == 95 + 2
    assert "\t" not in KEYED_CHARACTERS and "é" not in KEYED_CHARACTERS
