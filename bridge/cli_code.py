"""``trustbridge exec FILE|-`` and ``trustbridge repl``: Python run against the browser
(issue 19, docs/code.md, docs/cli.md).

Both run code in a worker process of :class:`bridge.code.runtime.CodeRuntime`, bound to
this command's connection: the worker's ``browser`` and ``tab`` send every request
through the CLI's own :meth:`BridgeClient.call <bridge.client.BridgeClient.call>`, so the
code acts as the command's session (``--session NAME``: the same tabs as the other
commands with that name). It is local trusted code with this user's rights, not a
sandbox.

``exec`` runs the file's (``-``: stdin's) code once and prints what it printed, then the
repr of its last expression; the exit code is 0 when it finished, 1 when it raised
(traceback on stderr), ran past ``--timeout`` or the bridge failed, 2 for bad input
(no such file, a syntax error: checked here, before connecting), 3 without a bridge.
``repl`` (:mod:`bridge.cli_repl`) reads entries from a terminal or a pipe; variables
persist between entries. This module has what both share: the input checks, the
connection and runtime, how a result is printed, and the two commands' options.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import contextlib
import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from . import cli_sessions
from .protocol import errors as E

if TYPE_CHECKING:
    from .code.runtime import CodeRuntime, ExecResult
    from .sdk import Browser

__all__ = ["BadInput", "add_commands", "check_syntax", "open_runtime", "print_result",
           "read_source", "run_exec", "whole"]

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_NO_BRIDGE = 0, 1, 2, 3
DEFAULT_TIMEOUT_S = 30.0
"""Per run (exec) or per entry (repl), seconds: the MCP tool's default (issue 19)."""
MAX_TIMEOUT_S = 300.0
"""The runtime's cap when ``--timeout`` is lower; a larger ``--timeout`` is its own cap
(the person at the command line sets the limit, not a server)."""
PAGE_CHARS = 1_000_000
"""The runtime's output budget here, characters: the CLI prints everything, so a page is
as large as what the runtime keeps of a call (its MAX_KEPT_CHARS) and the value's repr is
not cut below what the worker sends (every further page is read all the same)."""
COMPILE_FLAGS = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
"""How the worker compiles code: top-level ``await`` allowed."""


class BadInput(Exception):
    """Input that cannot run (no such file, a syntax error): printed, exit 2."""


# -- input ------------------------------------------------------------------------------


def read_source(path: str, stdin: TextIO | None = None) -> tuple[str, str]:
    """``(code, name)`` of ``exec PATH``: the file's text (UTF-8), or stdin's for ``-``.

    Raises:
        BadInput: the file cannot be read or is not UTF-8 text.
    """
    if path == "-":
        try:
            return (stdin or sys.stdin).read(), "<stdin>"
        except UnicodeDecodeError as exc:
            raise BadInput(f"stdin is not UTF-8 text: {exc}") from exc
    try:
        return Path(path).read_text(encoding="utf-8"), path
    except UnicodeDecodeError as exc:
        raise BadInput(f"{path} is not UTF-8 text: {exc}") from exc
    except OSError as exc:
        raise BadInput(f"cannot read {path}: {exc.strerror or exc}") from exc


def check_syntax(code: str, name: str) -> None:
    """Compile ``code`` as the worker will (top-level ``await`` allowed), to refuse a
    syntax error before anything connects.

    Raises:
        BadInput: the message names the file, line and column, with the line and a caret.
    """
    try:
        compile(code, name, "exec", flags=COMPILE_FLAGS, dont_inherit=True)
    except SyntaxError as exc:
        raise BadInput(syntax_message(exc, name)) from exc
    except ValueError as exc:  # source code string cannot contain null bytes
        raise BadInput(f"{name}: {exc}") from exc


def syntax_message(exc: SyntaxError, name: str) -> str:
    """``NAME, line L: MSG`` and the offending line with a caret under the column."""
    where = f"{name}, line {exc.lineno}" if exc.lineno else name
    lines = [f"{where}: {type(exc).__name__}: {exc.msg}"]
    if exc.text and exc.text.strip():
        text = exc.text.rstrip("\n")
        stripped = text.lstrip()
        lines.append("    " + stripped)
        if exc.offset:
            col = max(exc.offset - 1 - (len(text) - len(stripped)), 0)
            lines.append("    " + " " * col + "^")
    return "\n".join(lines)


# -- connecting -------------------------------------------------------------------------


class CodeSession:
    """The command's connection and its code runtime (closed together)."""

    def __init__(self, browser: Browser, runtime: CodeRuntime) -> None:
        self.browser = browser
        self.runtime = runtime

    async def close(self) -> None:
        try:
            await self.runtime.close()
        finally:
            await self.browser.close()


