"""Regression pages for input that pages inspect, through the Python SDK: bot checks
beyond ``isTrusted``, a combobox whose options exist only once opened, a masked field
that mangles an empty intermediate value, controls that exist only while hovered, a row
half under a sticky header, and an unnamed icon button among named ones.

Pages: tests/e2e/pages/regress/. Each test checks what the page recorded.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from trustbridge.bridge.sdk import Tab

from ..cases.runner import find_target, parse_snapshot
from .conftest import Origins, Stack, ref_of

pytestmark = pytest.mark.browser


async def _open(stack: Stack, origins: Origins, page: str) -> tuple[Tab, str]:
    tab = Tab(stack.client, stack.device, None)
    await tab.goto(f"{origins.main}/regress/{page}")
    return tab, await tab.snapshot()


async def _text(stack: Stack, selector: str) -> str | None:
    return await stack.page.locator(selector).text_content()


def _target(snap: str, **target: Any) -> str:
    """The ref of a role/name target (``within``, ``nth`` as the corpus's targets)."""
    ref = find_target(parse_snapshot(snap), target).ref
    assert ref is not None
    return ref


async def test_bot_checks_see_a_person_clicking_and_typing(stack: Stack, origins: Origins) -> None:
    """The page's checks (isTrusted, no caller frames below the handler, no call to
    el.click()/dispatchEvent, detail 1 with screen coordinates and pointerType mouse)
    all say "person" for the click and for every key and input event of typing; a scripted
    click afterwards turns them to "script" (the checks work)."""
    tab, snap = await _open(stack, origins, "human.html")
    await tab.click(ref_of(snap, "button", "Verify me"))
    await tab.type(ref_of(snap, "textbox", "Comment"), "ok go")
    verdicts = ["#v-trusted", "#v-callers", "#v-wrappers", "#v-detail"]
    assert [await _text(stack, s) for s in verdicts] == ["person"] * 4
    assert await _text(stack, "#presses") == "1"
    assert await stack.page.input_value("#comment") == "ok go"
    assert await _text(stack, "#v-typing") == "person"
    assert int(await _text(stack, "#typing-events") or 0) >= 5
    await stack.page.evaluate("document.getElementById('verify').click()")
    assert [await _text(stack, s) for s in verdicts] == ["script"] * 4


async def test_combobox_options_rendered_late_are_chosen_by_click(
        stack: Stack, origins: Origins) -> None:
    """No option exists before the combobox is opened; after typing, the filtered options
    come 300 ms later; clicking "Drone" sets the text, the hidden code, and closes the list."""
    tab, snap = await _open(stack, origins, "carrier.html")
    assert "- option" not in snap
    combo = ref_of(snap, "combobox", "Shipping carrier")
    await tab.click(combo)
    assert '- option "Courier"' in await tab.snapshot()
    await tab.type(combo, "Dro")
    for _ in range(100):
        snap = await tab.snapshot()
        if '- option "Drone"' in snap and '- option "Courier"' not in snap:
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError(f"the filtered options never came:\n{snap}")
    await tab.click(ref_of(snap, "option", "Drone"))
    assert await stack.page.input_value("#carrier") == "Drone"
    assert await stack.page.input_value("#carrier-code") == "drn"
    assert await stack.page.get_attribute("#carrier", "aria-expanded") == "false"
    assert await stack.page.locator("#carrier-list [role=option]").count() == 0


async def test_fill_never_empties_a_masked_field_and_types_a_native_date(
        stack: Stack, origins: Origins) -> None:
    """fill replaces 07/04/2021 by 12/31/2024 without an empty intermediate value (which
    the mask would turn into NaN/NaN/NaN); a native date field takes YYYY-MM-DD whatever
    the locale's segment order."""
    tab, snap = await _open(stack, origins, "duedate.html")
    await tab.fill(ref_of(snap, "textbox", "Due date (MM/DD/YYYY)"), "12/31/2024")
    assert await stack.page.input_value("#due") == "12/31/2024"
    assert await _text(stack, "#due-iso") == "2024-12-31"
    assert "" not in await stack.page.evaluate("window.__dueValues")
    snap = await tab.snapshot()
    ship = [n for n in parse_snapshot(snap) if n.name == "Ship date" and n.ref]
    assert len(ship) == 1, snap
    await tab.fill(ship[0].ref, "2025-02-14")
    assert await stack.page.input_value("#ship") == "2025-02-14"
    assert await _text(stack, "#ship-iso") == "2025-02-14"


async def test_controls_that_exist_only_while_hovered(stack: Stack, origins: Origins) -> None:
    """Hovering a card creates its Archive button (removed on mouseleave) and the pointer
    stays there for the click; hovering Account opens a menu portalled 10 px below it
    that closes 120 ms after the pointer leaves, and its item is clicked in time."""
    tab, snap = await _open(stack, origins, "hoverkit.html")
    await tab.hover(ref_of(snap, "article", "Invoice 2024-03"))
    await tab.click(ref_of(await tab.snapshot(), "button", "Archive"))
    assert await _text(stack, "#status") == "archived 2024-03 true"
    await tab.hover(ref_of(await tab.snapshot(), "button", "Account"))
    await tab.click(ref_of(await tab.snapshot(), "menuitem", "Settings"))
    assert await _text(stack, "#menu-status") == "settings true"
    assert await _text(stack, "#archive-max") == "1"


async def test_row_under_a_sticky_header_and_row_below_the_box(
        stack: Stack, origins: Origins) -> None:
    """veg-3's centre is under the box's sticky header and veg-12 is below the box: both
    clicks reach their rows, the header gets none, and only the box scrolls (the window
    stays at 0)."""
    tab, snap = await _open(stack, origins, "pantry.html")
    start = await stack.page.eval_on_selector("#pantry", "el => el.scrollTop")
    await tab.click(ref_of(snap, "button", "veg-3"))
    await tab.click(ref_of(snap, "button", "veg-12"))
    assert await _text(stack, "#log") == "veg-3 veg-12"
    assert await _text(stack, "#head-clicks") == "0"
    assert await _text(stack, "#win-scroll") == "0"
    assert await stack.page.evaluate("scrollY") == 0
    assert await stack.page.eval_on_selector("#pantry", "el => el.scrollTop") != start


async def test_unnamed_icon_button_and_the_second_of_three_same_names(
        stack: Stack, origins: Origins) -> None:
    """The one button without a name (an aria-hidden SVG) in form "Flight search" gets its
    own ref and toggles the list; the second "Find" of three is the Rail form's."""
    tab, snap = await _open(stack, origins, "travel.html")
    await tab.click(_target(snap, role="button", name="",
                            within={"role": "form", "name": "Flight search"}))
    assert await stack.page.locator("#airports").is_visible()
    assert await stack.page.get_attribute("#airports-toggle", "aria-expanded") == "true"
    await tab.click(_target(snap, role="button", name="Find", nth=1))
    finds = [await _text(stack, f"#finds-{f}") for f in ("flight", "rail", "bus")]
    assert finds == ["0", "1", "0"]
