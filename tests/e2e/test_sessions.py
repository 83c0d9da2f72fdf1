"""Sessions end to end (issue 16, docs/sessions.md): two real clients, each its own session,
against a real browser; every refusal is checked on the page (its counters saw nothing).

Pages: tests/e2e/pages/sessions/ (``counter.html`` counts trusted clicks, ``later.html``
shows "Arrived" when the test says, ``slow.html`` finishes loading when the test's hold
server lets its image go). A client that dies is a real process (tests/e2e/session_client.py)
killed with SIGKILL. Every wait is bounded and waits for a condition.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.protocol import errors as E

from .conftest import CHROMIUM_ONLY, Origins, Stack, ref_of, wait_until

pytestmark = CHROMIUM_ONLY  # bridge logic (tests/e2e/conftest.py)

HELPER = Path(__file__).with_name("session_client.py")
REPO = Path(__file__).resolve().parents[2]
WAIT_S = 30.0
"""Bound of every wait for a condition the bridge or browser will reach, s."""
KEEP_LEASE_MS = 10_000
"""The kept session's lease: long enough to be refused after its client died, short enough
for the test to see it run out."""


# -- helpers --------------------------------------------------------------------------


async def poll(probe: Callable[[], Awaitable[Any]], what: str, timeout_s: float = WAIT_S) -> Any:
    """Call ``probe`` every 0.1 s until it returns something truthy; return that."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while True:
        got = await probe()
        if got:
            return got
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        await asyncio.sleep(0.1)


async def session_row(client: BridgeClient, label: str) -> dict[str, Any] | None:
    rows = (await client.call("sessions.list", {}))["sessions"]
    return next((r for r in rows if r["label"] == label), None)


async def tab_id(client: BridgeClient, marker: str) -> int:
    """The id of the tab whose URL contains ``marker`` (exactly one)."""
    tabs = (await client.call("tabs.list", {}))["tabs"]
    found = [t["tabId"] for t in tabs if marker in t["url"]]
    assert len(found) == 1, f"expected one tab with {marker!r}: {tabs}"
    return found[0]


async def page_of(stack: Stack, marker: str):
    """The Playwright page whose URL contains ``marker``: what that page saw. Waits (bounded)
    for Playwright to hear of the navigation: its framenavigated event may come after the
    extension's answer to page.navigate on a loaded machine."""
    def found() -> list:
        return [p for p in stack.supervisor.context.pages if marker in p.url]

    with contextlib.suppress(TimeoutError):
        await wait_until(lambda: len(found()) == 1, 10)
    pages = found()
    assert len(pages) == 1, f"expected one page with {marker!r}: {[p.url for p in pages]}"
    return pages[0]


async def count(stack: Stack, marker: str, counter: str = "__seen") -> int:
    return await (await page_of(stack, marker)).evaluate(f"window.{counter}")


async def refused(call: Awaitable[Any], owner: str, tab: int) -> E.TabClaimed:
    """``call`` must be TAB_CLAIMED naming ``owner`` and ``tab``."""
    with pytest.raises(E.TabClaimed) as info:
        await call
    assert info.value.details.get("owner") == owner, info.value.details
    assert info.value.details.get("tabId") == tab, info.value.details
    return info.value


async def click_count(client: BridgeClient, tab: int) -> dict[str, Any]:
    """Snapshot ``tab`` and click its Count button (trusted)."""
    snap = (await client.call("page.snapshot", {"tabId": tab}))["snapshot"]
    ref = ref_of(snap, "button", "Count")
    return await client.call("page.act", {"tabId": tab, "ref": ref,
                                          "action": {"kind": "click"}})


@contextlib.asynccontextmanager
async def session(stack: Stack, label: str, *, operator: bool = False,
                  **params: Any) -> AsyncIterator[BridgeClient]:
    """A client connection of its own with session ``label`` open; ``operator``: it says
    hello with the operator credential (lists every session, may stop another)."""
    client = await BridgeClient.connect(
        stack.server.url, stack.server.token,
        operator=stack.server.operator_token if operator else None)
    try:
        opened = await client.call("session.open", {"label": label, **params})
        assert opened["label"] == label and opened["resumed"] is False
        yield client
    finally:
        await client.close()


