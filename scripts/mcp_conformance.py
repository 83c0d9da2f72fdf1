"""The same scripted tool calls against ``trustbridge mcp`` and Playwright MCP, tool by tool.

Issue 15 item 7. Both servers run over stdio under the ``mcp`` client library, pointed at
local pages served on 127.0.0.1 (``scripts/conformance/pages``) and the same Chromium
(``/usr/bin/chromium``). Each step is one tool call written the way a Playwright MCP client
writes it (``target`` refs, Playwright MCP's argument names); refs come from each server's
own snapshot, looked up by role and name. After each step the page's own record (what it
saw: counters, values, ``event.isTrusted``; see ``pages/index.html``) is read through
``browser_evaluate`` and compared, together with the shape of the result (error or not,
content types, markdown sections).

When trustbridge refuses an argument a Playwright MCP client sends, the call is retried
with trustbridge's name for it (``target`` → ``ref``) or without it, so the page outcome is
still compared; the refusal is listed as a difference. A tool one server lacks is a row
(``missing on ...``), not a crash. Each call is bounded (:data:`CALL_TIMEOUT_S`).

Usage::

    npm ci --prefix scripts/conformance      # Playwright MCP (package-lock.json pins it)
    .venv/bin/python scripts/mcp_conformance.py [--json] [--raw FILE] [--only TOOL ...]

Prints a markdown table ``tool | both ok | differences`` and exits 0; ``--raw`` writes
every call's arguments and result text, per server, as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
from mcp import MCPError

REPO = Path(__file__).resolve().parents[1]
CONFORMANCE = REPO / "scripts" / "conformance"
PAGES = CONFORMANCE / "pages"
PLAYWRIGHT_MCP = CONFORMANCE / "node_modules" / "@playwright" / "mcp" / "cli.js"
CHROMIUM = os.environ.get("TRUSTBRIDGE_CHROMIUM", "/usr/bin/chromium")
CALL_TIMEOUT_S = 30.0
"""Upper bound of one tool call, s (the brief's limit; a slower call is a failed step)."""
CAPS = "vision,pdf"

RENAMES = {"target": "ref", "startTarget": "startRef", "endTarget": "endRef"}
"""Playwright MCP argument name → trustbridge's older name, tried when ``target`` is refused."""

CALL_ERRORS = (MCPError, TimeoutError, OSError, anyio.ClosedResourceError,
               anyio.BrokenResourceError)
"""What a call to a server may raise: a JSON-RPC error (unknown tool), a call over its time,
a server that died."""

RECORD_JS = "() => document.getElementById('record').textContent"
PATH_JS = "() => location.pathname"
STATUS_JS = "() => document.getElementById('status').textContent"
DARK_JS = "() => String(matchMedia('(prefers-color-scheme: dark)').matches)"


# --------------------------------------------------------------------------- the script


@dataclass(frozen=True)
class Ref:
    """An element, found in the server's latest snapshot by role and accessible name."""

    role: str
    name: str


@dataclass
class Step:
    """One scripted tool call.

    Attributes:
        tool: the tool's name.
        args: arguments as a Playwright MCP client sends them; :class:`Ref` values are
            replaced by the server's ref, callables by their value for the run context.
        keys: record keys whose values are the page outcome; ``None``: no record read.
        probe: a JavaScript function whose result is the outcome instead (e.g. which page
            the current tab shows); evaluated with browser_evaluate.
        expect: text the result must contain (its shape), e.g. a console message.
        drop: record fields ignored in the comparison (counts that depend on how many
            events a mouse path has).
        image: the result must carry an image.
        fails: the call must be a tool error (``isError``), e.g. a ref no snapshot gave.
        saved: the result names a file it saved, which must exist under the server's
            output directory (``--output-dir``).
        note: why the step is as it is, shown in the report.
    """

    tool: str
    args: dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]] = field(default_factory=dict)
    keys: tuple[str, ...] | None = None
    probe: str | None = None
    expect: tuple[str, ...] = ()
    drop: tuple[str, ...] = ()
    image: bool = False
    saved: bool = False
    fails: bool = False
    note: str = ""


def pad_at(x: int, y: int) -> Callable[[dict[str, Any]], dict[str, int]]:
    """Viewport CSS px of point (x, y) of the page's pad, from the pad's measured box."""
    return lambda ctx: {"x": ctx["pad"]["x"] + x, "y": ctx["pad"]["y"] + y}


