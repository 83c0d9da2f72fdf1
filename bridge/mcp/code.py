"""browser_exec (``--caps code``, off by default): Python code in a persistent worker.

The code runs in this server's :class:`~bridge.code.runtime.CodeRuntime`, one worker
process per Connection started at the first call, as this server's own bridge session:
its requests go through the Connection's bridge client, so ``tab`` (bound before each
call to the tab the other tools act on) takes the refs of the latest browser_snapshot.
Variables persist between calls until a timeout resets the worker. MCP
``notifications/cancelled`` cancels the handler, which interrupts the code
(:meth:`CodeRuntime.run`).

It is local trusted code with this user's full access to the machine, NOT a sandbox:
the tool description says so. No page state is attached to the result (the code may
have done anything); the result says how to look.
"""

from __future__ import annotations

import contextlib
import os
import signal
import weakref
from typing import Any

import mcp_types as types
import pydantic
from pydantic import Field, model_validator

from ..code import CodeRuntime, ExecResult
from ..code.output import KEPT_CALLS, MAX_KEPT_CHARS
from ..protocol import errors as E
from .session import Connection
from .tool import Tool, ToolArgs, _argument_error, error_result, log, with_next_step

DEFAULT_TIMEOUT_S = 30.0
"""A call's timeout when it gives none, s."""
OUTPUT_BUDGET = 20_000
"""Characters of output (and of the value) per result; the rest is a cursor away."""
LOOK = "Take a browser_snapshot to see the page."

_runtimes: weakref.WeakKeyDictionary[Connection, CodeRuntime] = weakref.WeakKeyDictionary()
"""Per server connection: its code runtime (one worker per MCP server)."""


class ExecArgs(ToolArgs):
    """The code to run, or the cursor of an earlier output to read on."""

    code: str | None = Field(default=None, max_length=1_000_000, description=(
        "Python to run. `browser` (bridge.sdk.Browser) and `tab` (the current tab: "
        "await tab.goto(url), await tab.snapshot(), await tab.click(ref), ...) are "
        "bound; top-level await works; variables persist between calls; the last "
        "expression's value is returned."))
    timeout: float | None = Field(default=None, gt=0, description=(
        "Seconds before the call is stopped and the worker reset (its variables lost); "
        "default 30, capped by the server's maximum."))
    cursor: str | None = Field(default=None, max_length=100, description=(
        "Read more of an earlier call's output: the cursor its result gave (omit code)."))

    @model_validator(mode="after")
    def _one(self) -> ExecArgs:
        if (self.code is None) == (self.cursor is None):
            raise ValueError("give either code (to run) or cursor (to read more output)")
        if self.cursor is not None and self.timeout is not None:
            raise ValueError("timeout goes with code, not with cursor")
        return self


def _kill(pid_box: list[int | None]) -> None:
    """At a Connection's collection: SIGKILL its worker's process group, if any."""
    if pid_box and pid_box[0]:
        with contextlib.suppress(OSError):
            os.killpg(pid_box[0], signal.SIGKILL)


