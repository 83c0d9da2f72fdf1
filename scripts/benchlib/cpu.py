"""CPU time spent by a process tree, by kind of process (Linux ``/proc``), and the
machine's busy share, so a benchmark can say where the time went when throughput stops
growing (B5: is it the renderer, the bridge, the driver, Playwright's Node process?).

:func:`sample` reads every live process under some root pids plus the benchmark process itself;
:func:`delta` subtracts two samples. Processes are classified by their command line:

- ``bench``: this process (the clients: SDK / BridgeClient calls, raw Playwright's client);
- ``bridge``: the root process (``trustbridge up``: the bridge runs in it);
- ``supervisor``: a Python child (the supervisor and its input driver);
- ``node``: Playwright's Node driver processes (the supervisor's, and this process's own);
- ``chromium-renderer`` / ``chromium-gpu`` / ``chromium-browser`` / ``chromium-other``:
  Chromium's processes by ``--type`` (renderers include the extension's process);
- ``other``: anything else in the tree.

A process that exits between two samples loses its CPU time from the delta (its children
are only counted while alive); the benchmark samples around a window where none exits.
"""

from __future__ import annotations

import os
from pathlib import Path

TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    out: list[int] = []
    task_dir = Path(f"/proc/{pid}/task")
    try:
        tids = list(task_dir.iterdir())
    except OSError:
        return out
    for tid in tids:
        try:
            out += [int(c) for c in (tid / "children").read_text().split()]
        except OSError:
            continue
    return out


def _tree(root: int) -> list[int]:
    seen, todo = [], [root]
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.append(pid)
        todo += _children(pid)
    return seen


def _cpu_s(pid: int) -> float | None:
    """utime + stime of ``pid`` in seconds (threads included), None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) * TICK_S


def _kind(pid: int, bridge: int | None) -> str:
    if pid == os.getpid():
        return "bench"
    if pid == bridge:
        return "bridge"
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "other"
    text = b" ".join(argv).decode(errors="replace")
    # Chromium rewrites its children's command line into one string (argv[0] holds the
    # flags too), so the program is the first word.
    exe = os.path.basename(text.split(" ", 1)[0])
    if "chrom" in exe or "headless_shell" in exe:
        for t in ("renderer", "gpu"):
            if f"--type={t}" in text:
                return f"chromium-{t}"
        return "chromium-other" if "--type=" in text else "chromium-browser"
    if exe == "node" or exe.endswith("/node"):
        return "node"
    if exe.startswith("python"):
        return "supervisor"
    return "other"


def children(pid: int | None = None) -> set[int]:
    """The child pids of ``pid`` (default: this process)."""
    return set(_children(os.getpid() if pid is None else pid))


def sample(roots: list[int], bridge: int | None = None) -> dict[str, float]:
    """CPU seconds by kind (module docstring) of this process (not its children) and of
    the trees under ``roots`` (``bridge``: the pid that counts as the bridge), plus
    ``_wall`` (monotonic s) and ``_machine_busy`` (busy CPU seconds of the whole machine,
    all cores, from ``/proc/stat``)."""
    import time

    out: dict[str, float] = {}
    pids = [os.getpid()]
    for root in roots:
        pids += [p for p in _tree(root) if p not in pids]
    for pid in pids:
        s = _cpu_s(pid)
        if s is not None:
            k = _kind(pid, bridge)
            out[k] = out.get(k, 0.0) + s
            out[f"_pid:{pid}:{k}"] = s
    cpu = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    ticks = [int(x) for x in cpu]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
    out["_machine_busy"] = (sum(ticks[:8]) - idle) * TICK_S
    out["_wall"] = time.monotonic()
    return out


def delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """CPU seconds spent between two samples by kind; ``busiest:<kind>``: the CPU seconds
    of that kind's busiest single process (one process near the wall time is one busy
    core: a serialization point); ``wall_s``, ``machine_busy_s`` (every process on the
    machine, other people's included) and ``cores``."""
    out = {k: round(after[k] - before.get(k, 0.0), 3) for k in after
           if not k.startswith("_") and after[k] - before.get(k, 0.0) > 0}
    busiest: dict[str, float] = {}
    for key, s in after.items():
        if key.startswith("_pid:"):
            kind = key.rsplit(":", 1)[1]
            busiest[kind] = max(busiest.get(kind, 0.0), s - before.get(key, 0.0))
    out.update({f"busiest:{k}": round(v, 3) for k, v in busiest.items() if v > 0})
    out["wall_s"] = round(after["_wall"] - before["_wall"], 3)
    out["machine_busy_s"] = round(after["_machine_busy"] - before["_machine_busy"], 3)
    out["cores"] = os.cpu_count() or 1
    return out
