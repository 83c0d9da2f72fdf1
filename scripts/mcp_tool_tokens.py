"""Size of the MCP server's tool list in tokens (tiktoken, o200k_base); budget 3,500.

Counts the ``tools`` array of a ``tools/list`` result exactly as the server sends it
(name, title, description, inputSchema, annotations; compact JSON), which is what an MCP
client puts in the model's context. Prints one line per tool and the total; exits 1 when
the total is over the budget.

Usage::

    pip install tiktoken          # plus bpe-openai where tiktoken cannot download its data
    python scripts/mcp_tool_tokens.py [--json]

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

BUDGET = 3_500
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


def o200k_base():  # -> tiktoken.Encoding
    """The o200k_base encoding, seeding tiktoken's cache from bpe-openai if offline."""
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


def tool_list() -> list[dict]:
    """The ``tools`` array of tools/list, as JSON-ready dicts."""
    from bridge.mcp import TOOLS

    return [t.describe().model_dump(by_alias=True, mode="json", exclude_none=True)
            for t in TOOLS]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    enc = o200k_base()
    tools = tool_list()
    per_tool = {t["name"]: len(enc.encode(json.dumps(t, separators=(",", ":")))) for t in tools}
    total = len(enc.encode(json.dumps(tools, separators=(",", ":"))))
    ok = total <= BUDGET
    if args.json:
        print(json.dumps({"encoding": "o200k_base", "tools": len(tools), "total": total,
                          "budget": BUDGET, "ok": ok, "perTool": per_tool}))
    else:
        for name, n in per_tool.items():
            print(f"{name:24} {n:5d}")
        print(f"{'total (' + str(len(tools)) + ' tools)':24} {total:5d}  budget {BUDGET}: "
              f"{'ok' if ok else 'OVER'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
