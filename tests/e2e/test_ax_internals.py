"""Issue 30 items 2 and 8: custom elements whose role, name and state come from
ElementInternals (``attachInternals()``) are listed with the role and name Chromium's own
accessibility tree gives them, with a ref that acts with trusted input.

Chromium: the driver reads the tree through CDP (supervisor/frames.py ``ax_facts``,
bridge/ax_facts.py) for the walker's candidates only. Firefox ESR: Playwright gives the
driver no accessibility tree of its own to read over WebDriver BiDi, so the element prints
as ``generic`` (its role and name stay hidden) but still gets a ref, and the click by
that ref is delivered with trusted input: both are checked.

Page: tests/e2e/pages/ax_internals/internals.html.
"""

from __future__ import annotations

import re

import pytest

from .conftest import Origins, Stack, ref_of

pytestmark = pytest.mark.browser


def generic_ref_after(snapshot: str, text: str) -> str:
    """The ref of the first unnamed ``generic`` line below the line holding ``text``."""
    lines = snapshot.splitlines()
    at = next(i for i, line in enumerate(lines) if text in line)
    for line in lines[at + 1:]:
        m = re.search(r"- generic \[ref=((?:f\d+)?e\d+)\]", line)
        if m:
            return m.group(1)
    raise AssertionError(f"no generic line below {text!r} in:\n{snapshot}")


async def test_element_internals_widgets_have_the_browsers_role_and_name_and_act(
        stack: Stack, origins: Origins) -> None:
    """A switch and a checkbox made with ElementInternals (role, ariaLabel, ariaChecked)
    print as ``switch "Dark mode"`` / ``checkbox "Accept the terms"`` with refs on
    Chromium, in a child frame too, with the checked state the tree computes; a click by
    ref toggles the switch with a trusted click, and the next snapshot says checked. The
    page saw no DOM change while the tree was read. A plain custom element (no internals)
    stays generic. A button named only by CSS generated content (``::before``) has that
    name."""
    tab = stack.tab
    await tab.goto(f"{origins.main}/ax_internals/internals.html")
    for frame in stack.page.frames:
        await frame.wait_for_load_state("load")
    snap = await tab.snapshot()
    if stack.browser != "chromium":
        # Firefox ESR: no accessibility tree the driver can read (module docstring).
        assert 'switch "Dark mode"' not in snap, snap
        ref = generic_ref_after(snap, "Settings")
        result = await tab.click(ref)
        assert result["done"] is True, result
        seen = await stack.page.evaluate("() => window.seen")
        assert seen["clicks"] == [["dark", True]] and seen["untrusted"] == 0, seen
        return
    switch = ref_of(snap, "switch", "Dark mode")
    checkbox = ref_of(snap, "checkbox", "Accept the terms")
    ref_of(snap, "switch", "Wi-Fi")  # in the srcdoc frame
    assert re.search(r'- switch "Wi-Fi" \[checked\] \[ref=', snap), snap
    assert not re.search(r'- switch "Dark mode" \[checked\]', snap), snap
    assert '- generic "Plain custom element" [ref=' in snap, snap
    ref_of(snap, "button", "Normal")  # named by CSS ::before content, as Quill's pickers
    seen = await stack.page.evaluate("() => window.seen")
    assert seen["mutations"] == 0, seen  # nothing was written into the page to read it

    result = await tab.click(switch)
    assert result["done"] is True, result
    seen = await stack.page.evaluate("() => window.seen")
    assert seen["clicks"] == [["dark", True]] and seen["untrusted"] == 0, seen
    snap = await tab.snapshot()
    assert re.search(rf'- switch "Dark mode" \[checked\][^\n]* \[ref={switch}\]', snap), snap

    await tab.click(checkbox)
    seen = await stack.page.evaluate("() => window.seen")
    assert seen["clicks"] == [["dark", True], ["terms", True]], seen
    assert seen["untrusted"] == 0, seen
