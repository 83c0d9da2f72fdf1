"""Unit tests of the options page's rules (extension/src/options/), run in Node's own test
runner: tests/extension/options_units.test.mjs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def test_options_units_in_node() -> None:
    """The pairing code goes over ws:// to loopback only (wss:// anywhere); a stored
    pairing is used only when complete, with its credential as the hello token."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is needed: run scripts/test.sh")
    proc = subprocess.run([node, "--test", str(HERE / "options_units.test.mjs")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "# fail 0" in proc.stdout and "# pass 2" in proc.stdout, proc.stdout
