"""Issue 32 item 6: every process the runtime starts ends within seconds of its parent,
however the parent ends, and SIGTERM stops a supervisor and its browser within 5 s.
Real processes, killed by PID; what is left is counted by PID with a bounded wait.

Firefox ESR: the supervisor's watch of its parent does not depend on the browser; the
tests run Chromium and Firefox alike where noted.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trustbridge.supervisor.parent import alive, descendants

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

REPO = Path(__file__).resolve().parents[2]
GONE_BOUND_S = 20.0
"""How long, s, the supervisor and its browser may take to end after their parent died
(the sign comes within one event-loop turn; the browser's close takes the rest)."""
SIGTERM_BOUND_S = 5.0
"""Issue 32 item 6: SIGTERM stops a supervisor and its browser within 5 s."""
FIREFOX_MISSING = not (shutil.which("firefox-esr") or os.environ.get("TRUSTBRIDGE_FIREFOX"))
BROWSERS = [
    pytest.param("chromium", id="chromium"),
    pytest.param("firefox", id="firefox", marks=[
        pytest.mark.firefox,
        pytest.mark.skipif(FIREFOX_MISSING, reason="Firefox ESR is not installed")]),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _supervisor_cmd(browser: str) -> list[str]:
    # Nothing listens on the port: the extension and driver keep retrying, the browser
    # runs all the same (what must not outlive the parent).
    return [sys.executable, "-m", "trustbridge.supervisor", "--bridge-url",
            f"ws://127.0.0.1:{_free_port()}", "--device", browser, "--browser", browser,
            "--exit-with-parent", "--token-file", "-"]


def _wait_gone(pids: set[int], bound_s: float) -> tuple[set[int], float]:
    """``(still alive, seconds waited)`` after waiting up to ``bound_s`` for ``pids``."""
    started = time.monotonic()
    while time.monotonic() - started < bound_s and any(alive(p) for p in pids):
        time.sleep(0.1)
    return {p for p in pids if alive(p)}, time.monotonic() - started


def _browser_pids(supervisor: int, browser: str, bound_s: float = 60) -> set[int]:
    """The supervisor's descendants once its browser runs (bounded wait)."""
    name = b"chrom" if browser == "chromium" else b"firefox"
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        found = set(descendants(supervisor))
        for pid in found:
            try:
                if name in Path(f"/proc/{pid}/cmdline").read_bytes():
                    return found
            except OSError:
                continue
        if not alive(supervisor):
            break
        time.sleep(0.2)
    raise AssertionError(f"no {browser} process under supervisor {supervisor}")


def _kill_all(pids: set[int]) -> None:
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("browser", BROWSERS)
def test_a_parent_killed_before_the_supervisor_looked_takes_it_and_its_browser_along(
        browser: str, tmp_path: Path) -> None:
    """The parent writes the token and is SIGKILLed at once, before the supervisor has
    even imported its modules (the start-up window of the issue's 88-minute orphan: the
    supervisor then read parent id 1 as its parent and never saw it change). The
    supervisor still closes its browser and exits: its stdin, the dead parent's pipe,
    is at end-of-file."""
    parent_code = (
        "import os, signal, subprocess, sys\n"
        f"child = subprocess.Popen({_supervisor_cmd(browser)!r}, stdin=subprocess.PIPE,"
        " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)\n"
        "child.stdin.write(b'x' * 32 + b'\\n'); child.stdin.flush()\n"
        "print(child.pid, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n")
    env = dict(os.environ, PYTHONPATH=str(REPO), TRUSTBRIDGE_HOME=str(tmp_path))
    parent = subprocess.run([sys.executable, "-c", parent_code], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=30)
    assert parent.returncode == -signal.SIGKILL
    supervisor = int(parent.stdout.split()[0])
    seen: set[int] = {supervisor}
    try:
        # Collect what it started while it lives (it may already be closing).
        deadline = time.monotonic() + GONE_BOUND_S
        while time.monotonic() < deadline and alive(supervisor):
            seen |= set(descendants(supervisor))
            time.sleep(0.1)
        left, waited = _wait_gone(seen, GONE_BOUND_S)
        print(f"{browser}: {len(seen)} processes seen, {len(left)} left after {waited:.1f} s")
        assert not alive(supervisor), "the supervisor outlived its SIGKILLed parent"
        assert not left, f"processes outlived their dead parent: {sorted(left)}"
    finally:
        _kill_all(seen | set(descendants(supervisor)))


@pytest.mark.parametrize("browser", BROWSERS)
def test_sigterm_stops_a_running_supervisor_and_its_browser_within_5_s(
        browser: str, tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO), TRUSTBRIDGE_HOME=str(tmp_path))
    sup = subprocess.Popen(_supervisor_cmd(browser), cwd=REPO, env=env, stdin=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, start_new_session=True)
    assert sup.stdin is not None
    sup.stdin.write(b"x" * 32 + b"\n")
    sup.stdin.flush()
    pids: set[int] = set()
    try:
        pids = _browser_pids(sup.pid, browser)
        time.sleep(1.0)  # running, not starting
        pids |= set(descendants(sup.pid))
        sup.send_signal(signal.SIGTERM)
        left, waited = _wait_gone(pids | {sup.pid}, SIGTERM_BOUND_S + 3)
        sup.wait(5)
        print(f"{browser}: SIGTERM to everything gone: {waited:.2f} s ({len(pids)} processes)")
        assert not left, f"alive {waited:.1f} s after SIGTERM: {sorted(left)}"
        assert waited <= SIGTERM_BOUND_S, f"SIGTERM took {waited:.1f} s (bound 5 s)"
    finally:
        if sup.poll() is None:
            sup.kill()
            sup.wait(5)
        _kill_all(pids)
        sup.stdin.close()


def test_sigterm_while_the_browser_starts_stops_the_supervisor_within_5_s(
        tmp_path: Path) -> None:
    """SIGTERM half a second after start, while Playwright is still launching Chromium:
    the start is abandoned and everything started is gone within 5 s."""
    env = dict(os.environ, PYTHONPATH=str(REPO), TRUSTBRIDGE_HOME=str(tmp_path))
    sup = subprocess.Popen(_supervisor_cmd("chromium"), cwd=REPO, env=env,
                           stdin=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    assert sup.stdin is not None
    sup.stdin.write(b"x" * 32 + b"\n")
    sup.stdin.flush()
    seen: set[int] = set()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not descendants(sup.pid):
            time.sleep(0.05)  # Playwright's driver is starting: the launch is under way
        seen = set(descendants(sup.pid))
        assert seen, "the supervisor started nothing"
        sup.send_signal(signal.SIGTERM)
        sent = time.monotonic()
        while time.monotonic() - sent < SIGTERM_BOUND_S + 3 and sup.poll() is None:
            seen |= set(descendants(sup.pid))
            time.sleep(0.05)
        left, _ = _wait_gone(seen | {sup.pid}, 1.0)
        waited = time.monotonic() - sent
        print(f"SIGTERM during start to everything gone: {waited:.2f} s")
        assert not left, f"alive after SIGTERM during start: {sorted(left)}"
        assert waited <= SIGTERM_BOUND_S, f"took {waited:.1f} s"
    finally:
        if sup.poll() is None:
            sup.kill()
            sup.wait(5)
        _kill_all(seen)
        sup.stdin.close()


@pytest.mark.parametrize("kill_after_s", [0.3, 1.5, 4.0])
def test_a_sigkilled_mcp_server_leaves_nothing_behind(kill_after_s: float, origins,
                                                      tmp_path: Path) -> None:
    """``trustbridge mcp`` as a client runs it: initialize, then a browser_navigate; the
    server is SIGKILLed ``kill_after_s`` after it spawned its supervisor (the issue's
    window: the embedded browser still starting, or the first navigate under way). Every process it
    started (supervisor, Playwright's driver, the browser) is gone within 20 s."""
    import json

    env = dict(os.environ, PYTHONPATH=str(REPO), TRUSTBRIDGE_HOME=str(tmp_path))
    server = subprocess.Popen([sys.executable, "-m", "trustbridge", "mcp", "--bridge-port", "0"],
                              cwd=REPO, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    assert server.stdin is not None
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "orphan-test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "browser_navigate", "arguments": {"url": f"{origins.main}/index.html"}}},
    ]
    seen: set[int] = set()
    try:
        server.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())
        server.stdin.flush()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not seen:  # the supervisor is spawned
            seen |= set(descendants(server.pid))
            time.sleep(0.02)
        assert seen, "the MCP server started no supervisor"
        spawned = time.monotonic()
        while time.monotonic() - spawned < kill_after_s:
            seen |= set(descendants(server.pid))
            time.sleep(0.02)
        seen |= set(descendants(server.pid))
        server.send_signal(signal.SIGKILL)
        server.wait(10)
        killed = time.monotonic()
        # What was being started at the kill may come up after it: keep counting the
        # descendants of what was seen until all is gone or the bound passes.
        while time.monotonic() - killed < GONE_BOUND_S and any(alive(p) for p in seen):
            for pid in list(seen):
                seen |= set(descendants(pid))
            time.sleep(0.1)
        left, _ = _wait_gone(seen, 0.5)
        waited = time.monotonic() - killed
        print(f"killed {kill_after_s} s in: {len(seen)} processes seen, {len(left)} left "
              f"after {waited:.1f} s")
        assert not left, f"outlived the SIGKILLed MCP server: {sorted(left)}"
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(5)
        _kill_all(seen)
        server.stdin.close()
        if server.stdout is not None:
            server.stdout.close()
