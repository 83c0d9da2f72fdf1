"""Fixtures for end-to-end tests: local pages on two loopback origins and a real stack
(bridge + supervisor + headless browser with the extension) in this event loop.

``stack`` runs every test once per browser of :data:`E2E_BROWSERS`: Chromium; Firefox ESR
over WebDriver BiDi (marked ``firefox``); Camoufox (marked ``camoufox``), skipped with the
reason when its binary is not installed. The ``browser`` fixture names the current one.
"""

from __future__ import annotations

import asyncio
import contextlib
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

from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.protocol.errors import FrameTokenUnknown
from trustbridge.bridge.routing import RoutingPolicy
from trustbridge.bridge.sdk import Tab
from trustbridge.bridge.server import BridgeServer
from trustbridge.supervisor.runner import Supervisor

PAGES = Path(__file__).parent / "pages"
READY_TIMEOUT_S = 30
RESET_STEP_S = 20
"""Bound of each step of a shared browser's reset between tests, s (it takes well under
one; past it the browser is replaced: :func:`stack`)."""
E2E_BROWSERS = (
    pytest.param("chromium", id="chromium"),
    pytest.param("firefox", id="firefox", marks=pytest.mark.firefox),
    pytest.param("camoufox", id="camoufox", marks=pytest.mark.camoufox),
)


CHROMIUM_ONLY = pytest.mark.parametrize("browser", ["chromium"], scope="module")
"""``pytestmark`` of a module whose tests exercise bridge logic that no browser changes
(the CLI, the code runtime, session claims): its page checks only witness what the bridge
did, and Firefox's own input and page behaviour are tested by the other modules."""


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


@pytest.fixture(scope="module", params=E2E_BROWSERS)
def browser(request: pytest.FixtureRequest) -> str:
    """The browser of this run of the test: "chromium", "firefox" or "camoufox".
    Module-scoped, so pytest runs a module's tests browser by browser and each shares
    one browser (see :func:`stack`)."""
    if request.param == "camoufox" and (missing := camoufox_missing()):
        pytest.skip(missing)
    return request.param


@functools.cache
def camoufox_missing() -> str | None:
    """Why Camoufox cannot run here (the ``camoufox`` extra or the binary is not
    installed), or None when it can."""
    from trustbridge.bridge.protocol.errors import DeviceNotConnected
    from trustbridge.supervisor.launcher import find_camoufox

    try:
        find_camoufox()
    except DeviceNotConnected as err:
        return f"Camoufox cannot run here: {err.message}"
    return None


@contextlib.asynccontextmanager
async def _started(browser: str) -> AsyncIterator[tuple[BridgeServer, Supervisor, str]]:
    """A bridge, and a supervisor with ``browser`` connected to it (extension and input
    driver both registered); both stopped on exit."""
    token = secrets.token_hex(16)
    device = f"{browser}-e2e"
    server = BridgeServer(token, port=0, policy=RoutingPolicy())
    await server.start()
    sup = Supervisor(server.url, token, device, browser=browser)
    try:
        await sup.start()
        await wait_until(lambda: device in server.policy.extensions and device in server.policy.drivers)
        yield server, sup, device
    finally:
        await sup.stop()
        await server.stop()


class SharedBrowser:
    """One bridge + supervisor + browser that the tests of a module share (per browser).

    Between two tests :meth:`reset` leaves one fresh blank tab and nothing else: the other
    tabs closed (their dialogs with them), every session stopped (so every claim freed).
    :meth:`check_fresh` asserts that state before each test, so what one test left behind
    fails the next test's setup, by name, instead of changing what it sees. A test that
    breaks the browser or the bridge gets an error at its teardown and the next test
    starts a new one."""

    def __init__(self, browser: str) -> None:
        self.browser = browser
        self._exit: contextlib.AsyncExitStack | None = None
        self.server: BridgeServer | None = None
        self.supervisor: Supervisor | None = None
        self.device = ""
        self._pointer: object = None

    async def ensure(self) -> None:
        """Start the stack if it is not running."""
        if self._exit is not None:
            return
        exit_stack = contextlib.AsyncExitStack()
        self.server, self.supervisor, self.device = await exit_stack.enter_async_context(
            _started(self.browser))
        self._exit = exit_stack
        assert self.supervisor.driver is not None
        self._pointer = self.supervisor.driver.pointer

    async def stop(self) -> None:
        exit_stack, self._exit = self._exit, None
        if exit_stack is not None:
            await exit_stack.aclose()

    def healthy(self) -> str | None:
        """Why the stack cannot serve another test, or None."""
        sup, server = self.supervisor, self.server
        assert sup is not None and server is not None
        if sup.context is None or sup.driver is None:
            return "the browser or its input driver is gone"
        if self.device not in server.policy.extensions or self.device not in server.policy.drivers:
            return "the extension or the input driver left the bridge"
        return None

    def _clients(self) -> list[str]:
        assert self.server is not None
        return [p.id for p in self.server.peers.values() if p.role == "client"]

    async def _extension_tabs(self) -> list[dict]:
        server = self.server
        assert server is not None
        peer = server.executor.peer(server.policy.extensions[self.device])
        return (await peer.call("tabs.list", {}, 10))["tabs"]

    async def reset(self) -> None:
        """Stop the sessions a test kept, then leave one new blank tab in the browser."""
        server, sup = self.server, self.supervisor
        assert server is not None and sup is not None and sup.context is not None
        book = server.executor.sessions
        with contextlib.suppress(TimeoutError):  # check_fresh names any left connected
            await wait_until(lambda: not self._clients(), 10)
        kept = [row["label"] for row in book.listing(None)]
        if kept:
            async with await BridgeClient.connect(server.url, server.token,
                                                   operator=server.operator_token) as harness:
                for label in kept:
                    await harness.call("session.stop", {"label": label})
        context = sup.context
        fresh = await asyncio.wait_for(context.new_page(), RESET_STEP_S)
        for page in list(context.pages):
            if page is not fresh:
                await asyncio.wait_for(page.close(run_before_unload=False), RESET_STEP_S)

    async def check_fresh(self) -> None:
        """Assert the state every test starts from (see the class docstring)."""
        server, sup = self.server, self.supervisor
        assert server is not None and sup is not None and sup.context is not None
        pages = sup.context.pages
        assert [p.url for p in pages] == ["about:blank"], f"leftover pages: {[p.url for p in pages]}"
        # The extension sees the tab switch and closes asynchronously.
        tabs: list[dict] = []
        for _ in range(100):
            tabs = await self._extension_tabs()
            if len(tabs) == 1 and tabs[0].get("active"):
                break
            await asyncio.sleep(0.05)
        assert len(tabs) == 1 and tabs[0].get("active"), f"the extension lists {tabs}"
        with contextlib.suppress(TimeoutError):  # a client's close reaches the bridge later
            await wait_until(lambda: not self._clients(), 10)
        clients = self._clients()
        assert not clients, f"clients still connected to the shared bridge: {clients}"
        sessions = server.executor.sessions.listing(None)
        assert not sessions, f"sessions left on the shared bridge: {sessions}"
        assert sup.driver is not None and sup.driver.pointer == self._pointer, (
            "a test changed the input driver's pointer (use monkeypatch)")
        # The fresh tab's own stamps end before the test starts: one still in flight could
        # land on the test's first document, past a test's hold on FrameRegistry.stamp
        # (a full Firefox run saw test_an_action_before_the_stamp... stamped while held).
        await asyncio.wait_for(sup.frames.settle(), 20)


