"""Unit tests of the binding of per-frame ports to documents
(extension/src/background/ports.js) and of the content script's end of the port
(extension/src/page/frameport.js), run in Node's own test runner:
tests/extension/ports_units.test.mjs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def test_ports_units_in_node() -> None:
    """A port serves requests only while the last commit of its frame names its
    document, no navigation is in flight and the op does not change the page; a commit or
    a connect of another document, a disconnect or the tab closing fails what waits on it;
    the remembered commits are bounded; the content end reconnects lazily (never in a
    loop) and stops once the extension context is gone."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is needed: run scripts/test.sh")
    proc = subprocess.run([node, "--test", str(HERE / "ports_units.test.mjs")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "# fail 0" in proc.stdout and "# pass 13" in proc.stdout, proc.stdout
