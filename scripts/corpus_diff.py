"""The differential corpus: every page through ``trustbridge mcp``, Playwright MCP and raw
Playwright, with the same scripted task (issue 30 item 3), and how much of Chromium's own
accessibility tree each snapshot covers (issue 30 item 4).

The corpus lives in ``tests/corpus`` (see its README.md): ``tasks.json`` lists one task per
page; ``pages/`` holds pages rebuilt from public bug reports of agent browser tools;
``lib/`` holds pages running real widget libraries installed from npm (``package.json``,
bundled by ``build.mjs`` with esbuild into ``lib/dist``, not committed). Every page keeps a
record of what it saw (``record.js``): ``window.__outcome`` (the task's result) and
``window.__untrusted`` (pointer/key events with ``isTrusted`` false).

One scripted client drives both MCP servers (the client code is scripts/mcp_conformance.py's
``Runner``): for each step it takes a ``browser_snapshot``, finds the target's ref by role and
accessible name in the snapshot text, calls the tool the way a Playwright MCP 0.0.86 client
writes it (``element`` + ``target``), and after the last step reads the record with
``browser_evaluate``. A page passes when the outcome equals ``expect`` and no untrusted event
was seen. Raw Playwright (``get_by_role(role, name=..., exact=True)`` locators, searched in
every frame) is the floor. Pages run one after another on one browser per tool.

The agreement check (``--ax``): for every page, after its task ran through raw Playwright,
Chromium's ``Accessibility.getFullAXTree`` (CDP, every frame) gives the nodes with an
actionable role (:data:`ACTIONABLE`) and a non-empty name; the report gives the share of them
present (same role and name, with a ref) in trustbridge's snapshot and in Playwright MCP's, and
lists the misses. The snapshots compared are the ones each server returned on first load.

Usage (a benchmark run by hand, not CI)::

    npm ci --prefix scripts/conformance            # Playwright MCP 0.0.86 (pinned)
    npm ci --prefix tests/corpus && node tests/corpus/build.mjs   # the library pages
    .venv/bin/python scripts/corpus_diff.py [--only NAME ...] [--ax] [--write]

Prints the table page × {trustbridge, Playwright MCP, raw Playwright} with each failure's
cause; ``--write`` also writes docs/benchmarks/corpus.md. ``TRUSTBRIDGE_PLAYWRIGHT_MCP``
names another Playwright MCP cli.js.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mcp_conformance as mc  # noqa: E402  (the MCP client, server specs and page server)

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "corpus"
DOC = REPO / "docs" / "benchmarks" / "corpus.md"
RAW_TIMEOUT_MS = 5000
"""Raw Playwright's action timeout, ms (Playwright MCP's own default action timeout)."""
OUTCOME_JS = "() => JSON.stringify([window.__outcome ?? null, window.__untrusted ?? 0])"
ACTIONABLE = {"button", "link", "textbox", "searchbox", "checkbox", "radio", "switch",
              "combobox", "option", "menuitem", "menuitemcheckbox", "menuitemradio", "tab",
              "slider", "spinbutton", "treeitem", "listbox", "gridcell", "columnheader"}
"""Roles counted by the agreement check (issue 30 item 2's list)."""
AX_ALIASES = {"textField": "textbox", "searchBox": "searchbox", "checkBox": "checkbox",
              "radioButton": "radio", "comboBoxSelect": "combobox", "popUpButton": "combobox",
              "comboBoxMenuButton": "combobox", "menuItem": "menuitem",
              "menuItemCheckBox": "menuitemcheckbox", "menuItemRadio": "menuitemradio",
              "spinButton": "spinbutton", "listBoxOption": "option", "toggleButton": "button",
              "textFieldWithComboBox": "combobox", "treeItem": "treeitem",
              "listBox": "listbox", "menuListOption": "option", "cell": "gridcell"}
"""Chromium's internal role names (CDP ``role.value``) → ARIA roles."""


@dataclass
class Task:
    """One corpus page and its task (a row of tasks.json)."""

    page: str
    task: str
    steps: list[list[Any]]
    expect: Any
    source: str = ""

    @property
    def name(self) -> str:
        return Path(self.page).stem if self.page.startswith("pages/") else \
            "lib:" + Path(self.page).stem


@dataclass
class Outcome:
    """One page on one tool: passed, and the cause when not."""

    ok: bool
    cause: str = ""
    snapshot: str = ""  # the first snapshot of the page (for the agreement check)
    seconds: float = 0.0
    calls: list[str] = field(default_factory=list)  # each call's arguments and answer (--raw)


def load_tasks(only: set[str] | None = None) -> list[Task]:
    """tasks.json's tasks whose page exists (library pages need their build)."""
    data = json.loads((CORPUS / "tasks.json").read_text())
    tasks = [Task(**t) for t in data["tasks"]]
    return [t for t in tasks if (only is None or t.name in only or Path(t.page).stem in only)]


def mcp_args(verb: str, role: str, name: str, extra: dict[str, Any]) -> tuple[str, dict]:
    """A step as a Playwright MCP client writes the tool call (refs still :class:`mc.Ref`)."""
    ref = mc.Ref(role, name)
    if verb == "click":
        return "browser_click", {"element": name, "target": ref}
    if verb == "type":
        args = {"element": name or role, "target": ref, "text": extra["text"]}
        for k in ("slowly", "submit"):
            if extra.get(k):
                args[k] = True
        return "browser_type", args
    if verb == "select":
        return "browser_select_option", {"element": name, "target": ref,
                                         "values": extra["values"]}
    if verb == "check":
        return "browser_fill_form", {"fields": [{"name": name, "type": "checkbox",
                                                 "target": ref, "value": "true"}]}
    if verb == "hover":
        return "browser_hover", {"element": name, "target": ref}
    if verb == "drag":
        to = mc.Ref(*extra["to"])
        return "browser_drag", {"startElement": name, "startTarget": ref,
                                "endElement": to.name, "endTarget": to}
    if verb == "press":
        return "browser_press_key", {"key": name}
    if verb == "wait":
        return "browser_wait_for", {"text": name}
    if verb == "wheel":  # at the mouse's last point (after a hover or click)
        return "browser_mouse_wheel", {"deltaX": extra.get("deltaX", 0),
                                       "deltaY": extra.get("deltaY", 0)}
    raise ValueError(f"unknown verb {verb!r}")


def find_ref(snapshot: str, ref: mc.Ref) -> str | None:
    """mcp_conformance's lookup by role and name; for an empty name, the first element of
    that role listed without a name (e.g. an unnamed editor in a frame)."""
    if ref.name:
        return mc.find_ref(snapshot, ref)
    found = re.findall(rf'- {re.escape(ref.role)}(?! ")[^\n]*?\[ref=([\w-]+)\]', snapshot)
    return found[0] if found else None


def resolve(value: Any, snapshot: str, missing: list[str]) -> Any:
    """``value`` with every :class:`mc.Ref` replaced by its ref in ``snapshot``."""
    if isinstance(value, mc.Ref):
        found = find_ref(snapshot, value)
        if found is None:
            missing.append(f'{value.role} "{value.name}"')
        return found or "e0"
    if isinstance(value, dict):
        return {k: resolve(v, snapshot, missing) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, snapshot, missing) for v in value]
    return value


