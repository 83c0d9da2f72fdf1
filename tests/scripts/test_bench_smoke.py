"""Smoke test of scripts/bench.py: a tiny run writes results.json and README.md with the
expected structure, and every click the benchmarks sent reached the page as trusted input.
Speed is never asserted here: the benchmark reports it (docs/benchmarks/README.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.browser


def test_tiny_run_writes_results_and_table(tmp_path: Path) -> None:
    """One round of B1 (raw Playwright, SDK steps, SDK batch), B2, B4 and B5 (no MCP
    servers): each arm ran, each page saw every click as trusted, and the README has the
    tables, the run counts and the hand-written analysis section."""
    (tmp_path / "README.md").write_text(
        "old\n<!-- analysis:start -->\nkept by hand\n<!-- analysis:end -->\n")
    env = dict(os.environ, TRUSTBRIDGE_HOME=str(tmp_path / "home"))
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "bench.py"), "--quick", "--no-mcp",
         "--only", "b1,b2,b4,b5", "--arms", "a,b,c", "--rounds", "1",
         "--b4-counts", "2", "--b5-tabs", "2", "--b5-actions", "2",
         "--out-dir", str(tmp_path)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=110, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads((tmp_path / "results.json").read_text())

    assert set(res["b1"]["arms"]) == {"a", "b", "c"}
    for name, arm in res["b1"]["arms"].items():
        assert "error" not in arm, (name, arm)
        assert arm["runs"] == 1 and arm["median"] > 0
    assert list(res["b1"]["arms"]["c"]["steps"]) == ["snapshot", "batch", "wait"]
    calls = res["b1"]["arms"]["b"]["bridge_calls"]
    assert calls["driver.act"]["calls_per_run"] == 4  # fill, select, check, click
    assert res["b1"]["ratios"]["to_a"]["a"] == 1.0

    b2 = res["b2"]
    assert b2["clicks_seen"] == b2["clicks_sent"] > 0
    assert {"trusted_click", "locator_click", "mouse_click", "driver_act"} <= set(b2["ops"])
    assert b2["targets"][0]["met"] in (True, False)

    b4 = res["b4"]
    assert b4["focus_changes_seen"] == b4["actions_sent"] > 0
    assert set(b4["by_n"]["2"]["ops"]) == {"local_step", "local_batch", "proxy_step",
                                           "proxy_batch"}
    # The proxy really delays: its round trip is longer than the local one.
    assert b4["rtt"]["proxy_rtt"]["min"] > b4["rtt"]["local_rtt"]["min"]

    b5 = res["b5"]
    assert b5["clicks_seen"] == b5["clicks_sent"] == 2 * 2 * 2
    assert set(b5["by_tabs"]["2"]) >= {"trustbridge", "playwright", "throughput_ratio"}

    assert res["versions"]["chromium"] not in ("", "?")
    assert res["machine"]["cores"] >= 1
    readme = (tmp_path / "README.md").read_text()
    for heading in ("## Machine and versions", "## Targets", "## B1 form task",
                    "## B2 per-action overhead", "## B4 ", "## B5 "):
        assert heading in readme
    assert "(a) raw Playwright | 1 |" in readme
    assert "kept by hand" in readme and "old" not in readme.splitlines()[0]