def steps(origin: str, upload: Path) -> list[Step]:
    """The scripted calls, in order: every Playwright MCP tool agents call, and ours."""
    page = f"{origin}/index.html"
    return [
        Step("browser_navigate", {"url": page}, probe="() => document.title"),
        Step("browser_snapshot", {}, expect=('button "Count"', 'textbox "Name"', 'region "Drop zone"')),
        Step("browser_click", {"element": "Count button", "target": Ref("button", "Count")},
             keys=("count",)),
        Step("browser_click", {"element": "Count button", "target": Ref("button", "Count"),
                               "doubleClick": True}, keys=("count",), note="doubleClick"),
        Step("browser_click", {"element": "Nothing", "target": "e999"}, keys=("count",),
             fails=True, note="a ref no snapshot gave"),
        Step("browser_type", {"element": "Name", "target": Ref("textbox", "Name"), "text": "Ada"},
             keys=("name",)),
        Step("browser_type", {"element": "Keys", "target": Ref("textbox", "Keys"), "text": "x",
                              "submit": True}, keys=("keys",), note="submit"),
        Step("browser_press_key", {"key": "ArrowDown"}, keys=("keys",)),
        Step("browser_hover", {"element": "Hover me", "target": Ref("button", "Hover me")},
             keys=("hover",)),
        Step("browser_select_option", {"element": "Size", "target": Ref("combobox", "Size"),
                                       "values": ["L"]}, keys=("size",)),
        Step("browser_fill_form", {"fields": [
            {"name": "Email", "type": "textbox", "target": Ref("textbox", "Email"),
             "value": "ada@example.org"},
            {"name": "Subscribe", "type": "checkbox", "target": Ref("checkbox", "Subscribe"),
             "value": "true"},
            {"name": "Color", "type": "combobox", "target": Ref("combobox", "Color"),
             "value": "Blue"},
            {"name": "Pro", "type": "radio", "target": Ref("radio", "Pro"), "value": "true"},
        ]}, keys=("email", "subscribe", "color", "plan"), drop=("n",)),
        Step("browser_drag", {"startElement": "Drag source", "startTarget": Ref("button", "Drag source"),
                              "endElement": "Drop zone", "endTarget": Ref("region", "Drop zone")},
             keys=("dragstart", "drop")),
        Step("browser_click", {"element": "Confirm", "target": Ref("button", "Confirm")},
             keys=("confirm",), expect=("Proceed?",), note="opens a confirm dialog"),
        Step("browser_handle_dialog", {"accept": True}, keys=("confirm",)),
        Step("browser_click", {"element": "Start loading", "target": Ref("button", "Start loading")}),
        Step("browser_wait_for", {"text": "Loaded all"}, probe=STATUS_JS),
        Step("browser_click", {"element": "Start loading", "target": Ref("button", "Start loading")}),
        Step("browser_wait_for", {"textGone": "Loading items"}, probe=STATUS_JS, note="textGone"),
        Step("browser_wait_for", {"time": 0.2}, note="time"),
        Step("browser_take_screenshot", {"type": "png", "scale": "css"}, image=True),
        Step("browser_take_screenshot", {"element": "Count button", "target": Ref("button", "Count"),
                                         "type": "png", "scale": "css"}, image=True,
             note="element"),
        Step("browser_evaluate", {"function": "() => document.title"}, expect=("Conformance",)),
        Step("browser_evaluate", {"element": "Name", "target": Ref("textbox", "Name"),
                                  "function": "(el) => el.value"}, expect=("Ada",),
             note="on an element"),
        Step("browser_find", {"text": "Drop zone"}, expect=('region "Drop zone"', "[ref=")),
        Step("browser_snapshot", {"target": Ref("region", "Drop zone")},
             expect=('region "Drop zone"',), note="target"),
        Step("browser_click", {"element": "Upload file", "target": Ref("button", "Upload file")},
             expect=("chooser",), note="opens the file chooser"),
        Step("browser_file_upload", {"paths": [str(upload)]}, keys=("file",)),
        Step("browser_console_messages", {"level": "info"},
             expect=("conformance: loaded", "conformance: an error")),
        Step("browser_network_requests", {"static": False}, expect=("api/ping.json",)),
        Step("browser_network_request", lambda ctx: {"index": ctx.get("ping_index", 1)},
             expect=("api/ping.json", "200")),
        Step("browser_resize", {"width": 900, "height": 640},
             probe="() => JSON.stringify([innerWidth, innerHeight])"),
        Step("browser_mouse_move_xy", pad_at(50, 40), keys=("pad_move",), drop=("n",)),
        Step("browser_mouse_click_xy", pad_at(60, 50), keys=("pad_click",)),
        Step("browser_mouse_click_xy", lambda ctx: {**pad_at(70, 60)(ctx), "clickCount": 2},
             keys=("pad_click",), note="clickCount 2"),
        Step("browser_mouse_down", {}, keys=("pad_down",)),
        Step("browser_mouse_up", {}, keys=("pad_up",)),
        Step("browser_mouse_drag_xy", lambda ctx: {
            "startX": ctx["pad"]["x"] + 20, "startY": ctx["pad"]["y"] + 20,
            "endX": ctx["pad"]["x"] + 150, "endY": ctx["pad"]["y"] + 120},
            keys=("pad_down", "pad_up"), drop=("n",)),
        Step("browser_mouse_wheel", {"deltaX": 0, "deltaY": 100}, keys=("pad_wheel",), drop=("n",)),
        Step("browser_pdf_save", {}, expect=(".pdf",), saved=True),
        Step("browser_emulate_media", {"colorScheme": "dark"}, probe=DARK_JS),
        Step("browser_drop", {"element": "Drop zone", "target": Ref("region", "Drop zone"),
                              "paths": [str(upload)]}, keys=("drop",)),
        Step("browser_actions", {"actions": [{"kind": "click", "ref": Ref("button", "Count")}]},
             keys=("count",), note="trustbridge only"),
        Step("browser_snapshot", {"depth": 1}, note="depth 1"),
        Step("browser_click", {"element": "Download", "target": Ref("link", "Download")},
             probe=PATH_JS, expect=("dl.txt",), saved=True, note="starts a download"),
        Step("browser_click", {"element": "Open later", "target": Ref("button", "Open later")},
             note="window.open 500 ms later"),
        Step("browser_wait_for", {"time": 1}, probe=PATH_JS,
             note="the next call after a delayed window.open: which tab is current"),
        Step("browser_tabs", {"action": "select", "index": 0}, probe=PATH_JS,
             note="back to the first tab"),
        Step("browser_click", {"element": "Open tab", "target": Ref("link", "Open tab")},
             probe=PATH_JS, note="target=_blank: which tab is current after"),
        Step("browser_tabs", {"action": "list"}, expect=("page2.html",)),
        Step("browser_tabs", {"action": "select", "index": 0}, probe=PATH_JS, note="select"),
        Step("browser_tabs", {"action": "close", "index": 1}, probe=PATH_JS, note="close"),
        Step("browser_tabs", {"action": "new", "url": f"{origin}/page2.html"}, probe=PATH_JS,
             note="new"),
        Step("browser_navigate", {"url": page}, probe=PATH_JS),
        Step("browser_navigate_back", {}, probe=PATH_JS),
        Step("browser_close", {}),
    ]


