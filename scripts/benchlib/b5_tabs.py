"""B5: N sessions clicking at once, each in a window of its own, through what users run
(issue 16), beside the same sessions in one window (background tabs) and raw Playwright.

A ``trustbridge up`` runs as a subprocess (its own ``TRUSTBRIDGE_HOME``, any free port),
as in B2u. For each N (default 1, 2, 4) and each arm, in rotated order, a fresh set-up:

- ``windows``: N client connections (``BridgeClient``, one WebSocket each, as N agents
  would have), each opens its own session (``session.open``) and its own tab with
  ``tabs.new {window: true}`` (a window of its own, where the tab is the foreground), then
  loads the page there (``page.navigate``; see :func:`_sessions` for why not in one call);
- ``one_window``: the same with ``tabs.new {url}``: N tabs in the browser's one window,
  only the last one active (the baseline: background tabs are throttled by Chromium);
- ``playwright``: raw Playwright (this process) on its own headless Chromium from the same
  binary, N pages (``browser.new_page()``: a context and window each), the machine's floor
  for N concurrent clickers (information);
- ``windows_full`` / ``one_window_full``: as ``windows`` / ``one_window`` with
  ``allowCoordinates`` (no fast point asked): Playwright's full click path behind the
  bridge, what a click the fast path refuses costs; in a background tab of one window that
  path waits for frames Chromium does not produce there (≈ 2 s a click).

Then every session (page) sends K trusted clicks to its own "Go" button, one after the
other (``page.act`` by ref; ``locator.click()`` for Playwright), all N at once (asyncio
tasks released together). Measured per set-up: wall time until all are done (throughput =
N·K / wall s), each click's duration (pooled p50 / p95), and the CPU time each kind of
process spent in that window (scripts/benchlib/cpu.py: renderer, bridge, supervisor,
Node, this process) with the machine's busy share, so a throughput that stops growing has
a measured reason. Before clicking, each page reports its ``document.visibilityState``,
``document.hasFocus()`` and animation frames per second (:data:`_PROBE`: a throttled
background tab runs few or none); at the end each page's count of trusted clicks (``#n``)
is read, and the total must equal the clicks sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playwright.async_api import async_playwright

from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.protocol import errors as E
from trustbridge.supervisor.launcher import VIEWPORT, find_chromium

from . import cpu
from .b2_users import running_up
from .pages import PageServer
from .stats import percentile, ratio, rotated

_REF = re.compile(r'button "Go"[^\n]*\[ref=((?:f\d+)?e\d+)\]')
ARMS = ("windows", "one_window", "playwright", "windows_full", "one_window_full")
PAGE = "clicks-still"
"""The page every session clicks on (scripts/benchlib/pages.py): nothing on it moves, so a
visible page costs no frames between clicks."""
TARGET_RATIO = 3.0
"""Issue 16: 4 sessions in their own windows ≥ 3× one session's throughput."""
_PROBE = """new Promise((resolve) => {
  let frames = 0; const t0 = performance.now();
  const done = () => resolve({visibility: document.visibilityState, focus: document.hasFocus(),
    rafPerS: Math.round(frames * 1000 / (performance.now() - t0))});
  const tick = () => { frames++; if (performance.now() - t0 < 300) requestAnimationFrame(tick); else done(); };
  requestAnimationFrame(tick); setTimeout(done, 1000);
})"""
"""What a page says of itself before the clicks: its visibility, whether it has focus, and
animation frames per second over 0.3 s (0 for a tab whose frames Chromium stopped)."""
_COUNT = "document.getElementById('n').textContent"


class _Run:
    """What one (arm, N) set-up measured."""

    def __init__(self) -> None:
        self.wall_ms = 0.0
        self.lat: list[float] = []
        self.sent = 0
        self.seen = 0
        self.probes: list[dict[str, Any]] = []
        """Per page: ``{visibility, focus, rafPerS}`` (:data:`_PROBE`)."""
        self.fast: list[bool] = []
        self.cpu: dict[str, float] = {}
        self.setup_crashes = 0


async def _release(agents: list[Callable[[], Any]]) -> float:
    """Run the agents' coroutines at once (released together); the wall time in ms."""
    go = asyncio.Event()

    async def start(agent: Callable[[], Any]) -> None:
        await go.wait()
        await agent()

    tasks = [asyncio.create_task(start(a)) for a in agents]
    await asyncio.sleep(0)
    t0 = time.perf_counter()
    go.set()
    await asyncio.gather(*tasks)
    return (time.perf_counter() - t0) * 1000


