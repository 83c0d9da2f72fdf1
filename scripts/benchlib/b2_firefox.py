"""B2f: the trusted click by ref on Firefox ESR over WebDriver BiDi (issue 18), beside the
Chromium click of the same run.

A second bridge and a supervised headless Firefox in this process (as the shared
Chromium stack), on the same ``/clicks`` page; each round, order rotated:

- ``trusted_click``: ``page.act`` click by ref (the verified-point fast path);
- ``trusted_click_full``: the same with ``allowCoordinates`` (no fast point asked): the
  full Playwright path behind the bridge;
- ``locator_click`` / ``mouse_click``: raw Playwright on the same Firefox page;
- ``mouse_split``: ``mouse.move`` then ``mouse.down`` then ``mouse.up``, one after the
  other: what the fast path sends on BiDi (supervisor/actions.py ``Target.bidi``);
- ``chromium_trusted_click``: the fast-path click on the shared Chromium stack, for the
  Firefox / Chromium ratio of the same run.

The pages count trusted clicks only; the totals must equal the clicks sent.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.routing import RoutingPolicy
from trustbridge.bridge.sdk import Tab
from trustbridge.bridge.server import BridgeServer
from trustbridge.supervisor.runner import Supervisor

from .stack import Stack
from .stats import ratio, rotated, summary

DEVICE = "bench-firefox"


async def run(stack: Stack, rounds: int, log: Callable[[str], None]) -> dict[str, Any]:
    """Run B2f. Returns ``{rounds, ops, ratio_to_locator_click, firefox_to_chromium,
    clicks_sent, clicks_seen, fast_path_all, targets}`` (ms)."""
    token = secrets.token_hex(16)
    server = BridgeServer(token, port=0, policy=RoutingPolicy())
    await server.start()
    sup = Supervisor(server.url, token, DEVICE, browser="firefox")
    try:
        await sup.start()
        deadline = time.monotonic() + 90
        while DEVICE not in server.policy.extensions or DEVICE not in server.policy.drivers:
            if time.monotonic() > deadline:
                raise RuntimeError("Firefox's extension or driver did not connect within 90 s")
            await asyncio.sleep(0.05)
        async with await BridgeClient.connect(server.url, token) as client:
            return await _measure(stack, client, sup, rounds, log)
    finally:
        await sup.stop()
        await server.stop()


def _go(snapshot: str) -> str:
    return re.search(r'button "Go"[^\n]*\[ref=((?:f\d+)?e\d+)\]', snapshot).group(1)  # type: ignore[union-attr]


async def _measure(stack: Stack, client: BridgeClient, sup: Supervisor, rounds: int,
                   log: Callable[[str], None]) -> dict[str, Any]:
    url = stack.pages.url("clicks", b="2f")
    tab = Tab(client, DEVICE, None)
    await tab.goto(url)
    ref = _go(await tab.snapshot())
    assert sup.context is not None
    page = sup.context.pages[0]
    box = await page.locator("#go").bounding_box()
    assert box is not None
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    await stack.tab.goto(stack.pages.url("clicks", b="2f-chromium"))
    chromium_ref = _go(await stack.tab.snapshot())
    fast: list[Any] = []

    async def trusted_click() -> None:
        fast.append((await tab.click(ref)).get("fastPath"))

    async def trusted_click_full() -> None:
        r = await tab.act({"kind": "click"}, ref, allow_coordinates=True)
        if r.get("fastPath"):
            raise AssertionError("the full-path arm took the fast path")

    async def locator_click() -> None:
        await page.locator("#go").click()

    async def mouse_click() -> None:
        await page.mouse.click(cx, cy)

    async def mouse_split() -> None:
        await page.mouse.move(cx, cy)
        await page.mouse.down()
        await page.mouse.up()

    async def chromium_trusted_click() -> None:
        fast.append((await stack.tab.click(chromium_ref)).get("fastPath"))

    ops: list[Callable[[], Awaitable[None]]] = [trusted_click, trusted_click_full, locator_click,
                                                mouse_click, mouse_split, chromium_trusted_click]
    samples: dict[str, list[float]] = {op.__name__: [] for op in ops}
    for op in ops:  # warm-up
        await op()
    fast.clear()
    for r in range(rounds):
        for op in rotated(ops, r):
            t0 = time.perf_counter()
            await op()
            samples[op.__name__].append((time.perf_counter() - t0) * 1000)
    seen = int(await page.text_content("#n") or 0)
    seen_chromium = int(await stack.page.text_content("#n") or 0)
    log(f"B2f done: {rounds} rounds")
    stats = {k: summary(v) for k, v in samples.items()}
    value = ratio(stats["trusted_click"]["median"], stats["chromium_trusted_click"]["median"])
    fast_ok = all(v is True for v in fast)
    return {
        "rounds": rounds,
        "ops": stats,
        "ratio_to_locator_click": {k: ratio(v["median"], stats["locator_click"]["median"])
                                   for k, v in stats.items()},
        "firefox_to_chromium": value,
        "fast_path_all": fast_ok,
        "clicks_sent": {"firefox": (rounds + 1) * 5, "chromium": rounds + 1},
        "clicks_seen": {"firefox": seen, "chromium": seen_chromium},
        "targets": [{"target": "B2f Firefox trusted click by ref ≤ 2× Chromium's (same run)",
                     "value": value, "limit": 2.0,
                     "met": value is not None and value <= 2.0 and fast_ok}],
    }
