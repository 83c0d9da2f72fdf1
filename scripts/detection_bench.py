"""Detection benchmark (issue 35 item 5; not CI): what real client-side detectors and a
page that records every event say about trustbridge and about raw Playwright.

Installs, at run time, into a temp dir with ``npm`` (pinned): @fingerprintjs/botd@2.0.0,
isbot@5.2.3, @fingerprintjs/fingerprintjs@5.2.0 (their "monitoring" requests are turned
off: no network beyond the npm registry). Serves a local page (127.0.0.1) whose first
script records pointer, key and focus events, attribute mutations on every element and a
console-getter probe, then runs the detectors. Each run: load, a click on a button, typing
"hello world" into a field, then the page's records are read and reduced to signals.

Runs: trustbridge (Supervisor + bridge, ``page.act`` by ref) on Chromium and Firefox ESR,
humanize off and on; raw Playwright (``locator.click`` + ``locator.press_sequentially``)
on the same Debian binaries; Playwright MCP 0.0.86 on Chromium (``--headless --isolated``,
driven over stdio with the ``mcp`` client: browser_click, browser_type ``slowly``, records
read with browser_evaluate), when its ``cli.js`` is present.

Writes docs/benchmarks/detection.md (``--write``) and prints the table.
Usage: python scripts/detection_bench.py [--write] [--only chromium|firefox]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import shutil
import statistics
import subprocess
import tempfile
import threading
from datetime import datetime, timezone
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from playwright.async_api import async_playwright

from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.server import BridgeServer
from trustbridge.supervisor.launcher import find_chromium, find_firefox
from trustbridge.supervisor.runner import Supervisor

PACKAGES = ["@fingerprintjs/botd@2.0.0", "isbot@5.2.3", "@fingerprintjs/fingerprintjs@5.2.0"]
OUT = Path(__file__).resolve().parents[1] / "docs" / "benchmarks" / "detection.md"

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Detection bench</title>
<script>
  const R = window.__rec = { ev: [], keys: [], focus: [], attrs: [], probe: null,
    first: { webdriver: navigator.webdriver, testUtils: typeof window.TestUtils,
             globals: Object.getOwnPropertyNames(window) } };
  for (const type of ['mousemove', 'mousedown', 'mouseup', 'click']) {
    addEventListener(type, (e) => R.ev.push({ type, x: e.clientX, y: e.clientY, t: e.timeStamp, trusted: e.isTrusted }), true);
  }
  for (const type of ['keydown', 'keyup']) {
    addEventListener(type, (e) => R.keys.push({ type, key: e.key, t: e.timeStamp }), true);
  }
  addEventListener('focusin', (e) => R.focus.push({ id: e.target.id, t: e.timeStamp }), true);
  new MutationObserver((rs) => { for (const r of rs) if (r.type === 'attributes') R.attrs.push(r.attributeName); })
    .observe(document, { attributes: true, subtree: true });
  let read = false; const o = {};
  Object.defineProperty(o, 'x', { enumerable: true, get() { read = true; return 1; } });
  console.debug(o); R.probe = read;
</script></head>
<body style="margin:0">
<button id="go" style="position:absolute;left:300px;top:200px;width:121px;height:41px">Go</button>
<label style="position:absolute;left:40px;top:400px">Query <input id="q"></label>
<script type="module">
  import { load } from '/m/@fingerprintjs/botd/dist/botd.esm.js';
  import { isbot } from '/m/isbot/index.mjs';
  import FingerprintJS from '/m/@fingerprintjs/fingerprintjs/dist/fp.esm.js';
  window.__det = (async () => {
    const out = {};
    try { const b = await load({ monitoring: false }); out.botd = b.detect(); } catch (e) { out.botd = { error: String(e) }; }
    out.isbot = isbot(navigator.userAgent);
    try { const fp = await (await FingerprintJS.load({ monitoring: false })).get();
          out.fpConfidence = fp.confidence && fp.confidence.score; } catch (e) { out.fp = String(e); }
    out.env = { webdriver: navigator.webdriver, testUtils: typeof window.TestUtils,
      screen: [screen.width, screen.height, screen.availHeight], viewport: [innerWidth, innerHeight],
      fine: matchMedia('(pointer: fine)').matches, hover: matchMedia('(hover: hover)').matches,
      ua: navigator.userAgent };
    return out;
  })();
</script>
</body></html>
"""


def install(into: Path) -> None:
    subprocess.run(["npm", "init", "-y"], cwd=into, check=True, capture_output=True)
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", *PACKAGES], cwd=into,
                   check=True, capture_output=True)


def serve(root: Path) -> tuple[ThreadingHTTPServer, str]:
    (root / "detect.html").write_text(PAGE)
    (root / "m").symlink_to(root / "node_modules")

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *a: object) -> None:
            pass

        def end_headers(self) -> None:  # ES modules need a JS type; SimpleHTTP guesses it
            super().end_headers()

    Quiet.extensions_map = {**SimpleHTTPRequestHandler.extensions_map, ".mjs": "text/javascript",
                            ".js": "text/javascript"}
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(root)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/detect.html"


