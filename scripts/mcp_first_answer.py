"""How long a new user's MCP client waits for ``trustbridge mcp``'s first answers: from
spawning the server (no bridge running, so it starts its own browser) to the
``initialize`` result, and to the first ``browser_navigate`` result (a local page), over
fresh starts, each with a state directory of its own.

``--peer`` adds Playwright MCP (the version installed by ``scripts/mcp_conformance.py``
in ``scripts/conformance/node_modules``, pinned 0.0.86) on Debian's Chromium, headless and
``--isolated`` (no profile on disk, as each of our starts has a fresh state directory),
otherwise with its default settings: the issue 34 comparison (each within 1.2×).

``--source DIR`` runs ``trustbridge mcp`` from another source tree (e.g. the commit before
a change: ``mkdir DIR && git archive COMMIT bridge supervisor extension | tar -x -C DIR``);
arms alternate per start, so drift on a shared machine hits both alike. Prints medians
(and every sample) in seconds.

Usage: python scripts/mcp_first_answer.py [--runs 5] [--peer] [--source DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import http.server
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

REPO = Path(__file__).resolve().parents[1]
PAGES = REPO / "tests" / "e2e" / "pages"


def serve_pages() -> int:
    """A page server on tests/e2e/pages in a thread; returns its port."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, directory=str(PAGES), **kwargs)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


PLAYWRIGHT_MCP = REPO / "scripts" / "conformance" / "node_modules" / "@playwright" / "mcp" / "cli.js"
CHROMIUM = os.environ.get("TRUSTBRIDGE_CHROMIUM", "/usr/bin/chromium")


def trustbridge_params(source: Path, home: str) -> StdioServerParameters:
    """``trustbridge mcp`` from ``source`` (a tree before the trustbridge namespace runs as
    ``-m bridge.cli``) with a state directory of its own, so it starts its own browser."""
    module = "trustbridge" if (source / "trustbridge" / "__init__.py").is_file() else "bridge.cli"
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", module, "mcp", "--bridge-port", "0"],
                                 env=dict(os.environ, TRUSTBRIDGE_HOME=home,
                                          PYTHONPATH=str(source)), cwd=str(source))


def peer_params(home: str) -> StdioServerParameters:
    """Playwright MCP on Debian's Chromium, headless, in-memory profile, files in ``home``."""
    args = [str(PLAYWRIGHT_MCP), "--headless", "--isolated", "--executable-path", CHROMIUM,
            "--output-dir", str(Path(home) / "out")]
    if os.geteuid() == 0:  # Chromium's sandbox cannot start as root
        args.append("--no-sandbox")
    return StdioServerParameters(command=shutil.which("node") or "node", args=args,
                                 env=dict(os.environ), cwd=home)


async def one_start(arm: Path | None, url: str) -> tuple[float, float]:
    """(initialize s, first browser_navigate s) of one fresh server: ``trustbridge mcp``
    from the tree ``arm``, or Playwright MCP when ``arm`` is None."""
    with tempfile.TemporaryDirectory(prefix="tb-first-") as home:
        params = peer_params(home) if arm is None else trustbridge_params(arm, home)
        with open(os.devnull, "w") as errlog:
            start = time.perf_counter()
            async with Client(stdio_client(params, errlog=errlog),
                              read_timeout_seconds=300) as client:
                initialized = time.perf_counter() - start
                result = await client.call_tool("browser_navigate", {"url": url})
                navigated = time.perf_counter() - start
                assert not result.is_error, result.content
    return initialized, navigated


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--source", type=Path, help="a baseline source tree")
    ap.add_argument("--peer", action="store_true", help="add Playwright MCP as an arm")
    args = ap.parse_args()
    if args.peer and not PLAYWRIGHT_MCP.is_file():
        raise SystemExit(f"{PLAYWRIGHT_MCP} is missing: `python scripts/mcp_conformance.py` "
                         "installs Playwright MCP there")
    url = f"http://127.0.0.1:{serve_pages()}/mcp.html"
    arms: dict[str, Path | None] = {"this tree": REPO}
    if args.source:
        arms["baseline"] = args.source.resolve()
    if args.peer:
        arms["playwright-mcp"] = None
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in arms}
    for _ in range(args.runs):
        for name, source in arms.items():
            samples[name].append(await one_start(source, url))
    print(f"{'arm':<15} {'initialize s':>13} {'first navigate s':>17}   (medians of {args.runs})")
    medians = {}
    for name, got in samples.items():
        medians[name] = (statistics.median(s[0] for s in got), statistics.median(s[1] for s in got))
        print(f"{name:<15} {medians[name][0]:>13.2f} {medians[name][1]:>17.2f}   samples "
              + ", ".join(f"{a:.2f}/{b:.2f}" for a, b in got))
    if "playwright-mcp" in medians:
        ours, peer = medians["this tree"], medians["playwright-mcp"]
        print(f"ratio (this tree / playwright-mcp): initialize {ours[0] / peer[0]:.2f}x, "
              f"first navigate {ours[1] / peer[1]:.2f}x   (target <= 1.2x each)")


if __name__ == "__main__":
    asyncio.run(main())
