"""Latency of the live view (issue 37; bridge/live_view.py, supervisor/live.py).

Starts the benchmarks' stack (scripts/benchlib/stack.py: a bridge and a supervised
headless Chromium in this process) and a second headless Chromium playing the person. A
target page (served here) turns its whole body black or white at each key it gets and
records ``Date.now()`` of every keydown. The agent hands the tab to the person
(``tab.hand_to_human``); the person's browser opens the live-view link. Then, N times:

- **input**: a key pressed in the live view (Playwright's keyboard on the person's page)
  → the target page's keydown handler: ``Date.now()`` in the live view's keydown handler
  to ``Date.now()`` in the target's (both browsers run on this machine, one clock);
- **frame**: each frame the live view got meanwhile, from when the target's browser
  captured it (CDP screencast metadata ``timestamp``) to when the live view's page
  received it (its ``onmessage``);
- **round trip** (key to picture): the live view's keydown to the first frame whose
  centre pixel shows the target's new colour, read from the decoded image in the live
  view's page (a canvas).

Baseline, in the same run: the same key sent by Playwright straight to the target page
(``page.keyboard.press``, no live view) → the target's keydown; reported with the ratio.

Usage: python scripts/live_view_latency.py [--rounds 40] [--browser chromium|firefox]
       [--screenshot docs/live-view.png] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from benchlib.stats import summary  # noqa: E402
from playwright.async_api import async_playwright  # noqa: E402

from trustbridge.bridge.client import BridgeClient  # noqa: E402
from trustbridge.bridge.sdk import Tab  # noqa: E402
from trustbridge.bridge.server import BridgeServer  # noqa: E402
from trustbridge.supervisor.launcher import find_chromium  # noqa: E402
from trustbridge.supervisor.runner import Supervisor  # noqa: E402

TARGET = b"""<!doctype html><html><head><title>Sign in: code</title>
<style>html, body { margin: 0; height: 100%; background: #fff; }
body.dark { background: #000; } h1 { font: 28px sans-serif; margin: 0; padding: 20px;
color: #888; } input { font: 24px monospace; margin: 20px; }</style></head>
<body><h1>Enter the code from your phone</h1><input id="code" autofocus>
<script>
window.__keys = [];
document.addEventListener("keydown", (e) => {
  window.__keys.push({t: Date.now(), trusted: e.isTrusted});
  document.body.classList.toggle("dark");
}, true);
</script></body></html>"""

SAMPLER = """() => {
  // Centre pixel of every decoded frame the live view shows (the page's own script sets
  // the img's src; this only reads it).
  const img = document.getElementById("screen");
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 1;
  const ctx = canvas.getContext("2d", {willReadFrequently: true});
  window.__shown = [];
  img.addEventListener("load", () => {
    ctx.drawImage(img, img.naturalWidth / 2, img.naturalHeight * 0.8, 1, 1, 0, 0, 1, 1);
    const [r] = ctx.getImageData(0, 0, 1, 1).data;
    window.__shown.push({t: Date.now(), dark: r < 128, lag: window.__live.lastFrame ?
      window.__live.lastFrame.receivedAt - window.__live.lastFrame.capturedAt : null});
  });
}"""


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(TARGET)

    def log_message(self, *args: object) -> None:
        pass


async def run(rounds: int, browser: str, shot: Path | None) -> dict[str, Any]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/code.html"
    token = "bench-" + tempfile.mktemp(prefix="", dir="").replace("/", "")
    device = f"{browser}-live"
    async with BridgeServer(token, port=0) as server, \
            Supervisor(server.url, token, device, browser=browser) as sup, \
            async_playwright() as pw:
        for _ in range(600):
            if device in server.policy.extensions and device in server.policy.drivers:
                break
            await asyncio.sleep(0.05)
        person = await pw.chromium.launch(headless=True, executable_path=find_chromium())
        client = await BridgeClient.connect(server.url, token)
        try:
            tab = Tab(client, device, None)
            await tab.goto(url)
            for _ in range(200):  # Playwright may see the load a moment after the bridge
                found = [p for p in sup.context.pages if p.url == url]
                if found:
                    break
                await asyncio.sleep(0.05)
            target = found[0]
            # Baseline: Playwright's keyboard straight on the target page.
            direct = []
            for _ in range(rounds):
                before = len(await target.evaluate("window.__keys"))
                sent = await target.evaluate("Date.now()")
                await target.keyboard.press("x")
                keys = await target.evaluate("window.__keys")
                assert len(keys) == before + 1
                direct.append(keys[-1]["t"] - sent)
            asked = await tab.hand_to_human("Enter the code from your phone", timeout=600)
            live = await person.new_page(viewport={"width": 1400, "height": 900})
            await live.goto(asked["liveUrl"])
            while not await live.evaluate("window.__live.frames > 0 && "
                                          "document.getElementById('screen').naturalWidth > 0"):
                await asyncio.sleep(0.05)
            await live.evaluate(SAMPLER)
            await live.click("#screen", position={"x": 300, "y": 100})  # focus the picture
            await asyncio.sleep(0.5)
            inputs, trips = [], []
            for _ in range(rounds):
                before = len(await target.evaluate("window.__keys"))
                dark = await target.evaluate("document.body.classList.contains('dark')")
                shown_before = len(await live.evaluate("window.__shown"))
                await live.keyboard.press("7")
                pressed = await live.evaluate("window.__live.lastKeyAt")
                for _ in range(400):
                    keys = await target.evaluate("window.__keys")
                    shown = await live.evaluate("window.__shown")
                    flipped = [s for s in shown[shown_before:] if s["dark"] != dark]
                    if len(keys) > before and flipped:
                        break
                    await asyncio.sleep(0.01)
                else:
                    raise RuntimeError("the key or its frame never came")
                assert keys[before]["trusted"] is True
                inputs.append(keys[before]["t"] - pressed)
                trips.append(flipped[0]["t"] - pressed)
            frames = [s["lag"] for s in await live.evaluate("window.__shown")
                      if s["lag"] is not None]
            if shot is not None:
                if await target.evaluate("document.body.classList.contains('dark')"):
                    await live.keyboard.press("Escape")  # back to white for the picture
                await asyncio.sleep(0.7)
                await live.screenshot(path=str(shot))
            await live.click("#done")
            result = await tab.wait_for_human(asked["handoverId"])
            assert result["state"] == "handedBack"
        finally:
            await client.close()
            await person.close()
            httpd.shutdown()
    base = summary(direct)
    key = summary(inputs)
    return {"browser": browser, "rounds": rounds,
            "baseline_direct_key_ms": base, "input_ms": key,
            "frame_ms": summary(frames), "round_trip_ms": summary(trips),
            "input_vs_baseline_median": round(key["median"] / max(base["median"], 1), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--browser", choices=["chromium", "firefox"], default="chromium")
    parser.add_argument("--screenshot", type=Path, help="save the live-view page here")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    out = asyncio.run(run(args.rounds, args.browser, args.screenshot))
    if args.json:
        print(json.dumps(out))
        return
    print(f"{out['browser']}, {out['rounds']} rounds (ms: median / p95 / min / max)")
    for name in ("baseline_direct_key_ms", "input_ms", "frame_ms", "round_trip_ms"):
        s = out[name]
        print(f"  {name:24} {s['median']:8.1f} {s['p95']:8.1f} {s['min']:8.1f} {s['max']:8.1f}"
              f"  (n={s['runs']})")
    print(f"  input / baseline (median): {out['input_vs_baseline_median']}")


if __name__ == "__main__":
    main()
