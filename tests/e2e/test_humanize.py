"""Humanize (issue 35 item 2; supervisor/humanize.py): what the page records of a humanized
click and typing — move count, integral coordinates inside the target's box, press and key
timing medians (properties of the recorded events' own timestamps, not a wall-clock
budget) — and that the press guard holds (a covered target is not clicked, nor its cover).
The default (humanize off) is checked to stay the bare click.

Page: tests/e2e/pages/humanize.html (#target: left 300.5, top 220.5, 121 × 41 CSS px, so
its centre is integral but its edges are not).
"""

from __future__ import annotations

import pytest

from trustbridge.bridge.protocol import errors as E
from trustbridge.supervisor.humanize import median

from .conftest import Origins, Stack, ref_of

pytestmark = pytest.mark.browser

BOX = (300.5, 220.5, 421.5, 261.5)  # x0, y0, x1, y1 of #target, CSS px


async def _open(stack: Stack, origins: Origins) -> str:
    await stack.client.call("page.navigate", {"url": f"{origins.main}/humanize.html"})
    return await stack.snapshot()


async def _seen(stack: Stack, reset: bool = True) -> dict:
    got = await stack.page.evaluate("JSON.parse(JSON.stringify(window.__h))")
    if reset:
        await stack.page.evaluate("window.__h.pointer = []; window.__h.keys = []; window.__h.focus = []")
    return got


async def test_humanized_clicks_move_in_steps_to_an_integral_point_inside_and_hold(
        stack: Stack, origins: Origins) -> None:
    """Five humanized clicks (per call): each has ≥ 5 trusted mousemoves before its
    mousedown, every pointer coordinate integral, the press point inside the box, the
    moves not all on one line, and the press (mousedown → mouseup) median in 40–160 ms;
    each click lands on the target and is delivered."""
    snap = await _open(stack, origins)
    ref = ref_of(snap, "button", "Target")
    await _seen(stack)
    presses, points = [], set()
    for _ in range(5):
        res = await stack.act(ref, kind="click", humanize=True)
        assert res["inputPath"] == "trusted" and res["delivered"] is True, res
        ev = (await _seen(stack))["pointer"]
        down = next(i for i, e in enumerate(ev) if e["type"] == "mousedown")
        moves = [e for e in ev[:down] if e["type"] == "mousemove"]
        assert len(moves) >= 5, ev
        assert all(e["trusted"] for e in ev)
        assert all(float(e["x"]).is_integer() and float(e["y"]).is_integer() for e in ev), ev
        d, u = ev[down], next(e for e in ev if e["type"] == "mouseup")
        assert BOX[0] < d["x"] < BOX[2] and BOX[1] < d["y"] < BOX[3], d
        assert [e["target"] for e in ev if e["type"] == "click"] == ["target"]
        xs = {(e["x"], e["y"]) for e in moves}
        assert len(xs) >= 5, moves
        presses.append(u["t"] - d["t"])
        points.add((d["x"], d["y"]))
    assert 40 <= median(presses) <= 160, presses
    assert len(points) >= 2, f"every click pressed the same point: {points}"


async def test_humanized_typing_focuses_by_click_and_holds_and_spaces_keys(
        stack: Stack, origins: Origins) -> None:
    """Typing with humanize on for the driver: the empty field gets the focus from a
    trusted click (a mousedown before the focusin), every key is trusted, the key holds'
    median is 50–150 ms and the gaps' (keyup → next keydown) ≥ 80 ms; the value is the
    text."""
    snap = await _open(stack, origins)
    stack.supervisor.driver.humanize = True
    try:
        await _seen(stack)
        res = await stack.act(ref_of(snap, "textbox", "Field"), kind="type", text="hello there")
        assert res["inputPath"] == "trusted", res
    finally:
        stack.supervisor.driver.humanize = False
    seen = await _seen(stack)
    assert await stack.page.locator("#field").input_value() == "hello there"
    downs = [e for e in seen["pointer"] if e["type"] == "mousedown"]
    assert downs and seen["focus"] and downs[0]["t"] <= seen["focus"][0]["t"], seen
    keys = seen["keys"]
    assert all(k["trusted"] for k in keys)
    holds, gaps, last_up = [], [], None
    pending: dict[str, float] = {}
    for k in keys:
        if k["type"] == "keydown":
            if last_up is not None:
                gaps.append(k["t"] - last_up)
            pending[k["key"]] = k["t"]
        elif k["key"] in pending:
            holds.append(k["t"] - pending.pop(k["key"]))
            last_up = k["t"]
    assert len(holds) == len("hello there"), keys
    assert 50 <= median(holds) <= 150, holds
    assert median(gaps) >= 80, gaps


async def test_humanized_click_on_a_covered_target_clicks_nothing(
        stack: Stack, origins: Origins) -> None:
    """The press guard holds with humanize on: a target under a cover is refused
    (obscured or timeout) and the page saw no mousedown or click at all."""
    snap = await _open(stack, origins)
    await _seen(stack)
    with pytest.raises((E.ElementObscured, E.Timeout)):
        await stack.client.call("page.act", {"ref": ref_of(snap, "button", "Covered"),
                                             "action": {"kind": "click", "humanize": True},
                                             "timeoutMs": 800})
    ev = (await _seen(stack))["pointer"]
    assert [e for e in ev if e["type"] in ("mousedown", "click")] == [], ev


async def test_default_click_is_still_the_bare_click(stack: Stack, origins: Origins) -> None:
    """Humanize off (the default): one move to the centre and the press there."""
    snap = await _open(stack, origins)
    await _seen(stack)
    await stack.act(ref_of(snap, "button", "Target"), kind="click")
    ev = (await _seen(stack))["pointer"]
    down = next(i for i, e in enumerate(ev) if e["type"] == "mousedown")
    assert [e["type"] for e in ev[:down]] == ["mousemove"], ev
    assert (ev[down]["x"], ev[down]["y"]) == (361, 241), ev
