"""A person's view of sessions in the browser (issue 16 item 5): the extension shows on its
toolbar action which session owns a tab (badge and title, from the bridge's
``sessions.owners`` event), its popup names the owner of the tab and its Stop button stops
that session (event ``session.stop``: queued work cancelled, the tab released, never
closed, the session's next request SESSION_STOPPED). The popup page is opened in a tab of
the same browser (``popup.html?tabId=N``) and pressed by Playwright as a person would;
badge and title are read through the extension API from that page.

Also: our launches say ``attended: false`` (the supervisor's config.json; Firefox under
WebDriver BiDi has ``navigator.webdriver``), so the first tab is claimed implicitly.
Firefox: the popup test skips (:data:`FIREFOX_NO_POPUP`)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from playwright.async_api import expect

from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.protocol.errors import SessionStopped

from .conftest import Origins, Stack, ref_of

PAGE = "/session_popup/page.html"
FIREFOX_NO_POPUP = (
    "Firefox will not open the popup page for the test: WebDriver BiDi's "
    "browsingContext.navigate to moz-extension://…/popup.html is refused ('Navigation to "
    "… is not allowed in this context'), and no web page may open an extension page that is "
    "not web-accessible (making the popup web-accessible would let any page frame its Stop "
    "button). The owners code is the same in both browsers (tests/extension/"
    "owners_units.test.mjs); test_our_launches_are_unattended runs in Firefox.")


@pytest.fixture
def only_chromium(browser: str) -> None:
    """Skip before any browser starts (listed before ``stack`` in a test's arguments)."""
    if browser != "chromium":
        pytest.skip(FIREFOX_NO_POPUP)


def extension_base(stack: Stack) -> str:
    """``chrome-extension://<id>/``, from the extension's service worker."""
    workers = stack.supervisor.context.service_workers
    assert workers, "the extension's service worker is not running"
    return workers[0].url.rsplit("/", 1)[0] + "/"


async def shows(page: Any, css: str, text: str) -> None:
    """Wait (bounded) until the element shows exactly ``text`` (the popup's page forbids
    eval, so Playwright's wait_for_function cannot run there)."""
    await expect(page.locator(css)).to_have_text(text, timeout=10_000)


async def action_state(popup: Any, tab_id: int) -> list[str]:
    """[badge text, title] of the action for ``tab_id``, read through the extension API."""
    return await popup.evaluate(
        """async (tabId) => { const a = (globalThis.browser ?? globalThis.chrome).action;
           return [await a.getBadgeText({tabId}), await a.getTitle({tabId})]; }""", tab_id)


async def wait_state(popup: Any, tab_id: int, want: list[str]) -> None:
    """Wait (bounded) until the action of ``tab_id`` shows ``want`` ([badge, title])."""
    async def loop() -> None:
        while await action_state(popup, tab_id) != want:
            await asyncio.sleep(0.05)

    await asyncio.wait_for(loop(), 10)


async def test_our_launches_are_unattended(stack: Stack) -> None:
    """The supervisor's launches say ``attended: false`` in the extension's hello (and
    headless, the driver says ``headed: false``), so the first tab is a session's to claim:
    the first request acting on it claims it for that client's implicit session."""
    devices = (await stack.client.call("devices.list", {}))["devices"]
    assert len(devices) == 1, devices
    caps = devices[0]["capabilities"]
    assert caps.get("attended") is False and caps.get("headed") is False, caps
    first = (await stack.client.call("tabs.list", {}))["tabs"][0]["tabId"]
    await stack.client.call("page.history", {"tabId": first, "direction": "reload"})
    row = (await stack.client.call("tabs.list", {}))["tabs"][0]
    assert row["mine"] is True and row["owner"].startswith("client-"), row


async def test_the_popup_names_the_owner_and_its_stop_stops_the_session(
        only_chromium: None, stack: Stack, origins: Origins) -> None:
    other = await BridgeClient.connect(stack.server.url, stack.server.token)
    try:
        first = (await other.call("tabs.list", {}))["tabs"]
        assert len(first) == 1, first
        alpha = stack.client
        opened = await alpha.call("session.open", {"label": "alpha"})
        assert opened["label"] == "alpha"
        tab = (await alpha.call("tabs.new", {"url": f"{origins.main}{PAGE}"}))["tabId"]

        # The popup page in the first tab (a tab of nobody's; Playwright loads it, not a
        # session). Without ?tabId it shows the active tab of its window: alpha's.
        popup = stack.supervisor.context.pages[0]
        await popup.goto(f"{extension_base(stack)}popup.html")
        await shows(popup, "#owner", "Session alpha owns this tab")
        assert await action_state(popup, tab) == ["alp", "Session alpha owns this tab"]
        await popup.goto(f"{extension_base(stack)}popup.html?tabId={first[0]['tabId']}")
        await shows(popup, "#owner", "No session owns this tab")
        assert await popup.locator("#stop").is_disabled()
        assert await action_state(popup, first[0]["tabId"]) == [
            "", "trustbridge"]
        await popup.goto(f"{extension_base(stack)}popup.html?tabId={tab}")
        await shows(popup, "#owner", "Session alpha owns this tab")
        assert await popup.locator("#stop").is_enabled()

        # alpha works in its tab: a trusted click the page counts.
        snap = (await alpha.call("page.snapshot", {"tabId": tab}))["snapshot"]
        await alpha.call("page.act", {"tabId": tab, "ref": ref_of(snap, "button", "Go"),
                                      "action": {"kind": "click"}})
        page = next(p for p in stack.supervisor.context.pages if p.url.endswith(PAGE))
        assert await page.evaluate("window.__clicks") == 1
        # A navigation resets the tab's action state: the badge is set again.
        await alpha.call("page.navigate", {"tabId": tab, "url": f"{origins.main}{PAGE}?again"})
        await wait_state(popup, tab, ["alp", "Session alpha owns this tab"])
        snap = (await alpha.call("page.snapshot", {"tabId": tab}))["snapshot"]
        page = next(p for p in stack.supervisor.context.pages if p.url.endswith("?again"))

        await popup.locator("#stop").click()  # a person presses Stop
        await shows(popup, "#note", "Session alpha stopped.")
        await shows(popup, "#owner", "No session owns this tab")
        assert await popup.locator("#stop").is_disabled()
        assert await action_state(popup, tab) == ["", "trustbridge"]

        with pytest.raises(SessionStopped) as stopped:
            await alpha.call("page.act", {"tabId": tab, "ref": ref_of(snap, "button", "Go"),
                                          "action": {"kind": "click"}})
        assert stopped.value.details.get("label") == "alpha", stopped.value.details
        assert await page.evaluate("window.__clicks") == 0  # the refused click never ran
        listed = (await other.call("sessions.list", {}))["sessions"]
        assert "alpha" not in [s["label"] for s in listed], listed
        tabs = (await other.call("tabs.list", {}))["tabs"]
        row = next(t for t in tabs if t["tabId"] == tab)  # released, never closed
        assert row.get("owner") is None, row
    finally:
        await other.close()

