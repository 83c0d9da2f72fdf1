"""Soak: several ``trustbridge mcp`` clients on one machine, parts killed at random
(issue 32, "Done when"). Not part of CI.

N MCP clients (default 4) each run ``python -m trustbridge mcp --bridge-port 0`` over
stdio, as an MCP client does, all with one state directory (so they share the first
one's bridge, and take over when its owner exits). Each client starts and stops at
random over the run (lives of 20-120 s) and, while it lives, loops on a page of its own
(served here on 127.0.0.1): navigate, snapshot, type its own marker into the page's
box, read the box back. Meanwhile faults are injected at random moments (every 10-40 s),
each by SIGKILL of one PID found under this process:

- ``extension``: Chromium's extension process (``--extension-process``);
- ``renderer``: a page renderer (``--type=renderer`` without ``--extension-process``);
- ``driver``: Playwright's driver (the supervisor's node process: its link to the
  browser; trustbridge's own input driver lives in the supervisor process);
- ``supervisor``: a ``python -m supervisor`` process.

Counted: calls, answers by code (``ok`` or the error code of the tool result), faults
by kind, and for each fault the time until the next successful call of any client
(its recovery); clients whose last ``STUCK_CALLS`` calls all failed for over
``STUCK_S`` (a client needing a restart); typing that reached another client's page
(each page reports every value of its box to this server, with the owner in its URL: a
value holding another client's marker is misdirected input); processes left behind
after every client stopped.

Usage: python scripts/soak.py [--clients 4] [--minutes 15] [--seed N] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import shutil
import signal
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from trustbridge.supervisor.parent import alive, descendants  # noqa: E402

CALL_TIMEOUT_S = 90
STUCK_CALLS = 8
STUCK_S = 90.0
PAGE = """<!doctype html><title>soak {owner}</title>
<label>Box <input id="box" aria-label="Box"></label>
<script>
const owner = new URLSearchParams(location.search).get('owner');
document.getElementById('box').addEventListener('input', (e) => {{
  fetch('/log?owner=' + encodeURIComponent(owner) + '&value=' +
        encodeURIComponent(e.target.value)).catch(() => {{}});
}});
</script>"""


class _Pages(BaseHTTPRequestHandler):
    log: list[tuple[str, str]] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        if parts.path == "/log":
            _Pages.log.append((query.get("owner", [""])[0], query.get("value", [""])[0]))
            body = b"ok"
        else:
            body = PAGE.format(owner=query.get("owner", ["?"])[0]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@dataclass
class Stats:
    calls: int = 0
    answers: Counter = field(default_factory=Counter)
    faults: Counter = field(default_factory=Counter)
    fault_times: list[tuple[str, float]] = field(default_factory=list)
    recoveries: list[tuple[str, float]] = field(default_factory=list)
    ok_times: list[float] = field(default_factory=list)
    stuck: list[str] = field(default_factory=list)
    client_runs: int = 0
    misfires: list[str] = field(default_factory=list)
    samples: dict[str, list[str]] = field(default_factory=dict)


def _code(result) -> str:
    text = "\n".join(c.text for c in result.content if c.type == "text")
    if not result.is_error:
        return "ok"
    found = re.search(r"Error ([A-Z_]+)", text)
    return found.group(1) if found else "ERROR"


def _ref(text: str) -> str | None:
    found = re.search(r'textbox "Box"[^\n]*?\[ref=((?:f\d+)?e\d+)\]', text)
    return found.group(1) if found else None


async def _client_life(n: int, run: int, home: Path, base: str, stats: Stats,
                       until: float, rng: random.Random) -> None:
    """One client's life: start its server, loop on its page, then exit."""
    owner = f"c{n}"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "trustbridge", "mcp", "--bridge-port", "0"],
        env=dict(os.environ, TRUSTBRIDGE_HOME=str(home), PYTHONPATH=str(REPO)),
        cwd=str(REPO))
    life_end = min(until, time.monotonic() + rng.uniform(20, 120))
    errlog = open(home / f"mcp-{owner}-{run}.log", "w")  # noqa: SIM115
    fails: list[float] = []
    stats.client_runs += 1
    try:
        async with Client(stdio_client(params, errlog=errlog),
                          read_timeout_seconds=CALL_TIMEOUT_S) as client:
            k = 0
            last_text = ""
            while time.monotonic() < life_end:
                k += 1
                marker = f"{owner}-{run}-{k}"
                for tool, args in [
                        ("browser_navigate", {"url": f"{base}/page?owner={owner}&k={k}"}),
                        ("browser_snapshot", {}), ("type", None),
                        ("browser_evaluate", {
                            "function": "() => document.getElementById('box').value"})]:
                    if tool == "type":
                        ref = _ref(last_text)  # the snapshot's, just before
                        if ref is None:
                            continue
                        tool, args = "browser_type", {"element": "Box", "ref": ref,
                                                      "text": marker}
                    stats.calls += 1
                    try:
                        result = await asyncio.wait_for(client.call_tool(tool, args),
                                                        CALL_TIMEOUT_S)
                        code = _code(result)
                        last_text = "\n".join(c.text for c in result.content
                                              if c.type == "text")
                    except Exception as exc:  # noqa: BLE001 - a transport failure is counted
                        code, last_text = f"CLIENT_{type(exc).__name__}", ""
                    stats.answers[code] += 1
                    if code != "ok" and len(stats.samples.setdefault(code, [])) < 3:
                        stats.samples[code].append(f"{tool}: {last_text[:300]}")
                    now = time.monotonic()
                    if code == "ok":
                        stats.ok_times.append(now)
                        fails.clear()
                    else:
                        fails.append(now)
                        # As an agent told to wait would (capped: the soak wants calls).
                        wait = re.search(r"retry in about (\d+) s", last_text)
                        await asyncio.sleep(min(int(wait.group(1)), 3) if wait else 0.2)
                        if len(fails) >= STUCK_CALLS and now - fails[0] > STUCK_S:
                            stats.stuck.append(f"{owner} run {run}: {len(fails)} failed "
                                               f"calls over {now - fails[0]:.0f} s")
                            return
                    if time.monotonic() >= life_end:
                        break
                await asyncio.sleep(rng.uniform(0, 1.0))
    except Exception as exc:  # noqa: BLE001 - the client itself failed: counted
        stats.answers[f"CLIENT_EXIT_{type(exc).__name__}"] += 1
    finally:
        errlog.close()