NOT_CALLED = {
    "browser_run_code_unsafe": "not called: runs Playwright code in the server process "
                               "(no trusted-input equivalent; intended absence)",
}


# --------------------------------------------------------------------------- servers


@dataclass(frozen=True)
class ServerSpec:
    """How to start one MCP server on stdio."""

    name: str
    command: str
    args: list[str]
    cwd: Path
    env: dict[str, str]
    output_dir: Path | None = None  # where saved files must land (None: not checked)
    adapt: bool = False  # retry a refused Playwright MCP argument under trustbridge's name


def trustbridge_spec(home: Path, caps: str = CAPS) -> ServerSpec:
    """``trustbridge mcp`` from this repo's interpreter, with its own state directory (so
    it starts its own embedded bridge and headless Chromium); ``--caps`` when the CLI has it."""
    args = ["-m", "trustbridge", "mcp"]
    helptext = subprocess.run([sys.executable, "-m", "trustbridge", "mcp", "--help"], cwd=REPO,
                              capture_output=True, text=True, timeout=60, check=False).stdout
    for flag, value in (("--caps", caps), ("--isolated", None), ("--headless", None),
                        ("--executable-path", CHROMIUM), ("--output-dir", str(home / "out"))):
        if flag in helptext and (value is None or value):
            args += [flag] + ([value] if value else [])
    out = home / "out" if "--output-dir" in args else None
    return ServerSpec("trustbridge", sys.executable, args, REPO,
                      dict(os.environ, TRUSTBRIDGE_HOME=str(home)), output_dir=out, adapt=True)