async def runtime_for(conn: Connection) -> CodeRuntime:
    """The Connection's runtime, made at its first use (the worker starts at the first run).

    Raises:
        TrustbridgeError: as ``Connection.client`` raises (no bridge, a restart).
    """
    runtime = _runtimes.get(conn)
    if runtime is not None:
        return runtime
    client = await conn.client()
    ref = weakref.ref(conn)  # the runtime must not keep the Connection alive

    def live() -> Connection:
        c = ref()
        if c is None:
            raise E.DeviceNotConnected("This MCP server's connection is closed.")
        return c

    async def call(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return await (await live().client()).call(method, params)

    async def current_tab() -> tuple[str | None, int | None]:
        tab = await live().tab()  # on an attended device, opens the session's own window
        return tab.device, tab.tab_id

    runtime = CodeRuntime(call, device=conn.device, protocol_version=client.protocol_version,
                          session=conn.session, default_timeout_s=DEFAULT_TIMEOUT_S,
                          max_timeout_s=getattr(conn.options, "code_timeout_max_s", 300.0),
                          output_budget=OUTPUT_BUDGET, current_tab=current_tab)
    _runtimes[conn] = runtime
    weakref.finalize(conn, _kill, runtime._pid_box)
    return runtime


async def close_runtime(conn: Connection) -> None:
    """Kill the Connection's worker, if it has one (the server is stopping)."""
    runtime = _runtimes.pop(conn, None)
    if runtime is not None:
        await runtime.close()


def _fence(text: str) -> list[str]:
    """``text`` in a fenced block whose fence no backtick run inside can close."""
    run, longest = 0, 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return [fence, text.rstrip("\n"), fence]


def _span(result: ExecResult) -> str:
    """How much of the call's output this page is, in one wording for every page:
    ``characters A–B of K`` (K kept), and when some was dropped ``kept K of T printed``."""
    kept = result.total_chars - result.dropped_chars
    end = result.offset + len(result.output)
    if result.dropped_chars:
        return (f" (characters {result.offset}–{end} of {kept}: kept {kept} of "
                f"{result.total_chars} printed; only the first {MAX_KEPT_CHARS} are kept)")
    if result.offset == 0 and result.cursor is None:
        return ""
    return f" (characters {result.offset}–{end} of {kept})"


def render(result: ExecResult, *, page: bool = False) -> str:
    """The result's markdown: ``### Result`` (how it ended, output, value, what was
    printed between calls), then ``### Error`` when there is one, then how to see the
    page."""
    lines = ["### Result"]
    if page:
        pass  # a cursor page: only the output (its span says where it is)
    elif result.timed_out:
        lines.append(f"Timed out after {result.timeout_s:g} s; the worker was reset (see "
                     "Error). What the code printed before is below.")
    elif result.died:
        lines.append("The worker died during this call: its state was lost; the next call "
                     "starts fresh.")
    else:
        how = "raised an exception" if result.error else "ran"
        lines.append(f"The code {how} in {result.duration_ms:.0f} ms.")
    if result.reset_before and not page:
        lines.append("This call ran in a fresh worker: the previous one had stopped or was "
                     "killed before this call, so the variables and imports of earlier "
                     "calls are gone.")
    if result.output:
        lines += [f"Output{_span(result)}:", *_fence(result.output)]
    elif page:
        lines.append(f"Output{_span(result)}: (nothing more)")
    else:
        lines.append(f"Output{_span(result)}: (nothing printed)")
    if result.cursor:
        lines.append(f'More output: call browser_exec with cursor "{result.cursor}".')
    if result.value is not None:
        lines += ["Value:", *_fence(result.value)]
    if result.late_chars:
        cut_note = "" if len(result.late_output) >= result.late_chars else \
            f"; the first {len(result.late_output)} of {result.late_chars} characters"
        head = (f"Printed after an earlier call ended (by a thread or process it left "
                f"running; not this call's output{cut_note}):")
        lines += [head, *_fence(result.late_output)]
    sections = ["\n".join(lines)]
    if result.error:
        sections.append("\n".join(["### Error", *_fence(result.error)]))
    if not page:
        sections.append(LOOK)
    return "\n\n".join(sections)


async def _exec(conn: Connection, args: ExecArgs) -> types.CallToolResult:
    runtime = await runtime_for(conn)
    if args.cursor is not None:
        try:
            page = runtime.more(args.cursor)
        except E.BadRequest as err:
            raise with_next_step(err, f"Re-run the code to see its output again (only the "
                                 f"last {KEPT_CALLS} calls' outputs are kept).") from None
        return types.CallToolResult(content=[types.TextContent(
            type="text", text=render(page, page=True))])
    asked = args.timeout
    result = await runtime.run(args.code or "", asked)
    text = render(result)
    if asked is not None and asked > runtime.max_timeout_s:
        text = f"(timeout capped at the server's maximum, {runtime.max_timeout_s:g} s)\n" + text
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                is_error=not result.ok)


class CodeTool(Tool):
    """A tool whose result is its own (output, value, error) with ``isError`` set for an
    exception, timeout or dead worker, not a :class:`~.response.Response`."""

    async def call(self, conn: Connection,
                   arguments: dict[str, Any] | None) -> types.CallToolResult:
        try:
            args = self.args.model_validate(arguments or {})
        except pydantic.ValidationError as exc:
            return _argument_error(self.name, exc)
        try:
            if conn.stopped is not None:
                raise conn.stopped
            return await _exec(conn, args)  # type: ignore[arg-type]
        except E.TrustbridgeError as err:
            conn.session_ended(err)
            return error_result(self.name, err, conn.take_notes())
        except Exception as exc:  # noqa: BLE001 - a bug must not end the MCP session
            log.exception("tool %s failed", self.name)
            return error_result(self.name, E.InternalError(
                f"The MCP server failed: {type(exc).__name__}: {exc}"))


async def _unused(_conn: Connection, _args: Any, _response: Any) -> None:
    raise AssertionError("CodeTool.call runs browser_exec")  # pragma: no cover


TOOLS = [
    CodeTool(
        name="browser_exec",
        title="Run Python code",
        description="Run Python in a persistent worker on this machine: LOCAL TRUSTED CODE "
        "with the user's full access to files, network and processes — NOT a sandbox. "
        "`browser` and `tab` are the async trustbridge SDK (await tab.goto(url), await "
        "tab.snapshot(), await tab.click(ref) with refs from browser_snapshot, trusted "
        "input); variables persist between calls; top-level await. Returns what it "
        "printed and the last expression's value; a timeout resets the worker (state "
        "lost). Long output: pass the result's cursor to read more.",
        args=ExecArgs,
        run=_unused,
        cap="code",
    ),
]
