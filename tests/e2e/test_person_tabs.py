"""A person's tabs in their own browser (docs/sessions.md "Who owns which tab", "A person's
tabs"; docs/security.md "Who may do what").

A tab belongs to a session only when the session's own action opened it: its
``tabs.new``, or a tab its click opened within the click's window (the click's answer
names it in ``newTabs``). A tab that merely has the session's tab as its opener is not
enough: Chromium gives a tab a person opens with Ctrl+T (or a link they click) the active
tab as its opener, and a session's tab is often the active one.

The supervisor's launches are unattended (tests/e2e/test_session_popup.py
``test_our_launches_are_unattended``); here the device is taken for a person's own browser
(the bridge's ``attended`` rule answers yes, as for a paired browser, docs/attach.md) so
the shared browser can stand in for it: a full paired browser is tests/e2e/test_attach.py,
which starts its own Chromium. The person opens a tab from the agent's tab with
``window.open`` run by the test's own Playwright connection (no session asked for it;
Chromium names the agent's tab as its opener, as it does for a person's Ctrl+T).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import websockets
from playwright.async_api import expect

from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.protocol import errors as E

from .conftest import Origins, Stack, ref_of, wait_until

MAIN = "/tabs/main.html"


@pytest.fixture
def persons_browser(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> Stack:
    """The stack's device, taken for a person's own (attended) browser."""
    monkeypatch.setattr(stack.server.executor.gate, "attended", lambda device: True)
    return stack


async def page_of(stack: Stack, marker: str) -> Any:
    ctx = stack.supervisor.context
    await wait_until(lambda: any(p.url.endswith(marker) for p in ctx.pages), 15)
    page = next(p for p in ctx.pages if p.url.endswith(marker))
    await page.wait_for_load_state("load")
    return page


async def row(stack: Stack, tab: int) -> dict[str, Any]:
    tabs = (await stack.client.call("tabs.list", {}))["tabs"]
    return next(t for t in tabs if t["tabId"] == tab)


async def click(stack: Stack, tab: int, role: str, name: str) -> dict[str, Any]:
    snap = (await stack.client.call("page.snapshot", {"tabId": tab}))["snapshot"]
    return await stack.client.call("page.act", {"tabId": tab, "ref": ref_of(snap, role, name),
                                                "action": {"kind": "click"}})


async def test_a_tab_the_person_opens_from_the_agents_tab_stays_the_persons(
        persons_browser: Stack, origins: Origins) -> None:
    stack = persons_browser
    await stack.client.call("session.open", {"label": "agent"})
    mine = (await stack.client.call("tabs.new", {"url": f"{origins.main}{MAIN}"}))["tabId"]
    agents_page = await page_of(stack, MAIN)
    await click(stack, mine, "button", "Count")  # the agent works in its tab
    assert await agents_page.evaluate("window.__seen.count") == 1

    # The person opens a tab while the agent's is in front: its opener is the agent's tab.
    await agents_page.evaluate("window.open('invoice.html?person=1')")
    persons_page = await page_of(stack, "?person=1")
    tabs = (await stack.client.call("tabs.list", {}))["tabs"]
    theirs = next(t for t in tabs if (t.get("url") or "").endswith("?person=1"))
    assert theirs["openerTabId"] == mine, theirs
    # The agent looks at its own tab (which reports the tab its tab opened), and lists.
    await stack.client.call("page.snapshot", {"tabId": mine})
    listed = await row(stack, theirs["tabId"])
    assert listed.get("owner") is None and listed.get("person") is True, listed
    assert listed.get("mine") is not True, listed

    # Acting on it is refused and the page saw nothing; an explicit claim still works.
    with pytest.raises(E.TabClaimed) as refused:
        await click(stack, theirs["tabId"], "button", "Count")
    assert refused.value.details.get("person") is True, refused.value.details
    assert await persons_page.evaluate("window.__seen.count") == 0
    claimed = await stack.client.call("tabs.claim", {"tabId": theirs["tabId"]})
    assert claimed["person"] is True
    await click(stack, theirs["tabId"], "button", "Count")
    assert await persons_page.evaluate("window.__seen.count") == 1


async def test_a_tab_the_agents_click_opens_is_the_agents(
        persons_browser: Stack, origins: Origins) -> None:
    """The click's answer names the tab it opened (``newTabs``): the agent's, acted on with
    no claim, trusted, in the person's browser too."""
    stack = persons_browser
    await stack.client.call("session.open", {"label": "agent"})
    mine = (await stack.client.call("tabs.new", {"url": f"{origins.main}{MAIN}"}))["tabId"]
    await page_of(stack, MAIN)
    result = await click(stack, mine, "link", "Open invoice")
    opened = [t["tabId"] for t in result.get("newTabs") or []]
    assert len(opened) == 1, result
    listed = await row(stack, opened[0])
    assert listed.get("owner") == "agent" and listed.get("mine") is True, listed
    invoice = await page_of(stack, "invoice.html")  # loaded before it is looked at
    await click(stack, opened[0], "button", "Count")
    assert await invoice.evaluate("window.__seen.count") == 1