def playwright_spec(workdir: Path, caps: str = CAPS) -> ServerSpec:
    """Playwright MCP from ``scripts/conformance/node_modules``, on Debian's Chromium,
    headless, in-memory profile, no settle wait, files under ``workdir`` (its workspace)."""
    node = shutil.which("node") or "node"
    args = [str(PLAYWRIGHT_MCP), "--headless", "--isolated", "--executable-path", CHROMIUM,
            "--timeout-settle", "0", "--output-dir", str(workdir / "out")]
    if caps:
        args += ["--caps", caps]
    if os.geteuid() == 0:  # Chromium's sandbox cannot start as root (as the supervisor knows)
        args.append("--no-sandbox")
    return ServerSpec("playwright", node, args, workdir, dict(os.environ),
                      output_dir=workdir / "out")


def playwright_version() -> str | None:
    """The installed @playwright/mcp version, or None when it is not installed."""
    manifest = PLAYWRIGHT_MCP.parent / "package.json"
    if not manifest.exists():
        return None
    return json.loads(manifest.read_text())["version"]


# --------------------------------------------------------------------------- running


def text_of(result: Any) -> str:
    """The text parts of a CallToolResult, joined."""
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def find_ref(snapshot: str, ref: Ref) -> str | None:
    """The ref of the element with ``ref``'s role and name in a snapshot text; by name
    alone when no line has that role (servers differ on e.g. a file input's role)."""
    name = re.escape(ref.name)
    for pattern in (rf'- {re.escape(ref.role)} "{name}"[^\n]*?\[ref=([\w-]+)\]',
                    rf'- [\w-]+ "{name}"[^\n]*?\[ref=([\w-]+)\]'):
        found = re.findall(pattern, snapshot)
        if found:
            return found[0]
    return None


def resolve(value: Any, snapshot: str, missing: list[str]) -> Any:
    """``value`` with every :class:`Ref` replaced by its ref in ``snapshot``."""
    if isinstance(value, Ref):
        found = find_ref(snapshot, value)
        if found is None:
            missing.append(f'{value.role} "{value.name}"')
        return found or "e0"
    if isinstance(value, dict):
        return {k: resolve(v, snapshot, missing) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, snapshot, missing) for v in value]
    return value


def has_ref(value: Any) -> bool:
    if isinstance(value, Ref):
        return True
    if isinstance(value, dict):
        return any(has_ref(v) for v in value.values())
    if isinstance(value, list):
        return any(has_ref(v) for v in value)
    return False


def rename_args(value: Any) -> Any:
    """Playwright MCP's ``target`` names turned into trustbridge's ``ref`` names."""
    if isinstance(value, dict):
        return {RENAMES.get(k, k): rename_args(v) for k, v in value.items()}
    if isinstance(value, list):
        return [rename_args(v) for v in value]
    return value


def refused_fields(text: str) -> list[str]:
    """The argument paths a trustbridge BAD_REQUEST names as not permitted."""
    return re.findall(r"([\w.]+): Extra inputs are not permitted", text)


def drop_path(args: dict[str, Any], path: str) -> dict[str, Any]:
    """``args`` without the field at dotted ``path`` (list indexes as numbers)."""
    out = json.loads(json.dumps(args))
    node: Any = out
    parts = path.split(".")
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node.get(part)
        if node is None:
            return out
    if isinstance(node, dict):
        node.pop(parts[-1], None)
    return out


def result_value(text: str) -> Any:
    """The value under ``### Result`` of an evaluate result, decoded from JSON when it is."""
    m = re.search(r"### Result\s*\n(.*?)(?:\n###|\Z)", text, re.DOTALL)
    body: Any = (m.group(1) if m else text).strip()
    if "\n" in body and not body.startswith(("{", "[", '"')):
        body = body.split("\n", 1)[1].strip()  # trustbridge: "Evaluated in ...; it returned:"
    for _ in range(2):  # a JSON string holding JSON (the record) decodes twice
        if not isinstance(body, str):
            break
        try:
            body = json.loads(body)
        except ValueError:
            break
    return body


