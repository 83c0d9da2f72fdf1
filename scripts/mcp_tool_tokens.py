"""Size of the MCP tool list in tokens (tiktoken, o200k_base), trustbridge against Playwright
MCP for the same ``--caps``; the rule (issue 15 item 6): ours is not larger.

Counts the ``tools`` array of a ``tools/list`` result as the server sends it (name, title,
description, inputSchema, annotations; compact JSON, ``null`` fields left out), which is
what an MCP client puts in the model's context. trustbridge's list is
``bridge.mcp.server.tools_for(caps)``; Playwright MCP's is read from the real server
(``scripts/conformance/node_modules``, pinned by its package-lock.json) over stdio with the
``mcp`` client library, for core and for ``--caps vision,pdf``. Prints one line per tool
and the totals; exits 1 when ours is larger for any caps, 2 when Playwright MCP is not
installed (nothing to compare with).

Usage::

    npm ci --prefix scripts/conformance       # Playwright MCP
    pip install tiktoken                      # plus bpe-openai where tiktoken cannot download its data
    python scripts/mcp_tool_tokens.py [--json] [--caps vision,pdf ...]

tiktoken downloads the o200k_base ranks on first use. Where that host is unreachable,
the same file (checked against tiktoken's own SHA-256) is taken from the ``bpe-openai``
package, which ships it.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CAPS_SETS = ("", "vision,pdf")
"""The ``--caps`` compared by default: core, and core + vision + pdf."""
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


def o200k_base():  # -> tiktoken.Encoding
    """The o200k_base encoding, seeding tiktoken's cache from bpe-openai if offline;
    installs both into the running interpreter when tiktoken is missing (as bench.py
    installs its extra)."""
    try:
        import tiktoken
    except ImportError:
        import subprocess

        print("mcp_tool_tokens: installing tiktoken and bpe-openai", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q",
                        "--disable-pip-version-check", "tiktoken", "bpe-openai"], check=True)
        import tiktoken

    try:
        return tiktoken.get_encoding("o200k_base")
    except Exception as exc:  # no network: fall back to the packaged copy of the ranks
        spec = importlib.util.find_spec("bpe_openai")
        if spec is None or spec.origin is None:
            raise SystemExit(f"tiktoken could not load o200k_base ({exc}); "
                             "`pip install bpe-openai` ships the file") from exc
        data = gzip.decompress(
            (Path(spec.origin).parent / "data" / "o200k_base.tiktoken.gz").read_bytes())
        cache = Path(tempfile.gettempdir()) / "trustbridge-tiktoken"
        cache.mkdir(exist_ok=True)
        (cache / hashlib.sha1(O200K_URL.encode()).hexdigest()).write_bytes(data)
        os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)  # tiktoken verifies the hash itself
        return tiktoken.get_encoding("o200k_base")


def dump(tool) -> dict:  # mcp_types.Tool -> the JSON the server sends
    return tool.model_dump(by_alias=True, mode="json", exclude_none=True)


def our_tools(caps: str) -> list[dict]:
    """trustbridge's ``tools`` array of tools/list with ``--caps caps``."""
    from trustbridge.bridge.mcp.server import TOOLS, tools_for

    return [dump(t.describe()) for t in tools_for([c for c in caps.split(",") if c], TOOLS)]


def playwright_tools(caps: str) -> list[dict] | None:
    """Playwright MCP's ``tools`` array with ``--caps caps``, from the installed server
    (listing tools starts no browser); None when it is not installed."""
    import asyncio
    import shutil

    from mcp import Client, StdioServerParameters

    cli = Path(__file__).resolve().parent / "conformance/node_modules/@playwright/mcp/cli.js"
    node = shutil.which("node")
    if node is None or not cli.exists():
        return None
    args = [str(cli), "--headless", "--isolated"] + (["--caps", caps] if caps else [])

    async def listing() -> list[dict]:
        async with Client(StdioServerParameters(command=node, args=args),
                          read_timeout_seconds=60) as client:
            return [dump(t) for t in (await client.list_tools()).tools]

    return asyncio.run(listing())


def count(enc, tools: list[dict]) -> tuple[int, dict[str, int]]:
    """Total tokens of the array and tokens per tool (compact JSON)."""
    per_tool = {t["name"]: len(enc.encode(json.dumps(t, separators=(",", ":")))) for t in tools}
    return len(enc.encode(json.dumps(tools, separators=(",", ":")))), per_tool


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--caps", nargs="*", default=list(CAPS_SETS), metavar="CAPS",
                        help="caps sets to compare ('' is core; default: core and vision,pdf)")
    args = parser.parse_args()
    enc = o200k_base()
    report = []
    for caps in args.caps:
        ours_total, ours = count(enc, our_tools(caps))
        peer = playwright_tools(caps)
        theirs_total, theirs = count(enc, peer) if peer is not None else (None, {})
        shared = sorted(set(ours) & set(theirs))
        report.append({"caps": caps or "core", "trustbridge": {"tools": len(ours), "total": ours_total,
                       "perTool": ours},
                       "shared": {"tools": len(shared),
                                  "trustbridge": sum(ours[n] for n in shared),
                                  "playwright": sum(theirs[n] for n in shared)},
                       "playwright": None if peer is None else {
                           "tools": len(theirs), "total": theirs_total, "perTool": theirs},
                       "ok": None if peer is None else ours_total <= theirs_total})
    if args.json:
        print(json.dumps({"encoding": "o200k_base", "caps": report}))
    else:
        for r in report:
            ours, theirs = r["trustbridge"], r["playwright"] or {"perTool": {}}
            print(f"--caps {r['caps']}")
            for name in dict.fromkeys([*ours["perTool"], *theirs["perTool"]]):
                a, b = ours["perTool"].get(name, "—"), theirs["perTool"].get(name, "—")
                print(f"  {name:28} {a!s:>6} {b!s:>6}")
            if r["playwright"] is None:
                print(f"  total: trustbridge {ours['total']} ({ours['tools']} tools); "
                      "Playwright MCP not installed (npm ci --prefix scripts/conformance)")
            else:
                print(f"  total: trustbridge {ours['total']} ({ours['tools']} tools) vs Playwright "
                      f"MCP {theirs['total']} ({theirs['tools']} tools): "
                      f"{'ok' if r['ok'] else 'OVER'}")
                sh = r["shared"]
                print(f"  the {sh['tools']} tools both list: trustbridge {sh['trustbridge']} vs "
                      f"Playwright MCP {sh['playwright']}")
    if any(r["ok"] is None for r in report):
        return 2
    return 0 if all(r["ok"] for r in report) else 1


if __name__ == "__main__":
    sys.exit(main())
