"""Unit tests of the action badge per owned tab (extension/src/background/owners.js) and
the popup's questions (popup_api.js), run in Node's own test runner:
tests/extension/owners_units.test.mjs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def test_owners_units_in_node() -> None:
    """Badges follow the bridge's ``sessions.owners`` (set, cleared, set again after a
    navigation, every open tab swept once); the popup gets the owner of a tab, and Stop
    sends ``session.stop`` only for the tab's current owner while connected."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is needed: run scripts/test.sh")
    proc = subprocess.run([node, "--test", str(HERE / "owners_units.test.mjs")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "# fail 0" in proc.stdout and "# pass 5" in proc.stdout, proc.stdout