async def options_page(stack: Stack) -> Any:
    """The extension's options page, opened in a tab of the browser as a person would."""
    workers = stack.supervisor.context.service_workers
    assert workers, "the extension's service worker is not running"
    base = workers[0].url.rsplit("/", 1)[0]
    page = await stack.supervisor.context.new_page()
    await page.goto(f"{base}/options.html")
    return page


async def door(stack: Stack) -> dict[str, Any]:
    """``cdp.endpoint`` on an operator connection (the door is an operator's)."""
    async with await BridgeClient.connect(stack.server.url, stack.server.token,
                                          operator=stack.server.operator_token) as ops:
        return await ops.call("cdp.endpoint", {})


async def test_the_cdp_door_on_a_persons_browser_needs_their_consent(
        browser: str, stack: Stack) -> None:
    """A person's own browser (its extension says ``attended: true``): even an operator
    gets no CDP URL until the person turns the door on in the extension's options page;
    turning it off refuses new URLs again. The consent travels as the extension's
    ``consent.cdp`` event (and ``cdpAllowed`` in later hellos)."""
    if browser != "chromium":
        pytest.skip("The CDP door exists for Chromium devices only (docs/cdp.md).")
    policy = stack.server.policy
    (device,) = policy.extensions
    # The supervisor's launch says attended: false; its extension peer stands in for a
    # paired one here (tests/e2e/test_attach.py starts a real paired browser).
    policy._peers[policy.extensions[device]].capabilities["attended"] = True
    with pytest.raises(E.Unauthorized) as refused:
        await door(stack)
    assert refused.value.details.get("reason") == "personNotAllowed", refused.value.details
    assert "options page" in (refused.value.next_step or ""), refused.value.next_step

    options = await options_page(stack)
    await expect(options.locator("#cdp-status")).to_have_text(
        "The CDP door is refused on this browser.", timeout=10_000)
    assert not await options.locator("#cdp").is_checked()  # off by default
    await options.locator("#cdp").check()  # the person allows it
    await expect(options.locator("#cdp-status")).to_have_text(
        "The CDP door is allowed on this browser.", timeout=10_000)
    await wait_until(lambda: policy.extension_capabilities(device).get("cdpAllowed") is True,
                     10)
    issued = await door(stack)
    assert issued["url"].startswith("ws://127.0.0.1:"), issued
    holder = await websockets.connect(issued["url"])
    await holder.send(json.dumps({"id": 1, "method": "Browser.getVersion"}))
    assert "result" in json.loads(await asyncio.wait_for(holder.recv(), 10))

    await options.locator("#cdp").uncheck()  # and takes it back
    await wait_until(lambda: policy.extension_capabilities(device).get("cdpAllowed") is False,
                     10)
    with pytest.raises(E.Unauthorized) as again:
        await door(stack)
    assert again.value.details.get("reason") == "personNotAllowed"
    # The URL already issued stops working: its connection ends, a new one is refused.
    with pytest.raises(websockets.ConnectionClosed):
        async with asyncio.timeout(10):
            while True:
                await holder.recv()
    with pytest.raises(OSError):  # nothing listens there any more
        await websockets.connect(issued["url"], open_timeout=5)
    await options.close()