@dataclass
class Hold:
    """An HTTP server whose ``/hold`` answers only once the test releases it."""

    url: str
    hit: threading.Event
    release: threading.Event


@pytest.fixture
def hold() -> Iterator[Hold]:
    hit, release = threading.Event(), threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hit.set()
            release.wait(WAIT_S * 2)
            body = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;"
            self.send_response(200)
            self.send_header("Content-Type", "image/gif")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield Hold(f"http://127.0.0.1:{server.server_address[1]}/hold", hit, release)
    finally:
        release.set()
        server.shutdown()
        server.server_close()


@contextlib.asynccontextmanager
async def client_process(stack: Stack, label: str, tab: int,
                         *extra: str) -> AsyncIterator[asyncio.subprocess.Process]:
    """tests/e2e/session_client.py in a process of its own, session ``label`` holding
    ``tab``; yields once it printed ``ready``. Killed at the end if still alive."""
    env = dict(os.environ, TB_URL=stack.server.url, TB_TOKEN=stack.server.token,
               PYTHONPATH=str(REPO))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(HELPER), "--label", label, "--tab", str(tab), *extra,
        env=env, cwd=REPO, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE)
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), WAIT_S)).decode()
        assert line.startswith("ready "), f"the client process said {line!r}"
        yield proc
    finally:
        if proc.returncode is None:
            proc.kill()
            await asyncio.wait_for(proc.wait(), WAIT_S)


async def sigkill(proc: asyncio.subprocess.Process) -> None:
    proc.send_signal(signal.SIGKILL)
    await asyncio.wait_for(proc.wait(), WAIT_S)
    assert proc.returncode == -signal.SIGKILL


async def open_counter(client: BridgeClient, origins: Origins, tab: int, who: str) -> str:
    """Navigate ``tab`` to counter.html marked ``who``; returns the marker."""
    marker = f"counter.html?who={who}"
    await client.call("page.navigate", {"tabId": tab, "url": f"{origins.main}/sessions/{marker}"})
    return marker


# -- tests ----------------------------------------------------------------------------


async def test_a_claimed_tab_refuses_another_session_and_each_works_in_its_own(
        stack: Stack, origins: Origins) -> None:
    async with session(stack, "A") as a, session(stack, "B", operator=True) as b:
        t = (await a.call("tabs.list", {}))["tabs"][0]["tabId"]
        mark_t = await open_counter(a, origins, t, "T")  # A acts on T: T is A's
        snap = (await a.call("page.snapshot", {"tabId": t}))["snapshot"]
        ref = ref_of(snap, "button", "Count")
        url_before = (await page_of(stack, mark_t)).url

        # B: every kind of request on T is refused before anything is sent.
        click = {"tabId": t, "ref": ref, "action": {"kind": "click"}}
        await refused(b.call("page.act", click), "A", t)
        await refused(b.call("page.act", {"ref": ref, "action": {"kind": "click"}}), "A", t)
        await refused(b.call("page.navigate", {"tabId": t, "url": f"{origins.main}/index.html"}),
                      "A", t)
        await refused(b.call("page.evaluate", {"tabId": t, "expression": "1"}), "A", t)
        # Reads that can show what A typed are A's only (docs/security.md).
        for method, params in (("page.screenshot", {}), ("page.console", {}),
                               ("page.network", {}), ("page.find", {"text": "Count"}),
                               ("page.snapshot", {"mode": "read"})):
            await refused(b.call(method, {"tabId": t, **params}), "A", t)
        # A read acts on nothing: B may look at A's tab (its own diff baseline), and the
        # page counted nothing from it.
        assert '"Count"' in (await b.call("page.snapshot", {"tabId": t}))["snapshot"]
        assert await count(stack, mark_t) == 0, "a refused click reached the page"
        assert await count(stack, mark_t, "__clicks") == 0
        assert (await page_of(stack, mark_t)).url == url_before, "a refused navigation ran"
        row = next(r for r in (await b.call("tabs.list", {}))["tabs"] if r["tabId"] == t)
        assert row.get("owner") == "A" and row.get("mine") is False, row

        # A still works on T.
        done = await a.call("page.act", click)
        assert done["tabId"] == t
        assert await count(stack, mark_t) == 1

        # B opens a tab of its own and works there; T's page sees none of it.
        mark_b = "counter.html?who=B"
        opened = await b.call("tabs.new", {"url": f"{origins.main}/sessions/{mark_b}"})
        tb = opened["tabId"]
        assert tb != t
        await click_count(b, tb)
        assert await count(stack, mark_b) == 1
        assert await count(stack, mark_t) == 1
        # B's request without tabId goes to B's current tab (its new one).
        snap_b = (await b.call("page.snapshot", {}))
        assert snap_b["tabId"] == tb
        # A's request without tabId goes to A's tab, not to the tab the browser shows now
        # (B's new one): a tab a session claimed by acting on it is its current tab.
        assert (await a.call("page.snapshot", {}))["tabId"] == t
        # A may not act in B's tab.
        await refused(a.call("page.navigate", {"tabId": tb, "url": f"{origins.main}/index.html"}),
                      "B", tb)
        assert await count(stack, mark_b) == 1

        rows = {r["label"]: r for r in (await b.call("sessions.list", {}))["sessions"]}
        assert [x["tabId"] for x in rows["A"]["tabs"]] == [t]
        assert [x["tabId"] for x in rows["B"]["tabs"]] == [tb]
        assert rows["B"]["yours"] is True and rows["A"]["yours"] is False