def first_line(text: str, width: int = 110) -> str:
    """The first meaningful line of a tool's answer, cut to ``width``."""
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line and line.lower() not in ("error", "result"):
            return line[:width]
    return text[:width]


def outcome_cause(value: Any, expect: Any) -> tuple[bool, str]:
    """Compare the page's record ``[outcome, untrusted]`` with ``expect``."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return False, f"record unreadable: {value[:80]}"
    if not isinstance(value, list) or len(value) != 2:
        return False, f"record unreadable: {str(value)[:80]}"
    got, untrusted = value
    if untrusted:
        return False, f"page saw {untrusted} untrusted event(s)"
    if got != expect:
        return False, f"page recorded {json.dumps(got)}, expected {json.dumps(expect)}"
    return True, ""


# --------------------------------------------------------------------------- MCP servers


async def run_mcp(spec: mc.ServerSpec, tasks: list[Task], origin: str,
                  log: Path) -> dict[str, Outcome]:
    """Every task through one MCP server (one browser, pages in turn)."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=spec.command, args=spec.args, env=spec.env,
                                   cwd=str(spec.cwd))
    out: dict[str, Outcome] = {}
    with log.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=90) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            runner = mc.Runner(client, spec, tools, log.parent)
            for task in tasks:
                t0 = time.monotonic()
                try:
                    out[task.name] = await run_mcp_task(runner, task, origin)
                except mc.CALL_ERRORS as exc:
                    out[task.name] = Outcome(False, f"call failed: {type(exc).__name__}: {exc}"[:160])
                out[task.name].seconds = time.monotonic() - t0
                print(f"  {spec.name:11} {task.name:32} "
                      f"{'pass' if out[task.name].ok else 'FAIL ' + out[task.name].cause}",
                      file=sys.stderr)
    return out


