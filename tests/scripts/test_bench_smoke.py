"""Smoke test of scripts/bench.py: a tiny run writes results.json and README.md with the
expected structure, and every click the benchmarks sent reached the page as trusted input.
Speed is never asserted here: the benchmark reports it (docs/benchmarks/README.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_tiny_run_writes_results_and_table(tmp_path: Path) -> None:
    """One round of B1 (raw Playwright, SDK steps, SDK batch), B2, B4 (each client its own
    session and tab) and B5 (1 and 2 sessions through `trustbridge up`: own windows, one
    window, raw Playwright, and both sessions arms on the full path; no MCP servers): each arm ran, each page saw every click as
    trusted, ratios and verdicts agree with the medians and limits reported beside them,
    and the README's tables show those numbers, the run counts and the hand-written
    analysis section."""
    (tmp_path / "README.md").write_text(
        "old\n<!-- analysis:start -->\nkept by hand\n<!-- analysis:end -->\n")
    env = dict(os.environ, TRUSTBRIDGE_HOME=str(tmp_path / "home"))
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "bench.py"), "--quick", "--no-mcp",
         "--only", "b1,b2,b4,b5", "--arms", "a,b,c", "--rounds", "1",
         "--b4-counts", "2", "--b5-tabs", "1,2", "--b5-actions", "2",
         "--out-dir", str(tmp_path)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=240, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads((tmp_path / "results.json").read_text())

    assert set(res["b1"]["arms"]) == {"a", "b", "c"}
    for name, arm in res["b1"]["arms"].items():
        assert "error" not in arm, (name, arm)
        assert arm["runs"] == 1 and arm["median"] > 0
    assert list(res["b1"]["arms"]["c"]["steps"]) == ["snapshot", "batch", "wait"]
    calls = res["b1"]["arms"]["b"]["bridge_calls"]
    assert calls["driver.act"]["calls_per_run"] == 4  # fill, select, check, click
    _check_ratios(res["b1"]["ratios"]["to_a"], _medians(res["b1"]["arms"]), "a")

    b2 = res["b2"]
    assert b2["clicks_seen"] == b2["clicks_sent"] > 0
    assert {"trusted_click", "locator_click", "mouse_click", "driver_act"} <= set(b2["ops"])
    _check_ratios(b2["ratio_to_locator_click"],
                  {k: v["median"] for k, v in b2["ops"].items()}, "locator_click")
    ops = b2["ops"]
    assert abs(b2["overhead_ms"] - (ops["trusted_click"]["median"]
                                    - ops["locator_click"]["median"])) <= 0.011
    assert b2["targets"][0]["value"] == b2["overhead_ms"]
    targets = res["b1"]["targets"] + b2["targets"] + res["b4"]["targets"] + res["b5"]["targets"]
    for t in targets:
        _check_met(t)
    # Without MCP servers the (d)/(e)/(e″) comparisons have no value and are not judged;
    # the batch's (before the wait too) are.
    judged = {t["target"]: t["met"] for t in res["b1"]["targets"]}
    mcp = [name for name in judged if "MCP" in name]
    assert len(mcp) == 4 and all(judged[name] is None for name in mcp), judged
    assert all(judged[name] is not None for name in judged if name not in mcp), judged

    b4 = res["b4"]
    assert b4["focus_changes_seen"] == b4["actions_sent"] > 0
    assert set(b4["by_n"]["2"]["ops"]) == {"local_step", "local_batch", "proxy_step",
                                           "proxy_batch"}
    # The proxy really delays: its round trip is longer than the local one.
    assert b4["rtt"]["proxy_rtt"]["min"] > b4["rtt"]["local_rtt"]["min"]

    b5 = res["b5"]
    arms = ["windows", "one_window", "playwright", "windows_full", "one_window_full"]
    assert b5["arms"] == arms
    assert b5["clicks_seen"] == b5["clicks_sent"] == {a: (1 + 2) * 2 for a in arms}
    for n in ("1", "2"):
        cell = b5["by_sessions"][n]
        assert set(cell) == {*arms, "window_vs_one_window"}
        for a in arms:
            assert cell[a]["clicks"] == int(n) * 2
            assert cell[a]["pages"]["pages"] == int(n)
            assert cell[a]["throughput_per_s"] > 0
            assert cell[a]["cpu_ms_per_click"], (n, a)  # the processes were found and read
        assert cell["windows"]["fast_path_share"] is not None
        assert cell["windows_full"]["fast_path_share"] == 0  # allowCoordinates: no fast point
        want = cell["windows"]["throughput_per_s"] / cell["one_window"]["throughput_per_s"]
        assert abs(cell["window_vs_one_window"] - want) <= 0.0005 + 1e-9
    for a in arms:
        sc = b5["scaling"][a]
        assert sc["1"] == 1.0
        want = (b5["by_sessions"]["2"][a]["throughput_per_s"]
                / b5["by_sessions"]["1"][a]["throughput_per_s"])
        assert abs(sc["2"] - want) <= 0.0005 + 1e-9
    (t5,) = b5["targets"]
    assert t5["value"] == b5["scaling"]["windows"]["2"] and t5["higher_is_better"]
    assert t5["met"] is (t5["value"] >= t5["limit"]
                         and all(b5["by_sessions"][n]["windows"]["pages"]["hidden"] == 0
                                 and b5["by_sessions"][n]["windows"]["pages"]["active"] == int(n)
                                 for n in ("1", "2"))
                         and b5["clicks_seen"]["windows"] == b5["clicks_sent"]["windows"])

    assert res["versions"]["chromium"] not in ("", "?")
    assert res["machine"]["cores"] >= 1
    readme = (tmp_path / "README.md").read_text()
    for heading in ("## Machine and versions", "## Targets", "## B1 form task",
                    "## B2 per-action overhead", "## B4 ", "## B5 "):
        assert heading in readme
    assert "(a) raw Playwright | 1 |" in readme
    b5_rows: dict[str, list[str]] = {}  # the first table's rows; later tables repeat N
    for ln in _section(readme, "## B5 "):
        if ln.startswith("| ") and _cells(ln)[0] in ("1", "2"):
            b5_rows.setdefault(_cells(ln)[0], _cells(ln))
    for n in ("1", "2"):  # the first table: sessions, then clicks/s of each arm
        row = b5_rows[n]
        assert [float(x) for x in row[1:1 + len(arms)]] == [b5["by_sessions"][n][a]["throughput_per_s"]
                                                for a in arms], row
    _check_readme_shows(readme, res, targets)
    assert "kept by hand" in readme and "old" not in readme.splitlines()[0]


def _medians(arms: dict[str, Any]) -> dict[str, float]:
    return {k: a["median"] for k, a in arms.items() if "median" in a}


def _check_ratios(ratios: dict[str, float | None], medians: dict[str, float], base: str) -> None:
    """Each reported ratio is that arm's median over the base's median (to the report's
    0.001), so it is 1.0 exactly when the medians agree to that precision."""
    assert set(ratios) == set(medians)
    for name, median in medians.items():
        value = ratios[name]
        assert value is not None, name
        exact = median / medians[base]
        assert abs(value - exact) <= 0.0005 + 1e-9, (name, value, median, medians[base])
        if abs(exact - 1) > 0.0005:
            assert value != 1.0, (name, median, medians[base])
        if median == medians[base]:
            assert value == 1.0, name


def _check_met(t: dict[str, Any]) -> None:
    """``met`` follows from the reported value and limit (at most, or at least when
    ``higher_is_better``); no value is not judged. A target may add conditions of its own
    (B5: every click counted), so a value within the limit may still be missed."""
    if t["value"] is None:
        assert t["met"] is None, t
    elif t.get("higher_is_better"):
        assert t["met"] is False if t["value"] < t["limit"] else t["met"] in (True, False), t
    else:
        assert t["met"] is (t["value"] <= t["limit"]), t


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _section(readme: str, heading: str) -> list[str]:
    lines = readme.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(heading))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start:end]


def _check_readme_shows(readme: str, res: dict[str, Any], targets: list[dict[str, Any]]) -> None:
    """The README's tables show the numbers of results.json: each target's value and
    verdict, each B1 arm's runs and median, each B2 operation's median/min/p95."""
    verdict = {True: "met", False: "**missed**", None: "not measured"}
    rows = {_cells(ln)[0]: _cells(ln)
            for ln in _section(readme, "## Targets") if ln.startswith("| ")}
    for t in targets:
        row = rows[t["target"]]
        assert row[3] == verdict[t["met"]], row
        if t["value"] is None:
            assert row[1] == "–", row
        else:
            assert abs(float(row[1].removesuffix(" ms")) - t["value"]) <= 0.051, (row, t)
    b1_rows: dict[str, list[str]] = {}  # the arms table comes first; later tables repeat labels
    for ln in _section(readme, "## B1 "):
        if ln.startswith("| ("):
            b1_rows.setdefault(_cells(ln)[0], _cells(ln))
    for arm in res["b1"]["arms"].values():
        row = b1_rows[arm["label"]]
        assert int(row[1]) == arm["runs"]
        assert float(row[2].replace(",", "")) == pytest.approx(arm["median"], abs=0.051), row
    shown = {tuple(_cells(ln)[1:4]) for ln in _section(readme, "## B2 ") if ln.startswith("| ")}
    for name, op in res["b2"]["ops"].items():
        want = tuple(f"{op[k]:,.1f}" for k in ("median", "min", "p95"))
        assert want in shown, (name, want, shown)


def test_users_arm_goes_through_trustbridge_up(tmp_path: Path) -> None:
    """One round of B2u (no MCP): `trustbridge up` as a subprocess and the SDK clicked by
    ref, every click on the fast path and seen trusted by the page, the fallback button
    refused as moving and still clicked, Playwright's clicks counted on its own browser;
    the ratio and verdict follow from the medians, and the README shows the table."""
    env = dict(os.environ, TRUSTBRIDGE_HOME=str(tmp_path / "home"))
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "bench.py"), "--quick", "--no-mcp",
         "--only", "b2u", "--rounds", "1", "--out-dir", str(tmp_path)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=150, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    b = json.loads((tmp_path / "results.json").read_text())["b2u"]
    assert set(b["ops"]) == {"sdk_click", "sdk_click_fallback", "sdk_click_full",
                             "locator_click", "mouse_click"}
    assert b["clicks_seen"] == b["clicks_sent"] == {"trustbridge_go": 4, "trustbridge_slow": 2,
                                                    "playwright": 4}
    assert b["fast_path"] == {"sdk_click_all_fast": True, "fallback_refused": ["moving"]}
    _check_ratios(b["ratio_to_locator_click"], {k: v["median"] for k, v in b["ops"].items()},
                  "locator_click")
    (target,) = b["targets"]
    assert target["value"] == b["ratio_to_locator_click"]["sdk_click"]
    _check_met(target)
    readme = (tmp_path / "README.md").read_text()
    shown = {tuple(_cells(ln)[1:4]) for ln in _section(readme, "## B2u ") if ln.startswith("| ")}
    for name, op in b["ops"].items():
        assert tuple(f"{op[k]:,.1f}" for k in ("median", "min", "p95")) in shown, name