async def open_runtime(args: argparse.Namespace) -> CodeSession | int:
    """Connect as the other client commands do (``--bridge``, ``--token-file``,
    ``--session``, ``--device``) and start the runtime on that connection; an exit code
    (the error printed) when that fails."""
    from .cli import connect_or_exit
    from .code.runtime import CodeRuntime

    browser = await connect_or_exit(args)
    if isinstance(browser, int):
        return browser
    client = browser.client
    runtime = CodeRuntime(client.call, device=args.device,
                          protocol_version=client.protocol_version, session=client.session,
                          default_timeout_s=args.timeout,
                          max_timeout_s=max(args.timeout, MAX_TIMEOUT_S),
                          output_budget=PAGE_CHARS)
    return CodeSession(browser, runtime)


def whole(runtime: CodeRuntime, res: ExecResult) -> ExecResult:
    """``res`` with all of its output: the CLI has no output budget, so every further
    page is read through ``runtime.more(cursor)``."""
    output, page = [res.output], res
    while page.cursor:
        page = runtime.more(page.cursor)
        output.append(page.output)
    return dataclasses.replace(res, output="".join(output), cursor=None)


def write(stream: TextIO, text: str) -> None:
    """``stream.write(text)``, with what the stream's encoding cannot take (a lone
    surrogate, a non-ASCII character on an ASCII terminal) written as backslash escapes
    instead of a UnicodeEncodeError."""
    try:
        stream.write(text)
    except UnicodeEncodeError:
        enc = getattr(stream, "encoding", None) or "utf-8"
        stream.write(text.encode(enc, "backslashreplace").decode(enc, "replace"))


