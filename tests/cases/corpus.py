"""Where the optional case corpus is, and why its tests are skipped when it is not there.

The corpus is kept outside this repository. CI may lay it as ``shared/cases`` in the
folder that holds the clone; a developer points ``$TRUSTBRIDGE_CASES`` at a copy. Neither
is required: without the corpus its tests are skipped with :func:`absent_reason`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORPUS_SIZE = 14


def corpus_folder(env: Mapping[str, str] | None = None, repo: Path = REPO) -> Path:
    """Where the case corpus is looked for: ``$TRUSTBRIDGE_CASES`` when set, else the
    folder ``shared/cases`` in the clone's parent folder (where CI may lay it)."""
    env = os.environ if env is None else env
    return Path(env["TRUSTBRIDGE_CASES"]) if env.get("TRUSTBRIDGE_CASES") \
        else repo.parent / "shared" / "cases"


def case_dirs(folder: Path) -> list[Path]:
    """The case folders (``NN-slug`` with a case.json) of ``folder``, sorted; [] if none."""
    return sorted(p for p in folder.glob("[0-9][0-9]-*") if (p / "case.json").is_file())


def absent_reason(folder: Path, found: list[Path]) -> str | None:
    """Why the corpus tests are skipped (where they looked, how to provide the corpus),
    or None when ``folder`` holds cases."""
    if found:
        return None
    return (f"optional case corpus not found: no NN-*/case.json under {folder}; set "
            "TRUSTBRIDGE_CASES to the corpus folder (or lay it as shared/cases beside the "
            "clone) to run the acceptance suite; tests/e2e/test_regressions_*.py cover "
            "its behaviours")
