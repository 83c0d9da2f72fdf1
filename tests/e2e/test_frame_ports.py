"""The background reads a frame over that frame's persistent port only while the port
belongs to the frame's current document (extension/src/background/ports.js): after a
frame moves to another document, every read shows the new document, a ref from it acts
on it, and a request still waiting on the old document ends (it never hangs).

Pages: tests/e2e/pages/frame_ports/. Each test checks what the snapshot showed and what
the page recorded (click counters), never timings. Runs once per browser; on Firefox the
port carries only receipt pushes (no documentId: every request goes by sendMessage), so
the same tests there check the fallback.
"""

from __future__ import annotations

import asyncio

import pytest
from playwright.async_api import Error as PlaywrightError

from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.sdk import Tab

from .conftest import Origins, Stack, ref_of, stamped

pytestmark = pytest.mark.browser

LETTERS = {"a": ("Document A", "Alpha"), "b": ("Document B", "Bravo")}


def frame_block(snap: str, frame_title: str) -> str:
    """The outline lines nested under the ``- iframe "frame_title"`` line."""
    lines = snap.splitlines()
    start = next(i for i, ln in enumerate(lines)
                 if ln.lstrip().startswith(f'- iframe "{frame_title}"'))
    depth = len(lines[start]) - len(lines[start].lstrip())
    end = next((i for i in range(start + 1, len(lines))
                if len(lines[i]) - len(lines[i].lstrip()) <= depth), len(lines))
    return "\n".join(lines[start + 1:end])


async def frame_at(stack: Stack, suffix: str):
    """The child frame whose URL ends with ``suffix`` (the host's own URL may end so
    too: its ``src`` query), once it has loaded and every frame holds its driver token
    (bounded: 10 s)."""
    for _ in range(200):
        found = [f for f in stack.page.frames if f.parent_frame is not None and f.url.endswith(suffix)]
        if found:
            try:
                await found[0].wait_for_load_state("load")
                await stamped(stack)
                return found[0]
            except PlaywrightError as err:
                # A frame's document was replaced while Playwright read it (seen once,
                # cross-origin): read the frames again.
                if "context was destroyed" not in str(err):
                    raise
        await asyncio.sleep(0.05)
    raise AssertionError(f"no frame at *{suffix}: {[f.url for f in stack.page.frames]}")


async def snapshot_showing(tab: Tab, needle: str) -> str:
    """The first snapshot that shows ``needle`` (a frame's first document loads late)."""
    for _ in range(200):
        snap = await tab.snapshot()
        if needle in snap:
            return snap
        await asyncio.sleep(0.05)
    raise AssertionError(f"{needle!r} never appeared in the snapshot:\n{snap}")


@pytest.mark.parametrize("cross_origin", [False, True], ids=["same-origin", "cross-origin"])
async def test_a_frame_that_moved_to_another_document_is_read_from_the_new_one(
        stack: Stack, origins: Origins, cross_origin: bool) -> None:
    """The frame goes A → B → A → B (each a new document of the same frame, in the host's
    process or, cross-origin, in another one). Right after each load the snapshot shows
    the new document only, and a click by a ref from that snapshot lands in it (its
    counter goes to 1, a fresh document each time)."""
    base = origins.other if cross_origin else origins.main
    tab = Tab(stack.client, stack.device, None)
    await tab.goto(f"{origins.main}/frame_ports/host.html?src={base}/frame_ports/a.html")
    await frame_at(stack, "/frame_ports/a.html")
    await snapshot_showing(tab, "Alpha")
    for letter in ("b", "a", "b"):
        old = "a" if letter == "b" else "b"
        await stack.page.evaluate(
            "(url) => { document.getElementById('f').src = url; }", f"{base}/frame_ports/{letter}.html")
        await frame_at(stack, f"/frame_ports/{letter}.html")
        block = frame_block(await tab.snapshot(), "Port frame")
        heading, button = LETTERS[letter]
        assert heading in block and button in block, block
        assert LETTERS[old][0] not in block and LETTERS[old][1] not in block, block
        await tab.click(ref_of(block, "button", button))
        assert await stack.page.frame_locator("#f").locator("#n").text_content() == "1"


