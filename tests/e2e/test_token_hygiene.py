"""Token hygiene of a real launch (issue 13 item 9): the bridge token reaches the
extension only through its private config file, never through a process environment,
and a SIGKILLed supervisor's copy of that file does not outlive the next start."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from trustbridge.bridge.embedded import Embedded
from trustbridge.supervisor import launcher

from .test_orphans import REPO, _alive, _descendants

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]


def _environ(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return b""


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


async def test_the_token_is_in_no_environment_of_the_supervisor_or_the_browser(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every process of the embedded launch (supervisor, Playwright's node, every Chromium
    process) has an environment without the token, and no command line carries it."""
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    monkeypatch.delenv("TRUSTBRIDGE_TOKEN", raising=False)
    emb = Embedded(port=0)
    try:
        await emb.start()
        assert emb.child is not None
        pids = [emb.child.pid, *_descendants(emb.child.pid)]
        browsers = [p for p in pids if b"chrom" in _cmdline(p)]
        assert browsers, "no browser process found under the supervisor"
        token = emb.token.encode()
        assert [p for p in pids if token in _environ(p)] == []
        assert [p for p in pids if token in _cmdline(p)] == []
    finally:
        await emb.stop()


def _copies(root: Path) -> list[Path]:
    return sorted(root.glob("trustbridge-ext-*"))


def test_a_sigkilled_supervisors_config_is_swept_by_the_next_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGKILL of the supervisor leaves its copy (config.json with the token) behind; the
    next start removes it, because its owner is dead, and keeps only its own copy."""
    token = "tok-" + os.urandom(8).hex()
    token_file = tmp_path / "token"
    token_file.write_text(token)
    # A short TMPDIR of its own: Chromium puts Unix sockets there (108-byte path limit).
    temp = Path(tempfile.mkdtemp(prefix="tb-"))
    env = dict(os.environ, TMPDIR=str(temp), PYTHONPATH=str(REPO))
    env.pop("TRUSTBRIDGE_TOKEN", None)
    sup = subprocess.Popen([sys.executable, "-m", "trustbridge.supervisor", "--bridge-url",
                            "ws://127.0.0.1:9", "--token-file", str(token_file)],
                           env=env, cwd=REPO, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(
                b"chrom" in _cmdline(p) for p in _descendants(sup.pid)):
            time.sleep(0.2)
        procs = _descendants(sup.pid)
        assert any(b"chrom" in _cmdline(p) for p in procs), "the browser did not start"
        stale = _copies(temp)
        assert len(stale) == 1 and token in (stale[0] / "extension" / "config.json").read_text()
        sup.send_signal(signal.SIGKILL)
        sup.wait(10)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(_alive(p) for p in procs):
            time.sleep(0.2)
        assert _copies(temp) == stale, "precondition: the killed supervisor left its copy"

        monkeypatch.setattr(tempfile, "tempdir", str(temp))
        fresh = launcher.prepare_extension("ws://127.0.0.1:9", "other", "dev")
        try:
            assert _copies(temp) == [fresh.path.parent]
        finally:
            fresh.cleanup()
    finally:
        if sup.poll() is None:
            sup.kill()
            sup.wait(10)
        for pid in procs:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(temp, ignore_errors=True)


async def test_the_embedded_parent_removes_its_killed_supervisors_copy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGKILL of the embedded launch's supervisor: stopping the embedded default (what
    ``trustbridge up`` does when its supervisor dies) removes the copy it left."""
    temp = Path(tempfile.mkdtemp(prefix="tb-"))  # short: Chromium's sockets live here
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    emb = Embedded(port=0)
    try:
        await emb.start()
        assert emb.child is not None
        procs = _descendants(emb.child.pid)
        assert len(_copies(temp)) == 1
        emb.child.send_signal(signal.SIGKILL)
        await emb.child.wait()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(_alive(p) for p in procs):
            await asyncio.sleep(0.2)
        assert len(_copies(temp)) == 1, "precondition: the killed supervisor left its copy"
    finally:
        await emb.stop()
    try:
        assert _copies(temp) == []
    finally:
        shutil.rmtree(temp, ignore_errors=True)
