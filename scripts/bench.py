"""trustbridge benchmarks side by side with raw Playwright (the floor) and Playwright MCP
(the peer), in one run on one machine (issue 7).

    python scripts/bench.py            # full run (~15 min on 2 cores)
    python scripts/bench.py --quick    # short run (~2 min), written to a temp folder

Writes ``results.json`` and ``README.md`` (tables: medians, ratios, run counts, versions,
machine) to ``docs/benchmarks/`` (``--quick``: to ``$TMPDIR/trustbridge-bench-quick``
unless ``--out-dir`` says otherwise) and ``profile.txt`` (the pyinstrument call tree).

Benchmarks (details in each ``scripts/benchlib/b*.py``):

- B1 form task: raw Playwright, trustbridge SDK step by step, trustbridge batch,
  trustbridge MCP tools, Playwright MCP (+ fill_form variants, + Playwright MCP without its
  settle wait); targets (c) ≤ 1.10× (a), (d) ≤ 0.5× (e).
- B2 per-action overhead: trusted click vs ``locator.click`` vs ``mouse.click``; target
  ≤ 5 ms median above ``locator.click``.
- B2u the click users run: ``trustbridge up`` (a subprocess) + the SDK, and ``trustbridge
  mcp`` over stdio, against ``locator.click()`` / ``mouse.click()`` of raw Playwright on its
  own Chromium (same binary); target: the SDK click ≤ 0.5× ``locator.click`` (issue 18).
- B2f the trusted click on Firefox ESR (WebDriver BiDi) beside Chromium's, same run;
  target ≤ 2× Chromium's.
- B3 snapshot time and bytes at 100 / 1,000 / 10,000 interactive elements.
- B4 a proxy adding 25 ms each way: step by step vs batch; target: a batch costs about one
  round trip more than local.
- B5 N sessions clicking at once through ``trustbridge up`` (a subprocess), each in a
  window of its own (``tabs.new {window: true}``), beside the same sessions in one window
  (background tabs) and raw Playwright's N pages: clicks/s, p50/p95, CPU by process; target
  (issue 16): 4 sessions ≥ 3× one session's throughput.
- Profile of the slowest trustbridge SDK arm of B1 (where the time goes).

On a fresh machine it first runs ``scripts/bootstrap.sh`` (Debian packages, ``.venv``)
when trustbridge is not importable, installs the ``bench`` extra (pyinstrument) into the
running interpreter if missing, and installs ``@playwright/mcp`` with npm into
``~/.cache/trustbridge-bench`` (never a browser: it runs Debian's Chromium). Timed
assertions live here, never in tests; an arm that cannot run is reported as not run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _bootstrap() -> None:
    """Re-run under the project's .venv (creating it if needed) when trustbridge is not
    importable here; install pyinstrument if missing."""
    try:
        import trustbridge.bridge  # noqa: F401
    except ImportError:
        venv_python = REPO / ".venv" / "bin" / "python"
        if not venv_python.exists():
            subprocess.run(["bash", str(REPO / "scripts" / "bootstrap.sh")], check=True)
        if Path(sys.executable).resolve() == venv_python.resolve():
            raise
        os.execv(str(venv_python), [str(venv_python), *sys.argv])
    try:
        import pyinstrument  # noqa: F401
    except ImportError:
        print("bench: installing the bench extra (pyinstrument)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q",
                        "--disable-pip-version-check", "pyinstrument>=5"], check=False)


def _csv_ints(s: str) -> list[int]:
    return [int(x) for x in s.split(",") if x.strip()]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="short run: fewer rounds and sizes; writes to a temp folder "
                    "unless --out-dir is given")
    ap.add_argument("--only", default="b1,b2,b2u,b2f,b3,b4,b5,profile",
                    help="comma-separated subset of b1,b2,b2u,b2f,b3,b4,b5,profile")
    ap.add_argument("--arms", default=None,
                    help="B1 arms (default all: a,b,c,d,e,d_form,e_form,e_nosettle,d_batch,d_up)")
    ap.add_argument("--rounds", type=int, default=None,
                    help="rounds for every benchmark (overrides the defaults)")
    ap.add_argument("--b4-counts", type=_csv_ints, default=None,
                    help="B4 batch sizes N (default 1,5,10; quick: 5)")
    ap.add_argument("--b5-tabs", type=_csv_ints, default=None,
                    help="B5 session counts (default 1,2,4; quick: 1,2)")
    ap.add_argument("--b5-actions", type=int, default=None,
                    help="B5 clicks per session (default 20; quick: 5)")
    ap.add_argument("--b5-arms", default=None,
                    help="B5 arms (default all: windows,one_window,playwright,"
                    "windows_full,one_window_full)")
    ap.add_argument("--no-mcp", action="store_true",
                    help="skip every MCP arm (no npm, no MCP subprocesses)")
    ap.add_argument("--out-dir", type=Path, default=None, help="where to write the results")
    ap.add_argument("--merge", action="store_true",
                    help="keep the other benchmarks of the results.json in the out dir and "
                    "replace only those run now (each section says when it was measured)")
    ap.add_argument("--render-only", action="store_true",
                    help="only re-render README.md from the results.json in the out dir")
    return ap.parse_args(argv)


def plan(args: argparse.Namespace) -> dict:
    """Rounds, sizes and counts of this run."""
    q = args.quick
    r = args.rounds
    from benchlib import b1_form, b5_tabs

    arms = args.arms.split(",") if args.arms else list(b1_form.ALL_ARMS)
    if args.no_mcp:
        arms = [a for a in arms if a not in b1_form.MCP_SERVER]
    return {
        "quick": q,
        "only": args.only.split(","),
        "b1": {"rounds": r or (3 if q else 10), "arms": arms},
        "b2": {"rounds": r or (10 if q else 40)},
        "b2u": {"rounds": r or (10 if q else 30), "mcp": not args.no_mcp},
        "b2f": {"rounds": r or (5 if q else 15)},
        "b3": {"rounds": r or (2 if q else 5), "sizes": [100, 1000] if q else [100, 1000, 10000],
               "mcp": not args.no_mcp},
        "b4": {"rounds": r or (3 if q else 10),
               "counts": args.b4_counts or ([5] if q else [1, 5, 10])},
        "b5": {"reps": r or (1 if q else 3), "tabs": args.b5_tabs or ([1, 2] if q else [1, 2, 4]),
               "actions": args.b5_actions or (5 if q else 20),
               "arms": args.b5_arms.split(",") if args.b5_arms else list(b5_tabs.ARMS)},
        "profile": {"runs": r or (3 if q else 8)},
    }


async def main(args: argparse.Namespace) -> int:
    import json
    import traceback
    from typing import Any

    from benchlib import (
        b1_form,
        b2_action,
        b2_firefox,
        b2_users,
        b3_snapshot,
        b4_proxy,
        b5_tabs,
        env,
        profile,
        report,
    )
    from benchlib.stack import Stack

    cfg = plan(args)
    out_dir = args.out_dir or (Path(tempfile.gettempdir()) / "trustbridge-bench-quick"
                               if args.quick else REPO / "docs" / "benchmarks")
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.render_only:
        readme = out_dir / "README.md"
        res = json.loads((out_dir / "results.json").read_text())
        if "b4" in res:  # targets are derived from the raw numbers
            res["b4"]["targets"] = b4_proxy.targets(res["b4"]["by_n"])
        old = readme.read_text() if readme.exists() else None
        readme.write_text(report.render(res, report.kept_analysis(old)))
        return 0
    log_dir = Path(tempfile.gettempdir()) / "trustbridge-bench-logs"
    log_dir.mkdir(exist_ok=True)

    def log(msg: str) -> None:
        print(f"bench: {msg}", file=sys.stderr, flush=True)

    env.versions("", None)  # the checkout's revision, read before any result is written
    res: dict = {"config": cfg, "machine": env.machine()}
    res["machine"]["load_start"] = round(os.getloadavg()[0], 2)
    only = set(cfg["only"])
    if args.merge and (out_dir / "results.json").exists():
        res = _merged(json.loads((out_dir / "results.json").read_text()), res, only)
    failures: dict[str, str] = {}

    def save() -> None:
        res["failures"] = failures
        (out_dir / "results.json").write_text(json.dumps(res, indent=2, ensure_ascii=False) + "\n")

    async def step(name: str, coro_fn: Any) -> None:
        """Run one benchmark; a failure is recorded and the others still run."""
        if name not in only:
            return
        try:
            res[name] = await coro_fn()
        except Exception as exc:  # noqa: BLE001 - reported in the README
            failures[name] = f"{type(exc).__name__}: {exc}"[:600]
            log(f"{name} failed:\n{traceback.format_exc()}")
        save()

    async with Stack(log_dir) as stack:
        log(f"stack up: Chromium {stack.chromium_version}, bridge {stack.server.url}")
        res["versions"] = env.versions(stack.chromium_version, None)
        c1, c2, c3, c4, c5 = (cfg[k] for k in ("b1", "b2", "b3", "b4", "b5"))
        await step("b1", lambda: b1_form.run(stack, c1["rounds"], c1["arms"], log))
        await step("b3", lambda: b3_snapshot.run(stack, c3["sizes"], c3["rounds"], c3["mcp"], log))
        await stack.close_mcp()  # the MCP servers' browsers would compete for the CPU below
        await step("b2", lambda: b2_action.run(stack, c2["rounds"], log))
        cu = cfg["b2u"]
        await step("b2u", lambda: b2_users.run(stack.pages, cu["rounds"], log, log_dir, cu["mcp"]))
        await step("b2f", lambda: b2_firefox.run(stack, cfg["b2f"]["rounds"], log))
        await step("b4", lambda: b4_proxy.run(stack, c4["counts"], c4["rounds"], log))
        await step("b5", lambda: b5_tabs.run(stack.pages, c5["tabs"], c5["actions"], c5["reps"],
                                             log, log_dir, tuple(c5["arms"])))
        await step("profile", lambda: profile.run(stack, _slowest_sdk_arm(res.get("b1")),
                                                  cfg["profile"]["runs"],
                                                  out_dir / "profile.txt", log))
        res["versions"] = env.versions(stack.chromium_version, stack.playwright_mcp_version)
    res["machine"]["load_end"] = round(os.getloadavg()[0], 2)
    for name in only & set(res.get("runs", {})):
        res["runs"][name]["load_end"] = res["machine"]["load_end"]
    save()
    readme = out_dir / "README.md"
    old = readme.read_text() if readme.exists() else None
    readme.write_text(report.render(res, report.kept_analysis(old)))
    log(f"wrote {out_dir / 'results.json'} and {readme} (MCP server logs: {log_dir})")
    print(readme.read_text())
    return 1 if failures else 0


def _merged(old: dict, new: dict, only: set[str]) -> dict:
    """``old`` results with this run's machine facts, and a ``runs`` entry per benchmark
    saying which run measured it (date, load at start; load at end added later): those in
    ``only`` are this run's (and replaced as they finish), the others keep ``old``'s."""
    runs = old.get("runs") or {}
    then = {"date": old["machine"]["date"], "load_start": old["machine"].get("load_start"),
            "load_end": old["machine"].get("load_end")}
    for name in ("b1", "b2", "b2u", "b2f", "b3", "b4", "b5", "profile"):
        if name in only:
            runs[name] = {"date": new["machine"]["date"],
                          "load_start": new["machine"]["load_start"], "load_end": None}
        elif name in old:
            runs.setdefault(name, then)
    merged = {k: v for k, v in old.items() if k not in only}
    merged.update(config=new["config"], machine=new["machine"], runs=runs)
    return merged


def _slowest_sdk_arm(b1: dict | None) -> str:
    """The slower of the SDK arms (b, c) in B1, or ``b`` when B1 did not run."""
    if not b1:
        return "b"
    meds = {k: b1["arms"][k].get("median") for k in ("b", "c") if k in b1["arms"]}
    meds = {k: v for k, v in meds.items() if v is not None}
    return max(meds, key=meds.__getitem__) if meds else "b"


if __name__ == "__main__":
    _bootstrap()
    import asyncio

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(asyncio.run(main(parse_args())))
