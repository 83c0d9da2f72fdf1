"""Page faults answered truly, and nothing else disturbed (issue 32 items 3, 4, 5, 7).

- Item 3: an evaluate result above the cap (bridge/protocol/limits.py RESULT_CAP_BYTES)
  answers RESULT_TOO_LARGE at once, where it is produced (supervisor), and the driver's
  connection, its frame tokens and trusted input on every tab keep working.
- Item 4: a page whose main thread hangs answers PAGE_UNRESPONSIVE after one timeout,
  naming the tab; other tabs keep working and the hung tab can be closed.
- Item 5: navigate and close accept a beforeunload prompt (the agent asked to leave) and
  say so.
Pages: tests/e2e/pages/faults/. What the pages saw is read through Playwright.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from trustbridge.bridge.protocol import errors as E

from .conftest import Origins, Stack, page_eval, ref_of, wait_until
from .test_mcp_sessions import call, mcp_on

MIB = 1024 * 1024


def page_of(stack: Stack, needle: str):
    pages = [p for p in stack.supervisor.context.pages if needle in p.url]
    assert len(pages) == 1, [p.url for p in stack.supervisor.context.pages]
    return pages[0]


async def click_count(stack: Stack, tab_id: int) -> None:
    """A trusted click on the counter's button in tab ``tab_id``, through the bridge."""
    snap = (await stack.client.call("page.snapshot", {"tabId": tab_id}))["snapshot"]
    ref = ref_of(snap, "button", "Count")
    await stack.client.call("page.act", {"tabId": tab_id, "ref": ref,
                                         "action": {"kind": "click"}})


async def test_oversized_evaluate_answers_result_too_large_and_input_keeps_working(
        stack: Stack, origins: Origins) -> None:
    first = (await stack.client.call(
        "page.navigate", {"url": f"{origins.main}/faults/counter.html?who=A"}))["tabId"]
    second = (await stack.client.call(
        "tabs.new", {"url": f"{origins.main}/faults/counter.html?who=B"}))["tabId"]
    for mb in (33, 20):
        for world in ("main", "isolated"):
            started = time.monotonic()
            with pytest.raises(E.TrustbridgeError) as caught:
                await asyncio.wait_for(stack.client.call("page.evaluate", {
                    "tabId": first, "world": world,
                    "expression": f"'x'.repeat({mb} * 1024 * 1024)"}), 20)
            err = caught.value
            assert err.code.value == "RESULT_TOO_LARGE", (mb, world, err)
            assert err.details["bytes"] >= mb * MIB, err.details
            assert err.details["limitBytes"] == 1_000_000, err.details
            assert "slice" in err.advice, err.advice  # the way to narrow it
            # "quickly": far below the 48 s a 20 MB result took before (no timing assert:
            # the bound only keeps a regression from hanging the suite)
            assert time.monotonic() - started < 20
            print(f"RESULT_TOO_LARGE {mb} MB {world}: {time.monotonic() - started:.2f} s")
    # The driver's connection, its frame tokens and trusted input are intact, on the
    # tab the evaluate ran in and on another.
    await click_count(stack, first)
    await click_count(stack, second)
    assert await page_eval(page_of(stack, "who=A"), "window.__seen") == 1
    assert await page_eval(page_of(stack, "who=B"), "window.__seen") == 1
    assert await page_eval(page_of(stack, "who=B"), "window.__untrusted") == 0
    # A result under the cap is still returned whole.
    small = await stack.client.call("page.evaluate", {
        "tabId": first, "expression": "'y'.repeat(900 * 1000)"})
    assert small["value"] == "y" * 900_000
    # A promise is awaited and measured as before (main and isolated worlds).
    for world in ("main", "isolated"):
        settled = await stack.client.call("page.evaluate", {
            "tabId": first, "world": world, "expression": "async () => 41 + 1"})
        assert settled["value"] == 42
        with pytest.raises(E.TrustbridgeError) as caught:
            await stack.client.call("page.evaluate", {
                "tabId": first, "world": world,
                "expression": "async () => 'z'.repeat(2 * 1000 * 1000)"})
        assert caught.value.code.value == "RESULT_TOO_LARGE"


async def test_mcp_browser_evaluate_too_large_then_click_still_trusted(
        stack: Stack, origins: Origins) -> None:
    """Through MCP's browser_evaluate: the error names the code, the size and the way to
    narrow it; the next click in the same tab is delivered as trusted input."""
    async with mcp_on(stack, "agent-big") as (_conn, client):
        await call(client, "browser_navigate", url=f"{origins.main}/faults/counter.html?who=M")
        result = await asyncio.wait_for(client.call_tool(
            "browser_evaluate", {"function": "() => 'x'.repeat(33 * 1024 * 1024)"}), 30)
        text = "\n".join(c.text for c in result.content if c.type == "text")
        assert result.is_error, text
        assert "RESULT_TOO_LARGE" in text and '"limitBytes":1000000' in text, text
        assert "slice" in text, text
        snap = await call(client, "browser_snapshot")
        await call(client, "browser_click", element="Count", ref=ref_of(snap, "button", "Count"))
        assert await page_eval(page_of(stack, "who=M"), "window.__seen") == 1