async def _sessions(url: str, token: str, pages: PageServer, arm: str, n: int, k: int,
                    rep: int, roots: list[int], up_pid: int) -> _Run:
    """One trustbridge set-up: N connections, N sessions, N tabs, K clicks each."""
    run = _Run()
    clients = [await BridgeClient.connect(url, token) for _ in range(n)]
    tabs: list[int] = []
    try:
        for i, c in enumerate(clients):
            await c.call("session.open", {"label": f"b5-{arm}-n{n}-r{rep}-s{i}"})
        refs = []
        for i, c in enumerate(clients):
            tid, snap = await _open(c, arm, pages.url(PAGE, b=5, arm=arm, n=n, rep=rep, s=i),
                                    run)
            tabs.append(tid)
            refs.append(_REF.search(snap).group(1))  # type: ignore[union-attr]
        run.probes = [r["value"] for r in await asyncio.gather(*(
            c.call("page.evaluate", {"tabId": tid, "expression": _PROBE})
            for c, tid in zip(clients, tabs)))]
        # The active tab of its window (each one with windows of their own; only the last
        # one in the one-window arm), as the extension lists it.
        rows = {int(t["tabId"]): t for t in (await clients[0].call("tabs.list", {}))["tabs"]}
        for probe, tid in zip(run.probes, tabs):
            probe["active"] = bool(rows[tid]["active"]) if tid in rows else None
            probe["windowId"] = rows.get(tid, {}).get("windowId")

        # The *_full arms: no fast point asked (allowCoordinates), Playwright's whole
        # actionability path behind the bridge, as a click the fast path refuses takes.
        full = {"allowCoordinates": True} if arm.endswith("_full") else {}

        def agent(c: BridgeClient, tid: int, ref: str) -> Callable[[], Any]:
            async def clicks() -> None:
                for _ in range(k):
                    t0 = time.perf_counter()
                    r = await c.call("page.act", {"tabId": tid, "ref": ref,
                                                  "action": {"kind": "click"}, **full})
                    run.lat.append((time.perf_counter() - t0) * 1000)
                    if r["inputPath"] != "trusted" or (full and r.get("fastPath")):
                        raise AssertionError(r)
                    run.fast.append(bool(r.get("fastPath")))
            return clicks

        before = cpu.sample(roots, up_pid)
        run.wall_ms = await _release([agent(c, t, r) for c, t, r in zip(clients, tabs, refs)])
        run.cpu = cpu.delta(before, cpu.sample(roots, up_pid))
        run.sent = n * k
        for c, tid in zip(clients, tabs):
            run.seen += int((await c.call("page.evaluate", {
                "tabId": tid, "expression": _COUNT}))["value"])
        return run
    finally:
        for c, tid in zip(clients, tabs):
            try:
                await c.call("tabs.close", {"tabId": tid})
            except Exception:  # noqa: BLE001, S110 - best effort cleanup; the tab may be gone
                pass
        for c in clients:
            await c.close()


async def _open(c: BridgeClient, arm: str, url: str, run: _Run) -> tuple[int, str]:
    """Open the session's tab on ``url`` and snapshot it: ``(tab id, snapshot)``.

    ``windows``: ``tabs.new {window: true}`` then ``page.navigate``, since ``tabs.new {url,
    window: true}`` loses ``window`` in the bridge today (bridge/new_tab.py's ``open_tab``;
    tests/e2e/test_tab_windows.py's xfail). ``one_window``: ``tabs.new {url}``. (The same
    for the ``_full`` arms.)

    A blank tab navigated so is sometimes reported crashed at its next request (listed
    ``crashed: true`` at ``about:blank``; measured here about 1 set-up of 4 in 3, with or
    without a window of its own), its load never finishes (TIMEOUT), or its snapshot still
    shows no Go button 10 s later (a blank page; seen once): that tab is closed and another
    one opened, at most twice, each time counted in ``setup_crashes``.
    Set-up only: nothing is timed here."""
    for attempt in range(3):
        tid = None
        try:
            if arm.startswith("windows"):
                res = await c.call("tabs.new", {"window": True})
                tid = int(res["tabId"])
                res = await c.call("page.navigate", {"tabId": tid, "url": url})
            else:
                res = await c.call("tabs.new", {"url": url})
            tid = int(res["tabId"])
            deadline = time.monotonic() + 10
            while True:  # the page, not a blank one the load has not replaced yet
                snap = (await c.call("page.snapshot", {"tabId": tid}))["snapshot"]
                if _REF.search(snap):
                    return tid, snap
                if time.monotonic() > deadline:
                    raise E.Timeout(f"tab {tid} showed no Go button within 10 s: {snap[:300]}")
                await asyncio.sleep(0.1)
        except (E.BrowserCrashed, E.Timeout):
            if attempt == 2:
                raise
            run.setup_crashes += 1
            if tid is not None:
                with contextlib.suppress(Exception):
                    await c.call("tabs.close", {"tabId": tid})
    raise AssertionError("unreachable")


