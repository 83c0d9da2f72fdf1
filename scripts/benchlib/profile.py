"""Where the time of the slowest trustbridge path goes.

Two views of the same runs of one B1 arm (the bridge, the driver's Playwright client and
the SDK client all run in this process, so one profiler sees all of them):

- wall time per step (client side) and per bridge → extension / driver call (the
  :class:`~benchlib.stack.PeerTimer`): what the client waits for;
- pyinstrument samples of this process (every thread-stack sample, async mode off):
  CPU time by package (bridge, supervisor, Playwright client, websockets, pydantic,
  asyncio) against time idle in the event loop's ``select`` (waiting for Chromium, the
  extension or the page).

pyinstrument is optional (``pip install -e '.[bench]'``); without it only the wall view
is reported.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import b1_form
from .stack import Stack
from .stats import step_medians

_BUCKETS = (
    ("idle (event loop select: waiting for browser / extension / page)", ("/selectors.py",)),
    ("Playwright client (driver side)", ("site-packages/playwright/",)),
    ("websockets", ("site-packages/websockets/",)),
    ("pydantic", ("site-packages/pydantic",)),
    ("trustbridge bridge/", ("/bridge/",)),
    ("trustbridge supervisor/", ("/supervisor/",)),
    ("benchmark harness", ("/scripts/",)),
    ("pipe I/O with Playwright's Node driver (asyncio unix_events)", ("asyncio/unix_events.py",)),
    ("socket I/O: WebSockets to the bridge / extension (asyncio selector_events)",
     ("asyncio/selector_events.py",)),
    ("asyncio (other)", ("asyncio/",)),
    ("json", ("json/",)),
)


def _bucket(path: str) -> str:
    for name, needles in _BUCKETS:
        if any(n in path for n in needles):
            return name
    return "other"


def _leaves(frame: Any, real_path: str, out: dict[str, float], fn: dict[str, float]) -> None:
    """Add each leaf's time to the bucket of its nearest ancestor with a Python file (a
    built-in such as ``epoll.poll`` counts where it was called from)."""
    path = frame.file_path or ""
    if path and not path.startswith("<"):
        real_path = path
    if not frame.children:
        out[_bucket(real_path)] = out.get(_bucket(real_path), 0.0) + frame.time
        key = f"{frame.function} ({frame.file_path_short}:{frame.line_no})"
        if frame.function == "[self]" or not frame.file_path or frame.file_path.startswith("<"):
            key = f"{frame.function} in {Path(real_path).name}"
        fn[key] = fn.get(key, 0.0) + frame.time
        return
    for child in frame.children:
        _leaves(child, real_path, out, fn)


async def run(stack: Stack, arm_name: str, runs: int, text_out: Path | None,
              log: Callable[[str], None]) -> dict[str, Any]:
    """Profile ``runs`` runs of B1 arm ``arm_name``. Returns ``{arm, runs, wall_ms_median,
    steps, bridge_calls, cpu: {bucket: share}, top_functions: [[name, ms], ...],
    profiler}``."""
    arm = b1_form.build_arms(stack, [arm_name])[0]
    await arm.prepare(-2)
    await arm.run()  # warm-up
    try:
        from pyinstrument import Profiler
    except ImportError:
        Profiler = None
    prof = Profiler(interval=0.0005, async_mode="disabled") if Profiler else None
    laps, calls, totals = [], [], []
    for i in range(runs):
        await arm.prepare(10_000 + i)
        await asyncio.sleep(b1_form.SETTLE_S)
        stack.timer.current = []
        if prof:
            prof.start()
        t0 = time.perf_counter()
        try:
            _, arm_laps = await arm.run()
        finally:
            totals.append((time.perf_counter() - t0) * 1000)
            if prof:
                prof.stop()
            calls.append(stack.timer.current or [])
            stack.timer.current = None
        laps.append(arm_laps)
    out: dict[str, Any] = {
        "arm": arm_name, "label": b1_form.LABELS[arm_name], "runs": runs,
        "wall_ms_median": round(sorted(totals)[len(totals) // 2], 2),
        "steps": step_medians(laps),
        "bridge_calls": b1_form._call_medians(calls, totals),
        "profiler": "pyinstrument" if prof else "none (pip install pyinstrument)",
    }
    if prof is not None:
        session = prof.last_session
        root = session.root_frame() if session else None
        buckets: dict[str, float] = {}
        funcs: dict[str, float] = {}
        if root is not None:
            _leaves(root, root.file_path or '', buckets, funcs)
        total = sum(buckets.values()) or 1.0
        out["sampled_s"] = round(total, 3)
        out["cpu"] = {k: round(v / total, 3) for k, v in
                      sorted(buckets.items(), key=lambda kv: -kv[1])}
        busy = {k: v for k, v in funcs.items() if "selectors.py" not in k}
        out["cpu_s"] = round(session.cpu_time, 3) if session else None
        out["duration_s"] = round(session.duration, 3) if session else None
        out["top_functions"] = [[k, round(v * 1000 / runs, 2)] for k, v in
                                sorted(busy.items(), key=lambda kv: -kv[1])[:12]]
        if text_out is not None:
            text_out.write_text(prof.output_text(show_all=False))
    log(f"profile of {arm_name} done")
    return out
