"""Mouse and keyboard tools on one element: browser_click, browser_type, browser_hover,
browser_press_key, browser_select_option, browser_drag.

Every one acts through an SDK verb of :class:`~bridge.sdk.Tab` (``page.act``; one
``page.batch`` of protocol ``BatchItem`` models for typing with submit): on a device
that requires trusted input the bridge resolves the ref in the extension and the input
driver acts with real browser input; the result says which input path was taken, so
synthetic input is never passed off as trusted (see :mod:`.report`).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..protocol import errors as E
from ..protocol.models import (
    ActParams,
    BatchItem,
    ClickAction,
    DragAction,
    FillAction,
    PressAction,
    Ref,
    SelectAction,
    TypeAction,
)
from .batch import run_batch
from .response import Response
from .session import Connection
from .tool import ElementArgs, Tool, derive

ELEMENT_DOC = "Human-readable element description, for messages."


class TargetArgs(ElementArgs):
    """An element of the latest snapshot."""

    element: str | None = Field(default=None, max_length=300, description=ELEMENT_DOC)
    target: Ref = Field(description="Exact element ref from the page snapshot (alias: "
                        "ref).")


ClickArgs = derive(
    "ClickArgs", "Which element and how to click it.", base=TargetArgs,
    take={ClickAction: ["button", "modifiers", "position"], ActParams: ["allowCoordinates"]},
    describe={"allowCoordinates": "Only for a target in a closed shadow root "
              "(CLOSED_SHADOW_ROOT): click its hit-tested centre.",
              "position": "Click here, CSS px from the element's top-left, not its centre."},
    doubleClick=(bool, Field(default=False, description="Double click instead of single.")),
    order=["doubleClick"],
)
TypeArgs = derive(
    "TypeArgs", "Where and what to type.", base=TargetArgs,
    take={TypeAction: ["text", "submit"], ActParams: ["allowScript"]},
    describe={"text": "Text to type.",
              "allowScript": "Only when TRUSTED_INPUT_UNAVAILABLE names it (e.g. a colour "
              "input): set the value by script; the page sees untrusted events."},
    slowly=(bool, Field(default=False, description="Type key by key at the caret instead of "
                        "replacing the content (a field without focus gets its caret at the "
                        "start, as Playwright's pressSequentially types); for key handlers.")),
)
HoverArgs = derive("HoverArgs", "Which element to hover.", base=TargetArgs)
PressArgs = derive("PressArgs", "Which key.", take={PressAction: ["key"]},
                   describe={"key": "Key or chord, e.g. Enter, ArrowDown, a, Control+A."})
SelectArgs = derive("SelectArgs", "Which <select> and which options.", base=TargetArgs,
                    take={SelectAction: ["values"]},
                    describe={"values": "Option values or labels; several for a multiple "
                              "select."})
DragArgs = derive(
    "DragArgs", "What to drag where.", base=ElementArgs,
    take={DragAction: ["to"]}, rename={"to": "endTarget"},
    order=["startElement", "startTarget", "endElement"],
    describe={"to": "Ref of the drop target (alias: endRef)."},
    startElement=(str | None, Field(default=None, max_length=300,
                                    description="Source description, for messages.")),
    startTarget=(Ref, Field(description="Ref of the element to drag (alias: startRef).")),
    endElement=(str | None, Field(default=None, max_length=300,
                                  description="Drop target description, for messages.")),
)


def target(element: str | None, ref: str) -> str:
    """How a tool result names an element: its description and ref."""
    return f"{element} (ref {ref})" if element else f"ref {ref}"


async def _click(conn: Connection, args: Any, response: Response) -> None:
    if args.position is not None and args.allowCoordinates:
        # The closed-shadow route clicks the hit-tested centre; it would drop the position.
        raise E.BadRequest("position and allowCoordinates cannot be combined: a target in a "
                           "closed shadow root is clicked at its hit-tested centre.",
                           {"fields": ["position", "allowCoordinates"]})
    tab = await conn.tab(page_state=True)
    clicks = 2 if args.doubleClick else 1
    if args.allowCoordinates or args.position is not None:  # options Tab.click does not take
        action = ClickAction(button=args.button, clickCount=clicks, modifiers=args.modifiers,
                             position=args.position)
        result = await tab.act(action, args.target, allow_coordinates=args.allowCoordinates)
    else:
        result = await tab.click(args.target, button=args.button, click_count=clicks,
                                 modifiers=args.modifiers)
    verb = "Double-clicked" if args.doubleClick else "Clicked"
    where = target(args.element, args.target)
    if args.position is not None:
        where += f" at ({args.position.x:g}, {args.position.y:g}) from its top-left corner"
    # A click its target never got is not said as done (the warning tells what happened).
    line = f"{verb} {where}" if result.get("delivered") is not False else (
        f"Sent a click at {where}")
    response.add_action(line, [result], [f"the click on {where}"])
    response.include_page_state(tab)


async def _type(conn: Connection, args: Any, response: Response) -> None:
    tab = await conn.tab(page_state=True)
    where = target(args.element, args.target)
    # The text itself is never echoed: it may be a secret the page masks.
    script = args.allowScript
    if args.slowly:  # key by key at the caret (the start of a field that had no focus)
        results = [await tab.type(args.target, args.text, submit=args.submit,
                                  allow_script=script)]
        line = f"Typed {len(args.text)} characters key by key into {where} at its caret"
    elif args.submit and script:  # a batch item carries no allowScript
        results = [await tab.fill(args.target, args.text, allow_script=True),
                   await tab.press("Enter", args.target)]
        line = f"Typed {len(args.text)} characters into {where} (replacing its content)"
    elif args.submit:  # one request: fill, then Enter in the same element
        results = await run_batch(
            tab, [BatchItem(ref=args.target, action=FillAction(value=args.text)),
                  BatchItem(ref=args.target, action=PressAction(key="Enter"))],
            [f"fill {where}", f"press Enter in {where}"])
        line = f"Typed {len(args.text)} characters into {where} (replacing its content)"
    else:  # Playwright MCP's browser_type replaces the content unless slowly
        results = [await tab.fill(args.target, args.text, allow_script=script)]
        line = f"Typed {len(args.text)} characters into {where} (replacing its content)"
    if any(r.get("inputPath") == "script" for r in results):
        # report.input_path names the script route; the line must not claim typing.
        line = f"Set the value of {where}"
    elif any(r.get("keysOnly") for r in results):
        # A canvas, a terminal surface: the keys went there; there is no value to check.
        line = (f"Sent the keys of {len(args.text)} characters to {where} (not a text "
                "field: it has no value to read back; check the page for their effect)")
    line += " and pressed Enter" if args.submit else ""
    response.add_action(line, results, [f"the typing into {where}"] * len(results))
    response.include_page_state(tab)


async def _hover(conn: Connection, args: Any, response: Response) -> None:
    tab = await conn.tab(page_state=True)
    response.add_action(f"Hovered {target(args.element, args.target)}",
                        [await tab.hover(args.target)])
    response.include_page_state(tab)


async def _press(conn: Connection, args: Any, response: Response) -> None:
    tab = await conn.tab(page_state=True)
    response.add_action(f"Pressed {args.key}", [await tab.press(args.key)])
    response.include_page_state(tab)


async def _select(conn: Connection, args: Any, response: Response) -> None:
    tab = await conn.tab(page_state=True)
    result = await tab.select(args.target, args.values)
    # Name what the agent asked for (an option's label, "Large"); the option values the
    # select holds afterwards ("l") follow only when they read differently.
    chosen = result.get("selected", args.values)
    line = f"Selected {', '.join(map(repr, args.values)) or 'nothing'}"
    if sorted(chosen) != sorted(args.values):
        line += f" (option value{'s' if len(chosen) != 1 else ''} {', '.join(map(repr, chosen))})"
    response.add_action(f"{line} in {target(args.element, args.target)}", [result])
    response.include_page_state(tab)


async def _drag(conn: Connection, args: Any, response: Response) -> None:
    tab = await conn.tab(page_state=True)
    result = await tab.drag(args.startTarget, args.endTarget)
    response.add_action(f"Dragged {target(args.startElement, args.startTarget)} onto "
                        f"{target(args.endElement, args.endTarget)}", [result])
    response.include_page_state(tab)


TOOLS = [
    Tool(
        name="browser_click",
        title="Click",
        description="Click an element by its ref with real (trusted) mouse input; returns "
        "the page snapshot after.",
        args=ClickArgs,
        run=_click,
    ),
    Tool(
        name="browser_type",
        title="Type text",
        description="Type into an editable element with real input. Replaces its content "
        "unless slowly is true, which types key by key after it; submit presses Enter after.",
        args=TypeArgs,
        run=_type,
    ),
    Tool(
        name="browser_hover",
        title="Hover",
        description="Move the mouse over an element by its ref (opens hover menus, tooltips).",
        args=HoverArgs,
        run=_hover,
    ),
    Tool(
        name="browser_press_key",
        title="Press a key",
        description="Press a key or chord on the keyboard in the focused element.",
        args=PressArgs,
        run=_press,
    ),
    Tool(
        name="browser_select_option",
        title="Select option",
        description="Select options in a native <select> dropdown with the real keyboard "
        "or mouse.",
        args=SelectArgs,
        run=_select,
    ),
    Tool(
        name="browser_drag",
        title="Drag mouse",
        description="Drag an element onto another with a real mouse path (press, move, "
        "release).",
        args=DragArgs,
        run=_drag,
    ),
]
