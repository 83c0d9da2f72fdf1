"""B5: N tabs acting at once: throughput and latency percentiles, against raw Playwright.

For each N (default 1, 2, 4): N new tabs on ``/clicks`` (opened through the bridge, so in
the browser's one window; the last one is the active tab). Then, in rotated order:

- ``trustbridge``: N clients (one WebSocket each, as N agents would have) each send K
  trusted clicks (``page.act``) to their own tab, one after the other, all N at once;
- ``playwright``: the same with raw Playwright, ``locator("#go").click()`` K times on each
  tab's page, all N pages at once (the baseline).

Measured per repetition: wall time until every tab is done (throughput = N·K / wall s)
and every click's duration (pooled p50 / p95 over the repetitions). Each page counts
trusted clicks; the total must equal the clicks sent.
"""

from __future__ import annotations

import asyncio
import re
import statistics
import time
from collections.abc import Callable
from typing import Any

from bridge.client import BridgeClient

from .stack import DEVICE, Stack
from .stats import percentile, ratio, rotated

_REF = re.compile(r'button "Go"[^\n]*\[ref=((?:f\d+)?e\d+)\]')
MODES = ("trustbridge", "playwright")


async def _one(stack: Stack, n: int, k: int, rep: int) -> tuple[dict[str, tuple[float, list[float]]], int, int]:
    """One repetition: ``({mode: (wall ms, per-click ms)}, clicks sent, clicks seen)``."""
    clients = [await BridgeClient.connect(stack.server.url, stack.token) for _ in range(n)]
    tab_ids: list[int] = []
    tag = f"b=5&n={n}&rep={rep}&"
    try:
        for i in range(n):
            url = stack.pages.url("clicks", b=5, n=n, rep=rep, tab=i)
            res = await clients[i].call("tabs.new", {"device": DEVICE, "url": url})
            tab_ids.append(int(res["tabId"]))
        refs = []
        for c, tid in zip(clients, tab_ids):
            snap = (await c.call("page.snapshot", {"device": DEVICE, "tabId": tid}))["snapshot"]
            refs.append(_REF.search(snap).group(1))  # type: ignore[union-attr]
        pages = [p for p in stack.sup.context.pages if tag in p.url]
        if len(pages) != n:
            raise AssertionError(f"found {len(pages)} Playwright pages for {n} tabs")
        out: dict[str, tuple[float, list[float]]] = {}
        for mode in rotated(MODES, rep):
            lat: list[float] = []

            async def bridge_agent(c: BridgeClient, tid: int, ref: str,
                                   lat: list[float] = lat) -> None:
                for _ in range(k):
                    t0 = time.perf_counter()
                    r = await c.call("page.act", {"device": DEVICE, "tabId": tid, "ref": ref,
                                                  "action": {"kind": "click"}})
                    lat.append((time.perf_counter() - t0) * 1000)
                    if r["inputPath"] != "trusted":
                        raise AssertionError(r)

            async def playwright_agent(page: Any, lat: list[float] = lat) -> None:
                for _ in range(k):
                    t0 = time.perf_counter()
                    await page.locator("#go").click()
                    lat.append((time.perf_counter() - t0) * 1000)

            t0 = time.perf_counter()
            if mode == "trustbridge":
                await asyncio.gather(*(bridge_agent(c, t, r)
                                       for c, t, r in zip(clients, tab_ids, refs)))
            else:
                await asyncio.gather(*(playwright_agent(p) for p in pages))
            out[mode] = ((time.perf_counter() - t0) * 1000, lat)
        seen = 0
        for page in pages:
            seen += int(await page.text_content("#n") or 0)
        return out, 2 * n * k, seen
    finally:
        for c, tid in zip(clients, tab_ids):
            try:
                await c.call("tabs.close", {"device": DEVICE, "tabId": tid})
            except Exception:  # noqa: BLE001, S110 - best effort cleanup; the tab may be gone
                pass
        for c in clients:
            await c.close()


async def run(stack: Stack, tab_counts: list[int], actions: int, reps: int,
              log: Callable[[str], None]) -> dict[str, Any]:
    """Run B5. Returns ``{actions_per_tab, reps, by_tabs: {N: {mode: {throughput_per_s,
    p50_ms, p95_ms, wall_ms, clicks}, throughput_ratio}}, clicks_sent, clicks_seen}``."""
    walls = {(n, m): [] for n in tab_counts for m in MODES}  # type: dict[tuple[int, str], list[float]]
    lats = {(n, m): [] for n in tab_counts for m in MODES}  # type: dict[tuple[int, str], list[float]]
    sent = seen = 0
    await _one(stack, 1, 2, -1)  # warm-up
    for rep in range(reps):
        for n in rotated(tab_counts, rep):
            got, s, c = await _one(stack, n, actions, rep)
            for mode, (wall, lat) in got.items():
                walls[(n, mode)].append(wall)
                lats[(n, mode)].extend(lat)
            sent, seen = sent + s, seen + c
        log(f"B5 repetition {rep + 1}/{reps} done")
    by: dict[str, Any] = {}
    for n in tab_counts:
        cell: dict[str, Any] = {}
        for mode in MODES:
            wall = statistics.median(walls[(n, mode)])
            cell[mode] = {"throughput_per_s": round(n * actions / (wall / 1000), 1),
                          "p50_ms": round(statistics.median(lats[(n, mode)]), 2),
                          "p95_ms": round(percentile(lats[(n, mode)], 95), 2),
                          "wall_ms": round(wall, 1), "clicks": len(lats[(n, mode)])}
        cell["throughput_ratio"] = ratio(cell["trustbridge"]["throughput_per_s"],
                                         cell["playwright"]["throughput_per_s"])
        by[str(n)] = cell
    return {"actions_per_tab": actions, "reps": reps, "by_tabs": by,
            "clicks_sent": sent, "clicks_seen": seen}
