"""docs/mcp.md's tool table, from the real tool lists: trustbridge's ``TOOLS`` and Playwright
MCP 0.0.86's ``tools/list`` (``playwright-mcp-0.0.86-tools.json`` beside this file).

Each row: the tool, its ``--caps``, its arguments (``?``: optional), Playwright MCP's
equivalent with its arguments, and the differences: first the argument differences
computed from both schemas (tests/bridge/test_mcp_docs.py checks them), then the
behaviour in ``tool_notes.json`` (hand-written, from what scripts/mcp_conformance.py saw).

Usage (from the repository root)::

    .venv/bin/python scripts/conformance/tool_table.py            # print the table
    .venv/bin/python scripts/conformance/tool_table.py --write    # replace it in docs/mcp.md
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))
DOC = REPO / "docs" / "mcp.md"
PEER = HERE / "playwright-mcp-0.0.86-tools.json"
NOTES = HERE / "tool_notes.json"


def args_cell(schema: dict[str, Any]) -> str:
    required = set(schema.get("required", []))
    return ", ".join(f"`{k}`" + ("" if k in required else "?")
                     for k in schema.get("properties", {})) or "—"


def arg_differences(ours: dict[str, Any], theirs: dict[str, Any]) -> str:
    """``no X`` (theirs only), ``adds X`` (ours only), and what is required on one side."""
    pa, pb = set(ours.get("properties", {})), set(theirs.get("properties", {}))
    ra, rb = set(ours.get("required", [])), set(theirs.get("required", []))
    out = []
    if pb - pa:
        out.append("no " + ", ".join(f"`{x}`" for x in sorted(pb - pa)))
    if pa - pb:
        out.append("adds " + ", ".join(f"`{x}`" for x in sorted(pa - pb)))
    for x in sorted((ra - rb) & pb) + sorted((rb - ra) & pa):
        if x in ra:
            out.append(f"`{x}` required here, optional there")
        else:
            default = ours["properties"][x].get("default")
            same = default == theirs["properties"][x].get("default")
            out.append(f"`{x}` optional here" + (
                f" (default `{json.dumps(default)}`{', as theirs' if same else ''})"
                if default is not None else ""))
    return "; ".join(out)


def table() -> tuple[str, list[str]]:
    """The markdown table, and the tools that have no note yet."""
    from trustbridge.bridge.mcp.server import TOOLS

    peer = {t["name"]: t for t in json.loads(PEER.read_text())}
    notes = json.loads(NOTES.read_text())
    lines = ["| tool | caps | arguments | Playwright MCP 0.0.86 | differences |",
             "| --- | --- | --- | --- | --- |"]
    ours = {t.name for t in TOOLS}
    for t in TOOLS:
        p = peer.get(t.name)
        schema = t.input_schema()
        cell = f"`{t.name}` {args_cell(p['inputSchema'])}" if p else "—"
        note = "; ".join(x for x in (arg_differences(schema, p["inputSchema"]) if p else "",
                                     notes.get(t.name, "")) if x)
        lines.append(f"| `{t.name}` | {t.cap or 'core'} | {args_cell(schema)} | {cell} | {note} |")
    for name, p in peer.items():
        if name not in ours:
            lines.append(f"| — | — | — | `{name}` {args_cell(p['inputSchema'])} | "
                         f"{notes.get(name, 'not in trustbridge')} |")
    missing = [n for n in [*ours, *peer] if n not in notes]
    return "\n".join(lines) + "\n", missing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="replace the table in docs/mcp.md")
    args = parser.parse_args()
    text, missing = table()
    if missing:
        print(f"tool_table: no note in tool_notes.json for {', '.join(missing)}", file=sys.stderr)
    if not args.write:
        print(text, end="")
        return 0
    doc = DOC.read_text()
    new, n = re.subn(r"(<!-- tool-table:start -->\n).*?(<!-- tool-table:end -->)",
                     lambda m: m.group(1) + text + m.group(2), doc, flags=re.DOTALL)
    if n != 1:
        raise SystemExit("docs/mcp.md has no tool-table markers")
    DOC.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