class Streamer:
    """Writes a run's output as the worker forwards it (``CodeRuntime.run``'s
    ``on_output``), so a long run shows its progress; remembers whether the last line is
    still open. A reader that went away (``exec ... | head``) sets ``broken`` and calls
    ``on_broken`` (exec stops the run, as a Python program writing to a closed pipe
    would stop)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.open_line = False
        self.broken = False
        self.on_broken: Any = None

    def __call__(self, text: str) -> None:
        if self.broken:
            return
        try:
            write(self.out, text)
            self.out.flush()
        except BrokenPipeError:
            self.broken = True
            if self.on_broken is not None:
                self.on_broken()
            return
        self.open_line = not text.endswith("\n")


def print_result(res: ExecResult, *, repl: bool = False, out: TextIO | None = None,
                 err: TextIO | None = None, streamed: Streamer | None = None,
                 exit_status: bool = False) -> None:
    """What one run printed (unless ``streamed`` printed it already), its value's repr,
    and on stderr its traceback or why it stopped (the runtime's words for a timeout or a
    dead worker), what it did not keep, a worker that had started afresh before it and
    what was printed between entries. ``exit_status`` (exec): a SystemExit is the
    program's end, not an error: no traceback, only ``sys.exit("text")``'s text.

    Text a stream cannot encode is written as backslash escapes (:func:`write`)."""
    out, err = out or sys.stdout, err or sys.stderr
    ended = exit_status and res.exit_status is not None
    if res.reset_before:
        write(err, "note: this ran in a fresh worker (the previous one had stopped or was "
              "killed): variables from earlier entries are gone\n")
    if res.late_chars:
        more = "" if len(res.late_output) >= res.late_chars else \
            f" (the first {len(res.late_output)} of {res.late_chars} characters)"
        write(err, f"note: printed after an earlier entry ended, by a thread or process "
              f"it left running{more}:\n")
        err.flush()
        write(out, res.late_output if res.late_output.endswith("\n")
              else res.late_output + "\n")
        out.flush()
    if streamed is not None:
        if streamed.open_line:
            write(out, "\n")
    elif res.output:
        write(out, res.output if res.output.endswith("\n") else res.output + "\n")
    # The repl leaves out None as Python's prompt does; exec prints any value.
    if res.value is not None and not (repl and res.value == "None"):
        write(out, res.value + "\n")
    out.flush()
    if res.error and not ended:
        write(err, res.error if res.error.endswith("\n") else res.error + "\n")
    if ended and res.exit_message is not None:
        write(err, res.exit_message + "\n")  # sys.exit("text") prints it, as Python does
    if res.dropped_chars:
        write(err, f"note: {res.dropped_chars} more characters were printed and not kept "
              f"(the runtime keeps the first {res.total_chars - res.dropped_chars})\n")
    err.flush()


def as_json(res: ExecResult) -> str:
    """``{"ok": BOOL, "result": {output, value, error, timed_out, ...}}``: ``--json``."""
    return json.dumps({"ok": res.ok, "result": dataclasses.asdict(res)})


# -- exec -------------------------------------------------------------------------------


async def run_exec(args: argparse.Namespace, stdin: TextIO | None = None) -> int:
    """``trustbridge exec FILE|-``: the exit code (module docstring)."""
    try:
        code, name = read_source(args.file, stdin)
        check_syntax(code, name)
    except BadInput as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_USAGE
    opened = await open_runtime(args)
    if isinstance(opened, int):
        return opened
    streamer = None if args.json else Streamer(sys.stdout)
    try:
        try:
            run = asyncio.ensure_future(
                opened.runtime.run(code, timeout_s=args.timeout, on_output=streamer))
            if streamer is not None:
                streamer.on_broken = run.cancel  # stdout's reader is gone: stop the code
            try:
                res = await run
            except asyncio.CancelledError:
                if streamer is None or not streamer.broken:
                    raise
                raise BrokenPipeError from None
            if streamer is None:
                res = whole(opened.runtime, res)
        except E.TrustbridgeError as err:
            from .cli import print_error  # cli imports this module

            print_error(err, args.json)
            return EXIT_ERROR
    finally:
        await opened.close()
    if args.json:
        print(as_json(res), flush=True)
    else:
        print_result(res, streamed=streamer, exit_status=True)
    if res.exit_status is not None:  # sys.exit(n) ends the program: its status, as Python
        return res.exit_status & 0xFF  # the OS keeps the low byte
    return EXIT_OK if res.ok else EXIT_ERROR


EXIT_BROKEN_PIPE = 128 + 13
"""``exec ... | head``: the reader of stdout went away (128 + SIGPIPE, as a shell reports a
program that SIGPIPE ended)."""


def _cmd_exec(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(run_exec(args))
    except KeyboardInterrupt:  # the run was cancelled (its code stopped) on the way out
        print("KeyboardInterrupt", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _broken_pipe()


def _broken_pipe() -> int:
    """stdout's reader is gone: end quietly, as Python's docs advise (stdout onto
    /dev/null, so the interpreter's final flush raises nothing)."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return EXIT_BROKEN_PIPE


# -- registration -----------------------------------------------------------------------


def _timeout(value: str) -> float:
    """argparse type of ``--timeout``: seconds, a positive number."""
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds > 0 or seconds == float("inf"):
        raise argparse.ArgumentTypeError(f"{value!r} is not a timeout: a positive number "
                                         "of seconds")
    return seconds


def add_commands(sub: Any, token_file_help: str) -> None:
    """Register ``exec`` and ``repl`` with cli.py's subparsers; both set ``standalone``
    (the function cli.py's ``main`` runs instead of a one-call client command)."""
    ex = sub.add_parser(
        "exec", help="run a Python file (or - for stdin) once with `browser` and `tab`",
        description="Run Python code once in a fresh worker bound to this command's "
        "connection: `browser` and `tab` (trustbridge.Browser, trustbridge.Tab) act as its session, top-level await "
        "works. Prints what the code printed, then its last expression's repr. Exit 0 "
        "when it finished; 1 when it raised (traceback on stderr), timed out or the bridge "
        "failed; 2 for a missing file or a syntax error. Local code with your rights, not a "
        "sandbox (docs/code.md).")
    ex.add_argument("file", metavar="FILE", help="the Python file, or - to read stdin")
    rp = sub.add_parser(
        "repl", help="interactive Python with `browser` and `tab`; variables persist",
        description="Read Python entries (from a terminal or a pipe) and run each in one "
        "worker bound to this command's connection: variables persist between entries, "
        "top-level await works, Ctrl-C stops the running entry, Ctrl-D ends. With "
        "--session NAME the tabs are the session's, as for the other commands. Local code "
        "with your rights, not a sandbox (docs/code.md).")
    from .cli_repl import cmd_repl

    for p, run, per in ((ex, _cmd_exec, "the run"), (rp, cmd_repl, "each entry")):
        p.add_argument("--timeout", type=_timeout, default=DEFAULT_TIMEOUT_S, metavar="S",
                       help=f"seconds {per} may take (default {DEFAULT_TIMEOUT_S:g}); past "
                       "it the code is stopped and its worker reset")
        p.add_argument("--json", action="store_true",
                       help="print the result as JSON (repl: one line per entry)")
        p.add_argument("--device", help="device id (default: the only one)")
        p.add_argument("--bridge", help="bridge URL (default: the running bridge's endpoint "
                       "file); the token goes only to loopback, or to wss:// with --token-file")
        p.add_argument("--token-file", metavar="PATH", help=token_file_help)
        cli_sessions.add_session_options(p)
        p.set_defaults(standalone=run)
