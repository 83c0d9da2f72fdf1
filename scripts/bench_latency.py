"""Per-action latency of the trusted path against raw Playwright, measured in one run.

Part of the full benchmark as B2 of ``scripts/bench.py`` (docs/benchmarks/README.md);
this script stays as a quick standalone check.

Starts a bridge, a supervised headless Chromium and a local page, then for N rounds (the
order of the measured operations rotates each round) times:

- ``snapshot``: ``page.snapshot`` through the bridge (extension serializes all frames);
- ``trusted_click``: ``page.act`` click by ref: bridge → extension resolve → driver;
- ``humanized_click``: the same with ``humanize: true`` (supervisor/humanize.py: 8-14 moves,
  a 60-160 ms pause, a 60-130 ms press; its cost is the person's rhythm, not overhead);
- ``locator_click``: Playwright ``page.locator(css).click()`` on the same element (the floor);
- ``mouse_click``: Playwright ``page.mouse.click(x, y)`` at its centre.

Prints medians in ms and ratios to ``locator_click``; ``--json`` prints the raw numbers.
Usage: python scripts/bench_latency.py [--rounds 30] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import re
import secrets
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.server import BridgeServer
from trustbridge.supervisor.runner import Supervisor

PAGE = b"""<!doctype html><title>bench</title>
<h1>Latency</h1><input aria-label="Query"><button id="go">Go</button><p id="n">0</p>
<script>let n=0;document.getElementById('go').addEventListener('click',e=>{
if(e.isTrusted)document.getElementById('n').textContent=String(++n)})</script>"""


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *a: object) -> None:
        pass


async def main(rounds: int, as_json: bool) -> int:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/"
    token = secrets.token_hex(16)
    async with BridgeServer(token, port=0) as server:
        async with Supervisor(server.url, token, "bench") as sup:
            while "bench" not in server.policy.extensions or "bench" not in server.policy.drivers:
                await asyncio.sleep(0.05)
            async with await BridgeClient.connect(server.url, token) as client:
                await client.call("page.navigate", {"url": url})
                page = sup.context.pages[0]
                snap = (await client.call("page.snapshot", {}))["snapshot"]
                ref = re.search(r'button "Go"[^\n]*\[ref=(e\d+)\]', snap).group(1)
                box = await page.locator("#go").bounding_box()
                cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2

                async def snapshot() -> None:
                    await client.call("page.snapshot", {})

                async def trusted_click() -> None:
                    r = await client.call("page.act", {"ref": ref, "action": {"kind": "click"}})
                    assert r["inputPath"] == "trusted"

                async def humanized_click() -> None:  # issue 35 item 2, per call
                    r = await client.call("page.act", {"ref": ref,
                                                       "action": {"kind": "click", "humanize": True}})
                    assert r["inputPath"] == "trusted"

                async def locator_click() -> None:
                    await page.locator("#go").click()

                async def mouse_click() -> None:
                    await page.mouse.click(cx, cy)

                ops = [snapshot, trusted_click, humanized_click, locator_click, mouse_click]
                samples: dict[str, list[float]] = {op.__name__: [] for op in ops}
                for op in ops:  # warm-up
                    await op()
                for i in range(rounds):
                    order = ops[i % len(ops):] + ops[: i % len(ops)]
                    for op in order:
                        t0 = time.perf_counter()
                        await op()
                        samples[op.__name__].append((time.perf_counter() - t0) * 1000)
                clicks = int(await page.text_content("#n"))
    httpd.shutdown()
    expected = (rounds + 1) * 4
    med = {k: statistics.median(v) for k, v in samples.items()}
    base = med["locator_click"]
    report = {
        "rounds": rounds,
        "machine": f"{platform.machine()} {platform.system()} py{platform.python_version()}",
        "median_ms": {k: round(v, 2) for k, v in med.items()},
        "ratio_to_locator_click": {k: round(v / base, 3) for k, v in med.items()},
        "trusted_clicks_seen_by_page": clicks,
        "clicks_sent": expected,
    }
    if as_json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{rounds} rounds, {report['machine']}")
        for k, v in med.items():
            print(f"  {k:14s} median {v:7.2f} ms   ×{v / base:5.2f} of locator_click")
        print(f"  page counted {clicks} trusted clicks of {expected} sent")
    return 0 if clicks == expected else 1


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    sys.exit(asyncio.run(main(a.rounds, a.json)))