async def test_back_and_forward_read_the_document_they_bring(stack: Stack, origins: Origins) -> None:
    """A → B in the top frame, back, forward: each snapshot shows the document the
    history move brought (restored from the back/forward cache where the browser keeps
    one), and a ref from it clicks in it."""
    tab = Tab(stack.client, stack.device, None)
    await tab.goto(f"{origins.main}/frame_ports/a.html")
    await snapshot_showing(tab, "Alpha")
    await tab.goto(f"{origins.main}/frame_ports/b.html")
    await snapshot_showing(tab, "Bravo")
    for direction, (heading, button), gone in (("back", LETTERS["a"], "Bravo"),
                                               ("forward", LETTERS["b"], "Alpha")):
        moved = await stack.client.call("page.history", {"direction": direction})
        assert moved["transitionPending"] is False
        await stamped(stack)
        snap = await tab.snapshot()
        assert heading in snap and button in snap and gone not in snap, snap
        before = int(await stack.page.locator("#n").text_content())
        await tab.click(ref_of(snap, "button", button))
        assert int(await stack.page.locator("#n").text_content()) == before + 1


@pytest.mark.parametrize("page", ["leave.html", "leave_host.html"], ids=["top", "frame"])
async def test_a_text_wait_pending_on_a_document_that_goes_away_moves_to_the_next(
        stack: Stack, origins: Origins, page: str) -> None:
    """The wait for "Arrived at last" starts on a document that does not show it and
    navigates away 400 ms later (the top frame, or a child frame). The extension's wait on
    the old document ends when that document goes (it must not wait on a closed port
    forever), and the next round finds the text in the new document."""
    tab = Tab(stack.client, stack.device, None)
    await tab.goto(f"{origins.main}/frame_ports/{page}")
    res = await stack.client.call("page.wait", {"text": "Arrived at last", "timeoutMs": 8000})
    assert res["found"] is True
    snap = await tab.snapshot()
    assert "Arrived at last" in snap and "Leaving soon" not in snap, snap


async def test_after_a_background_restart_reads_and_clicks_show_the_page(
        stack: Stack, origins: Origins, browser: str) -> None:
    """Chromium stops the extension's service worker (every content script's port closes
    with it) and a new tab wakes it: the first read goes by sendMessage and reopens the
    frame's port, and later reads and clicks by ref, over it, show and reach the page (the
    click counter counts each click once)."""
    if browser != "chromium":
        pytest.skip("stopping the extension's background on demand is a Chromium (CDP) facility")
    tab = Tab(stack.client, stack.device, None)
    await tab.goto(f"{origins.main}/frame_ports/host.html?src={origins.other}/frame_ports/a.html")
    await frame_at(stack, "/frame_ports/a.html")
    await snapshot_showing(tab, "Alpha")
    cdp = await stack.page.context.new_cdp_session(stack.page)
    await cdp.send("ServiceWorker.enable")
    await cdp.send("ServiceWorker.stopAllWorkers")
    await cdp.detach()
    woke = await stack.supervisor.context.new_page()  # tabs.onCreated wakes the worker
    await woke.goto(f"{origins.main}/frame_ports/b.html")
    await stack.page.bring_to_front()
    deadline = asyncio.get_running_loop().time() + 20
    while True:  # the restarted background reconnects to the bridge
        try:
            tab_id = next(t["tabId"] for t in (await stack.client.call("tabs.list", {}))["tabs"]
                          if "/frame_ports/host.html" in t["url"])
            await stack.client.call("page.snapshot", {"tabId": tab_id})
            break
        except E.DeviceNotConnected:
            assert asyncio.get_running_loop().time() < deadline, "the extension never came back"
            await asyncio.sleep(0.2)
    for clicks in (1, 2, 3):
        snap = (await stack.client.call("page.snapshot", {"tabId": tab_id}))["snapshot"]
        block = frame_block(snap, "Port frame")
        assert "Alpha" in block and "Port host" in snap, snap
        await stack.client.call("page.act", {"tabId": tab_id, "ref": ref_of(block, "button", "Alpha"),
                                             "action": {"kind": "click"}})
        assert await stack.page.frame_locator("#f").locator("#n").text_content() == str(clicks)
