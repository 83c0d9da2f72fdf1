"""fill and select with their chords' key events pipelined (supervisor/keys.py) against
one ``keyboard.press`` per key (the former path), alternated in one run.

Starts the benchmarks' stack (scripts/benchlib/stack.py: a bridge and a supervised
headless Chromium in this process), loads the form page (scripts/benchlib/pages.py
``/form``) and, for N rounds, with the two arms alternating and the order of the arms
rotating each round, times:

- ``fill``: ``tab.fill(<Search>, "invoice")`` through the SDK (client → bridge →
  extension ``page.resolveTarget`` → driver ``driver.act``): focus read, ControlOrMeta+A,
  insertText, value read-back;
- ``select``: ``tab.select(<Owner>, ["Bob"])``: planning read + focus, the type-ahead key
  ``b``, read-back; the select is put back to "Anyone" by script before each (untimed).

Each is reported as the SDK call and as its ``driver.act`` (timed inside the bridge,
scripts/benchlib/stack.py ``PeerTimer``). Arms:

- ``pipelined``: the product as it is (``supervisor.keys.PIPELINE = True``): fill's chord
  pipelined, select's single key one ``keyboard.press`` (the same in both arms: a control);
- ``press``: ``PIPELINE = False``, every key one ``keyboard.press`` (the former path);
- ``pipelined-all``: single keys pipelined too (``keys.pipelinable`` patched here): what
  select's type-ahead key would cost sent as two messages.

Every answer is checked: the field holds "invoice", the select "Bob" with one change event.

``--busy MS`` makes the page busy: a script of the benchmark (main world) runs a
MS-ms busy loop every 2×MS ms, as a heavy application's timers would; 0 (default): idle.

Usage: python scripts/bench_keys.py [--rounds 40] [--busy 0] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from benchlib.stack import Stack, find_ref
from benchlib.stats import percentile, rotated

from supervisor import keys

ARMS = ("pipelined", "press", "pipelined-all")
CHORDS_ONLY = keys.pipelinable


def _any_layout_key(key: str) -> bool:
    """``keys.pipelinable`` without its chords-only rule (the ``pipelined-all`` arm)."""
    names = keys.split(key)
    return all(n in keys.LAYOUT_KEYS for n in names) and "Escape" not in names
BUSY_JS = """ms => { const busy = () => { const t = performance.now();
  while (performance.now() - t < ms) {} }; window.__busy = setInterval(busy, 2 * ms); }"""


def _stats(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 2),
            "p25": round(percentile(values, 25), 2), "p75": round(percentile(values, 75), 2),
            "p95": round(percentile(values, 95), 2), "runs": len(values)}


async def run(rounds: int, busy_ms: int) -> dict[str, Any]:
    """Samples of both arms; ``{op: {arm: {sdk: stats, driver_act: stats}}}`` (ms)."""
    with tempfile.TemporaryDirectory(prefix="bench-keys-") as logs:
        async with Stack(Path(logs)) as stack:
            tab, page = stack.tab, stack.page
            await tab.goto(stack.pages.url("form"))
            snap = await tab.snapshot()
            search = find_ref(snap, "textbox", "Search")
            owner = find_ref(snap, "combobox", "Owner")
            if busy_ms:
                await page.evaluate(BUSY_JS, busy_ms)

            async def fill() -> None:
                await tab.fill(search, "invoice")
                if await page.input_value("#q") != "invoice":
                    raise AssertionError("the field does not hold the filled value")

            async def select() -> None:
                res = await tab.select(owner, ["Bob"])
                if res.get("selected") != ["Bob"] or res.get("changeEvents") != 1:
                    raise AssertionError(f"select answered {res}")

            ops = {"fill": fill, "select": select}
            samples: dict[str, dict[str, dict[str, list[float]]]] = {
                op: {arm: {"sdk": [], "driver_act": []} for arm in ARMS} for op in ops}

            async def once(op: str, arm: str, record: bool) -> None:
                keys.PIPELINE = arm != "press"
                keys.pipelinable = _any_layout_key if arm == "pipelined-all" else CHORDS_ONLY
                if op == "select":
                    await page.evaluate("document.getElementById('owner').value = ''")
                stack.timer.current = []
                t0 = time.perf_counter()
                await ops[op]()
                ms = (time.perf_counter() - t0) * 1000
                driver = [t for m, t in stack.timer.current if m == "driver.act"]
                stack.timer.current = None
                if record:
                    samples[op][arm]["sdk"].append(ms)
                    samples[op][arm]["driver_act"].append(sum(driver))

            try:
                for op in ops:  # warm-up
                    for arm in ARMS:
                        await once(op, arm, record=False)
                for r in range(rounds):
                    for op in rotated(list(ops), r):
                        for arm in rotated(list(ARMS), r):
                            await once(op, arm, record=True)
            finally:
                keys.PIPELINE, keys.pipelinable = True, CHORDS_ONLY
            version = stack.chromium_version
    return {"rounds": rounds, "busy_ms": busy_ms, "chromium": version,
            "ops": {op: {arm: {part: _stats(v) for part, v in parts.items()}
                         for arm, parts in arms.items()} for op, arms in samples.items()}}


def _print(report: dict[str, Any]) -> None:
    busy = f", page busy {report['busy_ms']} ms every {2 * report['busy_ms']} ms" \
        if report["busy_ms"] else ""
    print(f"{report['rounds']} rounds per arm, Chromium {report['chromium']}{busy}")
    for op, arms in report["ops"].items():
        for part in ("sdk", "driver_act"):
            old = arms["press"][part]["median"]
            cells = [f"{arm} {arms[arm][part]['median']:6.2f} (p25 {arms[arm][part]['p25']:.2f}"
                     f", p75 {arms[arm][part]['p75']:.2f})"
                     + ("" if arm == "press" else f" {arms[arm][part]['median'] - old:+.2f}")
                     for arm in ARMS]
            print(f"  {op:6s} {part:10s} " + "   ".join(cells))
    print("  ms; +/-: the arm's median minus press's")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--busy", type=int, default=0, help="busy-loop ms of the page's timer")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    report = asyncio.run(run(a.rounds, a.busy))
    if a.json:
        print(json.dumps(report, indent=2))
    else:
        _print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
