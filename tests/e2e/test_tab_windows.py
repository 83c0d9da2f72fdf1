"""``tabs.new {window: true}`` (issue 16 item 4): the tab opens in a new normal window of
its own and is the foreground tab there, so parallel sessions' tabs are each visible.
What the pages themselves report (``document.visibilityState``) is asserted, in Chromium
and Firefox; pages: tests/e2e/pages/tab_windows/.

Measured (this machine, the browsers the supervisor launches headless through
Playwright): Firefox ESR reports a background tab of a window ``hidden``; Chromium
reports every tab ``visible``, background ones too, with animation frames running at
~50-64/s (scripts/benchlib/b5_tabs.py's probe): :data:`HIDES_BACKGROUND_TABS`."""

from __future__ import annotations

from typing import Any

from .conftest import Origins, Stack, wait_until

PAGE = "/tab_windows/page.html"
HIDES_BACKGROUND_TABS = {"chromium": False, "firefox": True, "camoufox": True}
"""Whether the browser tells a background tab of a window it is hidden (measured)."""


async def page_of(stack: Stack, marker: str) -> Any:
    """The Playwright page whose URL ends with ``marker`` (waits until it is there)."""
    ctx = stack.supervisor.context
    await wait_until(lambda: any(p.url.endswith(marker) for p in ctx.pages), 15)
    pages = [p for p in ctx.pages if p.url.endswith(marker)]
    assert len(pages) == 1, [p.url for p in ctx.pages]
    await pages[0].wait_for_load_state("load")
    return pages[0]


async def visibility(stack: Stack, marker: str) -> str:
    return await (await page_of(stack, marker)).evaluate("document.visibilityState")


async def row(stack: Stack, tab_id: int) -> dict[str, Any]:
    tabs = (await stack.client.call("tabs.list", {}))["tabs"]
    found = [t for t in tabs if t["tabId"] == tab_id]
    assert len(found) == 1, tabs
    return found[0]


async def wait_visibility(stack: Stack, marker: str, state: str) -> None:
    """Wait (bounded) until the page says ``state``: a tab that lost the foreground is
    told so asynchronously."""
    page = await page_of(stack, marker)
    await page.wait_for_function(f"document.visibilityState === {state!r}", timeout=10_000)


async def test_a_tab_in_its_own_window_stays_visible(stack: Stack, origins: Origins) -> None:
    """A (first window), B (tabs.new window: true), then C (tabs.new, no window): B and
    A are each the foreground tab of their windows and visible; C lands in B's window
    (the focused one) and B, now behind C there, is no longer active (and, where the
    browser says so, hidden); A stays active and visible in its own window."""
    first = (await stack.client.call("tabs.list", {}))["tabs"]
    assert len(first) == 1, first
    a = first[0]["tabId"]
    await stack.client.call("page.navigate", {"tabId": a, "url": f"{origins.main}{PAGE}?a"})
    assert await visibility(stack, "?a") == "visible"

    b = await stack.client.call("tabs.new", {"window": True})
    await stack.client.call("page.navigate", {"tabId": b["tabId"], "url": f"{origins.main}{PAGE}?b"})
    row_a, row_b = await row(stack, a), await row(stack, b["tabId"])
    assert isinstance(row_a["windowId"], int) and isinstance(row_b["windowId"], int)
    assert row_b["windowId"] != row_a["windowId"], (row_a, row_b)
    assert b["windowId"] == row_b["windowId"]
    assert row_a["active"] and row_b["active"]  # each the foreground tab of its window
    assert await visibility(stack, "?b") == "visible"
    assert await visibility(stack, "?a") == "visible"

    c = await stack.client.call("tabs.new", {"url": f"{origins.main}{PAGE}?c"})
    row_c = await row(stack, c["tabId"])
    assert row_c["windowId"] == row_b["windowId"], (row_b, row_c)
    assert await visibility(stack, "?c") == "visible"
    assert not (await row(stack, b["tabId"]))["active"]
    if HIDES_BACKGROUND_TABS[stack.browser]:
        await wait_visibility(stack, "?b", "hidden")
        assert (await (await page_of(stack, "?b")).evaluate("window.__vis.changes")) == ["hidden"]
    else:
        assert await visibility(stack, "?b") == "visible"
    assert (await row(stack, a))["active"]
    assert await visibility(stack, "?a") == "visible"
    assert (await (await page_of(stack, "?a")).evaluate("window.__vis.changes")) == []


async def test_a_new_window_with_a_url_loads_it(stack: Stack, origins: Origins) -> None:
    """``tabs.new {url, window: true}``: the answer comes after the load, names the new
    window, and the page there is visible while the first tab stays visible too."""
    a = (await stack.client.call("tabs.list", {}))["tabs"][0]
    b = await stack.client.call("tabs.new", {"url": f"{origins.main}{PAGE}?w", "window": True})
    assert b["url"].endswith(f"{PAGE}?w") and b["title"] == "tab windows", b
    row_b = await row(stack, b["tabId"])
    assert row_b["windowId"] != a["windowId"], (a, row_b)
    assert await visibility(stack, "?w") == "visible"
    assert (await row(stack, a["tabId"]))["active"]