def saved_file_problems(text: str, spec: ServerSpec) -> list[str]:
    """Problems with the file a result says it saved: none named, missing, or outside
    ``spec.output_dir`` (a relative path is the server's workspace, its cwd)."""
    names = re.findall(r"(?:saved as |to |\]\()((?:/|out/)[^\s)\"']+\.\w+)", text)
    if not names:
        return ["names no saved file"]
    out = []
    for name in names:
        path = (spec.cwd / name).resolve() if not name.startswith("/") else Path(name)
        assert spec.output_dir is not None
        if not path.is_relative_to(spec.output_dir.resolve()):
            out.append(f"saved {name} outside --output-dir {spec.output_dir}")
        elif not path.exists():
            out.append(f"{name} does not exist")
    return out


def probe_value(value: Any) -> Any:
    """A probe's value, with a failed probe's wording (which differs by server) dropped."""
    if isinstance(value, str) and value.startswith("<probe"):
        return "<probe refused>"
    return value


def changes(before: dict[str, Any], after: dict[str, Any], keys: tuple[str, ...],
            drop: tuple[str, ...] = ()) -> dict[str, Any]:
    """What the page recorded during one step, for ``keys``: events counted (``n``),
    whether all were trusted (from the untrusted count ``u``), new keys in ``seq``, and
    the latest values; ``drop`` fields left out. A key with no new event is None."""
    out: dict[str, Any] = {}
    for key in keys:
        cur, prev = after.get(key), before.get(key)
        if not isinstance(cur, dict):
            out[key] = cur if cur != prev else None
            continue
        prev = prev if isinstance(prev, dict) else {}
        n = cur.get("n", 0) - prev.get("n", 0)
        if "n" in cur and n == 0:
            out[key] = None
            continue
        item = {f: v for f, v in cur.items() if f not in ("n", "u", "seq")}
        if "n" in cur:
            item["n"] = n
        if "u" in cur:
            item["trusted"] = cur["u"] - prev.get("u", 0) == 0
        if "seq" in cur:
            item["seq"] = cur["seq"][len(prev.get("seq", [])):]
        out[key] = {f: v for f, v in item.items() if f not in drop}
    return out


def shape(result: Any) -> dict[str, Any]:
    """What a result looks like: error flag, content types, markdown section headings."""
    text = text_of(result)
    return {"isError": bool(result.is_error),
            "content": sorted({c.type for c in result.content}),
            "sections": [h.strip() for h in re.findall(r"^###? [^\n]+", text, re.MULTILINE)]}


@dataclass
class StepResult:
    """What one server did with one step."""

    tool: str
    note: str
    listed: bool
    ok: bool = False
    args: dict[str, Any] = field(default_factory=dict)
    text: str = ""
    outcome: Any = None
    shape: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    adapted: list[str] = field(default_factory=list)