async def _playwright(browser: Any, pages: PageServer, n: int, k: int, rep: int,
                      roots: list[int]) -> _Run:
    """One raw Playwright set-up: N pages of their own, K ``locator.click()`` each."""
    run = _Run()
    pws = [await browser.new_page(viewport=VIEWPORT) for _ in range(n)]
    try:
        for i, p in enumerate(pws):
            await p.goto(pages.url(PAGE, b=5, arm="playwright", n=n, rep=rep, s=i))
        run.probes = list(await asyncio.gather(*(p.evaluate(_PROBE) for p in pws)))

        def agent(p: Any) -> Callable[[], Any]:
            async def clicks() -> None:
                for _ in range(k):
                    t0 = time.perf_counter()
                    await p.locator("#go").click()
                    run.lat.append((time.perf_counter() - t0) * 1000)
            return clicks

        before = cpu.sample(roots)
        run.wall_ms = await _release([agent(p) for p in pws])
        run.cpu = cpu.delta(before, cpu.sample(roots))
        run.sent = n * k
        for p in pws:
            run.seen += int(await p.evaluate(_COUNT))
        return run
    finally:
        for p in pws:
            await p.close()


async def run(pages: PageServer, tab_counts: list[int], actions: int, reps: int,
              log: Callable[[str], None], log_dir: Path,
              arms: tuple[str, ...] = ARMS) -> dict[str, Any]:
    """Run B5. Returns ``{actions_per_session, reps, arms, by_sessions: {N: {arm:
    {throughput_per_s, p50_ms, p95_ms, wall_ms, clicks, pages: {pages, hidden, focused,
    active, windows_per_setup_max, raf_per_s_min, raf_per_s_median}, fast_path_share, cpu_ms_per_click: {kind: ms},
    tree_cpu_share, machine_busy_share}}, window_vs_one_window}},
    scaling: {arm: {N: throughput / N=1 throughput}}, windows_ratio_max_to_1,
    clicks_sent, clicks_seen, targets}`` (ms; shares 0–1)."""
    runs: dict[tuple[str, int], list[_Run]] = {(a, n): [] for a in arms for n in tab_counts}
    load_start = _loadavg()
    async with running_up(log_dir / "b5-up.stderr.log") as (up, url, token, _env):
        kids = cpu.children()
        async with async_playwright() as pw:
            raw = await pw.chromium.launch(executable_path=find_chromium(), headless=True)
            raw_roots = sorted(cpu.children() - kids)  # Playwright's Node driver → Chromium
            try:
                up_roots = [up.pid]
                for arm in arms:  # warm-up: one of each, not counted
                    if arm == "playwright":
                        await _playwright(raw, pages, 1, 2, -1, raw_roots)
                    else:
                        await _sessions(url, token, pages, arm, 1, 2, -1, up_roots, up.pid)
                for rep in range(reps):
                    for n in rotated(tab_counts, rep):
                        for arm in rotated(list(arms), rep + n):
                            try:
                                if arm == "playwright":
                                    got = await _playwright(raw, pages, n, actions, rep,
                                                            raw_roots)
                                else:
                                    got = await _sessions(url, token, pages, arm, n, actions,
                                                          rep, up_roots, up.pid)
                            except Exception as exc:
                                raise RuntimeError(f"B5 {arm}, {n} sessions, repetition "
                                                   f"{rep + 1}: {type(exc).__name__}: {exc}"
                                                   ) from exc
                            runs[(arm, n)].append(got)
                    log(f"B5 repetition {rep + 1}/{reps} done")
            finally:
                await raw.close()
    out = _summary(runs, arms, tab_counts, actions, reps)
    out["loadavg_start"], out["loadavg_end"] = load_start, _loadavg()
    out["cores"] = os.cpu_count() or 1
    return out


def _pages(rs: list[_Run]) -> dict[str, Any]:
    """The probes of every page of these set-ups: how many were hidden, had focus, were
    the active tab of their window (None: not asked, raw Playwright), the most distinct
    windows one set-up's tabs were in, and the lowest and median animation frames per
    second."""
    ps = [p for r in rs for p in r.probes]
    raf = [float(p["rafPerS"]) for p in ps]
    return {"pages": len(ps), "hidden": sum(p["visibility"] != "visible" for p in ps),
            "focused": sum(bool(p["focus"]) for p in ps),
            "active": sum(p.get("active") is True for p in ps) if ps and "active" in ps[0]
            else None,
            "windows_per_setup_max": max((len({p.get("windowId") for p in r.probes})
                                          for r in rs if r.probes), default=None)
            if ps and "windowId" in ps[0] else None,
            "raf_per_s_min": min(raf) if raf else None,
            "raf_per_s_median": statistics.median(raf) if raf else None}


