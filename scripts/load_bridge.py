"""Load test of the bridge's routing: devices × tabs × actions through fake peers.

A bridge runs in a child process (so its memory is measured alone). For each device a
fake extension (answers ``page.resolveTarget`` with a token naming the tab) and a fake
driver (records every ``driver.act``) connect over loopback. Clients then fire all
actions at once, each tab's actions in sequence order. Checks: every action answered
once, the driver saw each exactly once (none lost, none duplicated), and each tab's
actions reached the driver in the order they were sent.

Reports throughput (actions/s) and p50/p95 round-trip ms with all actions in flight at
once (queueing included), then p50/p95 of 200 actions sent one at a time (the routing
overhead: the fake peers answer at once), and the bridge's RSS before and after.
Usage: python scripts/load_bridge.py [--devices 4] [--tabs 4] [--actions 2000] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import secrets
import statistics
import sys
import time
from collections import defaultdict

from websockets.asyncio.client import connect

from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.protocol.models import PROTOCOL_VERSION, Hello, Response


def _serve(token: str, q: mp.Queue) -> None:  # child process
    from trustbridge.bridge.server import BridgeServer

    async def main() -> None:
        server = BridgeServer(token, port=0)
        await server.start()
        q.put(server.port)
        await asyncio.Event().wait()

    asyncio.run(main())


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


async def _fake_peer(url: str, token: str, role: str, device: str, seen: list) -> None:
    async with connect(url) as ws:
        await ws.send(Hello(role=role, device=device, protocolVersion=PROTOCOL_VERSION,
                            token=token).model_dump_json())
        await ws.recv()
        async for raw in ws:
            msg = json.loads(raw)
            if msg.get("type") != "request":
                continue
            p = msg["params"]
            if msg["method"] == "page.resolveTarget":
                result = {"frameToken": f"tab{p['tabId']}", "css": "#x", "tabId": p["tabId"]}
            else:
                seen.append((p["frameToken"], int(p["action"]["key"][1:])))
                result = {"done": True}
            await ws.send(Response(id=msg["id"], ok=True, result=result).model_dump_json())


async def run(devices: int, tabs: int, actions: int) -> dict:
    token = secrets.token_hex(16)
    q: mp.Queue = mp.get_context("spawn").Queue()
    proc = mp.get_context("spawn").Process(target=_serve, args=(token, q), daemon=True)
    proc.start()
    port = q.get(timeout=30)
    url = f"ws://127.0.0.1:{port}"
    seen: dict[str, list] = defaultdict(list)
    peers = []
    for d in range(devices):
        dev = f"dev{d}"
        for role in ("extension", "driver"):
            peers.append(asyncio.create_task(_fake_peer(url, token, role, dev, seen[dev])))
    await asyncio.sleep(0.5)
    rss_before = _rss_kib(proc.pid)
    clients = [await BridgeClient.connect(url, token) for _ in range(devices * tabs)]
    latencies: list[float] = []

    async def one(client: BridgeClient, dev: str, tab: int, seq: int) -> None:
        t0 = time.perf_counter()
        res = await client.call("page.act", {"device": dev, "tabId": tab, "ref": "e1",
                                             "action": {"kind": "press", "key": f"k{seq}"}})
        latencies.append((time.perf_counter() - t0) * 1000)
        assert res["inputPath"] == "trusted"

    per_tab = actions // (devices * tabs)
    started = time.perf_counter()
    jobs = []
    for i, client in enumerate(clients):
        dev, tab = f"dev{i // tabs}", i % tabs
        for seq in range(per_tab):
            jobs.append(asyncio.ensure_future(one(client, dev, tab, seq)))
    await asyncio.wait_for(asyncio.gather(*jobs), 300)
    elapsed = time.perf_counter() - started
    rss_after = _rss_kib(proc.pid)
    # Unloaded routing overhead: one action at a time (two peer hops each).
    solo: list[float] = []
    for seq in range(200):
        t0 = time.perf_counter()
        await clients[0].call("page.act", {"device": "dev0", "tabId": 99, "ref": "e1",
                                           "action": {"kind": "press", "key": f"k{seq}"}})
        solo.append((time.perf_counter() - t0) * 1000)
    solo.sort()
    for c in clients:
        await c.close()
    for p in peers:
        p.cancel()
    proc.kill()
    sent = per_tab * devices * tabs + len(solo)
    received = sum(len(v) for v in seen.values())
    in_order = True
    duplicates = 0
    for dev, items in seen.items():
        by_tab: dict[str, list[int]] = defaultdict(list)
        for tok, seq in items:
            by_tab[tok].append(seq)
        for seqs in by_tab.values():
            in_order &= seqs == sorted(seqs)
            duplicates += len(seqs) - len(set(seqs))
    lat = sorted(latencies)
    return {
        "devices": devices, "tabs": tabs, "actions_sent": sent,
        "answered": len(latencies) + len(solo), "driver_received": received, "duplicates": duplicates,
        "per_tab_order_kept": in_order,
        "burst_throughput_per_s": round(per_tab * devices * tabs / elapsed, 1),
        "burst_p50_ms": round(statistics.median(lat), 2),
        "burst_p95_ms": round(lat[int(len(lat) * 0.95) - 1], 2),
        "unloaded_p50_ms": round(statistics.median(solo), 3),
        "unloaded_p95_ms": round(solo[int(len(solo) * 0.95) - 1], 3),
        "bridge_rss_kib_before": rss_before, "bridge_rss_kib_after": rss_after,
        "cpus": os.cpu_count(),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devices", type=int, default=4)
    ap.add_argument("--tabs", type=int, default=4)
    ap.add_argument("--actions", type=int, default=2000)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    r = asyncio.run(run(a.devices, a.tabs, a.actions))
    print(json.dumps(r, indent=2) if a.json else "\n".join(f"{k}: {v}" for k, v in r.items()))
    ok = (r["answered"] == r["actions_sent"] == r["driver_received"]
          and r["duplicates"] == 0 and r["per_tab_order_kept"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
