"""The generated protocol artefacts match the pydantic models (single source of truth)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_generated_schema_is_up_to_date() -> None:
    """scripts/gen_schema.py --check exits 0: docs/protocol.schema.json and the
    extension's generated protocol.js were regenerated after the last model change."""
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_schema.py"), "--check"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr


def test_check_detects_drift(tmp_path: Path, monkeypatch) -> None:
    """--check fails when a generated file differs (the check can fail)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import gen_schema
    finally:
        sys.path.pop(0)
    fake = tmp_path / "protocol.js"
    fake.write_text("// edited by hand\n")
    monkeypatch.setattr(gen_schema, "JS", fake)
    assert gen_schema.main(["--check"]) == 1
