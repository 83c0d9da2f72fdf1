"""The private extension copy (supervisor/extension_copy.py): who owns it, and which copies
the next start sweeps; the supervisor's token intake (supervisor/__main__.py)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from trustbridge.bridge.protocol import errors as E
from trustbridge.supervisor import __main__ as cli
from trustbridge.supervisor import extension_copy
from trustbridge.supervisor.extension_copy import OWNER_FILE, sweep_stale_copies


def _copy(root: Path, name: str, owner: dict | None, age_s: float = 0.0) -> Path:
    path = root / f"trustbridge-ext-{name}"
    (path / "extension").mkdir(parents=True)
    (path / "extension" / "config.json").write_text('{"token": "t"}')
    if owner is not None:
        (path / OWNER_FILE).write_text(json.dumps(owner))
    if age_s:
        old = path.stat().st_mtime - age_s
        os.utime(path, (old, old))
    return path


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_copy_whose_owner_is_dead_is_swept_and_a_live_ones_is_kept(tmp_path: Path) -> None:
    """Dead owner: removed with its config and profile; this process's copy stays."""
    dead = _copy(tmp_path, "dead", {"pid": _dead_pid(), "started": None})
    live = _copy(tmp_path, "live", {"pid": os.getpid(),
                                    "started": extension_copy._process_started(os.getpid())})
    assert sweep_stale_copies(tmp_path) == [dead]
    assert not dead.exists() and live.exists()


def test_a_recycled_pid_does_not_keep_a_copy_alive(tmp_path: Path) -> None:
    """A live pid with another start time is not the owner: the copy is stale."""
    recycled = _copy(tmp_path, "recycled", {"pid": os.getpid(), "started": "1"})
    assert sweep_stale_copies(tmp_path) == [recycled]


def test_an_unowned_copy_is_swept_only_after_the_grace_period(tmp_path: Path) -> None:
    """No owner file: kept while young (its owner may be writing it), removed when old;
    other temp dirs are never touched."""
    young = _copy(tmp_path, "young", None)
    old = _copy(tmp_path, "old", None, age_s=extension_copy.UNOWNED_GRACE_S + 5)
    other = tmp_path / "trustbridge-profile-x"
    other.mkdir()
    assert sweep_stale_copies(tmp_path) == [old]
    assert young.exists() and other.exists()


def test_prepare_extension_names_this_process_as_owner(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The new copy's owner file holds this pid, and a sweep keeps it."""
    monkeypatch.setattr(extension_copy.tempfile, "tempdir", str(tmp_path))
    copy = extension_copy.prepare_extension("ws://127.0.0.1:1", "tok", "dev")
    try:
        owner = json.loads((copy.path.parent / OWNER_FILE).read_text())
        assert owner["pid"] == os.getpid()
        assert sweep_stale_copies(tmp_path) == []
    finally:
        copy.cleanup()
    assert not copy.path.parent.exists()


def test_the_token_read_from_stdin_leaves_no_trace_in_the_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``--token-file -`` reads stdin's first line; TRUSTBRIDGE_TOKEN is dropped from the
    environment the browser would inherit."""
    monkeypatch.setenv("TRUSTBRIDGE_TOKEN", "from-env")
    monkeypatch.setattr(sys, "stdin", io.StringIO("from-stdin\nrest\n"))
    assert cli._token("-") == "from-stdin"
    assert "TRUSTBRIDGE_TOKEN" not in os.environ


def test_the_environment_token_still_works_but_is_removed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Without --token-file the environment's token is used, then removed from it."""
    monkeypatch.setenv("TRUSTBRIDGE_TOKEN", "from-env")
    assert cli._token(None) == "from-env"
    assert "TRUSTBRIDGE_TOKEN" not in os.environ


def test_extension_source_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """$TRUSTBRIDGE_EXTENSION_DIR, else an installed wheel's supervisor/extension_dist
    (through importlib.resources), else the clone's extension/dist; none: InternalError
    naming the real build command (no scripts/build_extension.py)."""
    monkeypatch.delenv("TRUSTBRIDGE_EXTENSION_DIR", raising=False)
    assert extension_copy.packaged_extension() is None  # a clone: nothing packaged
    assert extension_copy.extension_source() == extension_copy.EXTENSION_BUILD
    pkg = tmp_path / "site" / "supervisor"
    (pkg / "extension_dist").mkdir(parents=True)
    (pkg / "extension_dist" / "manifest.json").write_text("{}")
    monkeypatch.setattr(extension_copy.importlib.resources, "files",
                        lambda name: pkg if name == "trustbridge.supervisor" else pytest.fail(name))
    assert extension_copy.extension_source() == pkg / "extension_dist"
    own = tmp_path / "own"
    own.mkdir()
    (own / "manifest.json").write_text("{}")
    monkeypatch.setenv("TRUSTBRIDGE_EXTENSION_DIR", str(own))
    assert extension_copy.extension_source() == own
    monkeypatch.setenv("TRUSTBRIDGE_EXTENSION_DIR", str(tmp_path / "none"))
    with pytest.raises(E.InternalError, match="node build.mjs") as info:
        extension_copy.extension_source()
    assert "build_extension" not in info.value.message
    monkeypatch.delenv("TRUSTBRIDGE_EXTENSION_DIR")
    (pkg / "extension_dist" / "manifest.json").unlink()
    monkeypatch.setattr(extension_copy, "EXTENSION_BUILD", tmp_path / "extension" / "dist")
    with pytest.raises(E.InternalError, match="neither the installed package"):
        extension_copy.extension_source()
