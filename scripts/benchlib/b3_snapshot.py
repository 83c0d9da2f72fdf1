"""B3: snapshot time and size against page size (interactive elements), four ways.

For each size (``/n<N>``: exactly N links, buttons, fields, selects, checkboxes), with the
order rotated each round, one warm-up first:

- ``trustbridge``: ``page.snapshot`` through the bridge, no budget (whole page);
- ``playwright``: Playwright ``page.aria_snapshot()`` of the same page (the baseline);
- ``playwright_ai``: ``aria_snapshot(mode="ai")`` (with refs), for information;
- ``playwright_mcp``: ``browser_snapshot`` of Playwright MCP (its own Chromium of the same
  build, loaded with the same URL; started with ``--snapshot-mode none`` so that loading
  the page does not take a snapshot of its own), timed at the MCP client: stdio, JSON-RPC
  and all. Playwright MCP stops a tool call at 30 s: such calls are counted as timeouts;
  the tool is dropped for that size after two in a row;
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
_YAML = re.compile(r"```yaml\n(.*?)\n```", re.DOTALL)


def _yaml_block(text: str) -> str:
    m = _YAML.search(text)
    return m.group(1) if m else text


async def run(stack: Stack, sizes: list[int], rounds: int, mcp: bool,
              log: Callable[[str], None]) -> dict[str, Any]:
    """Run B3. Returns ``{rounds, sizes: {N: {ops: {name: summary+bytes}, ratios}}, errors}``."""
    out: dict[str, Any] = {"rounds": rounds, "sizes": {}, "errors": {}}
    mcp_clients: dict[str, Any] = {}
    if mcp:
        for op, server in (("playwright_mcp", "playwright-nosnap"),
                           ("trustbridge_mcp", "trustbridge")):
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
            try:
                tool_text(await client.call_tool("browser_navigate", {"url": url}))
            except Exception as exc:  # e.g. the server's own time limit on a big page
                out["errors"][f"{op} at {n:,}"] = f"browser_navigate failed: {exc}"[:400]
                log(f"B3 {op} at {n}: navigate failed: {exc}")
                continue

            async def snap(client: Any = client, op: str = op,
                           meta: dict[str, dict[str, Any]] = meta) -> str:
                text = tool_text(await client.call_tool("browser_snapshot", {}))
                meta[op] = {"response_bytes": len(text.encode())}
                return _yaml_block(text)

            ops[op] = snap
        times: dict[str, list[float]] = {k: [] for k in ops}
        size: dict[str, int] = {}
        failed: set[str] = set()
        misses: dict[str, int] = {}

        async def attempt(name: str, ops: dict[str, Callable[[], Awaitable[str]]] = ops,
                          n: int = n, failed: set[str] = failed,
                          misses: dict[str, int] = misses) -> str | None:
            try:
                text = await ops[name]()
            except Exception as exc:  # noqa: BLE001 - reported, the other tools go on
                out["errors"][f"{name} at {n:,}"] = f"{type(exc).__name__}: {exc}"[:400]
                log(f"B3 {name} at {n}: failed: {exc}")
                out.setdefault("timeouts", {}).setdefault(f"{name} at {n:,}", 0)
                out["timeouts"][f"{name} at {n:,}"] += 1
                misses[name] = misses.get(name, 0) + 1
                if misses[name] >= 2:
                    failed.add(name)
                return None
            misses[name] = 0
            return text

        for name in list(ops):  # warm-up
            await attempt(name)
        for r in range(rounds):
            for name in rotated([k for k in ops if k not in failed], r):
                t0 = time.perf_counter()
                text = await attempt(name)
                if text is not None:
                    times[name].append((time.perf_counter() - t0) * 1000)
                    size[name] = len(text.encode())
        names = [k for k in ops if k not in failed and times[k]]
        if "playwright" not in names:
            raise RuntimeError(f"Playwright aria_snapshot failed at {n}: {out['errors']}")
        if "trustbridge_mcp" in size and "trustbridge" in size:
            # Its default budget may stop at a first page (with a cursor for the rest).
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
