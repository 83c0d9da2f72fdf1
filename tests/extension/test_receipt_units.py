"""Unit tests of the delivery receipt's file-input and quiet signs (extension/src/page/receipt.js),
run in Node's own test runner: tests/extension/receipt_units.test.mjs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def test_receipt_units_in_node() -> None:
    """A file input clicked right after a receipt's press marks it ``fileInput`` (pushed
    again when already pushed; with the first push for a click on the input itself); no
    mark for other elements, disabled inputs, no press or a press too long ago. Quiet only
    for a plain target in the top frame whose click started no navigation, no form
    submission and consumed no activation, in the first push; the download sign for a
    navigate event with a download request."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is needed: run scripts/test.sh")
    proc = subprocess.run([node, "--test", str(HERE / "receipt_units.test.mjs")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "# fail 0" in proc.stdout and "# pass 11" in proc.stdout, proc.stdout
