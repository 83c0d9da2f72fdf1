"""B3: snapshot time and size against page size (interactive elements), four ways.

For each size (``/n<N>``: exactly N links, buttons, fields, selects, checkboxes), with the
order rotated each round, one warm-up first:

- ``trustbridge``: ``page.snapshot`` through the bridge, no budget (whole page);
- ``playwright``: Playwright ``page.aria_snapshot()`` of the same page (the baseline);
- ``playwright_ai``: ``aria_snapshot(mode="ai")`` (with refs), for information;
- ``playwright_mcp``: ``browser_snapshot`` of Playwright MCP (its own Chromium of the same
  build, loaded with the same URL), timed at the MCP client: stdio, JSON-RPC and all;
- ``trustbridge_mcp``: ``browser_snapshot`` of trustbridge's MCP server, timed the same way
  (its default budget applies: ``truncated`` says whether it stopped at it).

Bytes are UTF-8 bytes of the snapshot text (for the MCP tools: the YAML block of the
response; ``response_bytes``: the whole text result).
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from .pages import count_interactive_html, generate_page
from .stack import Stack, tool_text
from .stats import ratio, rotated, summary

NO_LIMIT_CHARS = 10_000_000
_YAML = re.compile(r"```yaml\n(.*?)\n```", re.S)


def _yaml_block(text: str) -> str:
    m = _YAML.search(text)
    return m.group(1) if m else text


async def run(stack: Stack, sizes: list[int], rounds: int, mcp: bool,
              log: Callable[[str], None]) -> dict[str, Any]:
    """Run B3. Returns ``{rounds, sizes: {N: {ops: {name: summary+bytes}, ratios}}, errors}``."""
    out: dict[str, Any] = {"rounds": rounds, "sizes": {}, "errors": {}}
    mcp_clients: dict[str, Any] = {}
    if mcp:
        for op, server in (("playwright_mcp", "playwright"), ("trustbridge_mcp", "trustbridge")):
            try:
                mcp_clients[op] = await stack.mcp(server)
            except RuntimeError as exc:
                out["errors"][op] = str(exc)
                log(f"B3 {op}: not run: {exc}")
    for n in sizes:
        html = generate_page(n)
        if count_interactive_html(html) != n:
            raise AssertionError(f"page generator made the wrong count for {n}")
        url = stack.pages.url(f"n{n}")
        await stack.tab.goto(url, timeout_ms=120_000)
        meta: dict[str, dict[str, Any]] = {}

        async def trustbridge() -> str:
            res = await stack.tab.snapshot_result(max_chars=NO_LIMIT_CHARS)
            if res.get("truncated"):
                raise AssertionError("the trustbridge snapshot was cut; raise NO_LIMIT_CHARS")
            return res["snapshot"]

        async def playwright() -> str:
            return await stack.page.aria_snapshot(timeout=300_000)

        async def playwright_ai() -> str:
            return await stack.page.aria_snapshot(mode="ai", timeout=300_000)

        ops: dict[str, Callable[[], Awaitable[str]]] = {
            "trustbridge": trustbridge, "playwright": playwright, "playwright_ai": playwright_ai}
        for op, client in mcp_clients.items():
            tool_text(await client.call_tool("browser_navigate", {"url": url}))

            async def snap(client: Any = client, op: str = op) -> str:
                text = tool_text(await client.call_tool("browser_snapshot", {}))
                meta[op] = {"response_bytes": len(text.encode())}
                return _yaml_block(text)

            ops[op] = snap
        times: dict[str, list[float]] = {k: [] for k in ops}
        size: dict[str, int] = {}
        for fn in ops.values():  # warm-up
            await fn()
        names = list(ops)
        for r in range(rounds):
            for name in rotated(names, r):
                t0 = time.perf_counter()
                text = await ops[name]()
                times[name].append((time.perf_counter() - t0) * 1000)
                size[name] = len(text.encode())
        if "trustbridge_mcp" in size:  # its default budget may stop at a first page
            meta.setdefault("trustbridge_mcp", {})["truncated"] = (
                size["trustbridge_mcp"] < 0.98 * size["trustbridge"])
        cell: dict[str, Any] = {"ops": {}}
        for name in names:
            cell["ops"][name] = {**summary(times[name]), "bytes": size[name], **meta.get(name, {})}
        med = {k: v["median"] for k, v in cell["ops"].items()}
        cell["ratios"] = {
            "time_to_playwright": {k: ratio(v, med["playwright"]) for k, v in med.items()},
            "bytes_to_playwright": {k: ratio(size[k], size["playwright"]) for k in names},
            "time_to_playwright_mcp": {k: ratio(v, med.get("playwright_mcp"))
                                       for k, v in med.items()},
        }
        out["sizes"][str(n)] = cell
        log(f"B3 {n:,} elements done")
    return out
