"""Timing helpers: a stopwatch, medians and percentiles, and the rotated order of arms."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


class Stopwatch:
    """Wall-clock laps in ms since construction (``time.perf_counter``).

    ``lap(name)`` records the ms since the previous lap under ``name``; ``total`` is the
    ms since start.
    """

    def __init__(self) -> None:
        self.start = self._last = time.perf_counter()
        self.laps: list[tuple[str, float]] = []

    def lap(self, name: str) -> float:
        now = time.perf_counter()
        ms = (now - self._last) * 1000
        self._last = now
        self.laps.append((name, ms))
        return ms

    @property
    def total(self) -> float:
        return (time.perf_counter() - self.start) * 1000


def rotated(items: Sequence[T], round_index: int) -> list[T]:
    """``items`` rotated left by ``round_index`` (each arm leads once every len(items) rounds)."""
    k = round_index % len(items) if items else 0
    return list(items[k:]) + list(items[:k])


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile, ``q`` in [0, 100]. Raises ValueError on no values."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def summary(values: Sequence[float]) -> dict[str, float | int]:
    """``{runs, median, p95, min, max}`` of ``values`` (ms), rounded to 0.01."""
    return {
        "runs": len(values),
        "median": round(statistics.median(values), 2),
        "p95": round(percentile(values, 95), 2),
        "min": round(min(values), 2),
        "max": round(max(values), 2),
    }


def ratio(a: float | None, b: float | None) -> float | None:
    """``a / b`` rounded to 0.001, or None when either is missing or ``b`` is 0."""
    if a is None or b is None or b == 0:
        return None
    return round(a / b, 3)


def step_medians(runs: list[list[tuple[str, float]]]) -> dict[str, float]:
    """Median ms per lap name over runs of ``Stopwatch.laps`` (names in first-run order)."""
    names: list[str] = []
    by: dict[str, list[float]] = {}
    for laps in runs:
        for name, ms in laps:
            if name not in by:
                names.append(name)
                by[name] = []
            by[name].append(ms)
    return {n: round(statistics.median(by[n]), 2) for n in names}
