"""What one MCP message costs over stdio: ``trustbridge mcp`` on the ``mcp`` package's
transport against its own (bridge/mcp/stdio.py), in the same run, and Playwright MCP
(Node) as the bar (issue 18).

Starts a bridge in this process (``BridgeServer``, a token file in a state directory of
its own, no browser), then per arm one ``python -m trustbridge mcp --bridge URL`` as
users run it (scripts/benchlib/stack.py ``_params``), driven by the ``mcp`` Python
client over stdio; arms: ``package`` (``TRUSTBRIDGE_MCP_STDIO=package``, the package's
``stdio_server``), ``native`` (the default), and ``playwright`` (``@playwright/mcp``,
when installed: scripts/benchlib/env.py; ``--no-playwright`` skips it). Per arm and
round, after a warm-up, it times ``--calls`` calls of each kind, one at a time:

- ``tools/list``: the transport, the server loop and the tool list (trustbridge's is
  31 tools with their schemas; ``ping`` is gone from the protocol version the client
  negotiates);
- ``tools/call``: ``browser_tabs {action: list}``, which asks the bridge ``devices.list``
  and fails at once (no browser is connected: DEVICE_NOT_CONNECTED, an ``isError``
  result). Timed at the bridge too: ``before`` is the client's send → the bridge
  starting its first request of the call, ``after`` is the bridge's last answer → the
  client holding the result (both include the bridge's WebSocket hop). Not run for
  Playwright MCP (its tools start a browser).

``--baseline DIR`` adds the arm ``baseline``: ``trustbridge mcp`` from another source
tree, e.g. the commit before a change (``mkdir DIR && git archive COMMIT bridge
supervisor | tar -x -C DIR``), so the whole server path compares, not the transport
alone (the ``package`` arm shares everything else with ``native``).

Arms alternate per round (``--rounds``), so drift on a shared machine hits all alike.
Prints medians and p90 in ms; ``--json`` prints every sample.

Usage: python scripts/bench_mcp_stdio.py [--calls 300] [--rounds 3] [--baseline DIR]
[--no-playwright] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "scripts")]

from benchlib import env
from benchlib.stats import rotated
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from trustbridge.bridge import config
from trustbridge.bridge.server import BridgeServer

WARMUP = 20
KINDS = ("tools/list", "tools/call")


class BridgeClock:
    """Times of the bridge's requests (``executor.dispatch``, perf_counter seconds):
    the first start and the last end since :meth:`reset`."""

    def __init__(self, server: BridgeServer) -> None:
        self.first: float | None = None
        self.last: float | None = None
        executor = server.executor
        original = executor.dispatch
        clock = self

        async def timed(*args: Any, **kwargs: Any) -> Any:
            if clock.first is None:
                clock.first = time.perf_counter()
            try:
                return await original(*args, **kwargs)
            finally:
                clock.last = time.perf_counter()

        executor.dispatch = timed  # type: ignore[method-assign]

    def reset(self) -> None:
        self.first = self.last = None


def _params(arm: str, url: str, home: Path, baseline: Path | None) -> StdioServerParameters:
    if arm == "playwright":
        cli = env.ensure_playwright_mcp()
        return StdioServerParameters(
            command=str(cli), args=["--headless", "--isolated", "--output-dir", str(home)],
            cwd=str(home), env={"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1",
                                "PATH": os.environ.get("PATH", "")})
    tree = baseline if arm == "baseline" and baseline is not None else REPO
    # A tree from before the trustbridge import namespace (issue 34) runs as bridge.cli.
    module = "trustbridge" if (tree / "trustbridge" / "__init__.py").is_file() else "bridge.cli"
    return StdioServerParameters(
        command=sys.executable, args=["-m", module, "mcp", "--bridge", url],
        env={"TRUSTBRIDGE_HOME": str(home), "PYTHONPATH": str(tree),
             "TRUSTBRIDGE_MCP_STDIO": arm},
        cwd=str(tree))


async def _one(client: Client, kind: str) -> None:
    if kind == "tools/list":
        await client.list_tools()
    else:
        result = await client.call_tool("browser_tabs", {"action": "list"})
        text = " ".join(getattr(c, "text", "") for c in result.content)
        if not result.is_error or "extension" not in text.lower():
            raise RuntimeError(f"browser_tabs was meant to fail without a browser: {text}")


async def _run_arm(arm: str, url: str, home: Path, calls: int, clock: BridgeClock,
                   log_dir: Path, baseline: Path | None) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {k: [] for k in KINDS}
    samples.update({"before": [], "after": []})
    kinds = KINDS[:1] if arm == "playwright" else KINDS
    with open(log_dir / f"{arm}.stderr.log", "a") as errlog:  # noqa: ASYNC230
        async with Client(stdio_client(_params(arm, url, home, baseline), errlog=errlog),
                          read_timeout_seconds=60) as client:
            for kind in kinds:
                for _ in range(WARMUP):
                    await _one(client, kind)
                for _ in range(calls):
                    clock.reset()
                    t0 = time.perf_counter()
                    await _one(client, kind)
                    t1 = time.perf_counter()
                    samples[kind].append((t1 - t0) * 1000)
                    if kind == "tools/call":
                        if clock.first is None or clock.last is None:
                            raise RuntimeError("the tool call never reached the bridge")
                        samples["before"].append((clock.first - t0) * 1000)
                        samples["after"].append((t1 - clock.last) * 1000)
    return samples


def _summary(values: list[float]) -> str:
    if not values:
        return "-"
    p90 = statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]
    return f"{statistics.median(values):6.3f} (p90 {p90:6.3f})"


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=300, help="timed calls per kind and round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--baseline", type=Path, metavar="DIR",
                    help="also run trustbridge mcp from this source tree (arm 'baseline')")
    ap.add_argument("--no-playwright", action="store_true")
    ap.add_argument("--json", action="store_true", help="print every sample as JSON")
    args = ap.parse_args()
    arms = ["package", "native"]
    if args.baseline is not None:
        if not (args.baseline / "bridge" / "cli.py").is_file():
            ap.error(f"--baseline {args.baseline}: no bridge/cli.py there")
        arms.insert(0, "baseline")
    if not args.no_playwright:
        try:
            env.ensure_playwright_mcp()
            arms.append("playwright")
        except RuntimeError as exc:
            print(f"Playwright MCP arm skipped: {exc}", file=sys.stderr)
    home = Path(tempfile.mkdtemp(prefix="trustbridge-bench-stdio-"))
    log_dir = home / "logs"
    log_dir.mkdir()
    token = config.load_or_create_token(home / "token")
    results: dict[str, dict[str, list[float]]] = {
        a: {k: [] for k in (*KINDS, "before", "after")} for a in arms}
    try:
        async with BridgeServer(token, port=0) as server:
            clock = BridgeClock(server)
            for r in range(args.rounds):
                for arm in rotated(arms, r):
                    got = await _run_arm(arm, server.url, home, args.calls, clock, log_dir,
                                         args.baseline)
                    for k, v in got.items():
                        results[arm][k].extend(v)
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(home)
    if args.json:
        print(json.dumps(results))
        return 0
    n = args.calls * args.rounds
    print(f"median round trip, ms (p90), {n} calls per kind and arm; "
          f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    print(f"{'arm':<12}" + "".join(f"{k:>24}" for k in (*KINDS, "before", "after")))
    for arm in arms:
        print(f"{arm:<12}" + "".join(f"{_summary(results[arm][k]):>24}"
                                     for k in (*KINDS, "before", "after")))
    print("before/after: a tools/call's time from the client's send to the bridge's first "
          "request, and from the bridge's last answer to the client's result.")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
