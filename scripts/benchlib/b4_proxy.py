"""B4: step by step against batch when the client is far from the bridge.

:class:`DelayProxy` is a TCP proxy on 127.0.0.1 that holds every chunk 25 ms in each
direction (order kept, no bandwidth limit), so one client round trip costs about 50 ms
more. For N trusted ``focus`` actions on ``/clicks`` (alternating between the Query field
and the Go button, so each one moves focus; rotated order each round) it times:

- ``local_step`` / ``proxy_step``: N ``page.act`` requests, one after the other;
- ``local_batch`` / ``proxy_batch``: one ``page.batch`` of the N actions;
- ``local_rtt`` / ``proxy_rtt``: one ``tabs.list`` (the unit: the round trip the proxy adds).

Two fresh client connections, one direct and one through the proxy, each open a session
of their own and a tab of their own on ``/clicks`` (``tabs.new {window: true}``): under
sessions (issue 16) a tab belongs to one session and the other's requests there are
TAB_CLAIMED, so the two cannot share a tab; same page, same actions, only the link differs.

The bridge's calls to the extension and the driver stay local: only the agent's link is
slow, as when an agent drives a browser on another machine. The action is a cheap one
(a focus: one call into the page, a few ms) on purpose: what is measured is round trips,
and a click's own spread (tens of ms on a busy machine, from its wait for stable animation
frames) would bury a 50 ms difference. Each page counts the focus changes it saw (summed).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Callable
from typing import Any

from trustbridge.bridge.client import BridgeClient

from .stack import DEVICE, Stack, find_ref
from .stats import rotated, summary

DELAY_S = 0.025


class DelayProxy:
    """``async with DelayProxy(port, delay_s) as proxy``: ``proxy.port`` forwards to
    ``target_host``:``port`` (default 127.0.0.1), delaying each chunk ``delay_s`` s in
    each direction (scripts/remote_bench.py runs one in a device's network namespace)."""

    def __init__(self, target_port: int, delay_s: float = DELAY_S,
                 target_host: str = "127.0.0.1", listen_port: int = 0) -> None:
        self.target_port = target_port
        self.target_host = target_host
        self.listen_port = listen_port
        self.delay_s = delay_s
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    async def __aenter__(self) -> DelayProxy:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.listen_port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for t in list(self._tasks):
            t.cancel()
        with contextlib.suppress(Exception):
            await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            up_r, up_w = await asyncio.open_connection(self.target_host, self.target_port)
            for w in (writer, up_w):
                sock = w.get_extra_info("socket")
                if sock is not None:
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            await asyncio.gather(self._pipe(reader, up_w), self._pipe(up_r, writer))
        except (OSError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            # Only __aexit__ cancels these; asyncio's server callback would log the
            # cancellation of its handler task as an error, so end quietly.
            pass
        finally:
            writer.close()
            self._tasks.discard(task)

    async def _pipe(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def deliver() -> None:
            while True:
                due, data = await queue.get()
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                if not data:
                    with contextlib.suppress(OSError):
                        dst.close()
                    return
                dst.write(data)
                await dst.drain()

        sender = asyncio.create_task(deliver())
        try:
            while True:
                data = await src.read(65536)
                queue.put_nowait((loop.time() + self.delay_s, data))
                if not data:
                    break
            await sender
        finally:
            sender.cancel()


async def run(stack: Stack, counts: list[int], rounds: int,
              log: Callable[[str], None]) -> dict[str, Any]:
    """Run B4. Returns ``{delay_ms_each_way, rounds, rtt, by_n: {N: {ops, extra_ms,
    extra_rtt}}, targets}`` (ms; ``extra_rtt``: ms added by the proxy in units of the
    measured proxy round trip)."""
    out: dict[str, Any] = {"delay_ms_each_way": DELAY_S * 1000, "rounds": rounds, "by_n": {}}
    sent = 0
    async with DelayProxy(stack.server.port) as proxy:
        near = await BridgeClient.connect(stack.server.url, stack.token)
        far = await BridgeClient.connect(f"ws://127.0.0.1:{proxy.port}", stack.token)
        clients = {"local": near, "proxy": far}
        tabs: dict[str, int] = {}
        try:
            refs: dict[str, list[str]] = {}
            for where, c in clients.items():
                tabs[where], refs[where] = await _own_tab(stack, c, where)

            turn = {where: 0 for where in clients}

            def next_ref(where: str) -> str:
                # Per page: each focus must move that page's focus (Query, Go, Query...),
                # or its counter would not see it.
                turn[where] += 1
                return refs[where][turn[where] % 2]

            def act(where: str) -> Any:
                return clients[where].call("page.act", {"device": DEVICE, "tabId": tabs[where],
                                                        "ref": next_ref(where),
                                                        "action": {"kind": "focus"}})

            rtt: dict[str, list[float]] = {"local_rtt": [], "proxy_rtt": []}
            for r in range(2 * rounds + 1):
                for where in rotated(["local", "proxy"], r):
                    t0 = time.perf_counter()
                    await clients[where].call("tabs.list", {"device": DEVICE})
                    if r:  # the first is a warm-up
                        rtt[f"{where}_rtt"].append((time.perf_counter() - t0) * 1000)
            out["rtt"] = {k: summary(v) for k, v in rtt.items()}
            unit = out["rtt"]["proxy_rtt"]["median"] - out["rtt"]["local_rtt"]["median"]
            out["rtt_added_ms"] = round(unit, 2)
            for n in counts:
                samples: dict[str, list[float]] = {
                    f"{w}_{m}": [] for w in ("local", "proxy") for m in ("step", "batch")}
                names = list(samples)
                for r in range(rounds + 1):
                    for name in rotated(names, r):
                        where, mode = name.split("_")
                        c = clients[where]
                        t0 = time.perf_counter()
                        if mode == "step":
                            for _ in range(n):
                                res = await act(where)
                                assert res["inputPath"] == "trusted"
                        else:
                            res = await c.call("page.batch", {
                                "device": DEVICE, "tabId": tabs[where],
                                "actions": [{"ref": next_ref(where), "action": {"kind": "focus"}}
                                            for _ in range(n)]})
                            assert res["interruptedAction"] is None
                            assert len(res["completedActions"]) == n
                        ms = (time.perf_counter() - t0) * 1000
                        sent += n
                        if r:  # round 0 is a warm-up
                            samples[name].append(ms)
                ops = {k: summary(v) for k, v in samples.items()}
                extra = {m: round(ops[f"proxy_{m}"]["median"] - ops[f"local_{m}"]["median"], 2)
                         for m in ("step", "batch")}
                out["by_n"][str(n)] = {
                    "ops": ops, "extra_ms": extra,
                    "extra_rtt": {m: round(v / unit, 2) if unit > 0 else None
                                  for m, v in extra.items()}}
                log(f"B4 N={n} done")
            seen = 0
            for where, c in clients.items():
                seen += int((await c.call("page.evaluate", {
                    "device": DEVICE, "tabId": tabs[where],
                    "expression": "document.getElementById('f').textContent"}))["value"])
        finally:
            for where, c in clients.items():
                if where in tabs:
                    with contextlib.suppress(Exception):
                        await c.call("tabs.close", {"device": DEVICE, "tabId": tabs[where]})
                await c.close()
    out["actions_sent"], out["focus_changes_seen"] = sent, seen
    out["targets"] = targets(out["by_n"])
    return out


async def _own_tab(stack: Stack, c: BridgeClient, where: str) -> tuple[int, list[str]]:
    """``c``'s own session and tab on ``/clicks`` (a window of its own): ``(tab id, [Query
    ref, Go ref])``. Under sessions (issue 16) a tab belongs to the session that opened it,
    so the near and the far client cannot share one; each acts on a page of its own, the
    same page, and only the link differs."""
    await c.call("session.open", {"label": f"b4-{where}"})
    res = await c.call("tabs.new", {"device": DEVICE, "window": True,
                                    "url": stack.pages.url("clicks", b=4, where=where)})
    tid = int(res["tabId"])
    snap = (await c.call("page.snapshot", {"device": DEVICE, "tabId": tid}))["snapshot"]
    return tid, [find_ref(snap, role, name) for role, name in (("textbox", "Query"),
                                                               ("button", "Go"))]


LIMIT_RTT = 1.5
"""Most a batch may cost over the slow link, in measured round trips (the target says one;
the half is room for the noise of a busy 2-core machine)."""


def targets(by_n: dict[str, Any]) -> list[dict[str, Any]]:
    """B4's target from the raw numbers: for every N, the batch over the proxy costs at
    most :data:`LIMIT_RTT` measured round trips more than locally (the worst N counts)."""
    vals = [c["extra_rtt"]["batch"] for c in by_n.values()]
    worst = None if not vals or None in vals else max(vals)
    return [{"target": f"B4 batch of N (N = {', '.join(by_n)}) over +25 ms each way costs "
                       f"≈ one round trip more than local (worst N ≤ {LIMIT_RTT} round trips)",
             "value": worst, "limit": LIMIT_RTT,
             "met": None if worst is None else worst <= LIMIT_RTT}]
