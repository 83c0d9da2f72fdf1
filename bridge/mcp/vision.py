"""Mouse tools at viewport coordinates (``--caps vision``, Playwright MCP's vision tools):
browser_mouse_move_xy, browser_mouse_click_xy, browser_mouse_drag_xy, browser_mouse_down,
browser_mouse_up, browser_mouse_wheel.

Names and arguments are Playwright MCP's (microsoft/playwright
``packages/playwright/src/mcp/browser/tools/mouse.ts``): ``x``/``y``; ``startX``..``endY``
for a drag; ``button`` for down and up; ``deltaX``/``deltaY`` for the wheel; the optional
``element`` description of its older releases. Beyond it: click_xy takes ``button`` and
``clickCount``, and down, up and wheel take an optional point (``x``, ``y``).

Every tool sends one ``MouseAction`` through :meth:`~bridge.sdk.Tab.mouse`: trusted input
from the driver only (a browser without one refuses it, TRUSTED_INPUT_UNAVAILABLE), in CSS
px of the top-level viewport (a viewport screenshot divided by its scale). The bridge
first hit-tests the point through frames and shadow roots; each result names the element
there with a ref the other tools take and, for a click, says whether the element got it
(delivery receipt).

Playwright MCP's down, up and wheel act where the pointer is. Here each op moves the
pointer to its point first (supervisor/mouse.py), so the element named is the one the
input lands on; without ``x``/``y`` the point is where the pointer is: the driver keeps
the last point any trusted pointer action sent it to on that tab (these tools,
browser_click, browser_hover, a check, a drag; (0, 0), Playwright's starting position,
before any), whichever client sent it; the result says the point used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from ..protocol.models import MouseAction
from ..sdk import Tab, build_action
from .response import Response
from .session import Connection
from .tool import Tool, ToolArgs, derive

ELEMENT_DOC = "What is at the point, for messages."
X_DOC = "CSS px from the viewport's left (screenshot px / its scale)."
Y_DOC = "CSS px from the viewport's top."
LAST = " Default: the last mouse point."

class _Described(ToolArgs):
    element: str | None = Field(default=None, max_length=300, description=ELEMENT_DOC)


def _coordinate(doc: str) -> Any:
    return (float, Field(ge=0, le=100_000, description=doc))


def _optional(doc: str) -> Any:
    return (float | None, Field(default=None, ge=0, le=100_000, description=doc))


MoveArgs = derive("MoveArgs", "Where to move the pointer.", base=_Described,
                  order=["x", "y"], x=_coordinate(X_DOC), y=_coordinate(Y_DOC))
ClickXYArgs = derive(
    "ClickXYArgs", "Where and how to click.", base=_Described,
    order=["x", "y"], x=_coordinate(X_DOC), y=_coordinate(Y_DOC),
    take={MouseAction: ["button", "clickCount", "delay"]},
    describe={"button": "Defaults to left.",
              "clickCount": "2: double click, 3: triple.",
              "delay": "ms between press and release (Playwright's mouse.click delay)."})
DragXYArgs = derive(
    "DragXYArgs", "From where to where to drag.", base=_Described,
    order=["startX", "startY", "endX", "endY"],
    startX=_coordinate("Start: " + X_DOC),
    startY=_coordinate("Start y."), endX=_coordinate("End x."), endY=_coordinate("End y."))
ButtonArgs = derive(
    "ButtonArgs", "Which button.", take={MouseAction: ["button"]},
    describe={"button": "Defaults to left."},
    x=_optional(X_DOC + LAST), y=_optional(Y_DOC + LAST))
WheelArgs = derive(
    "WheelArgs", "How far to turn the wheel.", take={MouseAction: ["deltaX", "deltaY"]},
    describe={"deltaX": "CSS px, positive: right.", "deltaY": "CSS px, positive: down."},
    x=_optional(X_DOC + LAST), y=_optional(Y_DOC + LAST))


def xy(x: float, y: float) -> str:
    """A point as results print it: ``(120, 80.5)``."""
    return f"({x:g}, {y:g})"


def hit_line(result: Mapping[str, Any]) -> str:
    """What the hit test found at the point, as a result line."""
    hit = result.get("hit") or {}
    if not hit.get("ref"):
        return "At the point: no element (only the page itself is there)."
    tag = f" <{hit['tag']}>" if hit.get("tag") else ""
    where = f" in frame f{hit['frame']}" if hit.get("frame") else ""
    return f"At the point{where}:{tag} {hit.get('line') or hit['ref']}"


def receipt_line(result: Mapping[str, Any]) -> str | None:
    """The click's delivery receipt as a line; None when there is none to tell (not a
    click, nothing at the point) or ``delivered: false`` (report.warnings says that)."""
    if "delivered" not in result:
        return None
    if result["delivered"] is True:
        events = ", ".join(result.get("deliveredEvents") or [])
        return f"Delivery receipt: the element received the click ({events})."
    if result["delivered"] is None:
        return ("Delivery receipt: unknown (the page went away during the click); check "
                "with browser_snapshot.")
    return None


async def _mouse(conn: Connection, response: Response, line: str, label: str,
                 op: str, x: float | None, y: float | None, **fields: Any) -> Tab:
    """Send one MouseAction and report it: what was done (``line``, where ``{at}`` becomes
    the point the input went to: ``x``/``y`` left None are where the pointer was), the
    element at the point, the receipt."""
    tab = await conn.tab()
    delay = fields.pop("delay", 0)
    if delay:  # Tab.mouse takes no delay: the same MouseAction, built here
        result = await tab.act(build_action(
            MouseAction, op=op, x=x, y=y, button=fields.get("button", "left"),
            clickCount=fields.get("click_count", 1), delay=delay), None)
    else:
        result = await tab.mouse(op, x, y, **fields)  # type: ignore[arg-type]
    at = result.get("at") or {"x": x, "y": y}
    line = line.replace("{at}", xy(at["x"], at["y"]))
    response.add_action(line, [result], [label])
    response.add_result(hit_line(result))
    if (receipt := receipt_line(result)) is not None:
        response.add_result(receipt)
    return tab


def _on(element: str | None) -> str:
    return f" on {element}" if element else ""


async def _move(conn: Connection, args: Any, response: Response) -> None:
    await _mouse(conn, response, f"Moved the mouse to {xy(args.x, args.y)}{_on(args.element)}",
                 "the move", "move", args.x, args.y)


async def _click(conn: Connection, args: Any, response: Response) -> None:
    verb = {1: "Clicked", 2: "Double-clicked", 3: "Triple-clicked"}[args.clickCount]
    button = "" if args.button == "left" else f" with the {args.button} button"
    if args.delay:
        button += f", {args.delay:g} ms between press and release"
    where = f"{xy(args.x, args.y)}{_on(args.element)}"
    tab = await _mouse(conn, response, f"{verb} at {where}{button}", f"the click at {where}",
                       "click", args.x, args.y, button=args.button,
                       click_count=args.clickCount, delay=args.delay)
    response.include_page_state(tab)


async def _drag(conn: Connection, args: Any, response: Response) -> None:
    line = (f"Dragged from {xy(args.startX, args.startY)} to {xy(args.endX, args.endY)}"
            f"{_on(args.element)}")
    tab = await _mouse(conn, response, line, "the drag", "drag", args.startX, args.startY,
                       to_x=args.endX, to_y=args.endY)
    response.include_page_state(tab)


async def _down(conn: Connection, args: Any, response: Response) -> None:
    await _mouse(conn, response, f"Pressed the {args.button} button at {{at}}",
                 "the press", "down", args.x, args.y, button=args.button)


async def _up(conn: Connection, args: Any, response: Response) -> None:
    tab = await _mouse(conn, response, f"Released the {args.button} button at {{at}}",
                       "the release", "up", args.x, args.y, button=args.button)
    response.include_page_state(tab)


async def _wheel(conn: Connection, args: Any, response: Response) -> None:
    tab = await _mouse(conn, response,
                       f"Turned the wheel by {xy(args.deltaX, args.deltaY)} at {{at}}",
                       "the wheel", "wheel", args.x, args.y, delta_x=args.deltaX,
                       delta_y=args.deltaY)
    response.include_page_state(tab)


_COORDS = " Names the element at the point."

TOOLS = [
    Tool(name="browser_mouse_move_xy", title="Move mouse", cap="vision", args=MoveArgs,
         description="Move the mouse to a point with real input." + _COORDS,
         run=_move),
    Tool(name="browser_mouse_click_xy", title="Click", cap="vision", args=ClickXYArgs,
         description="Click at a point with real input; says whether the element there "
         "received it." + _COORDS, run=_click),
    Tool(name="browser_mouse_drag_xy", title="Drag mouse", cap="vision", args=DragXYArgs,
         description="Drag with the left button from one point to another (press, move, "
         "release), real input." + _COORDS, run=_drag),
    Tool(name="browser_mouse_down", title="Press mouse down", cap="vision", args=ButtonArgs,
         description="Press a mouse button where the mouse is (or at x, y)." + _COORDS,
         run=_down),
    Tool(name="browser_mouse_up", title="Press mouse up", cap="vision", args=ButtonArgs,
         description="Release a mouse button, where the mouse is (or at x, y)." + _COORDS,
         run=_up),
    Tool(name="browser_mouse_wheel", title="Scroll mouse wheel", cap="vision",
         args=WheelArgs, description="Turn the wheel where the mouse is (or at x, y): "
         "scrolls what is under it." + _COORDS, run=_wheel),
]