async def test_a_killed_clients_tab_is_freed_at_once_a_kept_one_at_lease_end(
        stack: Stack, origins: Origins) -> None:
    async with session(stack, "B", operator=True) as b:
        t = (await b.call("tabs.list", {}))["tabs"][0]["tabId"]
        mark = await open_counter(b, origins, t, "T")
        await b.call("session.release", {"tabId": t})

        # onDisconnect "stop" (the default): the tab is free once the bridge sees the death.
        async with client_process(stack, "A", t) as proc:
            await refused(click_count(b, t), "A", t)
            await sigkill(proc)
            await poll(lambda: _gone(b, "A"), "the bridge to end session A")
        await click_count(b, t)  # B acts on T: T is B's now
        assert await count(stack, mark) == 1
        assert [x["tabId"] for x in (await session_row(b, "B"))["tabs"]] == [t]
        await b.call("session.release", {"tabId": t})

        # onDisconnect "keep": refused until the lease runs out, then free.
        async with client_process(stack, "K", t, "--on-disconnect", "keep",
                                  "--lease-ms", str(KEEP_LEASE_MS)) as proc:
            await sigkill(proc)
            await poll(lambda: _disconnected(b, "K"), "the bridge to see K's client go")
        await refused(click_count(b, t), "K", t)  # kept: still K's
        assert await count(stack, mark) == 1

        async def clicked() -> bool:
            try:
                await click_count(b, t)
            except E.TabClaimed as err:
                assert err.details.get("owner") == "K"
                return False
            return True

        await poll(clicked, "K's lease to run out", KEEP_LEASE_MS / 1000 + WAIT_S)
        assert await count(stack, mark) == 2, "a refused click reached the page"
        assert await session_row(b, "K") is None


async def _gone(client: BridgeClient, label: str) -> bool:
    return await session_row(client, label) is None


async def _disconnected(client: BridgeClient, label: str) -> bool:
    row = await session_row(client, label)
    assert row is not None, f"kept session {label} ended at its client's death"
    return row["connected"] is False


