"""B2u: a trusted click by ref through exactly what users run (issue 18), against
Playwright on the same Chromium binary, all in one run.

Arms, each round in rotated order:

- ``sdk_click``: ``await tab.click(ref)`` of the Python SDK (``Browser.connect``) to a
  ``trustbridge up`` started as a subprocess (its own ``TRUSTBRIDGE_HOME``, any free
  port): SDK → bridge (the ``up`` process) → extension → driver (the supervisor, a child
  process of ``up``) → Chromium. The verified-point fast path serves it.
- ``sdk_click_fallback``: the same on a button the fast path refuses (its box runs a
  transform animation that never moves it, so ``fastRefused: "moving"``): Playwright's
  full actionability path behind the bridge, the cost of a refused check.
- ``sdk_click_full``: ``tab.act(click, ref, allow_coordinates=True)``: the same button
  through the same stack with no fast point asked for (the executor asks for one only
  without ``allowCoordinates``), i.e. the full Playwright path as it was before the fast
  path: what users measured at ~1.45× ``locator.click`` (issue 18).
- ``mcp_click``: ``browser_click`` of ``trustbridge mcp`` over stdio (a subprocess that
  finds the same ``up`` through the state directory), page state included as MCP clients
  get it by default.
- ``locator_click`` / ``mouse_click``: ``page.locator("#go").click()`` and
  ``page.mouse.click(x, y)`` of raw Playwright (this process) on its own Chromium,
  launched from the same binary headless, on the same page.

The page counts trusted clicks only (``#n``, ``#s``); every arm's count must equal the
clicks it sent, and every SDK result must say ``fastPath`` true (false for the fallback).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from playwright.async_api import async_playwright

from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.sdk import Browser
from trustbridge.supervisor.launcher import VIEWPORT, find_chromium

from . import env
from .pages import PageServer
from .stack import tool_text
from .stats import ratio, rotated, summary

UP_READY_S = 90.0


async def run(pages: PageServer, rounds: int, log: Callable[[str], None], log_dir: Path,
              mcp: bool = True) -> dict[str, Any]:
    """Run B2u. Returns ``{rounds, ops: {name: summary}, ratio_to_locator_click,
    clicks_sent, clicks_seen, fast_path, targets}`` (ms)."""
    async with (running_up(log_dir / "b2u-up.stderr.log") as (_up, url, token, child_env),
                contextlib.AsyncExitStack() as stack):
        browser = await stack.enter_async_context(await Browser.connect(url, token))
        return await _measure(browser, stack, pages, rounds, log, log_dir, child_env, mcp)


@contextlib.asynccontextmanager
async def running_up(log_path: Path) -> AsyncIterator[tuple[subprocess.Popen[bytes], str, str,
                                                             dict[str, str]]]:
    """``async with running_up(path) as (process, url, token, child_env)``: a ``trustbridge
    up --port 0`` subprocess with its own ``TRUSTBRIDGE_HOME`` (in ``child_env``), ready
    (its device has extension and driver); output into ``log_path``; stopped on exit
    (SIGTERM, then SIGKILL of its process group after 20 s)."""
    home = Path(tempfile.mkdtemp(prefix="trustbridge-bench-up-"))
    child_env = {**os.environ, "TRUSTBRIDGE_HOME": str(home), "PYTHONPATH": str(env.REPO)}
    up, errlog = _start_up(child_env, log_path)
    try:
        url, token = await _wait_up(home, up, log_path.name)
        yield up, url, token, child_env
    finally:
        up.terminate()
        try:
            up.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(up.pid, 9)
            up.wait()
        errlog.close()
        shutil.rmtree(home, ignore_errors=True)


def _start_up(child_env: dict[str, str], log_path: Path) -> tuple[subprocess.Popen[bytes], Any]:
    """``trustbridge up --port 0`` as a subprocess (its output into ``log_path``)."""
    errlog = log_path.open("w")
    up = subprocess.Popen([sys.executable, "-m", "trustbridge", "up", "--port", "0"],
                          env=child_env, stdin=subprocess.DEVNULL, stdout=errlog,
                          stderr=subprocess.STDOUT, cwd=str(env.REPO), start_new_session=True)
    return up, errlog


async def _wait_up(home: Path, up: subprocess.Popen[bytes], log_name: str) -> tuple[str, str]:
    """The ``(url, token)`` of the ``up`` once its device has extension and driver."""
    deadline = time.monotonic() + UP_READY_S
    endpoint = home / "endpoint.json"
    while time.monotonic() < deadline:
        if up.poll() is not None:
            raise RuntimeError(f"trustbridge up exited with {up.returncode} (see {log_name})")
        if endpoint.exists() and (home / "token").exists():
            url = str(json.loads(endpoint.read_text())["url"])
            token = (home / "token").read_text().strip()
            with contextlib.suppress(Exception):
                async with await BridgeClient.connect(url, token) as client:
                    devices = (await client.call("devices.list", {}))["devices"]
                    if any(d["driver"] and d["extension"] for d in devices):
                        return url, token
        await asyncio.sleep(0.2)
    raise RuntimeError("trustbridge up was not ready within 90 s")


async def _measure(browser: Browser, stack: contextlib.AsyncExitStack, pages: PageServer,
                   rounds: int, log: Callable[[str], None], log_dir: Path,
                   child_env: dict[str, str], mcp: bool) -> dict[str, Any]:
    page_url = pages.url("clicks", b="2u")
    # /clicks-still: a second visible page must not render the Slow box's endless
    # animation too (CPU every other arm would compete with); the MCP arm clicks Go only.
    mcp_url = pages.url("clicks-still", b="2u-mcp")
    client: Client | None = None
    mcp_error = None
    said = ""
    if mcp:
        # The MCP session first, in the up's first tab; then the SDK's session in a window
        # of its own: one session's tab is not another's to act on (issue 16), and a tab
        # behind another in its window is hidden (no animation frames: Playwright's
        # stable-box wait then takes seconds).
        try:
            client = await _mcp_client(stack, log_dir, child_env)
            tool_text(await client.call_tool("browser_navigate", {"url": mcp_url}))
            said = tool_text(await client.call_tool("browser_snapshot", {}))
        except Exception as exc:  # noqa: BLE001 - reported as not run
            mcp_error = f"{type(exc).__name__}: {exc}"[:300]
            log(f"B2u: MCP arm not run: {mcp_error}")
            client = None
    tab = await browser.new_tab(page_url, window=True)
    snap = await tab.snapshot()
    go = _ref(snap, "Go")
    slow = _ref(snap, "Slow")

    pw = await stack.enter_async_context(async_playwright())
    raw_browser = await pw.chromium.launch(executable_path=find_chromium(), headless=True)
    stack.push_async_callback(raw_browser.close)
    page = await raw_browser.new_page(viewport=VIEWPORT)
    await page.goto(page_url)
    box = await page.locator("#go").bounding_box()
    assert box is not None
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    fast: dict[str, list[Any]] = {"sdk_click": [], "sdk_click_fallback": []}

    async def sdk_click() -> None:
        r = await tab.click(go)
        fast["sdk_click"].append(r.get("fastPath"))

    async def sdk_click_fallback() -> None:
        r = await tab.click(slow)
        fast["sdk_click_fallback"].append(r.get("fastRefused"))

    async def sdk_click_full() -> None:
        r = await tab.act({"kind": "click"}, go, allow_coordinates=True)
        if r.get("fastPath"):
            raise AssertionError("the full-path arm took the fast path")

    async def locator_click() -> None:
        await page.locator("#go").click()

    async def mouse_click() -> None:
        await page.mouse.click(cx, cy)

    ops: list[Callable[[], Awaitable[None]]] = [sdk_click, sdk_click_fallback, sdk_click_full,
                                                locator_click, mouse_click]
    if client is not None:
        mcp_client, mcp_go = client, _ref(said, "Go")

        async def mcp_click() -> None:
            tool_text(await mcp_client.call_tool("browser_click",
                                                 {"element": "Go", "ref": mcp_go}))

        ops.append(mcp_click)
    samples: dict[str, list[float]] = {op.__name__: [] for op in ops}
    for op in ops:  # warm-up
        await op()
    for v in fast.values():
        v.clear()
    for r in range(rounds):
        for op in rotated(ops, r):
            t0 = time.perf_counter()
            await op()
            samples[op.__name__].append((time.perf_counter() - t0) * 1000)
    n = rounds + 1
    seen_tb = int(await tab.evaluate("document.getElementById('n').textContent"))
    seen_slow = int(await tab.evaluate("document.getElementById('s').textContent"))
    seen_raw = int(await page.text_content("#n") or 0)
    if client is not None:  # counted on the MCP session's own page, read through it
        said = tool_text(await client.call_tool("browser_evaluate", {
            "function": "() => Number(document.getElementById('n').textContent)"}))
        seen_tb += int(re.findall(r"returned:\n(\d+)", said)[-1])
    stats = {k: summary(v) for k, v in samples.items()}
    base = stats["locator_click"]["median"]
    sent_tb = n * (3 if "mcp_click" in samples else 2)
    fast_ok = all(v is True for v in fast["sdk_click"])
    value = ratio(stats["sdk_click"]["median"], base)
    log(f"B2u done: {rounds} rounds")
    return {
        "rounds": rounds,
        "ops": stats,
        "ratio_to_locator_click": {k: ratio(v["median"], base) for k, v in stats.items()},
        "clicks_sent": {"trustbridge_go": sent_tb, "trustbridge_slow": n, "playwright": 2 * n},
        "clicks_seen": {"trustbridge_go": seen_tb, "trustbridge_slow": seen_slow,
                        "playwright": seen_raw},
        "fast_path": {"sdk_click_all_fast": fast_ok,
                      "fallback_refused": sorted({str(v) for v in fast["sdk_click_fallback"]})},
        "mcp_error": mcp_error,
        "targets": [{"target": "B2u trusted click by ref (trustbridge up + SDK) ≤ 0.5× "
                     "locator.click, every click trusted, fast path taken",
                     "value": value, "limit": 0.5,
                     "met": value is not None and value <= 0.5 and fast_ok
                     and seen_tb == sent_tb}],
    }


def _ref(snapshot: str, name: str) -> str:
    found = re.findall(rf'button "{re.escape(name)}"[^\n]*?\[ref=((?:f\d+)?e\d+)\]', snapshot)
    if len(found) != 1:
        raise AssertionError(f"expected one button {name!r}: {snapshot[:1500]}")
    return found[0]


async def _mcp_client(stack: contextlib.AsyncExitStack, log_dir: Path,
                      child_env: dict[str, str]) -> Client:
    """``trustbridge mcp`` over stdio, finding the running ``up`` through its state dir."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "trustbridge", "mcp"],
                                   env=child_env, cwd=str(env.REPO))
    errlog = stack.enter_context(_log_file(log_dir / "b2u-mcp.stderr.log"))
    return await stack.enter_async_context(
        Client(stdio_client(params, errlog=errlog), read_timeout_seconds=300))


def _log_file(path: Path) -> Any:
    return path.open("w")
