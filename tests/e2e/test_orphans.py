"""A SIGKILLed ``trustbridge up`` leaves no supervisor or browser behind: the supervisor
is started with --exit-with-parent and closes its browser once re-parented."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _descendants(pid: int) -> list[int]:
    out = []
    for child in _children(pid):
        out += [child, *_descendants(child)]
    return out


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is gone for our purpose


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_sigkilled_up_takes_its_supervisor_and_browser_with_it(tmp_path: Path) -> None:
    env = dict(os.environ, TRUSTBRIDGE_HOME=str(tmp_path), PYTHONPATH=str(REPO))
    up = subprocess.Popen([sys.executable, "-m", "trustbridge", "up", "--port", str(_free_port())],
                          env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    supervisor: list[int] = []
    try:
        deadline = time.monotonic() + 90
        assert up.stdout is not None
        for line in up.stdout:  # "ready" once the device answers
            if "ready" in line.lower() or time.monotonic() > deadline:
                break
        supervisor = [p for p in _children(up.pid)
                      if b"supervisor" in Path(f"/proc/{p}/cmdline").read_bytes()]
        assert len(supervisor) == 1, "trustbridge up did not start one supervisor"
        browsers = _descendants(supervisor[0])  # Playwright's driver and Chromium's processes
        assert any(b"chrom" in Path(f"/proc/{p}/cmdline").read_bytes() for p in browsers), \
            "the supervisor runs no browser process"
        up.send_signal(signal.SIGKILL)
        up.wait(10)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(_alive(p) for p in supervisor + browsers):
            time.sleep(0.2)
        assert not _alive(supervisor[0]), "the supervisor outlived its SIGKILLed parent"
        assert not any(_alive(p) for p in browsers), "the browser outlived its supervisor"
    finally:
        if up.poll() is None:
            up.kill()
            up.wait(10)
        if up.stdout is not None:
            up.stdout.close()
        for pid in supervisor:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
