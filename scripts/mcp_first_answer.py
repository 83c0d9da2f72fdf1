"""How long a new user's MCP client waits for ``trustbridge mcp``'s first answers: from
spawning the server (no bridge running, so it starts its own browser) to the
``initialize`` result, and to the first ``browser_navigate`` result (a local page), over
fresh starts, each with a state directory of its own.

``--source DIR`` runs ``trustbridge mcp`` from another source tree (e.g. the commit before
a change: ``mkdir DIR && git archive COMMIT bridge supervisor extension | tar -x -C DIR``);
arms alternate per start, so drift on a shared machine hits both alike. Prints medians
(and every sample) in seconds.

Usage: python scripts/mcp_first_answer.py [--runs 5] [--source DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import http.server
import os
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


async def one_start(source: Path, url: str) -> tuple[float, float]:
    """(initialize s, first browser_navigate s) of one fresh ``trustbridge mcp``."""
    with tempfile.TemporaryDirectory(prefix="tb-first-") as home:
        env = dict(os.environ, TRUSTBRIDGE_HOME=home, PYTHONPATH=str(source))
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "trustbridge", "mcp", "--bridge-port", "0"],
                                       env=env, cwd=str(source))
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
    args = ap.parse_args()
    url = f"http://127.0.0.1:{serve_pages()}/mcp.html"
    arms = {"this tree": REPO, **({"baseline": args.source.resolve()} if args.source else {})}
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in arms}
    for _ in range(args.runs):
        for name, source in arms.items():
            samples[name].append(await one_start(source, url))
    print(f"{'arm':<10} {'initialize s':>13} {'first navigate s':>17}   (medians of {args.runs})")
    for name, got in samples.items():
        init = statistics.median(s[0] for s in got)
        nav = statistics.median(s[1] for s in got)
        print(f"{name:<10} {init:>13.2f} {nav:>17.2f}   samples "
              + ", ".join(f"{a:.2f}/{b:.2f}" for a, b in got))


if __name__ == "__main__":
    asyncio.run(main())
