"""Frames whose document was made by script: an ``<iframe>`` with no ``src`` (its initial
``about:blank``) filled by ``document.open/write/close``, by ``body.innerHTML``, by
``appendChild`` of elements made in its document, one nested in another, and frames made
before and after ``load`` (design.md §3: every frame the page shows has a token).

Page: tests/e2e/pages/scripted/frames.html. Each test checks what the page recorded
(``window.__events``: frame, event, ``event.isTrusted``), not only the tool's answer.
"""

from __future__ import annotations

import asyncio

import pytest

from trustbridge.bridge.sdk import Tab

from .conftest import Origins, Stack, ref_of, stamped
from .test_regressions_frames import frame_block

pytestmark = pytest.mark.browser

FRAMES = [  # (frame title, the name its button and note carry)
    ("Written frame", "written"),
    ("Inner HTML frame", "innerhtml"),
    ("Appended frame", "appended"),
    ("Nested frame", "nested"),
    ("Late frame", "late"),
]


async def ready(tab: Tab, url: str, names: list[str]) -> str:
    """Load the page and return a snapshot that shows the buttons of ``names``' frames."""
    await tab.goto(url)
    for _ in range(200):
        snap = await tab.snapshot()
        if all(f"Press {name}" in snap for name in names):
            return snap
        await asyncio.sleep(0.05)
    raise AssertionError(f"not every scripted frame appeared:\n{snap}")


async def test_click_and_fill_in_every_script_written_frame(stack: Stack, origins: Origins) -> None:
    """A click and a fill in each frame reach its elements as trusted input, at once (no
    FRAME_TOKEN_UNKNOWN, no wait for a later stamp)."""
    tab = Tab(stack.client, stack.device, None)
    snap = await ready(tab, f"{origins.main}/scripted/frames.html", [n for _, n in FRAMES])
    for title, name in FRAMES:
        block = frame_block(snap, title)
        res = await tab.click(ref_of(block, "button", f"Press {name}"))
        assert res["inputPath"] == "trusted", (title, res)
        await tab.fill(ref_of(block, "textbox", f"Note {name}"), f"hello {name}")
    events = await stack.page.evaluate("() => window.__events")
    for _, name in FRAMES:
        assert [name, "click", True] in events, (name, events)
        assert [name, "input", True] in events, (name, events)
    assert all(trusted for _, _, trusted in events), events
    values = []
    for frame in stack.page.frames[1:]:
        values += await frame.evaluate(
            "() => [...document.querySelectorAll('input')].map(i => i.value)")
    assert sorted(v for v in values if v) == sorted(f"hello {n}" for _, n in FRAMES)


async def test_frame_written_again_after_its_stamp_takes_input(stack: Stack, origins: Origins) -> None:
    """document.open() on a frame the supervisor stamped long before (filled first by
    innerHTML, so it knows its frame key) removes the root that held the token (no
    navigation, no load event follows): its new content still gets a trusted click and
    fill (it failed FRAME_TOKEN_UNKNOWN)."""
    tab = Tab(stack.client, stack.device, None)
    await ready(tab, f"{origins.main}/scripted/frames.html", ["innerhtml"])
    await stamped(stack)
    await stack.page.evaluate("() => window.rewrite()")
    snap = await tab.snapshot()
    block = frame_block(snap, "Inner HTML frame")
    res = await tab.click(ref_of(block, "button", "Press rewritten"))
    assert res["inputPath"] == "trusted"
    await tab.fill(ref_of(block, "textbox", "Note rewritten"), "again")
    events = await stack.page.evaluate("() => window.__events")
    # One input event on Chromium, one per character on Firefox (its fill types).
    assert events[0] == ["rewritten", "click", True]
    assert events[1:] and all(e == ["rewritten", "input", True] for e in events[1:]), events
    frame = stack.page.frame(name="inner-html")
    assert await frame.evaluate("() => document.getElementById('t').value") == "again"
    assert await frame.evaluate("() => document.getElementById('n').textContent") == "1"
