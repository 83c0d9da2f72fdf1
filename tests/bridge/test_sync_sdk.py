"""The sync SDK (bridge/sync_sdk.py) against a real BridgeServer with a fake extension and a
fake input driver (tests/bridge/fakes.py) over loopback.

The bridge and the fakes run on the test's event loop; each sync script runs in a plain
worker thread (``asyncio.to_thread``) that has no event loop, as a user's script would.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TypeVar

import pytest

from trustbridge.bridge import sdk
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import FillAction
from trustbridge.bridge.server import BridgeServer
from trustbridge.bridge.sync_sdk import THREAD_NAME, SyncBrowser, SyncInAsyncError, SyncTab

from .fakes import FakeDriver, FakeExtension

pytestmark = pytest.mark.timeout(20)

TOKEN = "test-token-0123456789abcdef"
D = "dev1"
STEP_S = 5.0
"""Upper bound, seconds, on any single await in these tests."""

T = TypeVar("T")


@dataclass
class Bridge:
    server: BridgeServer
    ext: FakeExtension
    drv: FakeDriver


@pytest.fixture
async def bridge() -> AsyncIterator[Bridge]:
    """A real bridge with a fake extension and a fake driver for device ``dev1``."""
    async with contextlib.AsyncExitStack() as stack:
        server = BridgeServer(TOKEN, host="127.0.0.1", port=0)
        await asyncio.wait_for(server.start(), STEP_S)
        stack.push_async_callback(server.stop)
        ext = FakeExtension(server.url, TOKEN, D)
        drv = FakeDriver(server.url, TOKEN, D)
        for fake in (ext, drv):
            await asyncio.wait_for(fake.connect(), STEP_S)
            stack.push_async_callback(fake.close)
        yield Bridge(server, ext, drv)
        assert ext.malformed == [] and drv.malformed == []


async def in_plain_thread(script: Callable[[], T]) -> T:
    """Run ``script`` in a worker thread with no event loop, while this loop serves the
    bridge; returns what it returned or raises what it raised."""
    return await asyncio.to_thread(script)


def sdk_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == THREAD_NAME]


async def test_sync_script_snapshots_and_clicks_with_trusted_input(bridge: Bridge) -> None:
    """A plain-thread script snapshots and clicks: the extension resolves the ref, the
    driver performs the click, the result says trusted; leaving the `with` block stops
    the SDK's loop thread."""

    def script() -> tuple[str, sdk.ActResult, list[str]]:
        with SyncBrowser.connect(bridge.server.url, TOKEN, device=D) as browser:
            tab = browser.tab()
            snap = tab.snapshot()
            result = tab.click("e7")
            running = [t.name for t in sdk_threads()]
        return snap, result, running

    snap, result, running = await in_plain_thread(script)

    assert snap == '- button "Save" [ref=e7]'
    assert (result["inputPath"], result["device"], result["ref"]) == ("trusted", D, "e7")
    assert bridge.ext.methods() == ["page.snapshot", "page.resolveTarget"]
    assert bridge.drv.methods() == ["driver.act"]
    assert running == [THREAD_NAME]
    assert sdk_threads() == []


async def test_peer_error_is_raised_as_its_own_protocol_class(bridge: Bridge) -> None:
    """A REF_NOT_FOUND from the extension reaches the sync caller as RefNotFound itself
    (not wrapped), with its message and details, and the driver receives nothing."""
    bridge.ext.errors["page.resolveTarget"] = E.RefNotFound(
        "Ref e9 not found; take a new snapshot.", {"ref": "e9"})

    def script() -> None:
        with SyncBrowser.connect(bridge.server.url, TOKEN) as browser:
            browser.tab().click("e9")

    with pytest.raises(E.RefNotFound) as info:
        await in_plain_thread(script)
    assert type(info.value) is E.RefNotFound
    assert (info.value.message, info.value.details) == (
        "Ref e9 not found; take a new snapshot.", {"ref": "e9"})
    assert bridge.drv.requests == []
    assert sdk_threads() == []


