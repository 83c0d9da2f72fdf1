"""How long peers take to come back after restarts, with a real headless browser.

Starts a bridge and a supervised browser (extension + input driver) for one device, then:
restarts the bridge on the same port after 0, 1.5 and 6 s down; cuts the extension's
socket from the bridge side (a close frame, then a TCP abort); stops and restarts the
driver. Prints, for each, the seconds until the peer is registered with the bridge again.
The correctness of each recovery is pinned by tests/e2e/test_restarts.py; this script
only measures (figures in docs/bridge.md).

Usage: python scripts/restart_times.py [--browser chromium|firefox] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import sys
import time
from collections.abc import Callable

from trustbridge.bridge.server import BridgeServer
from trustbridge.supervisor.runner import Supervisor

BOUND_S = 30.0


async def _until(predicate: Callable[[], bool]) -> float:
    started = time.monotonic()
    while not predicate():
        if time.monotonic() - started > BOUND_S:
            raise TimeoutError(f"not back within {BOUND_S} s")
        await asyncio.sleep(0.01)
    return round(time.monotonic() - started, 3)


async def run(browser: str) -> dict[str, float]:
    token, device = secrets.token_hex(16), "restart"
    server = BridgeServer(token, port=0)
    await server.start()
    sup = Supervisor(server.url, token, device, browser=browser)
    out: dict[str, float] = {}
    try:
        await sup.start()
        await _until(lambda: device in server.policy.extensions and device in server.policy.drivers)
        for down_s in (0.0, 1.5, 6.0):
            port = server.port
            await server.stop()
            await asyncio.sleep(down_s)
            server = BridgeServer(token, port=port)
            await server.start()
            started = time.monotonic()
            await _until(lambda srv=server: device in srv.policy.extensions
                         and device in srv.policy.drivers)
            out[f"bridge_down_{down_s}s_all_back_s"] = round(time.monotonic() - started, 3)
        for cut in ("close", "abort"):
            old = server.policy.extensions[device]
            ws = server.peers[old].ws
            started = time.monotonic()
            if cut == "close":
                await ws.close(1011, "cut")
            else:
                ws.transport.abort()
            await _until(lambda old=old: server.policy.extensions.get(device) not in (None, old))
            out[f"extension_{cut}_back_s"] = round(time.monotonic() - started, 3)
        await sup.stop_driver()
        await _until(lambda: device not in server.policy.drivers)
        started = time.monotonic()
        await sup.start_driver()
        await _until(lambda: device in server.policy.drivers)
        out["driver_restart_back_s"] = round(time.monotonic() - started, 3)
    finally:
        await sup.stop()
        await server.stop()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--browser", default="chromium", choices=("chromium", "firefox"))
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    r = asyncio.run(run(a.browser))
    print(json.dumps(r, indent=2) if a.json else "\n".join(f"{k}: {v}" for k, v in r.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