async def run_mcp_task(runner: mc.Runner, task: Task, origin: str) -> Outcome:
    """One task: navigate, then per step snapshot → ref by role+name → the tool call."""
    nav = await runner.call("browser_navigate", {"url": f"{origin}/{task.page}"})
    if nav.is_error:
        return Outcome(False, "navigate: " + first_line(mc.text_of(nav)))
    calls: list[str] = []
    out = await run_mcp_steps(runner, task, calls)
    out.calls = calls
    return out


async def run_mcp_steps(runner: mc.Runner, task: Task, calls: list[str]) -> Outcome:
    first = ""
    for verb, role, name, *rest in task.steps:
        extra = rest[0] if rest else {}
        tool, raw = mcp_args(verb, role, name, extra)
        snap = await runner.snapshot_text()
        first = first or snap
        missing: list[str] = []
        args = resolve(raw, snap, missing) if mc.has_ref(raw) else raw
        if missing:
            return Outcome(False, "not in its snapshot: " + ", ".join(missing), first)
        result = await runner.call(tool, args)
        calls.append(f"{tool} {json.dumps(args)} -> {mc.text_of(result)[:600]}")
        if result.is_error and runner.spec.adapt and "BAD_REQUEST" in mc.text_of(result):
            result = await runner.adapt(tool, args, result, mc.StepResult(tool, "", True))
        if result.is_error:
            ok, _ = outcome_cause(await runner.evaluate(OUTCOME_JS), task.expect)
            return Outcome(False, f"{tool} error{' (but the page shows it done)' if ok else ''}: "
                           + first_line(mc.text_of(result)), first)
    await asyncio.sleep(0.3)  # a change handler that runs after the answer (debounce, rAF)
    ok, cause = outcome_cause(await runner.evaluate(OUTCOME_JS), task.expect)
    return Outcome(ok, cause, first or await runner.snapshot_text())


# --------------------------------------------------------------------------- raw Playwright


async def find_locator(page: Any, role: str, name: str) -> Any:
    """The first frame's locator that matches role+name (text when no role); main frame's
    locator when none does (so the action's own timeout error is the cause)."""
    def loc(frame: Any) -> Any:
        if not role:
            return frame.get_by_text(name, exact=True)
        return frame.get_by_role(role, name=name, exact=True) if name else frame.get_by_role(role)
    for frame in page.frames:
        candidate = loc(frame)
        try:
            if await candidate.count():
                return candidate.first
        except Exception:  # noqa: BLE001 (a frame that went away)
            continue
    return loc(page.main_frame)


async def run_raw(tasks: list[Task], origin: str, ax: bool) -> tuple[dict[str, Outcome],
                                                                      dict[str, list]]:
    """Every task through raw Playwright locators on Debian's Chromium; with ``ax``, each
    page's actionable named accessibility nodes (CDP) on first load."""
    from playwright.async_api import async_playwright

    out: dict[str, Outcome] = {}
    trees: dict[str, list] = {}
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=mc.CHROMIUM, headless=True,
                                          args=["--no-sandbox"] if os.geteuid() == 0 else [])
        for task in tasks:
            ctx = await browser.new_context()
            page = await ctx.new_page()
            page.set_default_timeout(RAW_TIMEOUT_MS)
            t0 = time.monotonic()
            try:
                await page.goto(f"{origin}/{task.page}")
                await page.wait_for_load_state("load")
                if ax:
                    trees[task.name] = await ax_nodes(page)
                out[task.name] = await run_raw_task(page, task)
            except Exception as exc:  # noqa: BLE001 (the cause is the row)
                out[task.name] = Outcome(False, first_line(f"{type(exc).__name__}: {exc}"))
            out[task.name].seconds = time.monotonic() - t0
            print(f"  {'raw':11} {task.name:32} "
                  f"{'pass' if out[task.name].ok else 'FAIL ' + out[task.name].cause}",
                  file=sys.stderr)
            await ctx.close()
        await browser.close()
    return out, trees


