"""Latency of the code runtime (bridge/code/, docs/code.md), with a fake bridge ``call``
that answers at once, so only the runtime is timed.

Times, each over ``--rounds`` fresh runtimes / calls:

- ``first_call``: a new :class:`CodeRuntime`'s first ``run("1")``: the worker process
  starts (Python, the SDK's imports) and answers;
- ``next_call``: a ``run("1")`` in a worker that is already up;
- ``relay_call``: a ``run`` whose code makes one bridge request through the parent
  (``await browser.client.call(...)``), minus nothing: the whole call;
- ``reset_after_timeout``: a ``while True: pass`` call with a 0.2 s timeout, past it
  (interrupt, kill, reap), then the next call's fresh start.

Prints medians (and min/max) in ms; ``--json`` prints the raw numbers.
Usage: python scripts/bench_code.py [--rounds 10] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from trustbridge.bridge.code import CodeRuntime


async def _fake(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True}


async def measure(rounds: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"first_call": [], "next_call": [], "relay_call": [],
                                   "reset_after_timeout": []}
    for _ in range(rounds):
        rt = CodeRuntime(_fake, protocol_version=1)
        try:
            t = time.perf_counter()
            await rt.run("1")
            out["first_call"].append((time.perf_counter() - t) * 1000)
            for _ in range(5):
                t = time.perf_counter()
                await rt.run("1")
                out["next_call"].append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                await rt.run("await browser.client.call('tabs.list', {})")
                out["relay_call"].append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            await rt.run("while True: pass", timeout_s=0.2)
            await rt.run("1")
            out["reset_after_timeout"].append((time.perf_counter() - t) * 1000 - 200)
        finally:
            await rt.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    data = asyncio.run(measure(args.rounds))
    if args.json:
        print(json.dumps({"python": platform.python_version(), **data}))
        return 0
    print(f"python {platform.python_version()}, {args.rounds} rounds (ms)")
    for name, values in data.items():
        print(f"  {name:20s} median {statistics.median(values):7.1f}  "
              f"min {min(values):7.1f}  max {max(values):7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
