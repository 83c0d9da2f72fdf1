"""JavaScript dialogs block only their own tab (issue 13, item 6): other tabs are opened,
navigated and clicked while tab A has a dialog; a dialog raised while a tab loads is in
that load's answer; a dialog is escaped by navigating its tab, an alert loop by closing
it. Pages: tests/e2e/pages/dialogs/."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from trustbridge.bridge.protocol import errors as E

from .conftest import Origins, Stack, ref_of

pytestmark = pytest.mark.browser

STEP_S = 10.0
"""Upper bound, seconds, on one call: a dialog must never cost a 30 s load timeout."""
QUICK_S = 5.0
"""A load a dialog blocks answers within this, seconds."""


async def call(stack: Stack, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return await asyncio.wait_for(stack.client.call(method, params or {}), STEP_S)


def page_at(stack: Stack, url: str):
    """The Playwright page showing ``url`` (what that tab's page recorded)."""
    pages = [p for p in stack.supervisor.context.pages if p.url == url]
    assert len(pages) == 1, [p.url for p in stack.supervisor.context.pages]
    return pages[0]


async def open_alert_tab(stack: Stack, origins: Origins) -> int:
    """Tab A shows alert_button.html and has an alert open; returns its tab id."""
    nav = await call(stack, "page.navigate", {"url": f"{origins.main}/dialogs/alert_button.html"})
    snap = (await call(stack, "page.snapshot", {"tabId": nav["tabId"]}))["snapshot"]
    res = await call(stack, "page.act", {"tabId": nav["tabId"], "ref": ref_of(snap, "button", "Alert now"),
                                         "action": {"kind": "click"}})
    assert res["dialog"]["message"] == "A asks"
    return nav["tabId"]


async def test_other_tabs_work_while_tab_a_has_a_dialog(stack: Stack, origins: Origins) -> None:
    """While A's alert is open: tabs.new, page.navigate, tabs.select and a trusted click on
    tab B work (B's page records the click); requests on A get DIALOG_OPEN; page.dialog
    naming A answers A's dialog."""
    tab_a = await open_alert_tab(stack, origins)
    with pytest.raises(E.DialogOpen):
        await call(stack, "page.snapshot", {"tabId": tab_a})

    url_b = f"{origins.main}/dialogs/click_record.html"
    opened = await call(stack, "tabs.new", {"url": url_b})
    tab_b = opened["tabId"]
    assert tab_b != tab_a and "dialog" not in opened
    again = await call(stack, "page.navigate", {"tabId": tab_b, "url": url_b + "?again"})
    assert again["tabId"] == tab_b and again.get("dialog") is None
    await call(stack, "tabs.select", {"tabId": tab_b})
    snap = (await call(stack, "page.snapshot", {"tabId": tab_b}))["snapshot"]
    res = await call(stack, "page.act", {"tabId": tab_b, "ref": ref_of(snap, "button", "Record me"),
                                         "action": {"kind": "click"}})
    assert res["inputPath"] == "trusted" and res.get("dialog") is None
    assert await page_at(stack, url_b + "?again").evaluate("window.__clicks") == [{"trusted": True}]

    with pytest.raises(E.DialogOpen):
        await call(stack, "page.snapshot", {"tabId": tab_a})
    answered = await call(stack, "page.dialog", {"tabId": tab_a, "accept": True})
    assert (answered["type"], answered["message"]) == ("alert", "A asks")
    page_a = page_at(stack, f"{origins.main}/dialogs/alert_button.html")
    await asyncio.sleep(0.1)
    assert await page_a.text_content("#out") == "after alert"
    assert "Alert now" in (await call(stack, "page.snapshot", {"tabId": tab_a}))["snapshot"]


async def test_tabs_new_to_a_page_that_alerts_on_load_reports_the_dialog_quickly(
        stack: Stack, origins: Origins) -> None:
    """tabs.new to a page whose head alerts answers within 5 s with the tab, the dialog and
    transitionPending; answering it lets the page load."""
    started = time.monotonic()
    opened = await call(stack, "tabs.new", {"url": f"{origins.main}/dialogs/alert_onload.html"})
    assert time.monotonic() - started < QUICK_S
    assert opened["dialog"]["type"] == "alert"
    assert opened["dialog"]["message"] == "Welcome from the head"
    assert opened["transitionPending"] is True and isinstance(opened["tabId"], int)
    await call(stack, "page.dialog", {"tabId": opened["tabId"], "accept": True})
    await call(stack, "page.wait", {"tabId": opened["tabId"], "text": "Loaded after the alert"})


async def test_navigate_to_a_page_that_alerts_on_load_reports_the_dialog_quickly(
        stack: Stack, origins: Origins) -> None:
    """page.navigate to a page whose head alerts answers quickly with the dialog and names
    the tab."""
    first = await call(stack, "tabs.list")
    tab = next(t["tabId"] for t in first["tabs"] if t["active"])
    started = time.monotonic()
    nav = await call(stack, "page.navigate",
                     {"tabId": tab, "url": f"{origins.main}/dialogs/alert_onload.html"})
    assert time.monotonic() - started < QUICK_S
    assert nav["dialog"]["message"] == "Welcome from the head"
    assert nav["transitionPending"] is True and nav["tabId"] == tab
    await call(stack, "page.dialog", {"accept": True})


async def next_dialog(stack: Stack, tab: int) -> dict[str, Any]:
    """The dialog devices.list shows on ``tab``, waited for (at most QUICK_S)."""
    deadline = time.monotonic() + QUICK_S
    while time.monotonic() < deadline:
        (device,) = (await call(stack, "devices.list"))["devices"]
        if (device.get("dialog") or {}).get("tabId") == tab:
            return device["dialog"]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no dialog on tab {tab}")


async def test_an_alert_loop_is_escaped_by_closing_its_tab(stack: Stack, origins: Origins) -> None:
    """A page that alerts again on every accept: each answer is true (the next dialog,
    DIALOG_OPEN; never INTERNAL_ERROR or a timeout) and tabs.close of its tab ends it;
    the device is free."""
    opened = await call(stack, "tabs.new", {"url": f"{origins.main}/dialogs/alert_loop.html"})
    loop_tab = opened["tabId"]
    assert opened["dialog"]["message"] == "loop 1"
    for n in (1, 2, 3):
        answered = await call(stack, "page.dialog", {"tabId": loop_tab, "accept": True})
        assert answered["message"] == f"loop {n}"
        assert (await next_dialog(stack, loop_tab))["message"] == f"loop {n + 1}"
    with pytest.raises(E.DialogOpen):
        await call(stack, "page.snapshot", {"tabId": loop_tab})
    closed = await call(stack, "tabs.close", {"tabId": loop_tab})
    assert closed == {"tabId": loop_tab, "closed": True, "device": stack.device}
    await asyncio.sleep(0.2)
    devices = (await call(stack, "devices.list"))["devices"]
    assert [d.get("dialog") for d in devices] == [None]
    tabs = (await call(stack, "tabs.list"))["tabs"]
    assert loop_tab not in [t["tabId"] for t in tabs]
    await call(stack, "page.snapshot", {"tabId": tabs[0]["tabId"]})


async def test_a_dialog_is_escaped_by_navigating_its_tab_away(
        stack: Stack, origins: Origins) -> None:
    """page.navigate of the tab whose alert is open dismisses it through the driver
    (dismissedDialog), loads the other page and the tab works again at once."""
    tab_a = await open_alert_tab(stack, origins)
    url_b = f"{origins.main}/dialogs/click_record.html"
    nav = await call(stack, "page.navigate", {"tabId": tab_a, "url": url_b})
    assert nav["tabId"] == tab_a and nav.get("dialog") is None and nav["url"] == url_b
    assert (nav["dismissedDialog"]["type"], nav["dismissedDialog"]["message"]) == ("alert",
                                                                                  "A asks")
    snap = (await call(stack, "page.snapshot", {"tabId": tab_a}))["snapshot"]
    assert "Record me" in snap


async def test_navigating_an_alert_loop_away_answers_quickly_and_close_escapes(
        stack: Stack, origins: Origins) -> None:
    """A loop that re-alerts at once after its alert is dismissed keeps its page: the
    navigation is not started (a load started under an open dialog makes Chromium answer
    it unasked); page.navigate says so within 5 s (transitionPending, the new dialog),
    and tabs.close still ends the loop."""
    opened = await call(stack, "tabs.new", {"url": f"{origins.main}/dialogs/alert_loop.html"})
    loop_tab = opened["tabId"]
    started = time.monotonic()
    nav = await call(stack, "page.navigate", {"tabId": loop_tab,
                                              "url": f"{origins.main}/dialogs/click_record.html"})
    assert time.monotonic() - started < QUICK_S
    if nav.get("dialog") is not None:  # the loop re-alerted before the commit
        assert nav["transitionPending"] is True and nav["dialog"]["message"].startswith("loop")
        await call(stack, "tabs.close", {"tabId": loop_tab})
        tabs = (await call(stack, "tabs.list"))["tabs"]
        assert loop_tab not in [t["tabId"] for t in tabs]
    else:  # the new page committed first
        assert nav["url"].endswith("/dialogs/click_record.html")
    devices = (await call(stack, "devices.list"))["devices"]
    assert [d.get("dialog") for d in devices] == [None]
