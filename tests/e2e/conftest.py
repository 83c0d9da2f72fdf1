"""Fixtures for end-to-end tests: local pages on two loopback origins and a real stack
(bridge + supervisor + headless browser with the extension) in this event loop.

``stack`` runs every test once per browser of :data:`E2E_BROWSERS`: Chromium; Firefox ESR
over WebDriver BiDi (marked ``firefox``); Camoufox (marked ``camoufox``), skipped with the
reason when its binary is not installed. The ``browser`` fixture names the current one.
"""

from __future__ import annotations

import asyncio
import functools
import re
import secrets
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bridge.client import BridgeClient
from bridge.protocol.errors import FrameTokenUnknown
from bridge.protocol.models import FRAME_TOKEN_ATTRIBUTE
from bridge.routing import RoutingPolicy
from bridge.sdk import Tab
from bridge.server import BridgeServer
from supervisor.runner import Supervisor

PAGES = Path(__file__).parent / "pages"
READY_TIMEOUT_S = 30
E2E_BROWSERS = (
    pytest.param("chromium", id="chromium"),
    pytest.param("firefox", id="firefox", marks=pytest.mark.firefox),
    pytest.param("camoufox", id="camoufox", marks=pytest.mark.camoufox),
)


class _QuietHandler(SimpleHTTPRequestHandler):
    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, *args: object) -> None:
        pass


@dataclass
class Origins:
    """Two loopback origins serving tests/e2e/pages: different sites, so Chromium puts a
    frame from ``other`` in its own process (a real cross-origin iframe)."""

    main: str  # http://127.0.0.1:A
    other: str  # http://localhost:B
    other_port: int


@pytest.fixture(scope="session")
def origins() -> Iterator[Origins]:
    handler = partial(_QuietHandler, directory=str(PAGES))
    servers = [ThreadingHTTPServer(("127.0.0.1", 0), handler) for _ in range(2)]
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    a, b = (s.server_address[1] for s in servers)
    yield Origins(f"http://127.0.0.1:{a}", f"http://localhost:{b}", b)
    for s in servers:
        s.shutdown()
        s.server_close()


@dataclass
class Stack:
    server: BridgeServer
    supervisor: Supervisor
    client: BridgeClient
    device: str
    browser: str = "chromium"

    @property
    def page(self):  # the Playwright page the extension acts on: what the page saw
        return self.supervisor.context.pages[0]

    async def release(self) -> None:
        """Free the tabs the stack's own client claimed by acting on them, so another
        client's session (an MCP server under test) may act there (docs/sessions.md)."""
        await self.client.call("session.release", {})

    async def snapshot(self) -> str:
        return (await self.client.call("page.snapshot", {}))["snapshot"]

    async def act(self, ref: str | None, **action: object) -> dict:
        return await self.client.call("page.act", {"ref": ref, "action": action})

    @property
    def tab(self) -> Tab:
        """The SDK's tab (bridge/sdk.py) on this device's active tab, over ``client``."""
        return Tab(self.client, self.device, None)


async def page_eval(page, expression: str):
    """``page.evaluate`` once Playwright has caught up with the document the bridge just
    loaded: on a loaded machine its navigation events can come after the bridge's answer,
    and an evaluate sent meanwhile meets "Execution context was destroyed" (bounded
    retries, 10 s)."""
    from playwright.async_api import Error as PlaywrightError

    for _ in range(100):
        try:
            return await page.evaluate(expression)
        except PlaywrightError as exc:
            if "Execution context was destroyed" not in str(exc):
                raise
            await asyncio.sleep(0.1)
    return await page.evaluate(expression)


async def wait_until(predicate, timeout_s: float = READY_TIMEOUT_S) -> None:
    async def loop() -> None:
        while not predicate():
            await asyncio.sleep(0.05)

    await asyncio.wait_for(loop(), timeout_s)


@pytest.fixture(params=E2E_BROWSERS)
def browser(request: pytest.FixtureRequest) -> str:
    """The browser of this run of the test: "chromium", "firefox" or "camoufox"."""
    if request.param == "camoufox" and (missing := camoufox_missing()):
        pytest.skip(missing)
    return request.param


@functools.cache
def camoufox_missing() -> str | None:
    """Why Camoufox cannot run here (the ``camoufox`` extra or the binary is not
    installed), or None when it can."""
    from bridge.protocol.errors import DeviceNotConnected
    from supervisor.launcher import find_camoufox

    try:
        find_camoufox()
    except DeviceNotConnected as err:
        return f"Camoufox cannot run here: {err.message}"
    return None


@pytest.fixture
async def stack(browser: str) -> AsyncIterator[Stack]:
    token = secrets.token_hex(16)
    device = f"{browser}-e2e"
    server = BridgeServer(token, port=0, policy=RoutingPolicy())
    await server.start()
    sup = Supervisor(server.url, token, device, browser=browser)
    try:
        await sup.start()
        await wait_until(lambda: device in server.policy.extensions and device in server.policy.drivers)
        client = await BridgeClient.connect(server.url, token)
        try:
            yield Stack(server, sup, client, device, browser)
        finally:
            await client.close()
    finally:
        await sup.stop()
        await server.stop()


def ref_of(snapshot: str, role: str, name: str) -> str:
    """The ref of the line ``- role "name" ... [ref=X]`` (exactly one such line)."""
    pattern = rf'^\s*- {re.escape(role)} "{re.escape(name)}"[^\n]*?\[ref=((?:f\d+)?e\d+)\]'
    found = re.findall(pattern, snapshot, flags=re.MULTILINE)
    assert len(found) == 1, f"expected one {role} {name!r}, found {found} in:\n{snapshot}"
    return found[0]


async def stamped(stack: Stack) -> None:
    """Wait until every frame has loaded and holds the token the registry has for it:
    the supervisor stamps on load events, asynchronously, and a stamp that lands after a
    test started counting mutations is the token write (asserted on its own below), not
    one of the extension's, and a token read before it is not the one in force. (CI runs on
    Firefox and Chromium once saw the late stamp.)"""
    for frame in stack.page.frames:
        await frame.wait_for_load_state("load")
    registry = stack.supervisor.frames
    # Bounded by time, not tries: under a load of 6-13 on 2 cores (a fresh-clone run beside
    # another suite) 100 tries of ~50 ms ran out before a child frame's stamp landed.
    deadline = asyncio.get_running_loop().time() + 15
    while asyncio.get_running_loop().time() < deadline:
        await registry.settle()
        frames = stack.page.frames
        held = [await f.evaluate(
            f"document.documentElement.getAttribute({FRAME_TOKEN_ATTRIBUTE!r})") for f in frames]
        try:
            if all(t is not None and registry.frame_for(t) is f for t, f in zip(held, frames)):
                return
        except FrameTokenUnknown:
            pass
        await asyncio.sleep(0.05)
    raise AssertionError(f"frames never all stamped: {held}")
