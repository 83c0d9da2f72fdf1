"""Unit tests of the extension's DOM-free modules (ref registry, snapshot diff), run in
Node's own test runner: tests/extension/page_units.test.mjs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
EXT = HERE.parents[1] / "extension"


def test_page_units_in_node() -> None:
    """The ref registry (16 observations, 30 min TTL, one rebind, ambiguity), the
    snapshot diff and the secret-field matcher behave as documented; every Node test passes."""
    node = shutil.which("node")
    if node is None or not (EXT / "node_modules" / "diff").is_dir():
        pytest.fail("node and extension/node_modules are needed: run scripts/test.sh "
                    "(it runs `npm ci` in extension/)")
    proc = subprocess.run([node, "--test", str(HERE / "page_units.test.mjs")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "# fail 0" in proc.stdout and "# pass 16" in proc.stdout, proc.stdout
