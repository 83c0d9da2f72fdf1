"""page.find on a huge page against a full snapshot of the same page, in the same run.

Issue 14 item 5: on a 60,000-row table, find must reach the last row's button "in well
under a second", without a full snapshot. Starts a bridge, a supervised headless Chromium
(the extension loaded) and a server of tests/e2e/pages, loads
``find/table.html?rows=N`` (rows of: number, "Item i", button "Delete row i") and, with
the order rotating each round, times through the bridge (client → bridge → extension →
every frame's content script → client):

- ``find role+name``: ``page.find {role: button, name: "Delete row N"}`` (the last row);
- ``find text``: ``page.find {text: "Item N"}``;
- ``find regex``: ``page.find {role: button, name: "/^delete row N$/i", regex: true}``;
- ``find role only``: ``page.find {role: button, limit: 20}`` (the first 20, truncated);
- ``snapshot``: ``page.snapshot`` of the whole page, in pages of 1,000,000 characters
  followed by cursor to the end (the baseline of the ratios): what an agent without find
  reads to reach the last row.

Each find must answer exactly the expected match (checked every round). Prints a table of
medians and ratios to the snapshot (ratio < 1: find is faster); ``--json`` the raw numbers.
Goals are stated as ratios, never as absolute times in tests (docs/design.md working
rules); the script also prints the absolute medians for the issue's "well under a second".

Usage: python scripts/bench_find.py [--rows 60000] [--rounds 5] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import statistics
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.server import BridgeServer
from trustbridge.supervisor.runner import Supervisor

PAGES = REPO / "tests" / "e2e" / "pages"
DEVICE = "bench-find"
PAGE_CHARS = 1_000_000
"""``maxChars`` of each page of the baseline snapshot, followed by cursor to the end."""


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def _cases(rows: int) -> dict[str, Callable[[BridgeClient], Awaitable[Any]]]:
    """name → one timed call; each checks its own answer."""
    last = f"Delete row {rows}"

    def find(params: dict[str, Any], expect: str, count: int = 1,
             truncated: bool = False) -> Callable[[BridgeClient], Awaitable[Any]]:
        async def call(client: BridgeClient) -> Any:
            res = await client.call("page.find", {"timeoutMs": 60_000, **params})
            got = res["matches"]
            if len(got) != count or expect not in got[-1]["line"] or \
                    res["truncated"] is not truncated or (count == 1 and not got[0]["ref"]):
                raise AssertionError(f"page.find {params} answered:\n{res['text']}")
            return res
        return call

    async def snapshot(client: BridgeClient) -> Any:
        # Every page of it, cursor after cursor: what an agent without find reads to reach
        # the last row. (One page of the whole table overflows the background's stack:
        # see the report of issue 14 item 5.)
        res = await client.call("page.snapshot", {"maxChars": PAGE_CHARS})
        text = [res["snapshot"]]
        while res.get("cursor"):
            res = await client.call("page.snapshot", {"cursor": res["cursor"],
                                                       "maxChars": PAGE_CHARS})
            text.append(res["snapshot"])
        if last not in text[-1]:
            raise AssertionError("the baseline snapshot misses the last row")
        return res

    return {
        "find role+name": find({"role": "button", "name": last}, last),
        "find text": find({"text": f"Item {rows}"}, f"Item {rows}"),
        "find regex": find({"role": "button", "name": f"/^delete row {rows}$/i",
                            "regex": True}, last),
        "find role only": find({"role": "button", "limit": 20}, "Delete row 20", 20, True),
        "snapshot": snapshot,
    }


async def run(rows: int, rounds: int) -> dict[str, Any]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(PAGES)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/find/table.html?rows={rows}"
    token = secrets.token_hex(16)
    times: dict[str, list[float]] = {}
    try:
        async with BridgeServer(token, port=0) as server, \
                Supervisor(server.url, token, DEVICE) as sup:
            while DEVICE not in server.policy.extensions:
                await asyncio.sleep(0.05)
            async with await BridgeClient.connect(server.url, token) as client:
                await client.call("page.navigate", {"url": url, "timeoutMs": 120_000})
                page = sup.context.pages[0]
                await page.wait_for_function(f"document.title.includes('{rows} rows')")
                cases = _cases(rows)
                names = list(cases)
                for name in names:  # warm-up: content script, caches, JIT
                    await cases[name](client)
                for r in range(rounds):
                    for name in names[r % len(names):] + names[:r % len(names)]:
                        t0 = time.perf_counter()
                        await cases[name](client)
                        times.setdefault(name, []).append((time.perf_counter() - t0) * 1000)
                browser = sup.context.browser.version if sup.context.browser else "?"
    finally:
        httpd.shutdown()
        httpd.server_close()
    return {"rows": rows, "rounds": rounds, "browser": browser, "ms": times}


def table(res: dict[str, Any]) -> str:
    medians = {k: statistics.median(v) for k, v in res["ms"].items()}
    base = medians["snapshot"]
    title = (f"page.find vs full snapshot, {res['rows']:,} rows, Chromium {res['browser']}, "
             f"median of {res['rounds']} rounds")
    lines = [title, "", "| call | median ms | ratio to snapshot |", "|---|---:|---:|"]
    for name, ms in medians.items():
        lines.append(f"| {name} | {ms:,.1f} | {ms / base:.3f} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=60_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", action="store_true", help="print the raw numbers")
    args = ap.parse_args()
    res = asyncio.run(run(args.rows, args.rounds))
    print(json.dumps(res, indent=2) if args.json else table(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
