"""No trace of ours in the page (issue 35 item 1): a page that watches its documents from
their first script — a MutationObserver on the whole document (attributes with their old
values, children, text) in the top frame and in a child frame, its `message` events and
the window's own property names — through a snapshot, a trusted click, a fill in the
child frame, a trusted click on a link (a navigation) and a click on the next document.

Chromium (the frame token goes to the extension's isolated world over CDP,
supervisor/frames.py "cdp"): the page sees no mutation at all. Firefox ("transient"): the
token's attribute is set and removed within one script, so page script never finds it
present (``seenWhilePresent``), but its MutationObserver gets the two records; this test
asserts exactly that and nothing else (docs/security.md row 1).

What stays in both (docs/security.md row 2): the frame-key `message` a snapshot posts into
each child frame it lists; asserted here as the only message.

Pages: tests/e2e/pages/stealth.html, stealth_frame.html.
"""

from __future__ import annotations

import asyncio

import pytest

from trustbridge.bridge.protocol.models import FRAME_TOKEN_ATTRIBUTE

from .conftest import Origins, Stack, ref_of, stamped

pytestmark = pytest.mark.browser

FRAME_KEY_FIELD = "__trustbridgeFrameKey"  # extension/src/page/frames.js
OWN_GLOBALS = {"__stealth", "0"}  # the probe's own, and window[0]: its child frame


async def _open(stack: Stack, url: str) -> str:
    await stack.client.call("page.navigate", {"url": url})
    for _ in range(200):
        snap = await stack.snapshot()
        if "Child field" in snap:
            await stamped(stack)
            return snap
        await asyncio.sleep(0.05)
    raise AssertionError("the child frame never appeared:\n" + snap)


async def _child(stack: Stack):
    for _ in range(100):
        for f in stack.page.frames:
            if "stealth_frame.html" in f.url:
                return f
        await asyncio.sleep(0.05)
    raise AssertionError(f"no child frame among {[f.url for f in stack.page.frames]}")


async def _seen(frame) -> dict:
    return await frame.evaluate("""() => {
      const S = window.__stealth;
      const now = Object.getOwnPropertyNames(window);
      return { mutations: S.mutations, seenWhilePresent: S.seenWhilePresent, messages: S.messages,
               events: S.events, newGlobals: now.filter((k) => !S.globalsAtFirstScript.includes(k)),
               attrNow: document.querySelectorAll('[data-mcjug]').length };
    }""")


def _check(stack: Stack, seen: dict, where: str) -> None:
    """Nothing of ours in what the document ``seen`` recorded."""
    assert seen["seenWhilePresent"] == [], (where, seen)
    assert seen["attrNow"] == 0, (where, seen)
    if stack.browser == "chromium":
        assert seen["mutations"] == [], (where, seen["mutations"])
    else:
        # Firefox: only the transient announcements, each a set then a removal.
        assert all(m["type"] == "attributes" and m["attr"] == FRAME_TOKEN_ATTRIBUTE
                   and m["target"] == "HTML" for m in seen["mutations"]), (where, seen)
        olds = [m["oldValue"] for m in seen["mutations"]]
        assert olds[::2] == [None] * (len(olds) // 2) and len(olds) % 2 == 0, (where, olds)
        assert all(v and v.startswith("tb:") for v in olds[1::2]), (where, olds)
    assert [m for m in seen["messages"] if m["keys"] != [FRAME_KEY_FIELD]] == [], (where, seen)
    extra = set(seen["newGlobals"]) - OWN_GLOBALS
    if stack.browser == "firefox":
        extra -= {"__pw_bidiInsertText"}  # Playwright's own, docs/security.md row 8
    assert extra == set(), (where, seen["newGlobals"])


async def test_a_page_finds_nothing_of_ours_through_click_fill_and_navigation(
        stack: Stack, origins: Origins) -> None:
    """Snapshot, trusted click, fill in a child frame, trusted link click (navigation),
    click on the new document: each delivered trusted, and no attribute, mutation, message
    (but the frame key) or global of ours in either frame of either document."""
    snap = await _open(stack, f"{origins.main}/stealth.html")
    click = await stack.act(ref_of(snap, "button", "Go"), kind="click")
    assert click["inputPath"] == "trusted" and click["delivered"] is True, click
    fill = await stack.act(ref_of(snap, "textbox", "Child field"), kind="fill", value="hello")
    assert fill["inputPath"] == "trusted", fill
    child = await _child(stack)
    assert await child.locator("#field").input_value() == "hello"
    first, first_child = await _seen(stack.page.main_frame), await _seen(child)
    assert {"type": "click", "trusted": True, "target": "go"} in first["events"]
    assert {"type": "input", "trusted": True, "target": "field"} in first_child["events"]
    _check(stack, first, "first document")
    _check(stack, first_child, "first document's child frame")

    await stack.act(ref_of(snap, "link", "Next page"), kind="click")
    for _ in range(200):
        if "second=1" in stack.page.url:
            break
        await asyncio.sleep(0.05)
    for _ in range(200):
        snap = await stack.snapshot()
        if "Child field" in snap:
            break
        await asyncio.sleep(0.05)
    await stamped(stack)
    again = await stack.act(ref_of(snap, "button", "Go"), kind="click")
    assert again["inputPath"] == "trusted" and again["delivered"] is True, again
    second = await _seen(stack.page.main_frame)
    assert "second=1" in stack.page.url
    assert {"type": "click", "trusted": True, "target": "go"} in second["events"]
    _check(stack, second, "second document")
    _check(stack, await _seen(await _child(stack)), "second document's child frame")