def _loadavg() -> list[float]:
    """The machine's 1, 5 and 15 min load averages (``/proc/loadavg``)."""
    return [round(x, 2) for x in os.getloadavg()]


def _summary(runs: dict[tuple[str, int], list[_Run]], arms: tuple[str, ...],
             tab_counts: list[int], actions: int, reps: int) -> dict[str, Any]:
    by: dict[str, Any] = {}
    sent = {a: 0 for a in arms}
    seen = {a: 0 for a in arms}
    for n in tab_counts:
        cell: dict[str, Any] = {}
        for arm in arms:
            rs = runs[(arm, n)]
            lat = [x for r in rs for x in r.lat]
            wall = statistics.median(r.wall_ms for r in rs)
            clicks = sum(len(r.lat) for r in rs)
            cpu_tot: dict[str, float] = {}
            busiest: dict[str, float] = {}
            for r in rs:
                for kind, s in r.cpu.items():
                    if kind.startswith("busiest:"):
                        busiest[kind[8:]] = busiest.get(kind[8:], 0.0) + s
                    else:
                        cpu_tot[kind] = cpu_tot.get(kind, 0.0) + s
            busy = cpu_tot.pop("machine_busy_s", 0.0)
            wall_s = cpu_tot.pop("wall_s", 0.0)
            cores = rs[0].cpu.get("cores", 1)
            cpu_tot.pop("cores", None)
            fast = [x for r in rs for x in r.fast]
            cell[arm] = {
                "throughput_per_s": round(n * actions / (wall / 1000), 1),
                "p50_ms": round(statistics.median(lat), 2),
                "p95_ms": round(percentile(lat, 95), 2),
                "wall_ms": round(wall, 1), "clicks": clicks,
                "pages": _pages(rs),
                "setup_crashes": sum(r.setup_crashes for r in rs),
                "fast_path_share": round(sum(fast) / len(fast), 3) if fast else None,
                "cpu_ms_per_click": {k: round(v * 1000 / clicks, 2)
                                     for k, v in sorted(cpu_tot.items(), key=lambda kv: -kv[1])},
                # A process that serialized the sessions would sit near 1.0 (one core) here.
                "core_share": {k: round(v / wall_s, 3)
                               for k, v in sorted(cpu_tot.items(), key=lambda kv: -kv[1])}
                if wall_s else {},
                "busiest_process_core_share": {k: round(v / wall_s, 3) for k, v in
                                               sorted(busiest.items(), key=lambda kv: -kv[1])}
                if wall_s else {},
                "tree_cpu_share": round(sum(cpu_tot.values()) / (wall_s * cores), 3)
                if wall_s else None,
                "machine_busy_share": round(busy / (wall_s * cores), 3) if wall_s else None,
            }
            sent[arm] += sum(r.sent for r in rs)
            seen[arm] += sum(r.seen for r in rs)
        if "windows" in cell and "one_window" in cell:
            cell["window_vs_one_window"] = ratio(cell["windows"]["throughput_per_s"],
                                                 cell["one_window"]["throughput_per_s"])
        by[str(n)] = cell
    first, last = str(min(tab_counts)), str(max(tab_counts))
    scaling = {arm: {n: ratio(by[n][arm]["throughput_per_s"], by[first][arm]["throughput_per_s"])
                     for n in by} for arm in arms}
    out: dict[str, Any] = {"actions_per_session": actions, "reps": reps, "arms": list(arms),
                           "by_sessions": by, "scaling": scaling,
                           "clicks_sent": sent, "clicks_seen": seen, "targets": []}
    if "windows" in arms and first == "1" and last != "1":
        value = scaling["windows"][last]
        windows_ok = all(by[n]["windows"]["pages"]["hidden"] == 0
                         and by[n]["windows"]["pages"]["active"] == by[n]["windows"]["pages"]["pages"]
                         for n in by)
        out["windows_ratio_max_to_1"] = value
        out["targets"].append({
            "target": f"B5 {last} sessions in their own windows ≥ {TARGET_RATIO:g}× one "
                      f"session's clicks/s (every page visible and its window's active tab, every "
                      "click counted)",
            "value": value, "limit": TARGET_RATIO, "higher_is_better": True,
            "met": None if value is None else (value >= TARGET_RATIO and windows_ok
                                               and seen["windows"] == sent["windows"])})
    return out
