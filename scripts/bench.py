"""trustbridge benchmarks side by side with raw Playwright (the floor) and Playwright MCP
(the peer), in one run on one machine (issue 7).

    python scripts/bench.py            # full run (~10 min on 2 cores)
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
- B3 snapshot time and bytes at 100 / 1,000 / 10,000 interactive elements.
- B4 a proxy adding 25 ms each way: step by step vs batch; target: a batch costs about one
  round trip more than local.
- B5 N tabs acting in parallel: throughput and p95.
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
        import bridge  # noqa: F401
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
    ap.add_argument("--only", default="b1,b2,b3,b4,b5,profile",
                    help="comma-separated subset of b1,b2,b3,b4,b5,profile")
    ap.add_argument("--arms", default=None,
                    help="B1 arms (default all: a,b,c,d,e,d_form,e_form,e_nosettle)")
    ap.add_argument("--rounds", type=int, default=None,
                    help="rounds for every benchmark (overrides the defaults)")
    ap.add_argument("--b4-counts", type=_csv_ints, default=None,
                    help="B4 batch sizes N (default 1,5,10; quick: 5)")
    ap.add_argument("--b5-tabs", type=_csv_ints, default=None,
                    help="B5 tab counts (default 1,2,4; quick: 1,2)")
    ap.add_argument("--b5-actions", type=int, default=None,
                    help="B5 clicks per tab (default 20; quick: 5)")
    ap.add_argument("--no-mcp", action="store_true",
                    help="skip every MCP arm (no npm, no MCP subprocesses)")
    ap.add_argument("--out-dir", type=Path, default=None, help="where to write the results")
    return ap.parse_args(argv)


def plan(args: argparse.Namespace) -> dict:
    """Rounds, sizes and counts of this run."""
    q = args.quick
    r = args.rounds
    from benchlib import b1_form

    arms = args.arms.split(",") if args.arms else list(b1_form.ALL_ARMS)
    if args.no_mcp:
        arms = [a for a in arms if a not in b1_form.MCP_SERVER]
    return {
        "quick": q,
        "only": args.only.split(","),
        "b1": {"rounds": r or (3 if q else 10), "arms": arms},
        "b2": {"rounds": r or (10 if q else 40)},
        "b3": {"rounds": r or (2 if q else 5), "sizes": [100, 1000] if q else [100, 1000, 10000],
               "mcp": not args.no_mcp},
        "b4": {"rounds": r or (3 if q else 10),
               "counts": args.b4_counts or ([5] if q else [1, 5, 10])},
        "b5": {"reps": r or (1 if q else 3), "tabs": args.b5_tabs or ([1, 2] if q else [1, 2, 4]),
               "actions": args.b5_actions or (5 if q else 20)},
        "profile": {"runs": r or (3 if q else 8)},
    }


async def main(args: argparse.Namespace) -> int:
    import json

    from benchlib import b1_form, b2_action, b3_snapshot, b4_proxy, b5_tabs, env, profile, report
    from benchlib.stack import Stack

    cfg = plan(args)
    out_dir = args.out_dir or (Path(tempfile.gettempdir()) / "trustbridge-bench-quick"
                               if args.quick else REPO / "docs" / "benchmarks")
    out_dir.mkdir(parents=True, exist_ok=True)
    log_dir = Path(tempfile.gettempdir()) / "trustbridge-bench-logs"
    log_dir.mkdir(exist_ok=True)

    def log(msg: str) -> None:
        print(f"bench: {msg}", file=sys.stderr, flush=True)

    res: dict = {"config": cfg, "machine": env.machine()}
    res["machine"]["load_start"] = round(os.getloadavg()[0], 2)
    only = set(cfg["only"])
    async with Stack(log_dir) as stack:
        log(f"stack up: Chromium {stack.chromium_version}, bridge {stack.server.url}")
        if "b1" in only:
            res["b1"] = await b1_form.run(stack, cfg["b1"]["rounds"], cfg["b1"]["arms"], log)
        if "b3" in only:
            c = cfg["b3"]
            res["b3"] = await b3_snapshot.run(stack, c["sizes"], c["rounds"], c["mcp"], log)
        if "b2" in only:
            res["b2"] = await b2_action.run(stack, cfg["b2"]["rounds"], log)
        if "b4" in only:
            res["b4"] = await b4_proxy.run(stack, cfg["b4"]["counts"], cfg["b4"]["rounds"], log)
        if "b5" in only:
            c = cfg["b5"]
            res["b5"] = await b5_tabs.run(stack, c["tabs"], c["actions"], c["reps"], log)
        if "profile" in only:
            arm = _slowest_sdk_arm(res.get("b1"))
            res["profile"] = await profile.run(stack, arm, cfg["profile"]["runs"],
                                               out_dir / "profile.txt", log)
        res["versions"] = env.versions(stack.chromium_version, stack.playwright_mcp_version)
    res["machine"]["load_end"] = round(os.getloadavg()[0], 2)
    (out_dir / "results.json").write_text(json.dumps(res, indent=2, ensure_ascii=False) + "\n")
    readme = out_dir / "README.md"
    old = readme.read_text() if readme.exists() else None
    readme.write_text(report.render(res, report.kept_analysis(old)))
    log(f"wrote {out_dir / 'results.json'} and {readme} (MCP server logs: {log_dir})")
    print(readme.read_text())
    return 0


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
