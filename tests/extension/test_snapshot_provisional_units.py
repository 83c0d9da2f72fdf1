"""Unit tests of provisional snapshots (extension/src/background/snapshot.js), run in
Node's own test runner: tests/extension/snapshot_provisional_units.test.mjs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def test_snapshot_provisional_units_in_node() -> None:
    """A provisional snapshot (the bridge's page state taken while the driver still checks
    its action) becomes its session's diff baseline only once kept; a dropped one never
    does; a provisional diff compares with the shown baseline."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is needed: run scripts/test.sh")
    proc = subprocess.run([node, "--test", str(HERE / "snapshot_provisional_units.test.mjs")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "# fail 0" in proc.stdout and "# pass 3" in proc.stdout, proc.stdout