class Runner:
    """Runs the steps against one server through an open ``mcp`` client."""

    def __init__(self, client: Any, spec: ServerSpec, tools: set[str], workdir: Path):
        self.client, self.spec, self.tools, self.workdir = client, spec, tools, workdir
        self.ctx: dict[str, Any] = {}
        self.record: dict[str, Any] = {}  # the page's record after the previous step

    async def call(self, tool: str, args: dict[str, Any]) -> Any:
        return await asyncio.wait_for(
            self.client.call_tool(tool, args, read_timeout_seconds=CALL_TIMEOUT_S),
            CALL_TIMEOUT_S + 5)

    async def evaluate(self, function: str) -> Any:
        if "browser_evaluate" not in self.tools:
            return None
        try:
            result = await self.call("browser_evaluate", {"function": function})
        except CALL_ERRORS as exc:  # a probe that fails leaves the outcome unknown
            return f"<probe failed: {type(exc).__name__}>"
        return f"<probe error: {text_of(result)[:120]}>" if result.is_error \
            else result_value(text_of(result))

    async def snapshot_text(self) -> str:
        try:
            return text_of(await self.call("browser_snapshot", {}))
        except CALL_ERRORS:
            return ""

    async def run(self, step: Step) -> StepResult:
        res = StepResult(step.tool, step.note, step.tool in self.tools)
        if not res.listed:
            return res
        if callable(step.args):  # measured now: a resize moves the pad
            await self.measure_pad()
        try:
            raw = step.args(self.ctx) if callable(step.args) else step.args
        except KeyError as exc:  # e.g. the pad's box could not be measured
            res.problems.append(f"not run: {exc.args[0]} unknown (an earlier probe failed)")
            return res
        missing: list[str] = []
        args = resolve(raw, await self.snapshot_text(), missing) if has_ref(raw) else raw
        if missing:
            res.problems.append("no ref in its snapshot for " + ", ".join(missing))
        res.args = args
        try:
            result = await self.call(step.tool, args)
            if result.is_error and self.spec.adapt and "BAD_REQUEST" in text_of(result):
                result = await self.adapt(step.tool, args, result, res)
        except CALL_ERRORS as exc:
            res.problems.append(f"call failed: {type(exc).__name__}: {exc}"[:200])
            return res
        res.text = text_of(result)
        res.shape = shape(result)
        res.ok = not result.is_error
        if step.fails:
            res.ok = bool(result.is_error)
            if not result.is_error:
                res.problems.append("no tool error for a call that must fail")
        elif result.is_error:
            res.problems.append("error: " + res.text.splitlines()[0][:160] if res.text else "error")
        for want in step.expect:
            if want not in res.text:
                res.problems.append(f"result lacks {want!r}")
        if step.image and "image" not in res.shape["content"]:
            res.problems.append("no image in the result")
        if step.saved and self.spec.output_dir is not None:
            res.problems += saved_file_problems(res.text, self.spec)
        if step.tool == "browser_network_requests":
            m = re.search(r"^\D*?(\d+)\D[^\n]*api/ping\.json", res.text, re.MULTILINE)
            if m:
                self.ctx["ping_index"] = int(m.group(1))
        record = await self.evaluate(RECORD_JS) if step.tool != "browser_close" else None
        if isinstance(record, dict):
            before, self.record = self.record, record
        else:
            before = self.record
        if step.probe:
            res.outcome = probe_value(await self.evaluate(step.probe))
        elif step.keys is not None:
            res.outcome = (changes(before, record, step.keys, step.drop)
                           if isinstance(record, dict) else probe_value(record))
        return res

    async def measure_pad(self) -> None:
        """Where the page's pad is (viewport CSS px), for the coordinate tools' arguments."""
        box = await self.evaluate("() => JSON.stringify(document.getElementById('pad')"
                                  ".getBoundingClientRect())")
        self.ctx["pad_probe"] = box
        if isinstance(box, dict):
            self.ctx["pad"] = {"x": round(box["x"]), "y": round(box["y"])}

    async def adapt(self, tool: str, args: dict[str, Any], result: Any,
                    res: StepResult) -> Any:
        """Retry a refused call with trustbridge's names, then without refused fields."""
        renamed = rename_args(args)
        if renamed != args:
            again = await self.call(tool, renamed)
            if not again.is_error or "BAD_REQUEST" not in text_of(again):
                used = sorted({k for k in RENAMES if k in json.dumps(args)})
                res.adapted.append(f"refuses {', '.join('`' + u + '`' for u in used)}; "
                                   f"took `{'`, `'.join(RENAMES[u] for u in used)}`")
                res.args = renamed
                return again
            result, args = again, renamed
        back = {v: k for k, v in RENAMES.items()}
        for _ in range(3):
            extra = list(dict.fromkeys(refused_fields(text_of(result))))
            if not extra:
                return result
            for path in extra:
                args = drop_path(args, path)
            shown = [".".join(back.get(part, part) for part in e.split(".")) for e in extra]
            res.adapted.append("refuses " + ", ".join(f"`{p}`" for p in shown))
            res.args = args
            result = await self.call(tool, args)
            if not result.is_error:
                return result
        return result


