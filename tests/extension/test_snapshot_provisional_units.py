"""Unit tests of provisional snapshots (extension/src/background/snapshot.js), run in
Node's own test runner: tests/extension/snapshot_provisional_units.test.mjs."""

from __future__ import annotations

from .node_units import run_node_units


def test_snapshot_provisional_units_in_node() -> None:
    """A provisional snapshot (the bridge's page state taken while the driver still checks
    its action) becomes its session's diff baseline only once kept; a dropped one never
    does; a provisional diff compares with the shown baseline."""
    run_node_units("snapshot_provisional_units.test.mjs", 4)
