"""Runs one of this folder's ``*.test.mjs`` files in Node's own test runner (``node
--test``) for the pytest wrappers beside it; a missing ``node`` fails (scripts/test.sh
installs it), never skips."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def run_node_units(name: str, passes: int) -> None:
    """Run ``HERE / name``; assert it exits 0 with ``passes`` tests passed and none failed
    (so a test file that silently lost tests fails too).

    Raises:
        AssertionError: the run failed or passed another number of tests (its output).
    """
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is needed: run scripts/test.sh")
    proc = subprocess.run([node, "--test", str(HERE / name)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "# fail 0" in proc.stdout and f"# pass {passes}\n" in proc.stdout, proc.stdout