# -- item 5: beforeunload -------------------------------------------------------------

async def _guarded_tab(stack: Stack, origins: Origins, who: str) -> int:
    """A tab on the leave-guard page that has had a trusted click (browsers prompt on
    beforeunload only after a user gesture)."""
    tab = (await stack.client.call(
        "tabs.new", {"url": f"{origins.main}/faults/leave.html?who={who}"}))["tabId"]
    snap = (await stack.client.call("page.snapshot", {"tabId": tab}))["snapshot"]
    await stack.client.call("page.act", {"tabId": tab, "ref": ref_of(snap, "button", "Touch"),
                                         "action": {"kind": "click"}})
    assert await page_eval(page_of(stack, f"who={who}"), "window.__touched") == 1
    return tab


async def test_navigate_accepts_beforeunload_and_says_so(stack: Stack, origins: Origins) -> None:
    tab = await _guarded_tab(stack, origins, "nav")
    result = await asyncio.wait_for(stack.client.call("page.navigate", {
        "tabId": tab, "url": f"{origins.main}/faults/counter.html?who=after"}), 30)
    assert not result.get("transitionPending"), result
    assert result["url"].endswith("who=after"), result
    assert result["acceptedBeforeUnload"]["type"] == "beforeunload", result
    # The page left: Playwright sees the new document (its events may come a little
    # after the bridge's answer), and the old one is gone.
    await wait_until(lambda: any("who=after" in p.url for p in stack.supervisor.context.pages))
    assert not [p for p in stack.supervisor.context.pages if "who=nav" in p.url]
    assert await page_eval(page_of(stack, "who=after"), "window.__seen") == 0


async def test_close_accepts_beforeunload_and_the_tab_is_gone(
        stack: Stack, origins: Origins) -> None:
    tab = await _guarded_tab(stack, origins, "close")
    result = await asyncio.wait_for(stack.client.call("tabs.close", {"tabId": tab}), 20)
    if stack.browser == "chromium":
        assert result["acceptedBeforeUnload"]["type"] == "beforeunload", result
    else:
        # Firefox's tabs.remove closes the tab without running the page's beforeunload
        # prompt (measured: no dialog event); the result then claims no prompt.
        assert "acceptedBeforeUnload" not in result, result
    tabs = (await stack.client.call("tabs.list", {}))["tabs"]
    assert tab not in [t["tabId"] for t in tabs], tabs
    await wait_until(lambda: not [p for p in stack.supervisor.context.pages
                                  if "who=close" in p.url])


async def test_mcp_navigate_and_close_say_the_leave_prompt_was_accepted(
        stack: Stack, origins: Origins) -> None:
    async with mcp_on(stack, "agent-leave") as (_conn, client):
        await call(client, "browser_navigate", url=f"{origins.main}/faults/leave.html?who=m1")
        snap = await call(client, "browser_snapshot")
        await call(client, "browser_click", element="Touch", ref=ref_of(snap, "button", "Touch"))
        text = await asyncio.wait_for(call(
            client, "browser_navigate", url=f"{origins.main}/faults/counter.html?who=m2"), 30)
        assert "the page asked to confirm leaving; accepted" in text, text
        assert "Navigated to" in text and "NOT happened" not in text, text
        await call(client, "browser_tabs", action="new")
        await call(client, "browser_navigate", url=f"{origins.main}/faults/leave.html?who=m3")
        snap = await call(client, "browser_snapshot")
        await call(client, "browser_click", element="Touch", ref=ref_of(snap, "button", "Touch"))
        text = await asyncio.wait_for(call(client, "browser_tabs", action="close"), 20)
        assert "Closed tab" in text, text
        if stack.browser == "chromium":  # Firefox closes without asking the page
            assert "the page asked to confirm leaving; accepted" in text, text
        await wait_until(lambda: not [p for p in stack.supervisor.context.pages
                                      if "who=m3" in p.url])


async def test_beforeunload_ask_mode_reports_the_prompt(stack: Stack, origins: Origins) -> None:
    """TRUSTBRIDGE_BEFOREUNLOAD=ask (Executor.accept_beforeunload False): the prompt is
    reported as an open dialog, as before, and nothing is answered for the agent."""
    executor = stack.server.executor
    executor.accept_beforeunload = False
    try:
        tab = await _guarded_tab(stack, origins, "ask")
        result = await asyncio.wait_for(stack.client.call("page.navigate", {
            "tabId": tab, "url": f"{origins.main}/faults/counter.html?who=asked"}), 30)
        assert result.get("transitionPending") and result["dialog"]["type"] == "beforeunload"
        assert "acceptedBeforeUnload" not in result
        await stack.client.call("page.dialog", {"tabId": tab, "accept": True})
        await wait_until(lambda: any("who=asked" in p.url
                                     for p in stack.supervisor.context.pages))
    finally:
        executor.accept_beforeunload = True


