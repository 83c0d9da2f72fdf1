"""Where the ``select`` verb focuses (supervisor/select.py ``_read_select``): the read that
plans the keys also focuses the select when a key is sure to follow (one value an enabled
option has exactly), the plan focuses it when it presses for another reason (a label), and
nothing focuses it when no key is pressed (already selected) or the request is refused."""

from __future__ import annotations

import pytest

from trustbridge.bridge.protocol import errors as E

from .conftest import Origins, Stack, ref_of

pytestmark = pytest.mark.browser


async def _open(stack: Stack, origins: Origins) -> str:
    await stack.client.call("page.navigate", {"url": f"{origins.main}/select.html"})
    return await stack.snapshot()


async def _focused(stack: Stack) -> str:
    return await stack.page.evaluate("document.activeElement ? document.activeElement.id : ''")


async def _commits(stack: Stack, select_id: str) -> list[tuple[str, bool, str]]:
    events = await stack.page.evaluate("window.__events")
    return [(e["type"], e["trusted"], e["value"]) for e in events if e["id"] == select_id]


async def test_a_value_is_focused_and_committed_once(stack: Stack, origins: Origins) -> None:
    """By value (the read focuses it) and by label (the plan does): focused, one commit."""
    snap = await _open(stack, origins)
    ref = ref_of(snap, "combobox", "Fruit")
    assert await _focused(stack) != "fruit"
    res = await stack.act(ref, kind="select", values=["lemon"])
    assert res["selected"] == ["lemon"] and res["changeEvents"] == 1
    assert await _focused(stack) == "fruit"
    assert await _commits(stack, "fruit") == [("input", True, "lemon"), ("change", True, "lemon")]
    snap = await _open(stack, origins)
    res = await stack.act(ref_of(snap, "combobox", "Fruit"), kind="select", values=["Plum"])
    assert res["selected"] == ["plum"]
    assert await _focused(stack) == "fruit"
    assert await _commits(stack, "fruit") == [("input", True, "plum"), ("change", True, "plum")]


async def test_no_key_no_focus(stack: Stack, origins: Origins) -> None:
    """Already selected, a disabled option, an option in a disabled group, a missing one,
    two values for a single select: nothing focuses the select, no event."""
    snap = await _open(stack, origins)
    fruit, group = ref_of(snap, "combobox", "Fruit"), ref_of(snap, "combobox", "Group")
    res = await stack.act(fruit, kind="select", values=["apple"])
    assert res["selected"] == ["apple"] and res["changeEvents"] == 0
    for ref, values in ((group, ["d"]), (group, ["g1"]), (fruit, ["kiwi"]),
                        (fruit, ["pear", "plum"])):
        with pytest.raises(E.BadRequest):
            await stack.act(ref, kind="select", values=values)
    assert await _focused(stack) not in ("fruit", "group")
    assert await _commits(stack, "fruit") == [] and await _commits(stack, "group") == []
