"""B2: per-action overhead of a trusted click through the bridge (port of
``scripts/bench_latency.py``).

On ``/clicks`` in the supervisor's tab, each round (order rotated) times:

- ``trusted_click``: ``page.act`` click by ref: client → bridge → extension resolve
  (``page.resolveTarget``, arming the delivery receipt) → driver
  (``frame.locator(<unique selector>).click()``) → client (the receipt is pushed by the
  page's click listener and is normally at the bridge before the driver's answer); the
  extension measures a verified point and the driver clicks there with ``page.mouse``
  (the fast path, issue 18; every result must say ``fastPath: true``);
- ``trusted_click_full``: the same with ``allowCoordinates`` (no fast point is asked for):
  the full path, ``frame.locator(<unique selector>).click()`` behind the bridge;
- ``locator_click``: Playwright ``page.locator("#go").click()`` on the same element (the
  baseline: the same actionability checks, no bridge);
- ``mouse_click``: Playwright ``page.mouse.click(x, y)`` at its centre (no checks at all);
- ``bridge_roundtrip``: ``tabs.list`` through the bridge and the extension (the cost of one
  client → bridge → extension → client trip, for reference);
- ``driver_act``: the input driver's own ``act`` called directly in this process with the
  frame token, CSS and fast point the extension gave for the ref (no bridge, no
  extension): splits the
  overhead into driver and bridge + extension parts;
- ``handle_click``: the driver's former path, bare: ``query_selector_all`` (uniqueness
  check) then ``ElementHandle.click()`` (kept to show what the locator path saves);
- ``engine_locator_click``: ``frame.locator(<the driver's selector>).click()``: the same
  selector engine through a locator (what the driver would cost with a locator click).

The page counts trusted clicks only; the total must equal the clicks sent.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from trustbridge.bridge.protocol.models import DriverActParams
from trustbridge.supervisor import locator_engine

from .stack import Stack
from .stats import ratio, rotated, summary


async def run(stack: Stack, rounds: int, log: Callable[[str], None]) -> dict[str, Any]:
    """Run B2. Returns ``{rounds, ops: {name: summary}, overhead_ms, ratio_to_locator_click,
    bridge_calls, clicks_sent, clicks_seen, targets}`` (ms)."""
    client, page = stack.client, stack.page
    await stack.tab.goto(stack.pages.url("clicks", b=2))
    snap = await stack.tab.snapshot()
    ref = re.search(r'button "Go"[^\n]*\[ref=((?:f\d+)?e\d+)\]', snap).group(1)  # type: ignore[union-attr]
    box = await page.locator("#go").bounding_box()
    assert box is not None
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    calls: list[list[tuple[str, float]]] = []

    fast: list[Any] = []

    async def trusted_click() -> None:
        stack.timer.current = []
        r = await client.call("page.act", {"device": "bench", "ref": ref,
                                           "action": {"kind": "click"}})
        calls.append(stack.timer.current)
        stack.timer.current = None
        if r["inputPath"] != "trusted":
            raise AssertionError(f"inputPath {r['inputPath']}")
        fast.append(r.get("fastPath"))

    async def trusted_click_full() -> None:
        r = await client.call("page.act", {"device": "bench", "ref": ref,
                                           "action": {"kind": "click"},
                                           "allowCoordinates": True})
        if r["inputPath"] != "trusted" or r.get("fastPath"):
            raise AssertionError(f"inputPath {r['inputPath']}, fastPath {r.get('fastPath')}")

    async def locator_click() -> None:
        await page.locator("#go").click()

    async def mouse_click() -> None:
        await page.mouse.click(cx, cy)

    async def bridge_roundtrip() -> None:
        await client.call("tabs.list", {"device": "bench"})

    await trusted_click()  # records the driver.act params the bridge sent
    act = stack.timer.last_params["driver.act"]
    driver = stack.sup.driver
    assert driver is not None
    params = DriverActParams.model_validate(act)
    selector = locator_engine.selector(act["css"])

    async def driver_act() -> None:
        await driver.act(params)

    async def handle_click() -> None:
        handles = await page.main_frame.query_selector_all(selector)
        if len(handles) != 1:
            raise AssertionError(f"{len(handles)} matches")
        await handles[0].click()
        await handles[0].dispose()

    async def engine_locator_click() -> None:
        await page.main_frame.locator(selector).click()

    ops: list[Callable[[], Awaitable[None]]] = [trusted_click, trusted_click_full,
                                                locator_click, mouse_click,
                                                bridge_roundtrip, driver_act, handle_click,
                                                engine_locator_click]
    samples: dict[str, list[float]] = {op.__name__: [] for op in ops}
    for op in ops:  # warm-up
        await op()
    calls.clear()
    fast.clear()
    for r in range(rounds):
        for op in rotated(ops, r):
            t0 = time.perf_counter()
            await op()
            samples[op.__name__].append((time.perf_counter() - t0) * 1000)
    sent = (rounds + 1) * 7 + 1
    seen = int(await page.text_content("#n") or 0)
    log(f"B2 done: {rounds} rounds")
    stats = {k: summary(v) for k, v in samples.items()}
    base = stats["locator_click"]["median"]
    overhead = round(stats["trusted_click"]["median"] - base, 2)
    split = {
        "driver_minus_locator_click": round(stats["driver_act"]["median"] - base, 2),
        "bridge_and_extension": round(stats["trusted_click"]["median"]
                                      - stats["driver_act"]["median"], 2),
        "handle_click_minus_locator_click": round(stats["handle_click"]["median"] - base, 2),
    }
    by_method: dict[str, list[float]] = {}
    for c in calls:
        for method, ms in c:
            by_method.setdefault(method, []).append(ms)
    return {
        "rounds": rounds,
        "ops": stats,
        "overhead_ms": overhead,
        "overhead_split_ms": split,
        "ratio_to_locator_click": {k: ratio(v["median"], base) for k, v in stats.items()},
        "bridge_calls": {m: summary(v) for m, v in by_method.items()},
        "fast_path_all": all(v is True for v in fast),
        "clicks_sent": sent,
        "clicks_seen": seen,
        "targets": [{"target": "B2 trusted click ≤ 5 ms median above locator.click",
                     "value": overhead, "limit": 5.0, "met": overhead <= 5.0}],
    }