async def run_raw_task(page: Any, task: Task) -> Outcome:
    for verb, role, name, *rest in task.steps:
        extra = rest[0] if rest else {}
        if verb == "press":
            await page.keyboard.press(name)
            continue
        if verb == "wait":
            await page.get_by_text(name).first.wait_for()
            continue
        if verb == "wheel":
            await page.mouse.wheel(extra.get("deltaX", 0), extra.get("deltaY", 0))
            continue
        if verb == "type" and extra.get("frame"):
            loc = page.frame_locator(f'iframe[title="{extra["frame"]}"]').locator("body")
        else:
            loc = await find_locator(page, role, name)
        if verb == "click":
            await loc.click()
        elif verb == "type":
            if extra.get("slowly"):
                await loc.press_sequentially(extra["text"])
            else:
                await loc.fill(extra["text"])
            if extra.get("submit"):
                await loc.press("Enter")
        elif verb == "select":
            await loc.select_option(extra["values"])
        elif verb == "check":
            await loc.check()
        elif verb == "hover":
            await loc.hover()
        elif verb == "drag":
            await loc.drag_to(await find_locator(page, *extra["to"]))
    await page.wait_for_timeout(300)
    return Outcome(*outcome_cause(await page.evaluate(OUTCOME_JS), task.expect))


async def ax_nodes(page: Any) -> list[tuple[str, str]]:
    """(role, name) of every node of Chromium's accessibility tree, in every frame, whose
    role is in :data:`ACTIONABLE` and whose name is not empty (CDP
    ``Accessibility.getFullAXTree``; ignored nodes left out)."""
    cdp = await page.context.new_cdp_session(page)
    found: list[tuple[str, str]] = []
    frames = (await cdp.send("Page.getFrameTree"))["frameTree"]
    ids: list[str] = []

    def walk(node: dict) -> None:
        ids.append(node["frame"]["id"])
        for child in node.get("childFrames", []):
            walk(child)
    walk(frames)
    for fid in ids:
        try:
            tree = await cdp.send("Accessibility.getFullAXTree", {"frameId": fid})
        except Exception:  # noqa: BLE001 (an out-of-process frame: not in this session)
            continue
        for node in tree["nodes"]:
            if node.get("ignored"):
                continue
            role = (node.get("role") or {}).get("value", "")
            role = AX_ALIASES.get(role, role)
            name = str((node.get("name") or {}).get("value", "")).strip()
            if role in ACTIONABLE and name:
                found.append((role, name))
    await cdp.detach()
    return found


def agreement(nodes: list[tuple[str, str]], snapshot: str) -> tuple[int, list[str]]:
    """How many of ``nodes`` a snapshot text lists with the same role and name and a ref,
    and the misses (``role "name"``)."""
    hit, misses = 0, []
    for role, name in nodes:
        pattern = rf'- {re.escape(role)} "{re.escape(name)}"[^\n]*\[ref='
        if re.search(pattern, snapshot):
            hit += 1
        else:
            misses.append(f'{role} "{name}"')
    return hit, misses


# --------------------------------------------------------------------------- report


def cell(o: Outcome | None) -> str:
    if o is None:
        return "–"
    return "pass" if o.ok else "FAIL: " + o.cause.replace("|", "\\|")