async def read(page: Any) -> dict[str, Any]:
    det = await page.evaluate("window.__det")
    rec = await page.evaluate("""() => ({ ...window.__rec,
      newGlobals: Object.getOwnPropertyNames(window).filter((k) => !window.__rec.first.globals.includes(k)),
      mcjugNow: document.querySelectorAll('[data-mcjug]').length })""")
    return {"det": det, "rec": rec}


def signals(got: dict[str, Any]) -> dict[str, Any]:
    det, rec = got["det"], got["rec"]
    ev = rec["ev"]
    downs = [i for i, e in enumerate(ev) if e["type"] == "mousedown"]
    first_down = downs[0] if downs else len(ev)
    moves = [e for e in ev[:first_down] if e["type"] == "mousemove"]
    ups = [e for e in ev if e["type"] == "mouseup"]
    press = [u["t"] - ev[d]["t"] for d, u in zip(downs, ups)]
    move_to_down = (ev[first_down]["t"] - moves[-1]["t"]) if moves and downs else None
    holds, gaps, down_at, last_up = [], [], {}, None
    for k in rec["keys"]:
        if k["type"] == "keydown":
            if last_up is not None:
                gaps.append(k["t"] - last_up)
            down_at[k["key"]] = k["t"]
        elif k["key"] in down_at:
            holds.append(k["t"] - down_at.pop(k["key"]))
            last_up = k["t"]
    q_focus = next((f for f in rec["focus"] if f["id"] == "q"), None)
    pointer_before_focus = bool(q_focus) and any(
        e["type"] == "mousedown" and e["t"] <= q_focus["t"] and e["t"] > ev[first_down]["t"]
        for e in ev[first_down + 1:]) if downs else False
    med = lambda v: round(statistics.median(v), 1) if v else None  # noqa: E731
    env = det.get("env", {})
    botd = det.get("botd", {})
    return {
        "botd": "bot: " + str(botd.get("botKind")) if botd.get("bot") else (
            "human" if "bot" in botd else f"error {botd.get('error')}"),
        "isbot": "bot" if det.get("isbot") else "human",
        "fp confidence": det.get("fpConfidence"),
        "data-mcjug seen": ("data-mcjug" in rec["attrs"]) or rec["mcjugNow"] > 0,
        "webdriver": env.get("webdriver"),
        "TestUtils": env.get("testUtils") != "undefined",
        "new globals": ", ".join(sorted(set(rec["newGlobals"]) - {"__det", "__rec", "R"})) or "-",
        "console getter read": rec["probe"],
        "screen > viewport": env.get("screen", [0])[0] > env.get("viewport", [0])[0],
        "availHeight < height": env.get("screen", [0, 0, 0])[2] < env.get("screen", [0, 0, 0])[1],
        "pointer fine / hover": f"{env.get('fine')} / {env.get('hover')}",
        "moves before press": len(moves),
        "fractional coords": any(not float(e["x"]).is_integer() or not float(e["y"]).is_integer()
                                 for e in ev),
        "move→down ms": round(move_to_down, 1) if move_to_down is not None else None,
        "press ms (median)": med(press),
        "key hold ms (median)": med(holds),
        "key gap ms (median)": med(gaps),
        "field focused by pointer": pointer_before_focus,
    }


async def run_trustbridge(browser: str, humanize: bool, url: str) -> dict[str, Any]:
    token = secrets.token_hex(16)
    device = f"bench-{browser}"
    async with BridgeServer(token, port=0) as server:
        async with Supervisor(server.url, token, device, browser=browser,
                              humanize=True if humanize else None) as sup:
            while device not in server.policy.extensions or device not in server.policy.drivers:
                await asyncio.sleep(0.05)
            async with await BridgeClient.connect(server.url, token) as client:
                await client.call("page.navigate", {"url": url})
                page = sup.context.pages[0]
                await page.wait_for_function("window.__det !== undefined")
                await page.evaluate("window.__det")
                snap = (await client.call("page.snapshot", {}))["snapshot"]
                go = _ref(snap, 'button "Go"')
                q = _ref(snap, 'textbox "Query"')
                await client.call("page.act", {"ref": go, "action": {"kind": "click"}})
                await client.call("page.act", {"ref": q, "action": {"kind": "type", "text": "hello world"}})
                await asyncio.sleep(0.3)
                return await read(page)


def _ref(snap: str, what: str) -> str:
    import re
    m = re.search(re.escape(what) + r'[^\n]*\[ref=(e\d+)\]', snap)
    if not m:
        raise RuntimeError(f"{what} not in snapshot:\n{snap}")
    return m.group(1)


async def run_playwright(browser: str, url: str) -> dict[str, Any]:
    async with async_playwright() as pw:
        if browser == "chromium":
            b = await pw.chromium.launch(executable_path=find_chromium(), headless=True)
        else:
            b = await pw.firefox.launch(channel="moz-firefox", executable_path=find_firefox(),
                                        headless=True)
        try:
            page = await b.new_page()
            await page.goto(url)
            await page.wait_for_function("window.__det !== undefined")
            await page.evaluate("window.__det")
            await page.locator("#go").click()
            await page.locator("#q").press_sequentially("hello world")
            await asyncio.sleep(0.3)
            return await read(page)
        finally:
            await b.close()


