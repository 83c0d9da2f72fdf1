"""The ``select`` verb on native single ``<select>`` elements: what the page saw. A closed
select commits on every key that moves it, so the driver must reach the wanted option
with one commit: exactly one trusted ``input`` and one ``change``, for that option."""

from __future__ import annotations

import pytest

from trustbridge.bridge.protocol import errors as E

from .conftest import Origins, Stack, ref_of

pytestmark = pytest.mark.browser


async def _open(stack: Stack, origins: Origins) -> str:
    await stack.client.call("page.navigate", {"url": f"{origins.main}/select.html"})
    return await stack.snapshot()


async def _events(stack: Stack, select_id: str) -> list[dict]:
    events = await stack.page.evaluate("window.__events")
    return [e for e in events if e["id"] == select_id]



async def _expect_one_commit(stack: Stack, select_id: str, value: str) -> None:
    seen = await _events(stack, select_id)
    assert [(e["type"], e["trusted"], e["value"]) for e in seen] == [
        ("input", True, value), ("change", True, value)]


async def test_third_of_four_fires_one_trusted_change(stack: Stack, origins: Origins) -> None:
    """Apple -> Lemon (two options down, not first nor last): one input, one change."""
    snap = await _open(stack, origins)
    res = await stack.act(ref_of(snap, "combobox", "Fruit"), kind="select", values=["Lemon"])
    assert res["selected"] == ["lemon"]
    await _expect_one_commit(stack, "fruit", "lemon")
    assert await stack.page.input_value("#fruit") == "lemon"


async def test_from_disabled_placeholder_fires_one_change(stack: Stack, origins: Origins) -> None:
    """From a disabled, selected placeholder to an option that shares its first letter
    with an earlier one and is neither first nor last."""
    snap = await _open(stack, origins)
    res = await stack.act(ref_of(snap, "combobox", "Snack"), kind="select", values=["banana"])
    assert res["selected"] == ["banana"]
    await _expect_one_commit(stack, "snack", "banana")


async def test_skips_disabled_options_and_groups(stack: Stack, origins: Origins) -> None:
    """A -> C past a disabled optgroup and a disabled option; disabled ones are refused."""
    snap = await _open(stack, origins)
    ref = ref_of(snap, "combobox", "Group")
    res = await stack.act(ref, kind="select", values=["c"])
    assert res["selected"] == ["c"]
    await _expect_one_commit(stack, "group", "c")
    for refused in (["d"], ["g1"]):
        with pytest.raises(E.BadRequest):
            await stack.act(ref, kind="select", values=refused)
    assert await stack.page.input_value("#group") == "c"
    assert len(await _events(stack, "group")) == 2


async def test_already_selected_fires_nothing(stack: Stack, origins: Origins) -> None:
    snap = await _open(stack, origins)
    res = await stack.act(ref_of(snap, "combobox", "Fruit"), kind="select", values=["apple"])
    assert res["selected"] == ["apple"]
    assert await _events(stack, "fruit") == []


async def test_navigating_onchange_lands_on_the_wanted_url(stack: Stack,
                                                           origins: Origins) -> None:
    """``onchange="location.href = '/target.html?' + this.value"``: asked for "Two", the page
    navigates to ``?two`` (not ``?one`` on the way) and the action returns without error."""
    snap = await _open(stack, origins)
    res = await stack.act(ref_of(snap, "combobox", "Jump"), kind="select", values=["Two"])
    assert res.get("selected", ["two"]) == ["two"]
    await stack.page.wait_for_url("**/target.html?*")
    assert stack.page.url == f"{origins.main}/target.html?two"


async def test_select_removed_by_its_change_is_not_an_error(stack: Stack,
                                                            origins: Origins) -> None:
    """``onchange="this.remove()"``: the read-back finds no select; the action still
    returns the option it committed."""
    snap = await _open(stack, origins)
    res = await stack.act(ref_of(snap, "combobox", "Vanish"), kind="select", values=["z"])
    assert res["selected"] == ["z"]
    assert await stack.page.locator("#vanish").count() == 0
    await _expect_one_commit(stack, "vanish", "z")


async def test_no_single_key_route(stack: Stack, origins: Origins, browser: str) -> None:
    """Placeholder -> Avocado: no arrow, Home, End or first letter reaches it in one key
    (Apple comes first under "a"). Chromium commits once through its popup; Firefox, whose
    popup WebDriver BiDi input cannot reach, commits on each of its keys ("a", ArrowDown)."""
    snap = await _open(stack, origins)
    res = await stack.act(ref_of(snap, "combobox", "Snack"), kind="select", values=["avocado"])
    assert res["selected"] == ["avocado"]
    seen = [(e["type"], e["trusted"], e["value"]) for e in await _events(stack, "snack")]
    assert res["changeEvents"] == len(seen) // 2
    if browser == "chromium":
        assert seen == [("input", True, "avocado"), ("change", True, "avocado")]
    else:
        assert seen == [("input", True, "apple"), ("change", True, "apple"),
                        ("input", True, "avocado"), ("change", True, "avocado")]
