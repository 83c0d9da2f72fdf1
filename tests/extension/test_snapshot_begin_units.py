"""Unit tests of the start of a whole-tab snapshot (extension/src/background/snapshot.js
``begin``, extension/src/page/begin.js), run in Node's own test runner:
tests/extension/snapshot_begin_units.test.mjs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def test_snapshot_begin_units_in_node() -> None:
    """A one-frame tab costs one content-script message (identity and first chunk
    together, asked with the sizes render() would ask); a walk's error is thrown as its own
    message's was, no answer is the empty snapshot, and a bad ref fails before any message;
    child frames are announced beside the top's walk, identified after it (once more
    without a key) and stitched in place; new frames' ordinals follow the browser's frame
    order; a child frame's ref starts the walk there."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is needed: run scripts/test.sh")
    proc = subprocess.run([node, "--test", str(HERE / "snapshot_begin_units.test.mjs")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "# fail 0" in proc.stdout and "# pass 6" in proc.stdout, proc.stdout
