"""The SDK's sessions (bridge/sdk.py, bridge/sdk_sessions.py, bridge/sync_sdk.py) against
a real BridgeServer with a fake extension and driver (tests/bridge/fakes.py): two
browsers in two named sessions, B refused on A's tab with nothing sent, handoff (refused
with TabBusy while A's work is in flight), release and claim, stop, the listing, and the
sync form. No browser."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from trustbridge.bridge import sdk
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol import results as R
from trustbridge.bridge.server import BridgeServer
from trustbridge.bridge.sync_sdk import SyncBrowser

from .fakes import FakeDriver, FakeExtension, answer_of, serve_with_fakes, wait_until

pytestmark = pytest.mark.timeout(30)

TOKEN = "test-token-0123456789abcdef"
D = "dev1"
STEP_S = 5.0
"""Upper bound, seconds, on any single await in these tests."""
URL = "http://127.0.0.1/"


@dataclass
class Bridge:
    server: BridgeServer
    ext: FakeExtension
    drv: FakeDriver
    browser: Callable[..., Awaitable[sdk.Browser]]

    def sent(self) -> int:
        """Requests both fake peers have received so far."""
        return len(self.ext.requests) + len(self.drv.requests)


@pytest.fixture
async def bridge() -> AsyncIterator[Bridge]:
    """A real bridge with a fake extension and driver for ``dev1`` whose ``tabs.new``
    opens tab 1; ``browser(session=...)`` connects an SDK Browser closed at the end."""
    async with contextlib.AsyncExitStack() as stack:
        server, ext, drv = await serve_with_fakes(stack, TOKEN, D, STEP_S)
        ext.results["tabs.new"] = answer_of(R.TabResult(tabId=1, url=URL, title=""))

        async def browser(**kwargs: Any) -> sdk.Browser:
            b = await asyncio.wait_for(sdk.Browser.connect(server.url, TOKEN, D, **kwargs),
                                       STEP_S)
            stack.push_async_callback(b.close)
            return b

        yield Bridge(server, ext, drv, browser)
        assert ext.malformed == [] and drv.malformed == []


async def step(awaitable: Awaitable[Any]) -> Any:
    return await asyncio.wait_for(awaitable, STEP_S)


async def test_a_named_session_owns_its_new_tab_and_the_other_is_refused(
        bridge: Bridge) -> None:
    a = await bridge.browser(session="agent-a")
    b = await bridge.browser(session="agent-b")
    assert a.session is not None and a.session["label"] == "agent-a"
    tab = await step(a.new_tab(URL, window=True))
    assert (await bridge.ext.wait_for_request("tabs.new")).params == {"url": URL,
                                                                      "window": True}
    before = bridge.sent()

    theirs = sdk.Tab(b.client, D, tab.tab_id)
    with pytest.raises(sdk.TabClaimed) as info:  # re-exported: the protocol's own class
        await step(theirs.click("e7"))
    assert info.value.owner == "agent-a" and info.value.tabId == tab.tab_id
    with pytest.raises(E.TabClaimed):
        await step(theirs.press("Enter"))
    assert bridge.sent() == before  # nothing reached the extension or the driver

    assert (await step(tab.click("e7")))["inputPath"] == "trusted"  # A still works
    tabs = await step(a.tabs())
    assert tabs[0].get("owner") == "agent-a" and tabs[0].get("mine") is True
    assert (await step(b.tabs()))[0].get("mine") is False


async def test_new_tab_without_window_stays_in_the_current_window(bridge: Bridge) -> None:
    a = await bridge.browser()
    assert a.session is None  # implicit, as before
    await step(a.new_tab(URL))
    assert (await bridge.ext.wait_for_request("tabs.new")).params == {"url": URL,
                                                                      "window": False}


async def test_handoff_is_refused_while_work_is_in_flight_then_succeeds(
        bridge: Bridge) -> None:
    a = await bridge.browser(session="agent-a")
    b = await bridge.browser(session="agent-b")
    tab = await step(a.new_tab(URL))
    bridge.ext.delays["page.wait"] = 4.0  # A's wait is held at the extension
    waiting = asyncio.create_task(tab.wait(ms=1))
    await bridge.ext.wait_for_request("page.wait")
    with pytest.raises(sdk.TabBusy) as info:
        await step(a.handoff(tab, to="agent-b"))
    assert info.value.inFlight == 1 and info.value.tabId == tab.tab_id
    await asyncio.wait_for(waiting, 10.0)
    del bridge.ext.delays["page.wait"]

    given = await step(a.handoff(tab, to="agent-b"))
    assert given["to"] == "agent-b" and given["tabs"] == [{"device": D, "tabId": tab.tab_id}]
    assert (await step(sdk.Tab(b.client, D, tab.tab_id).click("e7")))["tabId"] == 1
    with pytest.raises(sdk.TabClaimed) as refused:
        await step(tab.click("e7"))
    assert refused.value.owner == "agent-b"


async def test_release_frees_the_tab_and_claim_takes_it(bridge: Bridge) -> None:
    a = await bridge.browser(session="agent-a")
    b = await bridge.browser(session="agent-b")
    tab = await step(a.new_tab(URL))
    freed = await step(a.release())
    assert freed == {"label": "agent-a", "tabs": [{"device": D, "tabId": tab.tab_id}]}
    claimed = await step(b.claim(tab.tab_id))
    assert claimed["label"] == "agent-b" and claimed["tabs"] == freed["tabs"]
    # The claimed tab is B's current one: a Tab without id goes there.
    assert (await step(sdk.Tab(b.client, D, None).click("e7")))["tabId"] == tab.tab_id
    with pytest.raises(E.BadRequest):  # A no longer owns it
        await step(a.release(tab))


async def test_stop_session_ends_it_and_its_later_requests(bridge: Bridge) -> None:
    a = await bridge.browser(session="agent-a")
    # Another session is stopped by an operator (tests/bridge/test_authority.py).
    b = await bridge.browser(session="agent-b", operator=bridge.server.operator_token)
    tab = await step(a.new_tab(URL))
    rows = {s["label"]: s for s in await step(b.sessions())}
    assert rows["agent-a"]["tabs"] == [{"device": D, "tabId": 1}]
    assert rows["agent-b"]["yours"] is True and rows["agent-a"]["yours"] is False

    stopped = await step(b.stop_session("agent-a"))
    assert stopped["stopped"] is True and stopped["cancelled"] == 0
    assert stopped["released"] == [{"device": D, "tabId": tab.tab_id}]
    with pytest.raises(sdk.SessionStopped) as info:
        await step(tab.click("e7"))
    assert info.value.label == "agent-a"
    assert "agent-a" not in {s["label"] for s in await step(b.sessions())}
    assert (await step(b.stop_session()))["label"] == "agent-b"  # its own


async def test_a_live_label_is_refused_and_nothing_is_left_open(bridge: Bridge) -> None:
    await bridge.browser(session="agent-a")
    clients = len(bridge.server.executor.sessions.listing(None))
    with pytest.raises(E.BadRequest):
        await bridge.browser(session="agent-a")
    await wait_until(lambda: len(bridge.server.executor.sessions.listing(None)) == clients)


async def test_sync_browser_opens_its_session(bridge: Bridge) -> None:
    def work() -> tuple[list[Any], Any]:
        with SyncBrowser.connect(bridge.server.url, TOKEN, D, session="sync-agent") as sb:
            tab = sb.new_tab(URL, window=True)
            rows = sb.sessions()
            released = sb.release(tab)
            return rows, released

    rows, released = await asyncio.wait_for(asyncio.to_thread(work), 15.0)
    mine = [r for r in rows if r["yours"]]
    assert [r["label"] for r in mine] == ["sync-agent"]
    assert released["tabs"] == [{"device": D, "tabId": 1}]
    assert (await bridge.ext.wait_for_request("tabs.new")).params["window"] is True
    # Closing the browser stopped the session (onDisconnect "stop").
    await wait_until(lambda: bridge.server.executor.sessions.find("sync-agent") is None)
