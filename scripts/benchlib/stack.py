"""The stack every benchmark shares, started once per run.

- a bridge (``BridgeServer``) and a supervised headless Chromium with the extension and
  the input driver (``supervisor.runner.Supervisor``), both in this process, as in
  ``scripts/bench_latency.py`` (so raw Playwright can act on the very same page);
- a state directory of its own (``TRUSTBRIDGE_HOME`` for child processes) holding the
  bridge token, so ``python -m trustbridge mcp --bridge URL`` finds it;
- the local page server;
- MCP clients over stdio, started on first use: trustbridge's (``python -m trustbridge
  mcp``) and Playwright MCP's (``@playwright/mcp`` on the same Chromium binary).

Bridge-side timing: :class:`PeerTimer` wraps the executor's peer lookup so every call the
bridge makes to the extension or the driver is timed (ms per method), without changing
the bridge.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from trustbridge.bridge import config
from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.sdk import Tab
from trustbridge.bridge.server import BridgeServer
from trustbridge.supervisor.launcher import VIEWPORT, find_chromium
from trustbridge.supervisor.runner import Supervisor

from . import env
from .pages import PageServer

DEVICE = "bench"
MCP_TIMEOUT_S = 300


def find_ref(snapshot: str, role: str, name: str) -> str:
    """The ref of the one ``- role "name" ... [ref=...]`` line of a snapshot (either tool's
    format). Raises AssertionError when there is not exactly one."""
    pattern = rf'- {re.escape(role)} "{re.escape(name)}"[^\n]*?\[ref=((?:f\d+)?e\d+)\]'
    found = re.findall(pattern, snapshot)
    if len(found) != 1:
        raise AssertionError(f"expected one {role} {name!r} in the snapshot, found "
                             f"{len(found)}:\n{snapshot[:2000]}")
    return found[0]


def tool_text(result: Any) -> str:
    """The text parts of an MCP tool result joined; raises RuntimeError on ``isError``."""
    text = "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    if result.is_error:
        raise RuntimeError(f"MCP tool failed: {text[:500]}")
    return text


class PeerTimer:
    """Times every bridge → extension / driver call (ms per wire method).

    Set :attr:`current` to a list to collect ``(method, ms)`` pairs of one run; ``None``
    collects nothing.
    """

    def __init__(self, server: BridgeServer) -> None:
        self.current: list[tuple[str, float]] | None = None
        self.last_params: dict[str, dict[str, Any]] = {}
        """The params of the latest call per method (e.g. ``driver.act``)."""
        executor = server.executor
        original = executor.peer
        timer = self

        class _Timed:
            def __init__(self, peer: Any) -> None:
                self._peer = peer

            async def call(self, method: str, params: dict[str, Any], timeout_s: float) -> Any:
                timer.last_params[method] = params
                t0 = time.perf_counter()
                try:
                    return await self._peer.call(method, params, timeout_s)
                finally:
                    if timer.current is not None:
                        timer.current.append((method, (time.perf_counter() - t0) * 1000))

            def __getattr__(self, name: str) -> Any:
                return getattr(self._peer, name)

        executor.peer = lambda peer_id: _Timed(original(peer_id))


class Stack:
    """Everything the benchmarks need; ``async with Stack() as stack``.

    Attributes:
        server, sup, client: bridge, supervisor, a bridge client (SDK base).
        page: the Playwright page of the supervisor's first tab (raw Playwright arm).
        tab: an SDK Tab on the active tab.
        pages: the page server.
        chromium_version: the browser's version string.
        timer: the bridge's :class:`PeerTimer`.
    """

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self._stack = contextlib.AsyncExitStack()
        self._mcp: dict[str, Client] = {}
        self._mcp_stack = contextlib.AsyncExitStack()
        self._mcp_errors: dict[str, str] = {}
        self.playwright_mcp_version: str | None = None

    async def __aenter__(self) -> Stack:
        s = self._stack
        self.home = Path(tempfile.mkdtemp(prefix="trustbridge-bench-"))
        s.callback(shutil.rmtree, self.home, ignore_errors=True)
        self.token = config.load_or_create_token(self.home / "token")
        self.pages = s.enter_context(PageServer())
        self.server = await s.enter_async_context(BridgeServer(self.token, port=0))
        self.timer = PeerTimer(self.server)
        self.sup = await s.enter_async_context(Supervisor(self.server.url, self.token, DEVICE))
        policy = self.server.policy
        deadline = time.monotonic() + 60
        while DEVICE not in policy.extensions or DEVICE not in policy.drivers:
            if time.monotonic() > deadline:
                raise RuntimeError("the extension or the driver did not connect within 60 s")
            await asyncio.sleep(0.05)
        self.client = await s.enter_async_context(
            await BridgeClient.connect(self.server.url, self.token))
        browser = self.sup.context.browser
        self.chromium_version = browser.version if browser is not None else "?"
        self.page = self.sup.context.pages[0]
        self.tab = Tab(self.client, DEVICE, None)
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            await self.close_mcp()
        finally:
            await self._stack.aclose()

    async def close_mcp(self) -> None:
        """Stop every MCP server started so far (so their browsers stop competing for the
        CPU); :meth:`mcp` starts them again on demand."""
        stack, self._mcp_stack = self._mcp_stack, contextlib.AsyncExitStack()
        self._mcp.clear()
        await stack.aclose()

    # -- MCP clients -------------------------------------------------------------------

    async def mcp(self, name: str) -> Client:
        """The MCP client ``name`` (``trustbridge``, ``trustbridge-up``, ``playwright``,
        ``playwright-nosettle``, ``playwright-nosnap``), started on first use and kept until :meth:`close_mcp`.

        Raises:
            RuntimeError: the server could not be installed or started (the reason is kept
                and raised again on later calls).
        """
        if name in self._mcp:
            return self._mcp[name]
        if name in self._mcp_errors:
            raise RuntimeError(self._mcp_errors[name])
        try:
            params = await self._up_params() if name == "trustbridge-up" else self._params(name)
            errlog = self._mcp_stack.enter_context(
                open(self.log_dir / f"mcp-{name}.stderr.log", "w"))  # noqa: SIM115
            client = await self._mcp_stack.enter_async_context(
                Client(stdio_client(params, errlog=errlog), read_timeout_seconds=MCP_TIMEOUT_S))
        except Exception as exc:  # install or start failed: the arm is reported as not run
            self._mcp_errors[name] = f"{name} MCP server unavailable: {exc}"
            raise RuntimeError(self._mcp_errors[name]) from exc
        self._mcp[name] = client
        return client

    async def _up_params(self) -> StdioServerParameters:
        """``trustbridge mcp --bridge URL`` of a ``trustbridge up`` subprocess started now
        (what users run: the bridge, supervisor and browser in a process of their own),
        stopped with the MCP servers (:meth:`close_mcp`)."""
        from .b2_users import running_up  # b2_users imports this module

        _up, url, _token, child_env = await self._mcp_stack.enter_async_context(
            running_up(self.log_dir / "b1-up.stderr.log"))
        return StdioServerParameters(
            command=sys.executable, args=["-m", "trustbridge", "mcp", "--bridge", url],
            env={"TRUSTBRIDGE_HOME": child_env["TRUSTBRIDGE_HOME"],
                 "PYTHONPATH": str(env.REPO)},
            cwd=str(env.REPO))

    def _params(self, name: str) -> StdioServerParameters:
        if name == "trustbridge":
            return StdioServerParameters(
                command=sys.executable,
                args=["-m", "trustbridge", "mcp", "--bridge", self.server.url],
                env={"TRUSTBRIDGE_HOME": str(self.home), "PYTHONPATH": str(env.REPO)},
                cwd=str(env.REPO))
        cli = env.ensure_playwright_mcp()
        self.playwright_mcp_version = env.installed_playwright_mcp_version(cli)
        out = self.home / f"pwmcp-{name}"
        out.mkdir(exist_ok=True)
        args = ["--headless", "--isolated", "--browser", "chromium",
                "--executable-path", find_chromium(), "--output-dir", str(out),
                "--viewport-size", f"{VIEWPORT['width']}x{VIEWPORT['height']}"]
        if name == "playwright-nosettle":
            args += ["--timeout-settle", "0"]
        elif name == "playwright-nosnap":  # B3: navigate without its own snapshot
            args += ["--snapshot-mode", "none"]
        elif name != "playwright":
            raise ValueError(f"unknown MCP server {name!r}")
        return StdioServerParameters(
            command=str(cli), args=args, cwd=str(out),
            env={"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1",
                 "PATH": os.environ.get("PATH", "")})
