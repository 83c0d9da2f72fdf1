"""Every dialog answer is true when a navigation meets an open dialog (docs/design.md
§2.1): browser_navigate on a tab a confirm() blocks dismisses it through the driver first
and says so, the page's next confirm is the one browser_handle_dialog answers, and an
alert loop's DIALOG_OPEN names the alert really open. Each test checks the answers the
PAGE recorded (tests/e2e/pages/dialogs/confirm_loop.html)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

import pytest

from trustbridge.bridge.protocol import errors as E

from .conftest import Origins, Stack, ref_of, wait_until
from .test_dialogs import QUICK_S, call, next_dialog
from .test_mcp_tabs import mcp_on, page_state

pytestmark = pytest.mark.browser


async def tool(client: Any, name: str, **args: Any) -> tuple[bool, str]:
    """(is_error, text) of one MCP tool call."""
    result = await asyncio.wait_for(client.call_tool(name, args), 20)
    return result.is_error, "\n".join(c.text for c in result.content if c.type == "text")


async def pw_page(stack: Stack, part: str) -> Any:
    """The Playwright page whose URL contains ``part``. Waits (bounded) for Playwright to
    hear of the navigation: its framenavigated may come after the bridge's answer on a
    loaded machine (a fresh-clone run saw the old URL)."""
    def found() -> list[Any]:
        return [p for p in stack.supervisor.context.pages if part in p.url]

    with contextlib.suppress(TimeoutError):
        await wait_until(lambda: len(found()) == 1, 10)
    pages = found()
    assert len(pages) == 1, [p.url for p in stack.supervisor.context.pages]
    return pages[0]


async def start_confirms(stack: Stack, mcp: Any, origins: Origins, n: int) -> None:
    """Load confirm_loop.html?n=N and click "Start confirms": confirm 0 is open."""
    err, text = await tool(mcp, "browser_navigate", url=f"{origins.main}/dialogs/confirm_loop.html?n={n}")
    assert not err, text
    err, text = await tool(mcp, "browser_click", element="Start confirms",
                           ref=ref_of(page_state(text), "button", "Start confirms"))
    assert not err, text
    assert '"Delete record 0?"' in text and "### Modal state" in text, text


async def test_navigate_during_confirm_0_dismisses_it_and_handle_dialog_answers_confirm_1(
        stack: Stack, origins: Origins) -> None:
    """Navigate while confirm 0 is open: it is dismissed (said so), confirm 1 opens and
    the load waits; browser_handle_dialog accepts confirm 1 and the page records it."""
    async with mcp_on(stack) as mcp:
        await start_confirms(stack, mcp, origins, 2)
        err, text = await tool(mcp, "browser_navigate", url=f"{origins.main}/dialogs/click_record.html")
        assert not err, text
        assert "Dismissed the confirm dialog \"Delete record 0?\" to navigate" in text, text
        assert "has NOT happened yet" in text and '"Delete record 1?"' in text, text
        err, text = await tool(mcp, "browser_handle_dialog", accept=True)
        assert not err, text
        assert "Accepted the confirm dialog \"Delete record 1?\"" in text, text
        assert "Delete record 0" not in text.split("### Page state")[0], text
        page = await pw_page(stack, "confirm_loop.html")
        assert await page.evaluate("window.__log") == [
            "before0", "answer0=false", "before1", "answer1=true", "done"]
        err, text = await tool(mcp, "browser_handle_dialog", accept=True)
        assert err and "Accepted" not in text, text


async def test_navigate_during_the_last_confirm_dismisses_it_and_loads(
        stack: Stack, origins: Origins) -> None:
    """Navigate while the only confirm is open: the result says it was dismissed and the
    other page loaded; the page recorded false once; no dialog is left to answer."""
    async with mcp_on(stack) as mcp:
        await start_confirms(stack, mcp, origins, 1)
        url = f"{origins.main}/dialogs/click_record.html"
        err, text = await tool(mcp, "browser_navigate", url=url)
        assert not err, text
        assert "Dismissed the confirm dialog \"Delete record 0?\" to navigate" in text, text
        assert f"Navigated to {url}" in text and "NOT happened" not in text, text
        page = await pw_page(stack, "click_record.html")
        log = await page.evaluate("sessionStorage.getItem('confirmLog')")
        assert json.loads(log) == ["before0", "answer0=false", "done"]
        err, text = await tool(mcp, "browser_handle_dialog", accept=True)
        assert err and "Accepted" not in text and "No JavaScript dialog" in text, text


async def test_wire_navigate_names_the_dismissed_dialog(stack: Stack, origins: Origins) -> None:
    """page.navigate on a blocked tab returns dismissedDialog and, when the page opens
    its next confirm first, that new dialog with the load not started."""
    nav = await call(stack, "page.navigate", {"url": f"{origins.main}/dialogs/confirm_loop.html?n=2"})
    tab = nav["tabId"]
    snap = (await call(stack, "page.snapshot", {"tabId": tab}))["snapshot"]
    res = await call(stack, "page.act", {"tabId": tab, "ref": ref_of(snap, "button", "Start confirms"),
                                         "action": {"kind": "click"}})
    assert res["dialog"]["message"] == "Delete record 0?"
    nav = await call(stack, "page.navigate", {"tabId": tab, "url": f"{origins.main}/dialogs/click_record.html"})
    assert nav["dismissedDialog"]["message"] == "Delete record 0?"
    assert nav["dialog"]["message"] == "Delete record 1?" and nav["transitionPending"] is True
    assert nav["navigationStarted"] is False
    answered = await call(stack, "page.dialog", {"tabId": tab, "accept": False})
    assert answered["message"] == "Delete record 1?"
    page = await pw_page(stack, "confirm_loop.html")
    assert await page.evaluate("window.__log") == [
        "before0", "answer0=false", "before1", "answer1=false", "done"]


async def test_an_alert_loops_dialog_open_names_the_alert_really_open(
        stack: Stack, origins: Origins) -> None:
    """In an alert loop, after each answer DIALOG_OPEN and devices.list name the next
    alert, the one the page shows (never an older one)."""
    opened = await call(stack, "tabs.new", {"url": f"{origins.main}/dialogs/alert_loop.html"})
    loop_tab = opened["tabId"]
    assert opened["dialog"]["message"] == "loop 1"
    for n in (1, 2, 3):
        answered = await call(stack, "page.dialog", {"tabId": loop_tab, "accept": True})
        assert answered["message"] == f"loop {n}"
        assert (await next_dialog(stack, loop_tab))["message"] == f"loop {n + 1}"
        with pytest.raises(E.DialogOpen) as info:
            await call(stack, "page.snapshot", {"tabId": loop_tab})
        assert f"'loop {n + 1}'" in info.value.message, info.value.message
    started = time.monotonic()
    nav = await call(stack, "page.navigate", {"tabId": loop_tab,
                                              "url": f"{origins.main}/dialogs/click_record.html"})
    assert time.monotonic() - started < QUICK_S
    if nav.get("dismissedDialog") is not None:
        assert nav["dismissedDialog"]["message"] == "loop 4"
    if nav.get("dialog") is not None:  # the loop alerted again: it names that alert
        assert nav["dialog"]["message"] == "loop 5", nav
        assert (await next_dialog(stack, loop_tab))["message"] == "loop 5"
    await call(stack, "tabs.close", {"tabId": loop_tab})


async def test_a_navigation_the_bridge_did_not_start_leaves_no_stale_dialog(
        stack: Stack, origins: Origins) -> None:
    """A load started behind the bridge's back (Playwright's goto) makes Chromium dismiss
    confirm 0; the page opens confirm 1 and the record names it. page.dialog then answers
    confirm 1 (the page records it), or Chromium refuses the answer while the load is
    pending and the result says so (DIALOG_OPEN, refused; confirm 1 still shown): never a
    false "accepted"."""
    nav = await call(stack, "page.navigate", {"url": f"{origins.main}/dialogs/confirm_loop.html?n=2"})
    tab = nav["tabId"]
    snap = (await call(stack, "page.snapshot", {"tabId": tab}))["snapshot"]
    res = await call(stack, "page.act", {"tabId": tab, "ref": ref_of(snap, "button", "Start confirms"),
                                         "action": {"kind": "click"}})
    assert res["dialog"]["message"] == "Delete record 0?"
    page = await pw_page(stack, "confirm_loop.html")
    behind = asyncio.ensure_future(page.goto(f"{origins.main}/dialogs/click_record.html"))
    behind.add_done_callback(lambda t: t.cancelled() or t.exception())
    try:
        if stack.browser == "firefox":
            # Firefox ends the document on that load (the loop never opens confirm 1):
            # the record must then name no dialog at all, the new page loaded.
            await asyncio.wait_for(asyncio.shield(behind), QUICK_S)
            (device,) = (await call(stack, "devices.list"))["devices"]
            assert "click_record.html" in page.url and not device.get("dialogs"), device
            return
        assert await next_dialog_named(stack, tab, "Delete record 1?")
        try:
            answered = await call(stack, "page.dialog", {"tabId": tab, "accept": True})
        except E.DialogOpen as err:  # Chromium refused: nothing answered, still shown
            assert err.details.get("refused") is True, err
            assert await next_dialog_named(stack, tab, "Delete record 1?")
            other = await call(stack, "tabs.new", {})
            await call(stack, "tabs.close", {"tabId": tab})
            await call(stack, "page.snapshot", {"tabId": other["tabId"]})
            return
        assert answered["message"] == "Delete record 1?"
        # The loop ends, then the load started behind the bridge's back commits.
        await asyncio.wait_for(asyncio.shield(behind), QUICK_S)
        log = await page.evaluate("JSON.parse(sessionStorage.getItem('confirmLog'))")
        assert log[:4] == ["before0", "answer0=false", "before1", "answer1=true"], log
    finally:
        behind.cancel()


async def next_dialog_named(stack: Stack, tab: int, message: str) -> bool:
    """Wait (at most QUICK_S) until devices.list shows ``message`` on ``tab``."""
    deadline = time.monotonic() + QUICK_S
    while time.monotonic() < deadline:
        (device,) = (await call(stack, "devices.list"))["devices"]
        shown = device.get("dialog") or {}
        if shown.get("tabId") == tab and shown.get("message") == message:
            return True
        await asyncio.sleep(0.05)
    raise AssertionError(f"{message!r} never shown on tab {tab}: {shown}")


async def test_mcp_alert_loop_names_the_alert_really_open(stack: Stack, origins: Origins) -> None:
    """Through MCP: each browser_handle_dialog says the alert it answered, and what the
    next result shows as open is the page's next alert, with browser_handle_dialog as the
    next step."""
    async with mcp_on(stack) as mcp:
        err, text = await tool(mcp, "browser_navigate", url=f"{origins.main}/dialogs/alert_loop.html")
        assert not err and '"loop 1"' in text, text
        for n in (1, 2):
            err, text = await tool(mcp, "browser_handle_dialog", accept=True)
            assert not err, text
            assert f'Accepted the alert dialog "loop {n}"' in text, text
            await next_dialog_named(stack, await current_tab(stack), f"loop {n + 1}")
            err, text = await tool(mcp, "browser_snapshot")
            assert f"loop {n + 1}" in text and f"loop {n}\"" not in text, text
            assert "browser_handle_dialog" in text, text


async def current_tab(stack: Stack) -> int:
    """The active tab's id."""
    tabs = (await call(stack, "tabs.list"))["tabs"]
    return next(t["tabId"] for t in tabs if t["active"])
