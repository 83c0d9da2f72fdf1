"""B1: one small form task, end to end, through five tools on the same Chromium build.

Task (``/form``): type "invoice" into Search, choose Owner "Bob", check "Active only",
press Search, and wait until the result line (shown 120 ms after submit, naming the three
values) is visible. The clock starts with the page loaded and stops when the result line
is seen, each arm waiting in its own idiom. Loading the page is not timed.

Arms (one run of each per round, the order rotated every round):

- ``a`` raw Playwright (the floor): CSS locators on the supervisor's own page,
  ``fill`` / ``select_option`` / ``check`` / ``click``, then ``get_by_text().wait_for()``.
- ``b`` trustbridge SDK step by step: ``tab.snapshot()`` (refs), ``fill``, ``select``,
  ``check``, ``click``, ``wait_for_text``: every action is trusted input.
- ``c`` trustbridge batch: ``tab.snapshot()``, one ``tab.batch`` of the four actions,
  ``wait_for_text``.
- ``d`` trustbridge MCP tools through an MCP client over stdio (``python -m trustbridge
  mcp``): ``browser_snapshot``, ``browser_type``, ``browser_select_option``,
  ``browser_click`` (checkbox), ``browser_click`` (submit), ``browser_wait_for``.
- ``e`` Playwright MCP (``@playwright/mcp``, default settings, headless, same Chromium
  binary) through the same client with the same tool calls.
- ``d_form`` / ``e_form``: the same two servers with ``browser_fill_form`` (text, select,
  checkbox in one call), ``browser_click``, ``browser_wait_for``.
- ``e_nosettle`` (information): Playwright MCP with ``--timeout-settle 0`` (its default
  waits 500 ms after each action for triggered work).
- ``d_batch`` (information): trustbridge MCP's ``browser_actions`` (the four actions in one
  call, one ``page.batch``), then ``browser_wait_for``; Playwright MCP has no equivalent.
- ``d_up``: the tools of ``d`` through exactly what users run (issue 18 item 3): ``trustbridge
  mcp --bridge URL`` over stdio on a ``trustbridge up`` subprocess with its own browser (the
  same binary), not the in-process stack (whose bridge and driver share this process's
  event loop with the client).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp import Client

from .pages import OWNER, QUERY, expected_result
from .stack import Stack, find_ref, tool_text
from .stats import Stopwatch, ratio, rotated, step_medians, summary

LABELS = {
    "a": "(a) raw Playwright",
    "b": "(b) trustbridge SDK, step by step",
    "c": "(c) trustbridge SDK, one batch",
    "d": "(d) trustbridge MCP tools",
    "e": "(e) Playwright MCP",
    "d_form": "(d′) trustbridge MCP, browser_fill_form",
    "e_form": "(e′) Playwright MCP, browser_fill_form",
    "e_nosettle": "(e″) Playwright MCP --timeout-settle 0 (information)",
    "d_batch": "(d″) trustbridge MCP, browser_actions batch (information)",
    "d_up": "(d‴) trustbridge MCP tools on `trustbridge up` (what users run)",
}
ALL_ARMS = list(LABELS)
MCP_SERVER = {"d": "trustbridge", "d_form": "trustbridge", "e": "playwright",
              "e_form": "playwright", "e_nosettle": "playwright-nosettle",
              "d_batch": "trustbridge", "d_up": "trustbridge-up"}
SETTLE_S = 0.05
"""Pause after loading the page, before the clock starts (lets the page go idle), s."""

Laps = list[tuple[str, float]]


@dataclass
class Arm:
    name: str
    prepare: Callable[[int], Awaitable[None]]
    run: Callable[[], Awaitable[tuple[float, Laps]]]


def _arm_a(stack: Stack) -> Arm:
    page = stack.page
    expected = expected_result()

    async def prepare(i: int) -> None:
        await page.goto(stack.pages.url("form", run=f"a{i}"))

    async def run() -> tuple[float, Laps]:
        sw = Stopwatch()
        await page.locator("#q").fill(QUERY)
        sw.lap("fill")
        await page.locator("#owner").select_option(OWNER)
        sw.lap("select")
        await page.locator("#active").check()
        sw.lap("check")
        await page.locator("button[type=submit]").click()
        sw.lap("click")
        await page.get_by_text(expected).wait_for()
        sw.lap("wait")
        return sw.total, sw.laps

    return Arm("a", prepare, run)


def _form_refs(snapshot: str) -> dict[str, str]:
    return {"q": find_ref(snapshot, "textbox", "Search"),
            "owner": find_ref(snapshot, "combobox", "Owner"),
            "active": find_ref(snapshot, "checkbox", "Active only"),
            "submit": find_ref(snapshot, "button", "Search")}


def _check_trusted(results: list[dict[str, Any]]) -> None:
    paths = {r.get("inputPath") for r in results}
    if paths != {"trusted"}:
        raise AssertionError(f"expected trusted input only, got {paths}")


def _arm_sdk(stack: Stack, batch: bool) -> Arm:
    tab = stack.tab
    expected = expected_result()

    async def prepare(i: int) -> None:
        await tab.goto(stack.pages.url("form", run=f"{'c' if batch else 'b'}{i}"))

    async def run() -> tuple[float, Laps]:
        sw = Stopwatch()
        refs = _form_refs(await tab.snapshot())
        sw.lap("snapshot")
        if batch:
            res = await tab.batch([
                {"ref": refs["q"], "action": {"kind": "fill", "value": QUERY}},
                {"ref": refs["owner"], "action": {"kind": "select", "values": [OWNER]}},
                {"ref": refs["active"], "action": {"kind": "check", "checked": True}},
                {"ref": refs["submit"], "action": {"kind": "click"}},
            ])
            sw.lap("batch")
            if res.get("interruptedAction"):
                raise AssertionError(f"batch interrupted: {res['interruptedAction']}")
            _check_trusted(res["completedActions"])
        else:
            done = [await tab.fill(refs["q"], QUERY)]
            sw.lap("fill")
            done.append(await tab.select(refs["owner"], [OWNER]))
            sw.lap("select")
            done.append(await tab.check(refs["active"]))
            sw.lap("check")
            done.append(await tab.click(refs["submit"]))
            sw.lap("click")
            _check_trusted(list(done))
        await tab.wait_for_text(expected)
        sw.lap("wait")
        return sw.total, sw.laps

    return Arm("c" if batch else "b", prepare, run)


async def _ref_key(client: Client) -> tuple[str, dict[str, Any]]:
    """The argument name of an element target (``ref`` or ``target``) and the tool schemas."""
    tools = {t.name: t.input_schema for t in (await client.list_tools()).tools}
    props = tools["browser_click"].get("properties", {})
    return ("ref" if "ref" in props else "target"), tools


def _arm_mcp(stack: Stack, name: str) -> Arm:
    server = MCP_SERVER[name]
    form = name.endswith("_form")
    batch = name.endswith("_batch")
    expected = expected_result()
    state: dict[str, Any] = {}

    async def prepare(i: int) -> None:
        if "client" not in state:
            client = await stack.mcp(server)
            state["key"], tools = await _ref_key(client)
            needed = {"browser_snapshot", "browser_click", "browser_wait_for",
                      "browser_navigate"}
            if form:
                needed.add("browser_fill_form")
            elif batch:
                needed.add("browser_actions")
            else:
                needed |= {"browser_type", "browser_select_option"}
            missing = needed - set(tools)
            if missing:
                raise RuntimeError(f"{server} MCP has no {', '.join(sorted(missing))}")
            state["client"] = client
        tool_text(await state["client"].call_tool(
            "browser_navigate", {"url": stack.pages.url("form", run=f"{name}{i}")}))

    async def call(tool: str, args: dict[str, Any]) -> str:
        return tool_text(await state["client"].call_tool(tool, args))

    async def run() -> tuple[float, Laps]:
        key = state["key"]
        sw = Stopwatch()
        refs = _form_refs(await call("browser_snapshot", {}))
        sw.lap("browser_snapshot")
        said: list[str] = []
        if form:
            said.append(await call("browser_fill_form", {"fields": [
                {key: refs["q"], "name": "Search", "type": "textbox", "value": QUERY},
                {key: refs["owner"], "name": "Owner", "type": "combobox", "value": OWNER},
                {key: refs["active"], "name": "Active only", "type": "checkbox",
                 "value": "true"},
            ]}))
            sw.lap("browser_fill_form")
        elif batch:
            said.append(await call("browser_actions", {"actions": [
                {"kind": "fill", key: refs["q"], "value": QUERY},
                {"kind": "select", key: refs["owner"], "values": [OWNER]},
                {"kind": "check", key: refs["active"], "checked": True},
                {"kind": "click", key: refs["submit"]},
            ]}))
            sw.lap("browser_actions")
        else:
            said.append(await call("browser_type", {key: refs["q"], "text": QUERY}))
            sw.lap("browser_type")
            said.append(await call("browser_select_option", {key: refs["owner"],
                                                            "values": [OWNER]}))
            sw.lap("browser_select_option")
            said.append(await call("browser_click", {key: refs["active"]}))
            sw.lap("browser_click (checkbox)")
        if not batch:
            said.append(await call("browser_click", {key: refs["submit"]}))
            sw.lap("browser_click (submit)")
        await call("browser_wait_for", {"text": expected})
        sw.lap("browser_wait_for")
        if server == "trustbridge" and any("SYNTHETIC" in s for s in said):
            raise AssertionError("trustbridge MCP reported synthetic input")
        return sw.total, sw.laps

    return Arm(name, prepare, run)


def build_arms(stack: Stack, names: list[str]) -> list[Arm]:
    arms = []
    for n in names:
        if n == "a":
            arms.append(_arm_a(stack))
        elif n in ("b", "c"):
            arms.append(_arm_sdk(stack, batch=n == "c"))
        elif n in MCP_SERVER:
            arms.append(_arm_mcp(stack, n))
        else:
            raise ValueError(f"unknown B1 arm {n!r}; arms: {', '.join(ALL_ARMS)}")
    return arms


async def run(stack: Stack, rounds: int, arm_names: list[str],
              log: Callable[[str], None]) -> dict[str, Any]:
    """Run B1. Returns ``{task, rounds, arms: {name: {label, runs, median, p95, steps,
    bridge_calls?} | {label, error}}, ratios: {...}, targets: [...]}`` (times in ms)."""
    arms = build_arms(stack, arm_names)
    totals: dict[str, list[float]] = {a.name: [] for a in arms}
    laps: dict[str, list[Laps]] = {a.name: [] for a in arms}
    bridge_calls: dict[str, list[Laps]] = {a.name: [] for a in arms}
    errors: dict[str, str] = {}
    # One untimed warm-up run per arm (JIT, first-use costs, MCP server start).
    for arm in arms:
        try:
            await arm.prepare(-1)
            await asyncio.sleep(SETTLE_S)
            await arm.run()
        except Exception as exc:  # an arm that cannot run is reported, not fatal
            errors[arm.name] = f"{type(exc).__name__}: {exc}"
            log(f"B1 {arm.name}: not run: {errors[arm.name][:300]}")
    live = [a for a in arms if a.name not in errors]
    for r in range(rounds):
        for arm in rotated(live, r):
            if arm.name in errors:
                continue
            try:
                await arm.prepare(r)
                await asyncio.sleep(SETTLE_S)
                stack.timer.current = []
                total, arm_laps = await arm.run()
            except Exception as exc:
                errors[arm.name] = f"round {r}: {type(exc).__name__}: {exc}"
                log(f"B1 {arm.name}: failed: {errors[arm.name][:300]}")
                continue
            finally:
                calls, stack.timer.current = stack.timer.current, None
            totals[arm.name].append(total)
            laps[arm.name].append(arm_laps)
            bridge_calls[arm.name].append(calls or [])
        log(f"B1 round {r + 1}/{rounds} done")
    out: dict[str, Any] = {"task": "fill Search, select Owner, check Active only, submit, "
                           "wait for the result line (shown 120 ms after submit)",
                           "rounds": rounds, "arms": {}}
    for arm in arms:
        entry: dict[str, Any] = {"label": LABELS[arm.name]}
        if arm.name in errors:
            entry["error"] = errors[arm.name]
        if totals[arm.name]:
            entry.update(summary(totals[arm.name]))
            entry["steps"] = step_medians(laps[arm.name])
            # Per run, the time before its final wait step (each tool's wait polls at its
            # own interval for a line the page shows 120 ms after submit).
            entry["before_wait"] = summary([
                t - sum(ms for s, ms in run if "wait" in s)
                for t, run in zip(totals[arm.name], laps[arm.name])])
            if any(bridge_calls[arm.name]):
                entry["bridge_calls"] = _call_medians(bridge_calls[arm.name], totals[arm.name])
        out["arms"][arm.name] = entry
    med = {k: v.get("median") for k, v in out["arms"].items() if "error" not in v}
    out["ratios"] = {
        "to_a": {k: ratio(v, med.get("a")) for k, v in med.items()},
        "to_e": {k: ratio(v, med.get("e")) for k, v in med.items()},
        "to_e_form": {k: ratio(v, med.get("e_form")) for k, v in med.items()},
    }
    before = {k: v["before_wait"]["median"] for k, v in out["arms"].items()
              if "error" not in v and "before_wait" in v}
    out["ratios"]["before_wait_to_a"] = {k: ratio(v, before.get("a")) for k, v in before.items()}
    out["ratios"]["before_wait_to_e_nosettle"] = {k: ratio(v, before.get("e_nosettle"))
                                                  for k, v in before.items()}
    steps_arm = "d_up" if "d_up" in before else "d"  # what users run, when measured
    out["targets"] = [
        _target("B1 (c) batch ≤ 1.10× (a) raw Playwright",
                ratio(med.get("c"), med.get("a")), 1.10),
        # Issue 18's "B1 before-wait" line: both comparisons stop before the final wait.
        _target("B1 before-wait: (c) batch ≤ 1.0× (a) raw Playwright's",
                ratio(before.get("c"), before.get("a")), 1.0),
        _target(f"B1 before-wait: ({steps_arm.replace('d_up', 'd‴')}) trustbridge MCP step "
                "tools ≤ 0.5× (e″) Playwright MCP --timeout-settle 0",
                ratio(before.get(steps_arm), before.get("e_nosettle")), 0.5),
        _target("B1 (d) trustbridge MCP ≤ 0.5× (e) Playwright MCP",
                ratio(med.get("d"), med.get("e")), 0.5),
        _target("B1 (d′) fill_form ≤ 0.5× (e′) Playwright MCP fill_form",
                ratio(med.get("d_form"), med.get("e_form")), 0.5),
        # Against the peer that does not sleep 500 ms after each click, the whole task
        # with the final wait (which waits out the page's 120 ms on both sides).
        _target("B1 (d) trustbridge MCP whole task, wait included, ≤ 0.5× (e″) Playwright "
                "MCP --timeout-settle 0", ratio(med.get("d"), med.get("e_nosettle")), 0.5),
    ]
    return out


def _call_medians(runs: list[Laps], totals: list[float] | None = None) -> dict[str, Any]:
    """Per wire method: median calls per run, median ms per call and median ms per run (the
    median over runs of that method's summed time). With ``totals`` (each run's wall ms),
    also ``_outside``: the median over runs of the time not spent in any bridge call."""
    import statistics

    methods: list[str] = []
    for calls in runs:
        methods += [m for m, _ in calls if m not in methods]
    out: dict[str, Any] = {}
    for m in methods:
        per_run = [[ms for mm, ms in calls if mm == m] for calls in runs]
        each = [ms for run in per_run for ms in run]
        out[m] = {"calls_per_run": statistics.median(len(r) for r in per_run),
                  "ms_per_call": round(statistics.median(each), 2),
                  "ms_per_run": round(statistics.median(sum(r) for r in per_run), 2)}
    if totals:
        out["_outside"] = {"ms_per_run": round(statistics.median(
            t - sum(ms for _, ms in calls) for t, calls in zip(totals, runs)), 2)}
    return out


def _target(name: str, value: float | None, limit: float) -> dict[str, Any]:
    return {"target": name, "value": value, "limit": limit,
            "met": None if value is None else value <= limit}