# -- item 4: a hung page ----------------------------------------------------------------

async def test_hung_page_answers_page_unresponsive_and_other_tabs_work(
        stack: Stack, origins: Origins) -> None:
    other = (await stack.client.call(
        "page.navigate", {"url": f"{origins.main}/faults/counter.html?who=ok"}))["tabId"]
    hung = (await stack.client.call(
        "tabs.new", {"url": f"{origins.main}/faults/hang.html?who=hung"}))["tabId"]
    snap = (await stack.client.call("page.snapshot", {"tabId": hung}))["snapshot"]
    await stack.client.call("page.act", {"tabId": hung, "ref": ref_of(snap, "button", "Hang"),
                                         "action": {"kind": "click"}})
    await asyncio.sleep(0.3)  # the page's timer starts its endless loop
    calls: list[tuple[str, dict]] = [("page.snapshot", {}),
                                     ("page.evaluate", {"expression": "1 + 1"})]
    if stack.browser == "chromium":
        # Chromium cannot load another document of the same site into the stuck tab
        # (measured: a reload or a navigation did not commit within 15 s); Firefox can,
        # tested below as the way out it is there.
        calls.append(("page.navigate", {"url": f"{origins.main}/faults/counter.html"
                                               "?who=never", "timeoutMs": 5000}))
    for method, params in calls:
        started = time.monotonic()
        with pytest.raises(E.TrustbridgeError) as caught:
            await asyncio.wait_for(stack.client.call(method, {"tabId": hung, **params}), 90)
        err = caught.value
        print(f"{method}: {err.code.value} after {time.monotonic() - started:.1f} s: {err}")
        assert err.code.value == "PAGE_UNRESPONSIVE", (method, err)
        assert err.details["tabId"] == hung, err.details
        assert "Close the tab" in err.advice, err.advice
        # Meanwhile another tab works: trusted input lands there.
        await click_count(stack, other)
    assert await page_eval(page_of(stack, "who=ok"), "window.__seen") == len(calls)
    if stack.browser == "chromium":
        # A reload answers "pending" rather than TIMEOUT when it does not land: the same
        # probe names the page as stuck.
        with pytest.raises(E.TrustbridgeError) as caught:
            await asyncio.wait_for(stack.client.call("page.history", {
                "tabId": hung, "direction": "reload", "timeoutMs": 3000}), 30)
        assert caught.value.code.value == "PAGE_UNRESPONSIVE", caught.value
    if stack.browser != "chromium":
        # Firefox: navigating the stuck tab replaces its page, and it answers again.
        moved = await asyncio.wait_for(stack.client.call("page.navigate", {
            "tabId": hung, "url": f"{origins.main}/faults/counter.html?who=moved"}), 60)
        assert moved["url"].endswith("who=moved"), moved
        assert "Count" in (await stack.client.call("page.snapshot", {"tabId": hung}))["snapshot"]
    # The way out works: closing the hung tab.
    closed = await asyncio.wait_for(stack.client.call("tabs.close", {"tabId": hung}), 20)
    assert closed["closed"] is True
    tabs = (await stack.client.call("tabs.list", {}))["tabs"]
    assert hung not in [t["tabId"] for t in tabs]


# -- item 7: another session's new tab is never the acting session's -------------------

async def test_another_sessions_new_tab_is_not_followed_or_announced(
        stack: Stack, origins: Origins) -> None:
    """Session A (an MCP server) clicks a button that opens a tab without an opener while
    session B opens a tab of its own: A's result does not announce B's tab, A's current
    tab stays its own page, and B's tab stays B's. (The race of issue 32 seen once in
    three runs is timing-dependent; the deterministic check of the rule is
    tests/bridge/test_session_gate.py test_an_action_never_reports_or_takes_another_sessions_new_tab.)"""
    from trustbridge.bridge.client import BridgeClient

    b = await BridgeClient.connect(stack.server.url, stack.server.token)
    try:
        async with mcp_on(stack, "agent-a") as (_conn, a):
            await call(a, "browser_navigate", url=f"{origins.main}/faults/opener.html")
            ref = ref_of(await call(a, "browser_snapshot"), "button", "Open")
            clicked, opened_b = await asyncio.gather(
                call(a, "browser_click", element="Open", ref=ref),
                b.call("tabs.new", {"url": f"{origins.main}/faults/counter.html?who=b"}))
            b_tab = opened_b["tabId"]
            assert "who=b" not in clicked, clicked
            assert "now current" not in clicked or "who=popup" in clicked, clicked
            after = await call(a, "browser_snapshot")
            assert "opener.html" in after or "who=popup" in after, after
            assert "who=b" not in after.split("### Page state")[-1], after
        listed = {t["tabId"]: t for t in (await b.call("tabs.list", {}))["tabs"]}
        assert listed[b_tab].get("mine") is True, listed[b_tab]
    finally:
        await b.close()