async def test_close_stops_the_thread_and_later_calls_fail_as_not_connected(
        bridge: Bridge) -> None:
    """close() leaves no SDK thread running, a second close() is a no-op, and a tab of a
    closed browser raises DeviceNotConnected."""

    def script() -> None:
        browser = SyncBrowser.connect(bridge.server.url, TOKEN)
        tab = browser.tab()
        assert browser.tabs()[0]["tabId"] == 1
        browser.close()
        assert sdk_threads() == []
        browser.close()
        tab.snapshot()

    with pytest.raises(E.DeviceNotConnected):
        await in_plain_thread(script)
    assert sdk_threads() == []


async def test_failed_connect_raises_its_class_and_leaves_no_thread(bridge: Bridge) -> None:
    """A wrong token raises Unauthorized from connect() and no SDK thread is left."""
    with pytest.raises(E.Unauthorized):
        await in_plain_thread(lambda: SyncBrowser.connect(bridge.server.url, "wrong-token"))
    assert sdk_threads() == []


async def test_called_inside_a_running_loop_raises_a_clear_error(bridge: Bridge) -> None:
    """In a thread with a running event loop, connect() and a tab's calls raise
    SyncInAsyncError pointing to the async API; nothing is sent and nothing is closed."""
    with pytest.raises(SyncInAsyncError, match=r"from trustbridge import Browser"):
        SyncBrowser.connect(bridge.server.url, TOKEN)
    assert sdk_threads() == []

    browser = await in_plain_thread(lambda: SyncBrowser.connect(bridge.server.url, TOKEN))
    try:
        tab = await in_plain_thread(browser.tab)
        with pytest.raises(SyncInAsyncError, match=r"from trustbridge import Browser"):
            tab.snapshot()
        with pytest.raises(SyncInAsyncError):
            browser.close()
        assert bridge.ext.requests == []
        assert await in_plain_thread(tab.snapshot) == '- button "Save" [ref=e7]'
    finally:
        await in_plain_thread(browser.close)
    assert sdk_threads() == []


@pytest.mark.parametrize(("async_cls", "sync_cls"), [(sdk.Tab, SyncTab),
                                                     (sdk.Browser, SyncBrowser)])
def test_every_public_async_method_has_a_sync_form_with_its_parameters(
        async_cls: type, sync_cls: type) -> None:
    """Each public coroutine method of bridge.sdk.Tab / Browser exists on the sync class
    as a plain (blocking) method with the same parameters and defaults."""
    names = [name for name, fn in inspect.getmembers(async_cls, inspect.iscoroutinefunction)
             if not name.startswith("_")]
    assert names, "no async methods found"
    for name in names:
        sync_fn = getattr(sync_cls, name, None)
        assert sync_fn is not None, f"{sync_cls.__name__}.{name} is missing"
        assert not inspect.iscoroutinefunction(sync_fn), name
        assert (list(inspect.signature(sync_fn).parameters.values())
                == list(inspect.signature(getattr(async_cls, name)).parameters.values())), name
        assert f"bridge.sdk.{async_cls.__name__}.{name}" in (sync_fn.__doc__ or ""), name


async def test_sync_act_takes_a_model_and_refuses_a_bad_dict_before_sending(
        bridge: Bridge) -> None:
    """SyncTab.act sends a protocol action model as the async SDK does, and a dict that
    does not fit the protocol raises BadRequest with nothing sent."""

    def script() -> sdk.ActResult:
        with SyncBrowser.connect(bridge.server.url, TOKEN) as browser:
            tab = browser.tab()
            with pytest.raises(E.BadRequest):
                tab.act({"kind": "fill", "text": "x"}, "e7")
            assert (bridge.ext.requests, bridge.drv.requests) == ([], [])
            return tab.act(FillAction(value="x"), "e7")

    result = await in_plain_thread(script)
    assert result["inputPath"] == "trusted"
    assert [r.params["action"] for r in bridge.drv.requests] == [{"kind": "fill", "value": "x"}]