async def run_server(spec: ServerSpec, script: list[Step], workdir: Path,
                     log: Path) -> tuple[list[str], list[StepResult]]:
    """Start ``spec``, list its tools, run ``script`` step by step."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=spec.command, args=spec.args, env=spec.env,
                                   cwd=str(spec.cwd))
    try:
        with log.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog),
                              read_timeout_seconds=90) as client:
                tools = [t.name for t in (await client.list_tools()).tools]
                runner = Runner(client, spec, set(tools), workdir)
                results = []
                for step in script:
                    results.append(await runner.run(step))
                return tools, results
    except (*CALL_ERRORS, BaseExceptionGroup) as exc:  # the server never came up, or died
        tail = log.read_text()[-1500:] if log.exists() else ""
        raise SystemExit(f"{spec.name} MCP server failed ({type(exc).__name__}: {exc}); "
                         f"its stderr ends:\n{tail}") from exc


# --------------------------------------------------------------------------- comparing


@dataclass
class Row:
    """One line of the report."""

    tool: str
    both_ok: bool
    differences: list[str]


def label(r: StepResult) -> str:
    return f"{r.tool} ({r.note})" if r.note else r.tool


SECTION_SAME = {"### Page state": "### Page", "### Snapshot": "### Page"}
"""trustbridge's sections → the Playwright MCP section they stand for (trustbridge's page
state carries the snapshot that Playwright MCP gives as a section of its own or a file)."""
SECTION_IGNORED = {"### Ran Playwright code", "### Result"}
"""Not compared: the Playwright code (trustbridge runs none) and ``### Result`` (trustbridge
says what every action did, issue 15 item 5; Playwright MCP only for some tools)."""

INTENDED = {
    "browser_click (target=_blank: which tab is current after)":
        "intended: trustbridge follows a tab the action opened in the foreground "
        "(issue 15 item 2); Playwright MCP 0.0.83 stays on the opener",
    "browser_actions (trustbridge only)": "intended: trustbridge's batch tool",
    "browser_type (submit)": "by design: trusted replace selects the old text with a real "
        "Control+A, which the page sees as keydowns (Playwright MCP's fill sends none)",
    "browser_wait_for (the next call after a delayed window.open: which tab is current)":
        "intended: trustbridge follows a tab opened up to 2 s after the action (issue 15 "
        "item 2); Playwright MCP 0.0.83 stays",
    "browser_run_code_unsafe": "intended absence",
}


def first_line(text: str, width: int = 90) -> str:
    """The first line of a result that is not a section heading, cut to ``width``."""
    line = next((ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")), "")
    return line[:width] + ("…" if len(line) > width else "")


def sections(result: StepResult) -> set[str]:
    return {SECTION_SAME.get(h, h) for h in result.shape.get("sections", [])} - SECTION_IGNORED


def trust_only(a: Any, b: Any) -> bool:
    """Whether outcomes ``a`` (trustbridge) and ``b`` (Playwright MCP) differ only where
    trustbridge's events were trusted and Playwright MCP's were not."""
    if not (isinstance(a, dict) and isinstance(b, dict)) or a.keys() != b.keys():
        return False
    if "trusted" in a:
        rest = lambda d: {k: v for k, v in d.items() if k != "trusted"}
        return a["trusted"] is True and b["trusted"] is False and rest(a) == rest(b)
    differing = [k for k in a if a[k] != b[k]]
    return bool(differing) and all(trust_only(a[k], b[k]) for k in differing)


def compare(ours: list[StepResult], theirs: list[StepResult]) -> list[Row]:
    """One row per step: both ok with the same page outcome, or what differs."""
    rows = []
    for a, b in zip(ours, theirs, strict=True):
        diffs: list[str] = []
        name = label(a)
        if not a.listed and not b.listed:
            continue
        if not a.listed or not b.listed:
            side = "trustbridge" if not a.listed else "Playwright MCP"
            rows.append(Row(name, False, [f"missing on {side}"]
                            + ([INTENDED[name]] if name in INTENDED else [])))
            continue
        diffs += [f"trustbridge {p}" for p in a.adapted]
        diffs += [f"trustbridge: {p}" for p in a.problems]
        diffs += [f"Playwright MCP: {p}" for p in b.problems]
        if a.outcome != b.outcome:
            diffs.append(f"page outcome: trustbridge {json.dumps(a.outcome)} vs "
                         f"Playwright MCP {json.dumps(b.outcome)}")
            if trust_only(a.outcome, b.outcome):
                diffs.append("intended: trustbridge's input is trusted where Playwright MCP "
                             "dispatches synthetic events")
        if a.shape.get("isError") and b.shape.get("isError"):
            diffs.append(f"error text: trustbridge {first_line(a.text)!r} vs Playwright MCP "
                         f"{first_line(b.text)!r}")
        if a.shape.get("content") != b.shape.get("content"):
            diffs.append(f"content types: {a.shape.get('content')} vs {b.shape.get('content')}")
        sa, sb = sections(a), sections(b)
        if sa != sb:
            only_a = ", ".join(sorted(x[4:] for x in sa - sb)) or "—"
            only_b = ", ".join(sorted(x[4:] for x in sb - sa)) or "—"
            diffs.append(f"sections only in trustbridge: {only_a}; only in Playwright MCP: "
                         f"{only_b}")
        if name in INTENDED and a.outcome != b.outcome:
            diffs.append(INTENDED[name])
        same = (a.ok and b.ok and a.outcome == b.outcome and not a.problems
                and not b.problems and not a.adapted)
        rows.append(Row(name, same, diffs))
    return rows


def listing_rows(ours: list[str], theirs: list[str], script: list[Step]) -> list[Row]:
    """Rows for tools that the script does not call on a server that lists them."""
    called = {s.tool for s in script}
    rows = []
    for name in sorted((set(ours) | set(theirs)) - called):
        side = [] if name in ours else ["missing on trustbridge"]
        side += [] if name in theirs else ["missing on Playwright MCP"]
        rows.append(Row(name, False, side + [NOT_CALLED.get(name, "not called by the script")]))
    return rows


def table(rows: list[Row]) -> str:
    """The report as a markdown table."""
    lines = ["| tool | both ok | differences |", "| --- | --- | --- |"]
    for r in rows:
        cell = "; ".join(d.replace("|", "\\|").replace("\n", " ") for d in r.differences)
        lines.append(f"| `{r.tool}` | {'yes' if r.both_ok else 'no'} | {cell or '—'} |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def serve_pages(directory: Path = PAGES) -> Iterator[str]:
    """``directory`` over HTTP on 127.0.0.1 (a free port); yields the origin."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(directory)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


