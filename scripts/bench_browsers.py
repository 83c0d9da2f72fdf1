"""Chromium against Firefox ESR (WebDriver BiDi), measured in one run on this machine.

For each browser: a bridge and a supervised headless browser on a local page, then

- ``launch``: ``Supervisor.start`` until extension and driver have said hello (ms);
- ``snapshot``: ``page.snapshot`` through the bridge;
- ``trusted_click``: ``page.act`` click by ref (bridge → extension resolve → driver);
- ``locator_click``: Playwright ``page.locator(css).click()`` in the same browser (its floor).

Prints medians in ms, each browser's trusted/locator ratio, and Firefox/Chromium ratios
(Chromium is the baseline). ``--json`` prints the raw numbers.
Usage: python scripts/bench_browsers.py [--rounds 20] [--launches 3] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import secrets
import statistics
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.server import BridgeServer
from trustbridge.supervisor.runner import Supervisor

BROWSERS = ("chromium", "firefox")
PAGE = b"""<!doctype html><title>bench</title>
<h1>Browsers</h1><input aria-label="Query"><button id="go">Go</button><p id="n">0</p>
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


async def _ms(fn) -> float:
    start = time.perf_counter()
    await fn()
    return (time.perf_counter() - start) * 1000


async def measure(browser: str, url: str, rounds: int, launches: int) -> dict[str, list[float]]:
    """Raw timings in ms for one browser: launch (``launches`` times) and per-op rounds."""
    out: dict[str, list[float]] = {"launch": [], "snapshot": [], "trusted_click": [],
                                   "locator_click": []}
    for n in range(launches):
        token = secrets.token_hex(16)
        async with BridgeServer(token, port=0) as server:
            sup = Supervisor(server.url, token, "bench", browser=browser)
            start = time.perf_counter()
            try:
                await sup.start()
                while "bench" not in server.policy.extensions or "bench" not in server.policy.drivers:
                    await asyncio.sleep(0.01)
                out["launch"].append((time.perf_counter() - start) * 1000)
                if n < launches - 1:
                    continue
                async with await BridgeClient.connect(server.url, token) as client:
                    await client.call("page.navigate", {"url": url})
                    page = sup.context.pages[0]
                    snap = (await client.call("page.snapshot", {}))["snapshot"]
                    ref = re.search(r'button "Go"[^\n]*\[ref=(e\d+)\]', snap).group(1)

                    async def snapshot() -> None:
                        await client.call("page.snapshot", {})

                    async def trusted_click() -> None:
                        r = await client.call("page.act", {"ref": ref, "action": {"kind": "click"}})
                        assert r["inputPath"] == "trusted"

                    async def locator_click() -> None:
                        await page.locator("#go").click()

                    ops = [snapshot, trusted_click, locator_click]
                    for i in range(rounds):
                        for op in ops[i % 3:] + ops[: i % 3]:
                            out[op.__name__].append(await _ms(op))
                    counted = int(await page.text_content("#n") or 0)
                    assert counted == 2 * rounds, f"page counted {counted} trusted clicks"
            finally:
                await sup.stop()
    return out


async def main(rounds: int, launches: int, as_json: bool) -> int:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/"
    raw = {b: await measure(b, url, rounds, launches) for b in BROWSERS}
    httpd.shutdown()
    if as_json:
        print(json.dumps(raw))
        return 0
    med = {b: {k: statistics.median(v) for k, v in ops.items()} for b, ops in raw.items()}
    print(f"medians in ms ({rounds} rounds, {launches} launches per browser)")
    print(f"{'':16}" + "".join(f"{b:>12}" for b in BROWSERS) + f"{'ff/chromium':>14}")
    for op in ("launch", "snapshot", "trusted_click", "locator_click"):
        row = "".join(f"{med[b][op]:12.1f}" for b in BROWSERS)
        print(f"{op:16}{row}{med['firefox'][op] / med['chromium'][op]:14.2f}")
    for b in BROWSERS:
        print(f"{b}: trusted_click / locator_click = "
              f"{med[b]['trusted_click'] / med[b]['locator_click']:.2f}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--launches", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    raise SystemExit(asyncio.run(main(args.rounds, args.launches, args.json)))
