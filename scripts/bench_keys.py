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
  ``b``, read-back; the select is put back to "Anyone" by script before each (untimed);
- ``select_popup``: ``tab.select(<Item>, ["v20"])`` on a select of 30 options "Item 0" ..
  "Item 29" (served by this script), from "Item 0": no single key reaches it, so Chromium's
  route opens the popup (Alt+ArrowDown) and presses End, 9 ArrowUp and Enter in it.

Each is reported as the SDK call and as its ``driver.act`` (timed inside the bridge,
scripts/benchlib/stack.py ``PeerTimer``). Arms:

- ``pipelined``: the product as it is (``supervisor.keys.PIPELINE = True``): fill's chord
  pipelined, select's single key one ``keyboard.press`` (the same in both arms: a control),
  the popup's keys all at once;
- ``press``: ``PIPELINE = False``, every key one ``keyboard.press`` (the former path);
- ``pipelined-all``: single keys pipelined too (``keys.pipelinable`` patched here): what
  select's type-ahead key would cost sent as two messages.

Every answer is checked: the field holds "invoice", the selects "Bob" / "v20" with one
change event.

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
import threading
import time
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from benchlib.stack import Stack, find_ref
from benchlib.stats import percentile, rotated

from trustbridge.supervisor import keys

ARMS = ("pipelined", "press", "pipelined-all")
CHORDS_ONLY = keys.pipelinable


def _any_layout_key(pressed: str | list[str]) -> bool:
    """``keys.pipelinable`` without its two-keys rule (the ``pipelined-all`` arm)."""
    names = [n for k in ([pressed] if isinstance(pressed, str) else pressed)
             for n in keys.split(k)]
    return all(n in keys.LAYOUT_KEYS for n in names) and "Escape" not in names
BUSY_JS = """ms => { const busy = () => { const t = performance.now();
  while (performance.now() - t < ms) {} }; window.__busy = setInterval(busy, 2 * ms); }"""


POPUP_PAGE = ("<!doctype html><html><head><meta charset='utf-8'><title>Items</title></head>"
              "<body><label>Item <select id='item'>"
              + "".join(f"<option value='v{i}'>Item {i}</option>" for i in range(30))
              + "</select></label></body></html>").encode()


class _PopupPage(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(POPUP_PAGE)

    def log_message(self, *a: object) -> None:
        pass


def _stats(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 2),
            "p25": round(percentile(values, 25), 2), "p75": round(percentile(values, 75), 2),
            "p95": round(percentile(values, 95), 2), "runs": len(values)}


async def run(rounds: int, busy_ms: int) -> dict[str, Any]:
    """Samples of the arms; ``{op: {arm: {sdk: stats, driver_act: stats}}}`` (ms). Two
    phases on the stack's tab: the form page (fill, select), then the items page
    (select_popup); in each, the arms alternate round by round."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _PopupPage)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    samples: dict[str, dict[str, dict[str, list[float]]]] = {}
    try:
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

                await _phase(stack, {"fill": (None, fill),
                                     "select": ("document.getElementById('owner').value = ''",
                                                select)}, rounds, samples)
                await tab.goto(f"http://127.0.0.1:{httpd.server_address[1]}/items")
                item = find_ref(await tab.snapshot(), "combobox", "Item")
                if busy_ms:
                    await page.evaluate(BUSY_JS, busy_ms)

                async def select_popup() -> None:
                    res = await tab.select(item, ["v20"])
                    if res.get("selected") != ["v20"] or res.get("changeEvents") != 1:
                        raise AssertionError(f"select answered {res}")

                await _phase(stack, {"select_popup": (
                    "document.getElementById('item').value = 'v0'", select_popup)},
                    rounds, samples)
                version = stack.chromium_version
    finally:
        httpd.shutdown()
    return {"rounds": rounds, "busy_ms": busy_ms, "chromium": version,
            "ops": {op: {arm: {part: _stats(v) for part, v in parts.items()}
                         for arm, parts in arms.items()} for op, arms in samples.items()}}


async def _phase(stack: Stack,
                 ops: dict[str, tuple[str | None, Callable[[], Awaitable[None]]]],
                 rounds: int, samples: dict[str, dict[str, dict[str, list[float]]]]) -> None:
    """Time each of ``ops`` (name: (script that resets the control first, untimed, or None;
    the timed call)) for every arm, ``rounds`` times, into ``samples``."""
    for op in ops:
        samples[op] = {arm: {"sdk": [], "driver_act": []} for arm in ARMS}

    async def once(op: str, arm: str, record: bool) -> None:
        keys.PIPELINE = arm != "press"
        keys.pipelinable = _any_layout_key if arm == "pipelined-all" else CHORDS_ONLY
        reset, call = ops[op]
        if reset:
            await stack.page.evaluate(reset)
        stack.timer.current = []
        t0 = time.perf_counter()
        await call()
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
            print(f"  {op:12s} {part:10s} " + "   ".join(cells))
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