async def conformance(only: set[str] | None = None, caps: str = CAPS,
                      raw: Path | None = None) -> dict[str, Any]:
    """Run the script on both servers; the report as a dict (rows, tools, versions)."""
    if playwright_version() is None:
        raise SystemExit("Playwright MCP is not installed: npm ci --prefix scripts/conformance")
    with tempfile.TemporaryDirectory(prefix="tb-conformance-") as tmp, serve_pages() as origin:
        work = Path(tmp)
        (work / "out").mkdir()
        upload = work / "upload.txt"
        upload.write_text("conformance upload\n")
        script = [s for s in steps(origin, upload) if only is None or s.tool in only]
        keep_nav = [s for s in steps(origin, upload)[:1] if only is not None
                    and "browser_navigate" not in only]
        script = keep_nav + script  # every run starts on the page
        ours_spec = trustbridge_spec(work / "home", caps)
        (work / "home").mkdir()
        theirs_spec = playwright_spec(work, caps)
        ours_tools, ours = await run_server(ours_spec, script, work, work / "trustbridge.log")
        theirs_tools, theirs = await run_server(theirs_spec, script, work, work / "playwright.log")
        rows = compare(ours, theirs)
        if only is None:
            rows += listing_rows(ours_tools, theirs_tools, script)
        report = {"playwrightMcp": playwright_version(), "caps": caps,
                  "trustbridgeArgs": ours_spec.args[2:],
                  "tools": {"trustbridge": ours_tools, "playwright": theirs_tools},
                  "rows": [r.__dict__ for r in rows],
                  "calls": {"trustbridge": [r.__dict__ for r in ours],
                            "playwright": [r.__dict__ for r in theirs]}}
        if raw is not None:
            raw.write_text(json.dumps(report, indent=1, default=str))
        return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--raw", type=Path, help="write every call and result here (JSON)")
    parser.add_argument("--only", nargs="+", metavar="TOOL", help="run these tools' steps")
    parser.add_argument("--caps", default=CAPS, help=f"--caps of both servers (default {CAPS})")
    args = parser.parse_args()
    report = asyncio.run(conformance(set(args.only) if args.only else None, args.caps, args.raw))
    if args.json:
        print(json.dumps({k: v for k, v in report.items() if k != "calls"}, indent=1))
    else:
        rows = [Row(**r) for r in report["rows"]]
        print(f"Playwright MCP {report['playwrightMcp']} vs trustbridge mcp "
              f"{' '.join(report['trustbridgeArgs'])}; caps {report['caps']}\n")
        print(table(rows))
        ok = sum(r.both_ok for r in rows)
        print(f"\n{ok} of {len(rows)} rows: both ok with the same page outcome")
    return 0


if __name__ == "__main__":
    sys.exit(main())
