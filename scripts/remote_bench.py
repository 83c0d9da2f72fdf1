"""Remote devices across network namespaces (issue 36): what a link costs, and clicks/s
for 1, 2 and 4 devices on one bridge.

Layout (tests/e2e/netns.py): the bridge (``trustbridge up --no-browser --tls-listen``) in
one namespace, Chromium devices (``trustbridge device``) in others, joined over
``wss://`` with a CA made here; the agent (this process) in the root namespace reaches
the bridge's TLS listener. Needs root and ``ip``/``tc``.

B4 across namespaces (``--only b4``): two devices on the same bridge, ``near`` (its link
as is) and ``far``, whose ``wss://`` connections go through a TCP proxy in its own
namespace that holds every chunk 25 ms in each direction (scripts/benchlib/b4_proxy.py
``DelayProxy``; TLS stays end to end, the bridge's certificate names 127.0.0.1 too).
``tc netem delay`` was the plan, but this machine's kernel has no ``sch_netem`` (``tc
qdisc add ... netem``: "Specified qdisc kind is unknown"); the proxy adds the same
25 ms each way at the TCP level, on top of the real veth crossing.
For N trusted ``focus`` actions (alternating between two fields, so each moves focus),
rotated order, ``rounds`` rounds after a warm-up, it times N ``page.act`` one after the
other (*step*) and one ``page.batch`` of N (*batch*) on each device. The unit is the
round trip the delay adds, measured in the same run: a ``tabs.list`` (one call from the
bridge to the extension) to far minus to near. Unlike scripts/bench.py's B4 (the
*agent's* link slow), here the slow link is between the bridge and the device, which
every call the bridge makes for an action crosses.

Throughput (``--only clicks``): 1, 2, 4 devices (four Chromium devices up, the far one
stopped first); one agent connection per device, each sending ``--clicks`` trusted clicks
one after the other, all devices at once; ``--reps`` runs per device count in rotated
order, the median run reported (and every run's clicks/s). Clicks/s
over the wall time, and the bridge process's CPU seconds over the same span (clicks per
bridge CPU-second: what one bridge core carries). No delay. Each page's click counter is
read back and must equal the clicks sent.

Usage: ``python scripts/remote_bench.py [--only b4,clicks] [--rounds 10] [--clicks 40]
[--out FILE.json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from trustbridge.bridge.client import BridgeClient  # noqa: E402
from tests.e2e import netns  # noqa: E402

PAGES = ROOT / "tests" / "e2e" / "pages" / "remote"
TLS_PORT = 17843
PAGE_PORT = 8036
PROXY_PORT = 17844
DELAY_MS = 25


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _find_ref(snapshot: str, role: str, name: str) -> str:
    for line in snapshot.splitlines():
        if f'{role} "{name}"' in line and "[ref=" in line:
            return line.split("[ref=", 1)[1].split("]", 1)[0]
    raise LookupError(f"no {role} {name!r} in:\n{snapshot}")


class Rig:
    """The lab, the bridge and the devices started so far."""

    def __init__(self, lab: netns.Lab, home: Path) -> None:
        self.lab = lab
        self.home = home
        self.env = {**os.environ, "PYTHONPATH": str(ROOT),
                    "TRUSTBRIDGE_HOME": str(home / "bridge")}
        addr = lab.addr["bridge"]
        # 127.0.0.1 too: the far device reaches the bridge through its local delay proxy.
        self.ca, self.cert, self.key = netns.make_ca(home / "tls", [addr, "127.0.0.1"])
        self.url = f"wss://{addr}:{TLS_PORT}"
        self.page = f"http://{addr}:{PAGE_PORT}/index.html"
        self.bridge: subprocess.Popen[bytes] | None = None
        self.devices: dict[str, subprocess.Popen[bytes]] = {}
        self.token = ""

    def start_bridge(self) -> None:
        addr = self.lab.addr["bridge"]
        with open(self.home / "trustbridge.bridge.log", "wb") as out:
            self.bridge = self.lab.run("bridge", [
                sys.executable, "-m", "trustbridge", "up", "--no-browser", "--port", "0",
                "--tls-listen", f"{addr}:{TLS_PORT}", "--tls-cert", str(self.cert),
                "--tls-key", str(self.key)], env=self.env, stdout=out, stderr=out, cwd=ROOT)
            self.lab.run("bridge", [sys.executable, "-m", "http.server", str(PAGE_PORT),
                                    "--bind", addr, "--directory", str(PAGES)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ok = netns.wait_for(lambda: b"remote devices on" in (self.home / "trustbridge.bridge.log")
                            .read_bytes(), 30)
        if not ok:
            raise SystemExit("bridge did not start:\n" + (self.home / "trustbridge.bridge.log").read_text())
        self.token = (self.home / "bridge" / "token").read_text().strip()

    def start_delay_proxy(self, name: str, delay_ms: float) -> str:
        """A DelayProxy in namespace ``name`` to the bridge's TLS port; the URL to use."""
        self.lab.run(name, [sys.executable, __file__, "--delay-proxy",
                            f"{PROXY_PORT}:{self.lab.addr['bridge']}:{TLS_PORT}:{delay_ms}"],
                     env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     cwd=ROOT)
        return f"wss://127.0.0.1:{PROXY_PORT}"

    def start_device(self, name: str, browser: str = "chromium",
                     url: str | None = None) -> None:
        cred = self.home / f"{name}.credential"
        subprocess.run([sys.executable, "-m", "trustbridge", "device-token", "issue", name,
                        "--out", str(cred)], env=self.env, check=True, capture_output=True,
                       cwd=ROOT)
        env = {**self.env, "TRUSTBRIDGE_HOME": str(self.home / name)}
        with open(self.home / f"{name}.log", "wb") as out:
            self.devices[name] = self.lab.run(name, [sys.executable, "-m", "trustbridge", "device", "--bridge",
                                url or self.url, "--credential-file", str(cred), "--ca-file",
                                str(self.ca), "--name", name, "--browser", browser],
                         env=env, stdout=out, stderr=out, cwd=ROOT)

    async def client(self) -> BridgeClient:
        return await BridgeClient.connect(self.url, self.token, ca_file=str(self.ca))

    async def wait_joined(self, names: list[str], timeout_s: float = 120) -> None:
        deadline = time.monotonic() + timeout_s
        c = await self.client()
        try:
            while time.monotonic() < deadline:
                listed = {d["device"]: d for d in (await c.call("devices.list", {}))["devices"]}
                if all(listed.get(n, {}).get("driver") and listed.get(n, {}).get("extension")
                       for n in names):
                    return
                await asyncio.sleep(0.5)
        finally:
            await c.close()
        raise SystemExit(f"devices {names} did not join in {timeout_s:.0f} s")

    def bridge_cpu_s(self) -> float:
        """User + system CPU seconds of the bridge process so far."""
        assert self.bridge is not None
        fields = Path(f"/proc/{self.bridge.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _open(c: BridgeClient, device: str, page: str) -> int:
    """Navigate the device's active tab to the page; its tab id."""
    res = await c.call("page.navigate", {"device": device, "url": page})
    return int(res["tabId"])


async def bench_b4(rig: Rig, counts: list[int], rounds: int) -> dict[str, Any]:
    clients = {w: await rig.client() for w in ("near", "far")}
    try:
        tabs, refs = {}, {}
        for where, c in clients.items():
            tabs[where] = await _open(c, where, rig.page)
            snap = (await c.call("page.snapshot", {"device": where, "tabId": tabs[where]}))["snapshot"]
            refs[where] = [_find_ref(snap, "textbox", "Note"), _find_ref(snap, "button", "Count")]
        turn = {w: 0 for w in clients}

        def next_ref(where: str) -> str:
            turn[where] += 1
            return refs[where][turn[where] % 2]

        rtt: dict[str, list[float]] = {"near": [], "far": []}
        for r in range(2 * rounds + 1):
            for where in (["near", "far"] if r % 2 else ["far", "near"]):
                t0 = time.perf_counter()
                await clients[where].call("tabs.list", {"device": where})
                if r:
                    rtt[where].append((time.perf_counter() - t0) * 1000)
        unit = statistics.median(rtt["far"]) - statistics.median(rtt["near"])
        out: dict[str, Any] = {"delay_ms_each_way": DELAY_MS, "rounds": rounds,
                               "tabs_list_ms": {w: round(statistics.median(v), 2)
                                                for w, v in rtt.items()},
                               "rtt_added_ms": round(unit, 2), "by_n": {}}
        sent = 0
        for n in counts:
            samples: dict[str, list[float]] = {f"{w}_{m}": [] for w in ("near", "far")
                                               for m in ("step", "batch")}
            names = list(samples)
            for r in range(rounds + 1):
                for name in names[r % 4:] + names[:r % 4]:
                    where, mode = name.split("_")
                    c = clients[where]
                    t0 = time.perf_counter()
                    if mode == "step":
                        for _ in range(n):
                            res = await c.call("page.act", {
                                "device": where, "tabId": tabs[where], "ref": next_ref(where),
                                "action": {"kind": "focus"}})
                            assert res["inputPath"] == "trusted", res
                    else:
                        res = await c.call("page.batch", {
                            "device": where, "tabId": tabs[where],
                            "actions": [{"ref": next_ref(where), "action": {"kind": "focus"}}
                                        for _ in range(n)]})
                        assert res["interruptedAction"] is None, res
                    if r:
                        samples[name].append((time.perf_counter() - t0) * 1000)
                    sent += n
            med = {k: statistics.median(v) for k, v in samples.items()}
            out["by_n"][str(n)] = {
                "ms": {k: round(v, 1) for k, v in med.items()},
                "extra_ms": {m: round(med[f"far_{m}"] - med[f"near_{m}"], 1)
                             for m in ("step", "batch")},
                "extra_rtt": {m: round((med[f"far_{m}"] - med[f"near_{m}"]) / unit, 2)
                              for m in ("step", "batch")},
            }
            log(f"B4 N={n}: {out['by_n'][str(n)]}")
        out["focus_actions_sent"] = sent
        return out
    finally:
        for c in clients.values():
            await c.close()


async def bench_clicks(rig: Rig, devices: list[str], clicks: int) -> dict[str, Any]:
    clients = [await rig.client() for _ in devices]
    try:
        refs, tabs = {}, {}
        for d, c in zip(devices, clients):
            tabs[d] = await _open(c, d, rig.page)
            snap = (await c.call("page.snapshot", {"device": d, "tabId": tabs[d]}))["snapshot"]
            refs[d] = _find_ref(snap, "button", "Count")
            await c.call("page.evaluate", {"device": d, "tabId": tabs[d],
                                           "expression": "window.__clicks.length = 0"})
            await c.call("page.act", {"device": d, "tabId": tabs[d], "ref": refs[d],
                                      "action": {"kind": "click"}})  # warm-up
        latencies: list[float] = []

        async def one(d: str, c: BridgeClient) -> None:
            for _ in range(clicks):
                t0 = time.perf_counter()
                res = await c.call("page.act", {"device": d, "tabId": tabs[d], "ref": refs[d],
                                                "action": {"kind": "click"}})
                latencies.append((time.perf_counter() - t0) * 1000)
                assert res["inputPath"] == "trusted", res

        cpu0, t0 = rig.bridge_cpu_s(), time.perf_counter()
        await asyncio.gather(*(one(d, c) for d, c in zip(devices, clients)))
        wall, cpu = time.perf_counter() - t0, rig.bridge_cpu_s() - cpu0
        seen = 0
        for d, c in zip(devices, clients):
            got = (await c.call("page.evaluate", {"device": d, "tabId": tabs[d],
                                                  "expression": "window.__clicks"}))["value"]
            assert all(got), f"{d}: an untrusted click {got}"
            seen += len(got) - 1  # minus the warm-up
        total = clicks * len(devices)
        latencies.sort()
        return {"devices": len(devices), "clicks": total, "page_saw": seen,
                "wall_s": round(wall, 2), "clicks_per_s": round(total / wall, 1),
                "bridge_cpu_s": round(cpu, 2),
                "clicks_per_bridge_cpu_s": round(total / cpu, 1) if cpu else None,
                "p50_ms": round(latencies[len(latencies) // 2], 1),
                "p95_ms": round(latencies[int(len(latencies) * 0.95)], 1)}
    finally:
        for c in clients:
            await c.close()


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    names = ["bridge", "near", "far", "d2", "d3", "d4"]
    home = Path(args.home)
    home.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {"load_start": os.getloadavg(), "cores": os.cpu_count()}
    with netns.Lab(names) as lab:
        rig = Rig(lab, home)
        rig.start_bridge()
        rig.start_device("near")
        if "b4" in args.only:  # far: through its delay proxy
            rig.start_device("far", url=rig.start_delay_proxy("far", DELAY_MS))
            await rig.wait_joined(["near", "far"])
            out["b4"] = await bench_b4(rig, args.counts, args.rounds)
            netns.Lab.stop(rig.devices.pop("far"))  # 4 browsers at most at a time
        if "clicks" in args.only:
            for d in ("d2", "d3", "d4"):
                rig.start_device(d)
            await rig.wait_joined(["near", "d2", "d3", "d4"])
            groups = {1: ["near"], 2: ["near", "d2"], 4: ["near", "d2", "d3", "d4"]}
            runs: dict[int, list[dict[str, Any]]] = {n: [] for n in groups}
            order = list(groups)
            for rep in range(args.reps):  # rotated, so load drifts spread over the arms
                for n in order[rep % 3:] + order[:rep % 3]:
                    runs[n].append(await bench_clicks(rig, groups[n], args.clicks))
                    log(f"clicks rep {rep}: {runs[n][-1]}")
            rows = []
            for n, reps in runs.items():
                mid = sorted(reps, key=lambda r: r["clicks_per_s"])[len(reps) // 2]
                rows.append({**mid, "clicks_per_s_all": [r["clicks_per_s"] for r in reps],
                             "page_saw_all": sum(r["page_saw"] for r in reps),
                             "clicks_all": sum(r["clicks"] for r in reps)})
            base = rows[0]["clicks_per_s"]
            for row in rows:
                row["vs_one_device"] = round(row["clicks_per_s"] / base, 2)
            out["clicks"] = rows
    out["load_end"] = os.getloadavg()
    return out


async def _delay_proxy(spec: str) -> None:
    """``LISTEN_PORT:HOST:PORT:DELAY_MS``: serve a DelayProxy until killed."""
    from benchlib.b4_proxy import DelayProxy  # scripts/ is on sys.path (this file's folder)

    listen, host, port, delay = spec.split(":")
    async with DelayProxy(int(port), float(delay) / 1000, target_host=host,
                          listen_port=int(listen)):
        await asyncio.Event().wait()


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--delay-proxy":
        asyncio.run(_delay_proxy(sys.argv[2]))
        return 0
    if (reason := netns.unavailable()) is not None:
        print(f"remote_bench: cannot run here: {reason}", file=sys.stderr)
        return 2
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="b4,clicks")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--counts", type=lambda s: [int(x) for x in s.split(",")],
                    default=[1, 5, 10])
    ap.add_argument("--clicks", type=int, default=100, help="clicks per device and run")
    ap.add_argument("--reps", type=int, default=3, help="runs of each device count (median)")
    ap.add_argument("--home", help="keep the run's state (logs, tokens, CA) here; default: "
                    "a temp folder removed at the end")
    ap.add_argument("--out", help="write the results as JSON here")
    args = ap.parse_args()
    if args.home:
        res = asyncio.run(main_async(args))
    else:  # it holds the bridge token and device credentials: not left behind
        with tempfile.TemporaryDirectory(prefix="remote_bench_") as home:
            args.home = home
            res = asyncio.run(main_async(args))
    text = json.dumps(res, indent=1)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
