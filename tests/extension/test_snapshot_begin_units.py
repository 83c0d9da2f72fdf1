"""Unit tests of the start of a whole-tab snapshot (extension/src/background/snapshot.js
``begin``, extension/src/page/begin.js), run in Node's own test runner:
tests/extension/snapshot_begin_units.test.mjs."""

from __future__ import annotations

from .node_units import run_node_units


def test_snapshot_begin_units_in_node() -> None:
    """A one-frame tab costs one content-script message (identity and first chunk
    together, asked with the sizes render() would ask); a walk's error is thrown as its own
    message's was, no answer is the empty snapshot, and a bad ref fails before any message;
    child frames are announced beside the top's walk, identified after it (once more
    without a key) and stitched in place; new frames' ordinals follow the browser's frame
    order; a child frame's ref starts the walk there."""
    run_node_units("snapshot_begin_units.test.mjs", 6)
