"""The optional acceptance suite: every case of the shared case corpus, run through the
Python SDK in headless Chromium.

Each case is a small page rebuilt from a bug users filed against agent browser tools;
the steps are carried out by role/name targets from the snapshot and the expectations
are read from the page afterwards. The corpus is not part of this repository: the tests
run when it is found (``$TRUSTBRIDGE_CASES``, else a ``shared/cases`` folder beside the
clone, where CI may lay it) and are skipped, saying where they looked, when it is not. The
project's own regression tests (tests/e2e/test_regressions_*.py) cover the same
behaviours without it.
"""

from __future__ import annotations

import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.sdk import Tab
from trustbridge.bridge.server import BridgeServer
from trustbridge.supervisor.runner import Supervisor

from .corpus import CORPUS_SIZE, absent_reason, case_dirs, corpus_folder
from .runner import CaseRun

CASES = corpus_folder()
CASE_DIRS = case_dirs(CASES)
ABSENT = absent_reason(CASES, CASE_DIRS)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300),
              pytest.mark.skipif(ABSENT is not None, reason=ABSENT or "")]


def _free_port_pair() -> int:
    for _ in range(50):
        with socket.socket() as a:
            a.bind(("127.0.0.1", 0))
            port = a.getsockname()[1]
        try:
            with socket.socket() as b:
                b.bind(("127.0.0.1", port + 1))
            return port
        except OSError:
            continue
    raise RuntimeError("no free pair of ports")


@pytest.fixture(scope="module")
def corpus_url() -> Iterator[str]:
    port = _free_port_pair()
    proc = subprocess.Popen([sys.executable, str(CASES / "serve.py"), str(CASES),
                             "--port", str(port), "--quiet"])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/"
    proc.terminate()
    proc.wait(10)


def test_corpus_is_complete() -> None:
    """A corpus that is present holds all 14 cases (a partial copy would pass silently)."""
    assert len(CASE_DIRS) == CORPUS_SIZE, (
        f"expected {CORPUS_SIZE} cases under {CASES}, found {len(CASE_DIRS)}: "
        f"{[p.name for p in CASE_DIRS]}")


@pytest.mark.parametrize("folder", CASE_DIRS, ids=[p.name for p in CASE_DIRS])
async def test_case(folder: Path, corpus_url: str) -> None:
    """The case's steps run as listed and every expected DOM fact holds afterwards."""
    token = secrets.token_hex(16)
    async with BridgeServer(token, port=0) as server:
        async with Supervisor(server.url, token, "cases") as sup:
            deadline = time.monotonic() + 30
            while not ("cases" in server.policy.extensions and "cases" in server.policy.drivers):
                assert time.monotonic() < deadline, "browser not ready"
                await __import__("asyncio").sleep(0.05)
            async with await BridgeClient.connect(server.url, token) as client:
                tabs = (await client.call("tabs.list", {}))["tabs"]
                run = CaseRun(folder, corpus_url, Tab(client, "cases", tabs[0]["tabId"]),
                              sup.context)
                try:
                    await run.run()
                except BaseException:
                    print("\n".join(run.log))
                    raise
                failures = [m for e in run.case["expect"] if (m := await run.check(e))]
                assert not failures, "\n".join(failures + run.log)
