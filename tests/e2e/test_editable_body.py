"""An editable document body, as rich-text editors build it in an iframe: ``<body
contenteditable>`` (TinyMCE, CKEditor 4) and ``designMode = "on"``. The body is one
``textbox`` line with a ref (its text is the value, as for any editing host); click, type
and fill reach it as trusted input and its value reads back.

Page: tests/e2e/pages/scripted/editors.html. Each test checks what the page recorded
(``window.__events``: editor, event type, ``event.isTrusted``) and the body's text.
"""

from __future__ import annotations

import asyncio
import re

import pytest

from trustbridge.bridge.sdk import Tab

from .conftest import Origins, Stack
from .test_regressions_frames import frame_block

pytestmark = pytest.mark.browser

EDITORS = [("Rich Text Area", "rich", "Draft one"), ("Design Area", "design", "Draft two")]


def textbox_ref(block: str) -> str:
    """The ref of the one ``textbox`` line of a frame's block."""
    found = re.findall(r'^\s*- textbox\b[^\n]*?\[ref=((?:f\d+)?e\d+)\]', block, flags=re.MULTILINE)
    assert len(found) == 1, f"expected one textbox, found {found} in:\n{block}"
    return found[0]


async def ready(tab: Tab, url: str) -> str:
    await tab.goto(url)
    for _ in range(200):
        snap = await tab.snapshot()
        if all(text in snap for _, _, text in EDITORS):
            return snap
        await asyncio.sleep(0.05)
    raise AssertionError(f"the editors never appeared:\n{snap}")


@pytest.mark.parametrize(("title", "frame_name", "draft"), EDITORS)
async def test_editable_body_is_a_textbox_that_takes_input(
        stack: Stack, origins: Origins, title: str, frame_name: str, draft: str) -> None:
    tab = Tab(stack.client, stack.device, None)
    snap = await ready(tab, f"{origins.main}/scripted/editors.html")
    block = frame_block(snap, title)
    ref = textbox_ref(block)
    assert "[focused]" not in block, block  # the top document has the focus
    assert draft in block.splitlines()[0] or f': {draft}' in block, block  # the value
    body = stack.page.frame_locator(f"#{frame_name}").locator("body")
    body_text = "(b) => b.innerText.trim()"

    await tab.click(ref)
    assert await body.evaluate("(b) => b.ownerDocument.activeElement === b")
    res = await tab.fill(ref, "Fresh words")
    assert res["inputPath"] == "trusted"
    assert await body.evaluate(body_text) == "Fresh words"
    await tab.type(ref, " and more")
    assert await body.evaluate(body_text) == "Fresh words and more"
    events = await stack.page.evaluate("() => window.__events")
    assert events and all(e[0] == frame_name and e[2] is True for e in events), events
    # The value reads back in a fresh snapshot.
    again = frame_block(await tab.snapshot(), title)
    assert re.search(rf'- textbox \[focused\][^\n]*\[ref={textbox_ref(again)}\]: Fresh words and more',
                     again), again
