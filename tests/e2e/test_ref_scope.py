"""Refs are unique across the tabs of a browser (background/tabs.js `refFloor`): a ref of
one tab used on another fails with REF_NOT_FOUND instead of naming a different element
there, and each tab's own refs keep working (pages under tests/e2e/pages/refscope/)."""

from __future__ import annotations

import asyncio
import re

import pytest

from trustbridge.bridge.protocol import errors as E

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
    tab0, _, _tab1, snap1 = await _two_tabs(stack, origins)
    again = (await stack.client.call("page.snapshot", {"tabId": tab0}))["snapshot"]
    tab2_button = ref_of(snap1, "button", "Tab2 button")
    assert tab2_button not in again
    with pytest.raises(E.RefNotFound):
        await stack.client.call("page.act", {"tabId": tab0, "ref": tab2_button,
                                             "action": {"kind": "click"}})
    assert await _counts(stack) == (0, 0)



async def test_a_restarted_background_hands_out_no_number_a_live_document_holds(
        stack: Stack, origins: Origins, browser: str) -> None:
    """Chromium stops the extension's service worker (CDP ServiceWorker.stopAllWorkers) and
    a new tab wakes it: a new element gets a number above every ref handed out before
    (the floor stored in IndexedDB, background/reffloor.js), tab 0's old ref still clicks
    its own button, and used on tab 1 it is REF_NOT_FOUND with nothing clicked."""
    if browser != "chromium":
        pytest.skip("stopping the extension's background on demand is a Chromium (CDP) facility")
    tab0, snap0, tab1, snap1 = await _two_tabs(stack, origins)
    highest = max(int(n) for n in re.findall(r"\[ref=(?:f\d+)?e(\d+)\]", snap0 + snap1))
    worker = stack.supervisor.context.service_workers[0]
    started = await worker.evaluate("performance.timeOrigin")
    cdp = await stack.page.context.new_cdp_session(stack.page)
    await cdp.send("ServiceWorker.enable")
    await cdp.send("ServiceWorker.stopAllWorkers")
    await cdp.detach()
    woke = await stack.supervisor.context.new_page()  # tabs.onCreated wakes the worker
    await woke.goto(f"{origins.main}/refscope/tab2.html?woke")
    main = _page(stack, "main.html")
    await main.evaluate("""() => document.body.append(
        Object.assign(document.createElement('button'), {textContent: 'Fresh button'}))""")
    deadline = asyncio.get_running_loop().time() + 20
    while True:  # the restarted background reconnects to the bridge
        try:
            again = (await stack.client.call("page.snapshot", {"tabId": tab0}))["snapshot"]
            break
        except E.DeviceNotConnected:
            assert asyncio.get_running_loop().time() < deadline, "the extension never came back"
            await asyncio.sleep(0.2)
    restarted = [await w.evaluate("performance.timeOrigin")
                 for w in stack.supervisor.context.service_workers]
    assert restarted and started not in restarted, "the background did not restart"
    fresh = ref_of(again, "button", "Fresh button")
    assert int(fresh.lstrip("e")) > highest
    record = ref_of(snap0, "button", "Record")
    with pytest.raises(E.RefNotFound):
        await stack.client.call("page.act", {"tabId": tab1, "ref": record,
                                             "action": {"kind": "click"}})
    assert await _counts(stack) == (0, 0)
    res = await stack.client.call("page.act", {"tabId": tab0, "ref": record,
                                               "action": {"kind": "click"}})
    assert res["delivered"] is True
    assert await _counts(stack) == (1, 0)