PLAYWRIGHT_MCP = Path("/work/main/scripts/conformance/node_modules/@playwright/mcp/cli.js")
"""Where this machine has Playwright MCP 0.0.86 (the conformance peer); ``--playwright-mcp``
names another ``cli.js``."""


def _mcp_text(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


async def run_playwright_mcp(cli: Path, url: str) -> dict[str, Any]:
    """Playwright MCP over stdio (the ``mcp`` client): navigate, snapshot, browser_click and
    browser_type by its refs, then read the page's records with browser_evaluate."""
    import re

    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    out = Path(tempfile.mkdtemp(prefix="tb-detect-pwmcp-"))
    params = StdioServerParameters(
        command="node", args=[str(cli), "--headless", "--isolated", "--no-sandbox",
                              "--executable-path", find_chromium(), "--output-dir", str(out)],
        env={"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1", "PATH": __import__("os").environ["PATH"]})
    try:
        async with Client(stdio_client(params)) as client:
            await client.call_tool("browser_navigate", {"url": url})
            await asyncio.sleep(1.0)  # the detectors' promise
            snap = _mcp_text(await client.call_tool("browser_snapshot", {}))
            go = re.search(r'button "Go"[^\n]*\[ref=(e\d+)\]', snap).group(1)
            q = re.search(r'textbox "Query"[^\n]*\[ref=(e\d+)\]', snap).group(1)
            for name, args in (("browser_click", {"element": "Go", "target": go}),
                               ("browser_type", {"element": "Query", "target": q,
                                                 "text": "hello world", "slowly": True})):
                res = await client.call_tool(name, args)
                if res.is_error:
                    raise RuntimeError(f"{name}: {_mcp_text(res)[:300]}")
            await asyncio.sleep(0.3)
            got = {}
            for key, fn in (("det", "async () => JSON.stringify(await window.__det)"),
                            ("rec", "() => JSON.stringify({ ...window.__rec, newGlobals: "
                                    "Object.getOwnPropertyNames(window).filter((k) => "
                                    "!window.__rec.first.globals.includes(k)), mcjugNow: "
                                    "document.querySelectorAll('[data-mcjug]').length })")):
                text = _mcp_text(await client.call_tool("browser_evaluate", {"function": fn}))
                m = re.search(r'"(\{.*\})"', text, re.DOTALL)
                got[key] = json.loads(json.loads('"' + m.group(1) + '"'))
            return got
    finally:
        shutil.rmtree(out, ignore_errors=True)


def table(rows: dict[str, dict[str, Any]]) -> str:
    names = list(rows)
    keys = list(next(iter(rows.values())))
    out = ["| signal | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for k in keys:
        out.append(f"| {k} | " + " | ".join(str(rows[n][k]) for n in names) + " |")
    return "\n".join(out)


async def main(write: bool, only: str | None, pw_mcp: Path | None = PLAYWRIGHT_MCP) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="tb-detect-"))
    try:
        install(tmp)
        httpd, url = serve(tmp)
        rows: dict[str, dict[str, Any]] = {}
        for browser in ("chromium", "firefox"):
            if only and browser != only:
                continue
            for humanize in (False, True):
                name = f"trustbridge {browser}{' humanize' if humanize else ''}"
                rows[name] = signals(await run_trustbridge(browser, humanize, url))
                print(name, json.dumps(rows[name]), flush=True)
            name = f"raw Playwright {browser}"
            rows[name] = signals(await run_playwright(browser, url))
            print(name, json.dumps(rows[name]), flush=True)
            if browser == "chromium" and pw_mcp is not None and pw_mcp.is_file():
                name = "Playwright MCP chromium"
                rows[name] = signals(await run_playwright_mcp(pw_mcp, url))
                print(name, json.dumps(rows[name]), flush=True)
        httpd.shutdown()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    text = table(rows)
    print(text)
    if write:
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        OUT.write_text(
            "# Detection benchmark (issue 35)\n\n"
            f"`python scripts/detection_bench.py --write`, {stamp}, headless, this machine "
            "(Debian chromium, firefox-esr). Detectors from npm: "
            + ", ".join(f"`{p}`" for p in PACKAGES) + ". One run per column: load, a click on a "
            "button, typing `hello world` into a field (trustbridge: `page.act` by ref; raw "
            "Playwright: `locator.click`, `locator.press_sequentially`). Times are the page's "
            "own event timestamps, ms. Playwright MCP: browser_click, browser_type `slowly`, "
            "Chromium only.\n\n" + text + "\n")
        print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"write {OUT.name}")
    ap.add_argument("--only", choices=("chromium", "firefox"))
    ap.add_argument("--playwright-mcp", type=Path, default=PLAYWRIGHT_MCP,
                    help="Playwright MCP's cli.js (Chromium only; skipped when absent)")
    a = ap.parse_args()
    raise SystemExit(asyncio.run(main(a.write, a.only, a.playwright_mcp)))