async def _client_slot(n: int, home: Path, base: str, stats: Stats, until: float,
                       rng: random.Random) -> None:
    run = 0
    while time.monotonic() < until - 5:
        await asyncio.sleep(rng.uniform(0, 10))  # start at random
        run += 1
        await _client_life(n, run, home, base, stats, until, rng)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _targets(kind: str) -> list[int]:
    pids = descendants()
    if kind == "extension":
        return [p for p in pids if b"--extension-process" in _cmdline(p)]
    if kind == "renderer":
        return [p for p in pids if b"--type=renderer" in (c := _cmdline(p))
                and b"--extension-process" not in c]
    if kind == "driver":
        return [p for p in pids if b"run-driver" in _cmdline(p)]
    if kind == "supervisor":
        # ``-m trustbridge.supervisor`` since the namespace move (``-m supervisor``
        # before): matching only the old name injected no supervisor fault at all.
        return [p for p in pids if re.search(rb"-m\x00(trustbridge\.)?supervisor\x00",
                                             _cmdline(p))]
    return []


async def _faults(stats: Stats, until: float, rng: random.Random) -> None:
    await asyncio.sleep(20)
    while time.monotonic() < until - 20:
        kind = rng.choice(["extension", "renderer", "driver", "supervisor"])
        pids = _targets(kind)
        if pids:
            pid = rng.choice(pids)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                stats.faults[kind] += 1
                stats.fault_times.append((kind, time.monotonic()))
        await asyncio.sleep(rng.uniform(10, 40))


def _recoveries(stats: Stats) -> None:
    oks = sorted(stats.ok_times)
    for kind, at in stats.fault_times:
        after = next((t for t in oks if t > at), None)
        stats.recoveries.append((kind, round(after - at, 2) if after else float("inf")))


def _misfires(stats: Stats) -> None:
    for owner, value in _Pages.log:
        for marker in re.findall(r"(c\d+)-\d+-\d+", value):
            if marker != owner:
                stats.misfires.append(f"page of {owner} got {marker}'s text: {value!r}")
                break


async def main_async(args: argparse.Namespace) -> dict:
    rng = random.Random(args.seed)
    home = Path(tempfile.mkdtemp(prefix="tb-soak-"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    stats = Stats()
    started = time.monotonic()
    until = started + args.minutes * 60
    try:
        await asyncio.gather(
            *(_client_slot(n, home, base, stats, until, rng) for n in range(args.clients)),
            _faults(stats, until, rng))
    finally:
        server.shutdown()
    # Every client has stopped: what is left of what they started?
    await asyncio.sleep(5)
    left = [p for p in descendants() if alive(p)]
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    _recoveries(stats)
    _misfires(stats)
    times = [t for _, t in stats.recoveries if t != float("inf")]
    report = {
        "minutes": args.minutes, "clients": args.clients, "clientRuns": stats.client_runs,
        "calls": stats.calls, "answers": dict(stats.answers.most_common()),
        "faults": dict(stats.faults),
        "recoveries": {"count": len(times),
                       "never": len(stats.recoveries) - len(times),
                       "medianS": round(statistics.median(times), 2) if times else None,
                       "maxS": max(times) if times else None,
                       "byFault": [[k, t] for k, t in stats.recoveries]},
        "errorSamples": stats.samples, "stuckClients": stats.stuck, "misdirectedTyping": stats.misfires,
        "leftBehind": len(left), "home": str(home),
    }
    if not args.keep:
        shutil.rmtree(home, ignore_errors=True)
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--minutes", type=float, default=15.0)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the state dir and logs")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps(report))
    else:
        print(json.dumps(report, indent=2))
    ok = not report["stuckClients"] and not report["misdirectedTyping"] \
        and not report["leftBehind"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