def report(tasks: list[Task], results: dict[str, dict[str, Outcome]],
           trees: dict[str, list], versions: dict[str, str]) -> str:
    tools = ["trustbridge", "playwright", "raw"]
    lines = ["| page | task | trustbridge mcp | Playwright MCP | raw Playwright |",
             "|---|---|---|---|---|"]
    for t in tasks:
        lines.append(f"| {t.name} | {t.task} | "
                     + " | ".join(cell(results[k].get(t.name)) for k in tools) + " |")
    totals = {k: sum(o.ok for o in results[k].values()) for k in tools}
    n = len(tasks)
    peer_only = [t.name for t in tasks
                 if not results["trustbridge"].get(t.name, Outcome(False)).ok
                 and (results["playwright"].get(t.name, Outcome(False)).ok
                      or results["raw"].get(t.name, Outcome(False)).ok)]
    ours_only = [t.name for t in tasks
                 if results["trustbridge"].get(t.name, Outcome(False)).ok
                 and not results["playwright"].get(t.name, Outcome(False)).ok]
    head = [f"Pages: {n}. Passed: trustbridge mcp {totals['trustbridge']}/{n}, "
            f"Playwright MCP {versions.get('playwright', '?')} {totals['playwright']}/{n}, "
            f"raw Playwright {totals['raw']}/{n}.",
            f"A peer passes and trustbridge fails: {', '.join(peer_only) or 'none'}.",
            f"trustbridge passes and Playwright MCP fails: {', '.join(ours_only) or 'none'}.",
            ""]
    body = head + lines
    if trees:
        body += ["", "### Agreement with Chromium's accessibility tree", "",
                 "| page | AX nodes | trustbridge | Playwright MCP | trustbridge misses |",
                 "|---|---|---|---|---|"]
        sums = {"trustbridge": [0, 0], "playwright": [0, 0]}
        for t in tasks:
            nodes = trees.get(t.name)
            if nodes is None:
                continue
            row = [t.name, str(len(nodes))]
            misses_ours: list[str] = []
            for k in ("trustbridge", "playwright"):
                snap = results[k].get(t.name, Outcome(False)).snapshot
                hit, misses = agreement(nodes, snap)
                sums[k][0] += hit
                sums[k][1] += len(nodes)
                row.append(f"{hit}/{len(nodes)}")
                if k == "trustbridge":
                    misses_ours = misses
            row.append(", ".join(misses_ours).replace("|", "\\|") or "–")
            body.append("| " + " | ".join(row) + " |")
        share = {k: (f"{100 * h / d:.1f}%" if d else "–") for k, (h, d) in sums.items()}
        body += ["", f"Share of actionable named AX nodes in the snapshot: trustbridge "
                 f"{share['trustbridge']} ({sums['trustbridge'][0]}/{sums['trustbridge'][1]}), "
                 f"Playwright MCP {share['playwright']} "
                 f"({sums['playwright'][0]}/{sums['playwright'][1]})."]
    return "\n".join(body)


async def corpus(only: set[str] | None, ax: bool) -> tuple[str, dict]:
    cli = os.environ.get("TRUSTBRIDGE_PLAYWRIGHT_MCP")
    if cli:
        mc.PLAYWRIGHT_MCP = Path(cli)
    if mc.playwright_version() is None:
        raise SystemExit("Playwright MCP is not installed: npm ci --prefix scripts/conformance "
                         "(or set TRUSTBRIDGE_PLAYWRIGHT_MCP to its cli.js)")
    tasks = load_tasks(only)
    absent = [t.page for t in tasks if not (CORPUS / t.page).exists()]
    if absent:
        raise SystemExit(f"missing pages (library pages: npm ci --prefix tests/corpus && "
                         f"node tests/corpus/build.mjs): {', '.join(absent)}")
    results: dict[str, dict[str, Outcome]] = {}
    with tempfile.TemporaryDirectory(prefix="tb-corpus-") as tmp, \
            mc.serve_pages(CORPUS) as origin:
        work = Path(tmp)
        (work / "out").mkdir()
        (work / "home").mkdir()
        results["trustbridge"] = await run_mcp(mc.trustbridge_spec(work / "home"), tasks,
                                               origin, work / "trustbridge.log")
        results["playwright"] = await run_mcp(mc.playwright_spec(work), tasks, origin,
                                              work / "playwright.log")
        results["raw"], trees = await run_raw(tasks, origin, ax)
    versions = {"playwright": mc.playwright_version() or "?"}
    return report(tasks, results, trees, versions), {
        k: {n: o.__dict__ for n, o in v.items()} for k, v in results.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="PAGE", help="run these pages (stem)")
    parser.add_argument("--ax", action="store_true", help="also the accessibility agreement")
    parser.add_argument("--write", action="store_true", help=f"write {DOC.relative_to(REPO)}")
    parser.add_argument("--raw", type=Path, help="write every outcome as JSON here")
    args = parser.parse_args()
    text, raw = asyncio.run(corpus(set(args.only) if args.only else None, args.ax))
    print(text)
    if args.raw:
        args.raw.write_text(json.dumps(raw, indent=1))
    if args.write:
        DOC.write_text("# Differential corpus: trustbridge mcp vs Playwright MCP vs raw "
                       "Playwright\n\nRun by hand: `python scripts/corpus_diff.py --ax --write` "
                       "(tests/corpus/README.md). Chromium "
                       f"{mc.CHROMIUM}, headless; one browser per tool, pages in turn.\n\n"
                       + text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
