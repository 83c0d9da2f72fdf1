"""What the focus checks and fill's last key cost (supervisor/focus_guard.py,
supervisor/actions.py ``fill``): the product against the same verbs with the checks and
the last key switched off, alternated in one run.

Starts the benchmarks' stack (scripts/benchlib/stack.py: a bridge and a supervised
headless Chromium in this process), loads the form page (scripts/benchlib/pages.py
``/form``) and, for N rounds, arms alternating and rotating, times through the SDK (and
the bridge's ``driver.act``):

- ``fill``: ``tab.fill(<Search>, "invoice")``;
- ``type20``: ``tab.type(<Search>, 20 characters)``, the field emptied by script first
  (untimed).

Arms: ``guarded`` (the product: the focus guard armed in the focusing read and read back
once, supervisor/focus_guard.py; the last character of a fill as its key) and
``unguarded`` (the guard never armed, no read-back; the whole value as one edit: the
former path).

Every answer is checked: the field holds the value.

Usage: python scripts/bench_typing.py [--rounds 30] [--json]
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

from trustbridge.supervisor import actions, focus_guard

ARMS = ("guarded", "unguarded")
TEXT20 = "abcdefghijklmnopqrst"
_GUARD, _SPLIT = actions.Guard, actions._split_last_key


async def _no_field_guard(t: Any, timeout_ms: int, total: int = 0, guard: Any = None) -> Any:
    return await _FIELD(t, timeout_ms, total, None)


_FIELD = actions._field


def _arm(name: str) -> None:
    guarded = name == "guarded"
    actions._field = _FIELD if guarded else _no_field_guard
    actions.Guard = _GUARD if guarded else _Dummy
    actions._split_last_key = _SPLIT if guarded else (lambda v: (v, ""))


class _Dummy:
    """The unguarded arm's guard: armed (so nothing arms it), finishes with nothing."""

    def __init__(self, *a: Any, **kw: Any) -> None:
        self.armed, self.fields = True, None

    async def arm(self, total: int) -> None:
        return None

    async def finish(self, total: int) -> None:
        return None

    async def release(self) -> None:
        return None


def _stats(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 2),
            "p25": round(percentile(values, 25), 2), "p75": round(percentile(values, 75), 2),
            "runs": len(values)}


async def run(rounds: int) -> dict[str, Any]:
    samples: dict[str, dict[str, dict[str, list[float]]]] = {
        op: {arm: {"sdk": [], "driver_act": []} for arm in ARMS} for op in ("fill", "type20")}
    try:
        with tempfile.TemporaryDirectory(prefix="bench-typing-") as logs:
            async with Stack(Path(logs)) as stack:
                tab, page = stack.tab, stack.page
                await tab.goto(stack.pages.url("form"))
                search = find_ref(await tab.snapshot(), "textbox", "Search")

                async def fill() -> None:
                    await tab.fill(search, "invoice")
                    assert await page.input_value("#q") == "invoice"

                async def type20() -> None:
                    await tab.type(search, TEXT20)
                    assert await page.input_value("#q") == TEXT20

                ops = {"fill": fill, "type20": type20}

                async def once(op: str, arm: str, record: bool) -> None:
                    _arm(arm)
                    await page.evaluate("document.getElementById('q').value = ''")
                    stack.timer.current = []
                    t0 = time.perf_counter()
                    await ops[op]()
                    ms = (time.perf_counter() - t0) * 1000
                    driver = [t for m, t in stack.timer.current if m == "driver.act"]
                    stack.timer.current = None
                    if record:
                        samples[op][arm]["sdk"].append(ms)
                        samples[op][arm]["driver_act"].append(sum(driver))

                for op in ops:
                    for arm in ARMS:
                        await once(op, arm, record=False)
                for r in range(rounds):
                    for op in rotated(list(ops), r):
                        for arm in rotated(list(ARMS), r):
                            await once(op, arm, record=True)
                version = stack.chromium_version
    finally:
        _arm("guarded")
    return {"rounds": rounds, "chromium": version,
            "ops": {op: {arm: {part: _stats(v) for part, v in parts.items()}
                         for arm, parts in arms.items()} for op, arms in samples.items()}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = asyncio.run(run(args.rounds))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{report['rounds']} rounds per arm, Chromium {report['chromium']}")
    for op, arms in report["ops"].items():
        for part in ("sdk", "driver_act"):
            g, u = arms["guarded"][part], arms["unguarded"][part]
            print(f"  {op:7s} {part:10s} guarded {g['median']:7.2f} (p25 {g['p25']:.2f}, "
                  f"p75 {g['p75']:.2f})   unguarded {u['median']:7.2f} (p25 {u['p25']:.2f}, "
                  f"p75 {u['p75']:.2f})   {g['median'] - u['median']:+.2f}")
    print("  ms; +/-: guarded's median minus unguarded's")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
