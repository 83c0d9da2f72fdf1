"""Runs one case of the optional shared case corpus (see test_shared_cases.py) through the
Python SDK, as an agent would.

Targets are found by role and accessible name (plus frame, within, nth) in the
snapshot text the agent sees; expectations are read from the page itself through the
supervisor's Playwright pages (what the page recorded), never from the tool's answers.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from playwright.async_api import BrowserContext, Page

from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.sdk import Tab

LINE = re.compile(r'^(?P<indent> *)- (?P<role>[a-z]+)(?: (?P<name>"(?:[^"\\]|\\.)*"))?(?P<rest>.*)$')
REF = re.compile(r"\[ref=((?:f\d+)?e\d+)\]")

# Error kinds named in case.json → wire codes that count as that kind.
ERROR_KINDS = {
    "stale-ref": {"BROWSER_DOCUMENT_CHANGED", "REF_NOT_FOUND", "ELEMENT_TARGET_DETACHED",
                  "FRAME_TOKEN_UNKNOWN"},
    "not-editable": {"ELEMENT_NOT_EDITABLE"},
    "disabled": {"ELEMENT_TARGET_DISABLED"},
    "covered-by-iframe": {"ELEMENT_OBSCURED"},
}


@dataclass
class Node:
    role: str
    name: str
    ref: str | None
    depth: int
    parent: Node | None
    line: str


def parse_snapshot(text: str) -> list[Node]:
    """Snapshot lines as nodes with parents (by indentation), in document order."""
    nodes: list[Node] = []
    stack: list[Node] = []
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        depth = len(m.group("indent")) // 2
        name = json.loads(m.group("name")) if m.group("name") else ""
        ref = REF.search(m.group("rest"))
        while stack and stack[-1].depth >= depth:
            stack.pop()
        node = Node(m.group("role"), " ".join(name.split()), ref.group(1) if ref else None,
                    depth, stack[-1] if stack else None, line)
        nodes.append(node)
        stack.append(node)
    return nodes


def _ancestors(node: Node) -> list[Node]:
    out = []
    cur = node.parent
    while cur is not None:
        out.append(cur)
        cur = cur.parent
    return out


def _frame_chain(node: Node) -> list[str]:
    return [a.name for a in reversed(_ancestors(node)) if a.role == "iframe"]


def find_target(nodes: list[Node], target: dict[str, Any]) -> Node:
    """The node a case target names; AssertionError (with the candidates) if none."""
    want_frames = [re.sub(r"^iframe '(.*)'$", r"\1", part.strip())
                   for part in target["frame"].split(">>")] if target.get("frame") else []
    name = " ".join(str(target.get("name", "")).split())
    matches = []
    # A row named by its cells prints no name (it would repeat them): its accessible
    # name is its cells' text (WAI-ARIA 1.2 row: name from content).
    cells: dict[int, list[str]] = {}
    for node in nodes:
        if node.parent is not None and node.parent.role == "row" and node.name:
            cells.setdefault(id(node.parent), []).append(node.name)
    for node in nodes:
        if node.role == "row" and not node.name:
            node.name = " ".join(cells.get(id(node), []))
        if node.role != target["role"] or node.name != name or node.ref is None:
            continue
        if _frame_chain(node) != want_frames:
            continue
        within = target.get("within")
        if within and not any(a.role == within["role"] and a.name == within["name"]
                              for a in _ancestors(node)):
            continue
        matches.append(node)
    nth = target.get("nth", 0)
    if len(matches) <= nth:
        same_role = [n.line.strip() for n in nodes if n.role == target["role"]][:15]
        raise AssertionError(f"target {target} not in snapshot ({len(matches)} matches); "
                             f"lines with that role: {same_role}")
    return matches[nth]


@dataclass
class CaseRun:
    """State of one case run."""

    folder: Path
    base_url: str  # http://127.0.0.1:P/
    tab: Tab
    context: BrowserContext
    snapshots: dict[int, list[Node]] = field(default_factory=dict)
    last: list[Node] = field(default_factory=list)
    failed_steps: set[int] = field(default_factory=set)
    pending_dialog: dict[str, Any] | None = None
    armed_dialogs: list[dict[str, Any]] = field(default_factory=list)
    log: list[str] = field(default_factory=list)

    @property
    def case(self) -> dict[str, Any]:
        return json.loads((self.folder / "case.json").read_text())

    @property
    def entry_url(self) -> str:
        return urljoin(self.base_url, f"{self.folder.name}/{self.case['entry']}")

    async def snapshot(self, budget: dict[str, Any] | None = None) -> list[Node]:
        """Take a whole snapshot, following continuation cursors when a budget is set."""
        params: dict[str, Any] = {}
        if budget:
            params["maxChars"] = int(budget.get("chars", 200_000))
        started = time.monotonic()
        parts = []
        cursor = None
        while True:
            res = await self.tab._client.call("page.snapshot", self.tab._params(
                **params, **({"cursor": cursor} if cursor else {})))
            parts.append(res["snapshot"])
            if budget:
                assert len(res["snapshot"]) <= params["maxChars"] + 500, "page over the char budget"
            cursor = res.get("cursor") or res.get("nextCursor")
            if not cursor or not budget:
                break
        if budget:
            elapsed = time.monotonic() - started
            self.log.append(f"snapshot pages={len(parts)} in {elapsed:.1f}s")
        nodes = parse_snapshot("\n".join(parts))
        self.last = nodes
        return nodes

    async def _after(self, result: dict[str, Any]) -> None:
        dialog = result.get("dialog")
        if dialog:
            self.pending_dialog = dialog
            if self.armed_dialogs:
                await self._answer(self.armed_dialogs.pop(0))

    async def _answer(self, step: dict[str, Any]) -> None:
        dialog = self.pending_dialog
        assert dialog is not None
        if step.get("expect_type"):
            assert dialog["type"] == step["expect_type"], dialog
        if step.get("expect_message"):
            assert dialog["message"] == step["expect_message"], dialog
        await self.tab.handle_dialog(step["accept"], step.get("promptText"))
        self.pending_dialog = None
        # A dialog answered may be followed by another one (e.g. an alert during load).
        for _ in range(20):
            devices = await self.tab._client.call("devices.list")
            nxt = next((d.get("dialog") for d in devices["devices"] if d.get("dialog")), None)
            if nxt:
                self.pending_dialog = nxt
                return
            await asyncio.sleep(0.05)

    def _ref(self, step: dict[str, Any], key: str = "target") -> str:
        target = step[key]
        nodes = self.snapshots[target["ref_from_snapshot"]] \
            if "ref_from_snapshot" in target else self.last
        ref = find_target(nodes, target).ref
        assert ref is not None
        return ref

    async def step(self, index: int, step: dict[str, Any]) -> None:
        op = step["op"]
        tab = self.tab
        if op == "snapshot":
            self.snapshots[index] = await self.snapshot(step.get("budget"))
            return
        if op == "dialog":
            if self.pending_dialog is None:
                self.armed_dialogs.append(step)  # answered when the next dialog opens
            else:
                await self._answer(step)
            return
        if op == "wait":
            if "text" in step:
                await tab.wait(text=step["text"], timeout_ms=120_000)
            else:
                await asyncio.sleep(step["ms"] / 1000)
            return
        if op == "navigate":
            url = urljoin(self.entry_url, step["url"])
            try:
                await tab.goto(url)
            except E.DialogOpen:
                pass
            await self._dialog_poll()
            return
        if op == "tab_select":
            tabs = await tab._client.call("tabs.list", {})
            found = [t for t in tabs["tabs"] if t["title"] == step["title"]]
            assert found, f"no tab titled {step['title']!r}: {tabs}"
            await tab._client.call("tabs.select", {"tabId": found[0]["tabId"]})
            tab.tab_id = found[0]["tabId"]
            return
        if op == "press":
            await self._after(await tab.press(step["key"]))
            return
        ref = self._ref(step)
        if op == "click":
            pos = step.get("position")
            res = await (tab.click_at(ref, pos["x"], pos["y"]) if pos else tab.click(ref))
        elif op == "dblclick":
            res = await tab.dblclick(ref)
        elif op == "hover":
            res = await tab.hover(ref)
        elif op == "fill":
            res = await tab.fill(ref, step["value"])
        elif op == "type":
            res = await tab.type(ref, step["text"])
        elif op == "select":
            res = await tab.select(ref, step["values"])
        elif op in ("check", "uncheck"):
            res = await (tab.check(ref) if op == "check" else tab.uncheck(ref))
        elif op == "drag":
            res = await tab.drag(ref, self._ref(step, "to"))
        elif op == "upload":
            res = await tab.upload(ref, [str(self.folder / f) for f in step["files"]])
        elif op == "scroll":
            res = await tab.scroll(ref, step.get("dx", 0), step.get("dy", 0))
        else:
            raise AssertionError(f"unknown op {op}")
        self.log.append(f"{op} {ref}: {res.get('inputPath')}")
        await self._after(res)

    async def _dialog_poll(self) -> None:
        devices = await self.tab._client.call("devices.list")
        nxt = next((d.get("dialog") for d in devices["devices"] if d.get("dialog")), None)
        if nxt:
            self.pending_dialog = nxt
            if self.armed_dialogs:
                await self._answer(self.armed_dialogs.pop(0))

    async def run(self) -> None:
        await self.tab.goto(self.entry_url, timeout_ms=120_000)
        for index, step in enumerate(self.case["steps"]):
            expected = step.get("expect_error") or step.get("may_error")
            try:
                await self.step(index, step)
            except E.TrustbridgeError as err:
                self.log.append(f"step {index} {step['op']}: {err.code.value}")
                self.failed_steps.add(index)
                if not expected:
                    raise
                codes = ERROR_KINDS.get(expected)
                assert codes is None or err.code.value in codes, (
                    f"step {index} failed with {err.code.value}, expected kind {expected}")
                continue
            assert not step.get("expect_error"), f"step {index} should have failed: {step}"

    # -- expectations -------------------------------------------------------------------

    async def _page(self, title: str | None) -> Page:
        pages = self.context.pages
        if title is None:
            return pages[0]
        for page in pages:
            if await page.title() == title:
                return page
        raise AssertionError(f"no page titled {title!r}")

    async def check(self, expect: dict[str, Any]) -> str | None:
        """Return None if the fact holds, else a description of the mismatch."""
        only = expect.get("only_if_ok")
        if only is not None and only in self.failed_steps:
            return None
        page = await self._page(expect.get("page"))
        scope: Any = page
        if expect["frame"] != "main":
            for sel in expect["frame"].split(">>"):
                scope = scope.frame_locator(sel.strip())
        loc = scope.locator(expect["selector"])
        if "count" in expect:
            got: Any = await loc.count()
            want: Any = expect["count"]
        elif "visible" in expect:
            got = await loc.count() > 0 and await loc.first.is_visible()
            want = expect["visible"]
        elif "text" in expect:
            got = (await loc.first.evaluate("el => el.textContent", timeout=60000)).strip()
            want = expect["text"]
        elif "value" in expect:
            got = await loc.first.evaluate("el => el.value", timeout=60000)
            want = expect["value"]
        else:
            got = {k: await loc.first.get_attribute(k, timeout=60000) for k in expect["attr"]}
            want = expect["attr"]
        return None if got == want else f"{expect}: got {got!r}"