async def test_handoff_is_refused_while_work_is_in_flight_then_moves_the_tab(
        stack: Stack, origins: Origins) -> None:
    async with session(stack, "A") as a, session(stack, "B", operator=True) as b:
        t = (await a.call("tabs.list", {}))["tabs"][0]["tabId"]
        mark = "later.html?who=T"
        await a.call("page.navigate", {"tabId": t, "url": f"{origins.main}/sessions/{mark}"})
        waiting = asyncio.ensure_future(a.call(
            "page.wait", {"tabId": t, "text": "Arrived", "timeoutMs": int(WAIT_S * 2000)}))
        try:
            await poll(lambda: _in_flight(b, "A", 1), "A's wait to be in flight")
            with pytest.raises(E.TabBusy) as info:
                await a.call("session.handoff", {"tabId": t, "to": "B"})
            assert info.value.details == {"tabId": t, "inFlight": 1}
            assert not waiting.done()
            await (await page_of(stack, mark)).evaluate("window.__arrive()")
            await asyncio.wait_for(waiting, WAIT_S)
        finally:
            waiting.cancel()
        moved = await a.call("session.handoff", {"tabId": t, "to": "B"})
        assert moved["to"] == "B" and moved["tabs"] == [{"device": stack.device, "tabId": t}]

        await click_count(b, t)
        assert await count(stack, mark) == 1
        await refused(a.call("page.act", {"tabId": t, "ref": "e1", "action": {"kind": "click"}}),
                      "B", t)
        assert await count(stack, mark) == 1


async def _in_flight(client: BridgeClient, label: str, n: int) -> bool:
    row = await session_row(client, label)
    assert row is not None and row["inFlight"] <= n, row
    return row["inFlight"] == n


async def test_stop_cancels_queued_work_lets_the_running_finish_and_frees_the_tab(
        stack: Stack, origins: Origins, hold: Hold) -> None:
    """B is an operator (only the session itself, a person or an operator may stop one);
    the tab it freed is never B's to take, but C's."""
    async with session(stack, "A") as a, session(stack, "B", operator=True) as b, \
            session(stack, "C") as c:
        t = (await a.call("tabs.list", {}))["tabs"][0]["tabId"]
        await open_counter(a, origins, t, "T")
        mark = "slow.html?who=T"
        slow = f"{origins.main}/sessions/{mark}&hold={hold.url}"
        running = asyncio.ensure_future(a.call(
            "page.navigate", {"tabId": t, "url": slow, "timeoutMs": int(WAIT_S * 2000)}))
        queued = None
        try:
            # The navigation holds T's queue until its held image loads.
            assert await asyncio.to_thread(hold.hit.wait, WAIT_S), "the slow page never loaded"
            queued = asyncio.ensure_future(a.call("page.act", {
                "tabId": t, "action": {"kind": "mouse", "op": "click", "x": 40, "y": 40}}))
            await poll(lambda: _in_flight(b, "A", 2), "A's click to queue behind its navigation")

            stopped = await b.call("session.stop", {"label": "A"})
            assert stopped == {"label": "A", "stopped": True, "cancelled": 1, "running": 1,
                               "released": [{"device": stack.device, "tabId": t}]}
            with pytest.raises(E.Cancelled):
                await asyncio.wait_for(queued, WAIT_S)
            assert not running.done(), "stop must not end the running request"
            hold.release.set()
            done = await asyncio.wait_for(running, WAIT_S)
        finally:
            hold.release.set()
            for task in (running, queued):
                if task is not None:
                    task.cancel()
        assert done["tabId"] == t and mark in done["url"]  # it reports what it did
        assert await count(stack, mark, "__clicks") == 0, "the cancelled click ran"

        with pytest.raises(E.SessionStopped) as info:
            await a.call("page.snapshot", {"tabId": t})
        assert info.value.details.get("label") == "A"
        assert await session_row(b, "A") is None

        # T is free, but never for its stopper: B is refused, C acts on it.
        with pytest.raises(E.TabClaimed) as barred:
            await b.call("page.act", {"tabId": t, "action": {
                "kind": "mouse", "op": "click", "x": 40, "y": 40}})
        assert barred.value.details.get("stoppedBy") == "B"
        assert await count(stack, mark, "__clicks") == 0, "the stopper's click ran"
        await c.call("page.act", {"tabId": t, "action": {
            "kind": "mouse", "op": "click", "x": 40, "y": 40}})
        assert await count(stack, mark, "__clicks") == 1
        assert [x["tabId"] for x in (await session_row(b, "C"))["tabs"]] == [t]