@pytest.fixture(scope="module")
async def shared_browser(browser: str) -> AsyncIterator[SharedBrowser]:
    """The browser this module's tests share; started by the first test that asks for
    ``stack`` without the ``own_browser`` mark (it costs nothing until then)."""
    shared = SharedBrowser(browser)
    try:
        yield shared
    finally:
        await shared.stop()


@pytest.fixture
async def stack(request: pytest.FixtureRequest, browser: str,
                shared_browser: SharedBrowser) -> AsyncIterator[Stack]:
    """A bridge, a supervisor and ``browser`` with the extension, and a client of the
    bridge for this test alone; ``stack.page`` is the page the extension acts on.

    The tests of a module share one browser (:class:`SharedBrowser`): each starts on a
    fresh blank tab with a new client and no session on the bridge. A test marked
    ``own_browser`` (it breaks, restarts or reconfigures what it runs on) gets a stack of
    its own instead."""
    if request.node.get_closest_marker("own_browser") is not None:
        async with _started(browser) as (server, sup, device):
            client = await BridgeClient.connect(server.url, server.token)
            try:
                yield Stack(server, sup, client, device, browser)
            finally:
                await client.close()
        return
    shared = shared_browser
    await shared.ensure()
    try:
        await shared.check_fresh()
    except AssertionError:
        await shared.stop()  # this test fails, naming the leak; the next gets a new browser
        raise
    assert shared.server is not None and shared.supervisor is not None
    client = await BridgeClient.connect(shared.server.url, shared.server.token)
    try:
        yield Stack(shared.server, shared.supervisor, client, shared.device, browser)
    finally:
        await client.close()
        if (broken := shared.healthy()) is not None:
            await shared.stop()
            pytest.fail(f"this test broke the shared browser ({broken}); mark it own_browser")
        try:
            await shared.reset()
        except TimeoutError:
            # Seen in Firefox: closing the tab of a refused file: URL never answers. The
            # next test gets a new browser instead.
            await shared.stop()


def ref_of(snapshot: str, role: str, name: str) -> str:
    """The ref of the line ``- role "name" ... [ref=X]`` (exactly one such line)."""
    pattern = rf'^\s*- {re.escape(role)} "{re.escape(name)}"[^\n]*?\[ref=((?:f\d+)?e\d+)\]'
    found = re.findall(pattern, snapshot, flags=re.MULTILINE)
    assert len(found) == 1, f"expected one {role} {name!r}, found {found} in:\n{snapshot}"
    return found[0]


async def stamped(stack: Stack) -> None:
    """Wait until every frame has loaded and the registry holds a token for each: the
    supervisor hands tokens over on load events, asynchronously (supervisor/frames.py), and
    a token read before the last one landed is not the one in force. (CI runs on Firefox
    and Chromium once saw the late stamp.)"""
    for frame in stack.page.frames:
        await frame.wait_for_load_state("load")
    registry = stack.supervisor.frames
    # Bounded by time, not tries: under a load of 6-13 on 2 cores (a fresh-clone run beside
    # another suite) 100 tries of ~50 ms ran out before a child frame's stamp landed.
    deadline = asyncio.get_running_loop().time() + 15
    while asyncio.get_running_loop().time() < deadline:
        await registry.settle()
        frames = stack.page.frames
        held = [registry.token_of(f) for f in frames]
        try:
            if all(t is not None and registry.frame_for(t) is f for t, f in zip(held, frames)):
                return
        except FrameTokenUnknown:
            pass
        await asyncio.sleep(0.05)
    raise AssertionError(f"frames never all stamped: {held}")
