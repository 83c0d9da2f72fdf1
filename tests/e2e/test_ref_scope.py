"""Refs are unique across the tabs of a browser (background/tabs.js `refFloor`): a ref of
one tab used on another fails with REF_NOT_FOUND instead of naming a different element
there, and each tab's own refs keep working (pages under tests/e2e/pages/refscope/)."""

from __future__ import annotations

import asyncio
import re

import pytest

from bridge.protocol import errors as E

from .conftest import Origins, Stack, ref_of, wait_until

pytestmark = pytest.mark.browser


def _page(stack: Stack, name: str):
    pages = [p for p in stack.supervisor.context.pages if p.url.endswith(f"/refscope/{name}")]
    assert len(pages) == 1, [p.url for p in stack.supervisor.context.pages]
    return pages[0]


async def _two_tabs(stack: Stack, origins: Origins) -> tuple[int, str, int, str]:
    """Tab 0 on main.html and a new tab on tab2.html, each snapshotted: (tab, its snapshot) x2."""
    await stack.client.call("page.navigate", {"url": f"{origins.main}/refscope/main.html"})
    first = (await stack.client.call("page.snapshot", {}))
    new = await stack.client.call("tabs.new", {"url": f"{origins.main}/refscope/tab2.html"})
    await wait_until(lambda: any(p.url.endswith("/refscope/tab2.html")
                                 for p in stack.supervisor.context.pages))
    second = await stack.client.call("page.snapshot", {"tabId": new["tabId"]})
    return first["tabId"], first["snapshot"], new["tabId"], second["snapshot"]


async def _counts(stack: Stack) -> tuple[int, int]:
    return (await _page(stack, "main.html").evaluate("window.__count"),
            await _page(stack, "tab2.html").evaluate("window.__count"))


async def test_a_ref_of_another_tab_is_not_found_and_clicks_nothing(
        stack: Stack, origins: Origins) -> None:
    """Tab 0's "Record" ref used while tab 1 is addressed: REF_NOT_FOUND naming tab 0 and
    the next step, and neither page's counter moved."""
    tab0, snap0, tab1, snap1 = await _two_tabs(stack, origins)
    record = ref_of(snap0, "button", "Record")
    assert record not in snap1, "ref numbers are unique across tabs"
    with pytest.raises(E.RefNotFound) as info:
        await stack.client.call("page.act", {"tabId": tab1, "ref": record,
                                             "action": {"kind": "click"}})
    assert "not from this tab's snapshots" in info.value.message
    assert f"tab {tab0}" in info.value.message
    assert await _counts(stack) == (0, 0)


async def test_refs_of_both_tabs_work_on_their_own_tabs(stack: Stack, origins: Origins) -> None:
    """Each tab's refs click their own element, trusted, after the other tab was snapshotted."""
    tab0, snap0, tab1, snap1 = await _two_tabs(stack, origins)
    res1 = await stack.client.call("page.act", {"tabId": tab1, "ref": ref_of(snap1, "button", "Tab2 button"),
                                                "action": {"kind": "click"}})
    res0 = await stack.client.call("page.act", {"tabId": tab0, "ref": ref_of(snap0, "button", "Record"),
                                                "action": {"kind": "click"}})
    assert res0["delivered"] is True and res1["delivered"] is True
    assert await _counts(stack) == (1, 1)


async def test_a_snapshot_after_another_tabs_keeps_numbers_apart(
        stack: Stack, origins: Origins) -> None:
    """Snapshotting tab 0 again after tab 1 mints no number tab 1 holds, and tab 1's ref used
    on tab 0 is refused."""
    tab0, _, tab1, snap1 = await _two_tabs(stack, origins)
    again = (await stack.client.call("page.snapshot", {"tabId": tab0}))["snapshot"]
    tab2_button = ref_of(snap1, "button", "Tab2 button")
    assert tab2_button not in again
    with pytest.raises(E.RefNotFound):
        await stack.client.call("page.act", {"tabId": tab0, "ref": tab2_button,
                                             "action": {"kind": "click"}})
    assert await _counts(stack) == (0, 0)


async def test_the_ref_floor_is_stored_for_a_background_restart(
        stack: Stack, origins: Origins, browser: str) -> None:
    """After snapshots of two tabs, the background's stored floor (IndexedDB, read by a
    restarted background, background/reffloor.js) is above every ref number handed out."""
    if browser != "chromium":
        pytest.skip("the extension's background is evaluated through Playwright's service "
                    "worker handle, which only Chromium has")
    _, snap0, _, snap1 = await _two_tabs(stack, origins)
    highest = max(int(n) for n in re.findall(r"\[ref=(?:f\d+)?e(\d+)\]", snap0 + snap1))
    worker = stack.supervisor.context.service_workers[0]

    async def stored() -> int:
        return await worker.evaluate("""() => new Promise((resolve) => {
            const req = indexedDB.open('trustbridge-refs', 1);
            req.onsuccess = () => {
              const get = req.result.transaction('floor').objectStore('floor').get('next');
              get.onsuccess = () => { resolve(get.result || 0); req.result.close(); };
            };
            req.onerror = () => resolve(-1);
        })""")

    deadline = asyncio.get_running_loop().time() + 5
    while (value := await stored()) <= highest:
        assert asyncio.get_running_loop().time() < deadline, (value, highest)
        await asyncio.sleep(0.05)
