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
``repl`` reads entries (``tb> ``, continuation ``... ``; a block ends with an empty line,
as Python's own prompt) from a terminal or a pipe; variables persist between entries,
Ctrl-C stops the running entry (or clears the one being typed) and Ctrl-D ends.

The repl keeps the terminal in the main thread (``input()`` with line editing, Ctrl-C as
KeyboardInterrupt) and the connection and runtime on an event loop in a second thread.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import codeop
import concurrent.futures
import contextlib
import dataclasses
import json
import signal
import sys
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TextIO, TypeVar

from . import cli_sessions
from .protocol import errors as E

__all__ = ["add_commands", "check_syntax", "read_source"]

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
PROMPT, CONTINUATION = "tb> ", "... "
_FLAGS = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
_T = TypeVar("_T")


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
        compile(code, name, "exec", flags=_FLAGS, dont_inherit=True)
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


class _Session:
    """The command's connection and its code runtime (closed together)."""

    def __init__(self, browser: Any, runtime: Any) -> None:
        self.browser = browser
        self.runtime = runtime

    async def close(self) -> None:
        try:
            await self.runtime.close()
        finally:
            await self.browser.close()


async def _open(args: argparse.Namespace) -> _Session | int:
    """Connect as the other client commands do (``--bridge``, ``--token-file``,
    ``--session``, ``--device``) and start the runtime on that connection; an exit code
    (the error printed) when that fails."""
    from .cli import _bridge_token, _Refused
    from .code.runtime import CodeRuntime

    try:
        token = _bridge_token(args)
    except _Refused as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_USAGE
    try:
        browser = await cli_sessions.connect(args, token)
    except E.DeviceNotConnected as err:
        print(f"error: {err.message}", file=sys.stderr)
        return EXIT_NO_BRIDGE
    except E.TrustbridgeError as err:
        print(f"error {err.code.value}: {err.message}", file=sys.stderr)
        return EXIT_ERROR
    client = browser.client
    runtime = CodeRuntime(client.call, device=args.device,
                          protocol_version=client.protocol_version, session=client.session,
                          default_timeout_s=args.timeout,
                          max_timeout_s=max(args.timeout, MAX_TIMEOUT_S),
                          output_budget=PAGE_CHARS)
    return _Session(browser, runtime)


async def _complete(runtime: Any, res: Any) -> Any:
    """``res`` with all of its output: the CLI has no output budget, so every further
    page is read through ``runtime.more(cursor)``."""
    output, page = [res.output], res
    while page.cursor:
        page = runtime.more(page.cursor)
        output.append(page.output)
    return dataclasses.replace(res, output="".join(output), cursor=None)


def _print_result(res: Any, *, repl: bool = False,
                  out: TextIO | None = None, err: TextIO | None = None) -> None:
    """What one run printed, its value's repr, and on stderr its traceback or why it
    stopped (the runtime's words for a timeout or a dead worker), what it did not keep
    and a worker that had started afresh."""
    out, err = out or sys.stdout, err or sys.stderr
    if res.output:
        out.write(res.output if res.output.endswith("\n") else res.output + "\n")
    # The repl leaves out None as Python's prompt does; exec prints any value.
    if res.value is not None and not (repl and res.value == "None"):
        out.write(res.value + "\n")
    out.flush()
    if res.error:
        err.write(res.error if res.error.endswith("\n") else res.error + "\n")
    if res.dropped_chars:
        err.write(f"note: {res.dropped_chars} more characters were printed and not kept "
                  f"(the runtime keeps the first {res.total_chars - res.dropped_chars})\n")
    if res.reset and not res.timed_out and res.error is None:
        err.write("note: this ran in a fresh worker (the previous one had stopped or was "
                  "killed): variables from earlier entries are gone\n")
    err.flush()


def _as_json(res: Any) -> str:
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
    opened = await _open(args)
    if isinstance(opened, int):
        return opened
    try:
        try:
            res = await _complete(opened.runtime,
                                  await opened.runtime.run(code, timeout_s=args.timeout))
        except E.TrustbridgeError as err:
            if args.json:
                print(json.dumps({"ok": False, "error": err.to_payload().model_dump(mode="json")}))
            else:
                print(f"error {err.code.value}: {err.message}", file=sys.stderr)
            return EXIT_ERROR
    finally:
        await opened.close()
    if args.json:
        print(_as_json(res), flush=True)
    else:
        _print_result(res)
    return EXIT_OK if res.ok else EXIT_ERROR


def _cmd_exec(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(run_exec(args))
    except KeyboardInterrupt:  # the run was cancelled (its code stopped) on the way out
        print("KeyboardInterrupt", file=sys.stderr)
        return 130


# -- repl -------------------------------------------------------------------------------


class _Cancelled:
    """What :meth:`_LoopThread.run` returns for a coroutine stopped by Ctrl-C."""


class _LoopThread:
    """An event loop in a daemon thread, running one coroutine at a time for the main
    thread. While the main thread waits for an interruptible run, SIGINT (Ctrl-C) cancels
    that run instead of raising (:meth:`on_sigint`); while it waits for another it is
    ignored (closing must finish); otherwise it is KeyboardInterrupt.

    Runs are numbered (``_gen``), so an interrupt meant for one never reaches the next,
    and one that comes before its coroutine began still stops it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="trustbridge-repl",
                                        daemon=True)
        self._thread.start()
        self._gen = 0  # main thread: the latest run's number
        self._waiting: str | None = None  # main thread: "cancel" or "shield" while waiting
        self._interrupted = 0  # main thread: the latest run Ctrl-C was sent to
        self._task: tuple[int, asyncio.Task[Any]] | None = None  # loop: the run going on
        self._cancel_before = 0  # loop: a run interrupted before it began

    async def _guard(self, gen: int, coro: Coroutine[Any, Any, _T]) -> _T | _Cancelled:
        if self._cancel_before == gen:
            coro.close()
            return _Cancelled()
        task = asyncio.current_task()
        assert task is not None
        self._task = (gen, task)
        try:
            return await coro
        except asyncio.CancelledError:
            return _Cancelled()
        finally:
            self._task = None

    def _interrupt(self, gen: int) -> None:
        def cancel() -> None:
            if self._task is not None and self._task[0] == gen:
                self._task[1].cancel()
            elif self._task is None:
                self._cancel_before = gen  # not begun yet (or over: then nothing follows)

        self.loop.call_soon_threadsafe(cancel)

    def on_sigint(self, _signum: int, _frame: object) -> None:
        """The repl's SIGINT handler: cancel the run being waited for (the runtime then
        interrupts the code), else KeyboardInterrupt (the line being typed is dropped)."""
        if self._waiting is None:
            raise KeyboardInterrupt
        if self._waiting == "shield":
            return
        if self._interrupted == self._gen:
            print("still stopping the running code...", file=sys.stderr, flush=True)
        self._interrupted = self._gen
        self._interrupt(self._gen)

    def run(self, coro: Coroutine[Any, Any, _T], *, interruptible: bool = True
            ) -> _T | _Cancelled:
        """Run ``coro`` to its end (Ctrl-C cancels it when ``interruptible``; the result
        is then _Cancelled, once it has unwound)."""
        self._gen += 1
        # Set before it is scheduled, so no Ctrl-C goes astray.
        self._waiting = "cancel" if interruptible else "shield"
        try:
            fut = asyncio.run_coroutine_threadsafe(self._guard(self._gen, coro), self.loop)
            while True:  # bounded waits: the main thread runs signal handlers between them
                with contextlib.suppress(concurrent.futures.TimeoutError):
                    return fut.result(timeout=0.2)
        finally:
            self._waiting = None

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)


class Repl:
    """The read-run-print loop over one runtime (exposed for tests).

    Args:
        run: runs one entry's source, returns its complete ExecResult (or _Cancelled).
        stdin / stdout / stderr: the streams (a terminal or pipes).
        json_out: print each entry's result as one JSON line instead.
    """

    def __init__(self, run: Any, stdin: TextIO, stdout: TextIO, stderr: TextIO, *,
                 json_out: bool) -> None:
        self._run = run
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self.json_out = json_out
        self.tty = _isatty(stdin) and _isatty(stdout)
        self.compile = codeop.CommandCompiler()
        # Complete-or-not as Python's own prompt decides, with top-level await (as
        # `python -m asyncio` does).
        self.compile.compiler.flags |= _FLAGS
        self.failures = 0

    def _read(self, prompt: str) -> str:
        """One line; EOFError at the end. Prompts only on a terminal (a pipe's reader
        wants the output alone)."""
        if self.tty:
            return input(prompt)
        line = self.stdin.readline()
        if not line:
            raise EOFError
        return line.rstrip("\n")

    def loop(self) -> None:
        """Read entries until EOF (Ctrl-D): each complete one runs, its result printed."""
        if self.tty:
            with contextlib.suppress(ImportError):
                import readline  # noqa: F401 - line editing and history for input()
        buffer: list[str] = []
        while True:
            try:
                line = self._read(CONTINUATION if buffer else PROMPT)
            except EOFError:
                if buffer:  # the pipe ended inside a block: run what it holds
                    self._entry("\n".join(buffer), final=True)
                if self.tty:
                    self.stdout.write("\n")
                return
            except KeyboardInterrupt:  # Ctrl-C while typing: drop the entry, as Python does
                self.stdout.write("\nKeyboardInterrupt\n")
                buffer = []
                continue
            buffer.append(line)
            try:
                if self._entry("\n".join(buffer)):
                    buffer = []
            except KeyboardInterrupt:  # Ctrl-C between reading and running, or printing
                self.stderr.write("KeyboardInterrupt\n")
                buffer = []

    def _entry(self, source: str, *, final: bool = False) -> bool:
        """Run ``source`` if it is a complete entry; False when it needs more lines."""
        try:
            if final:
                check_syntax(source, "<repl>")
            elif self.compile(source, "<repl>", "single") is None:
                return False
        except (SyntaxError, ValueError, OverflowError) as exc:
            self.failures += 1
            msg = syntax_message(exc, "<repl>") if isinstance(exc, SyntaxError) else str(exc)
            self.stderr.write(f"{msg}\n")
            self.stderr.flush()
            return True
        except BadInput as exc:
            self.failures += 1
            self.stderr.write(f"{exc}\n")
            return True
        if not source.strip():
            return True
        try:
            res = self._run(source)
        except E.TrustbridgeError as err:
            self.failures += 1
            self.stderr.write(f"error {err.code.value}: {err.message}\n")
            self.stderr.flush()
            return True
        if isinstance(res, _Cancelled):
            self.failures += 1
            self.stderr.write("KeyboardInterrupt\n")
            self.stderr.flush()
            return True
        if not res.ok:
            self.failures += 1
        if self.json_out:
            self.stdout.write(_as_json(res) + "\n")
            self.stdout.flush()
        else:
            _print_result(res, repl=True, out=self.stdout, err=self.stderr)
        return True


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _cmd_repl(args: argparse.Namespace) -> int:
    """``trustbridge repl``: 0 at EOF, else the connection's exit code. An entry that
    fails is printed and the loop goes on; it does not change the exit code."""
    worker = _LoopThread()
    previous = signal.signal(signal.SIGINT, worker.on_sigint)
    try:
        opened = worker.run(_open(args))
        if isinstance(opened, _Cancelled):
            return 130
        if isinstance(opened, int):
            return opened

        async def run(source: str) -> Any:
            # Ctrl-C cancels this: the runtime interrupts the code (and kills a worker whose
            # code does not stop; the next entry's result then says state was lost).
            return await _complete(opened.runtime,
                                   await opened.runtime.run(source, timeout_s=args.timeout))

        try:
            if _isatty(sys.stdin) and not args.json:
                print("trustbridge repl: Python with `browser`, `tab` and top-level await; "
                      "local code with your rights, not a sandbox. Ctrl-C stops an entry, "
                      "Ctrl-D ends.", file=sys.stderr)
            Repl(lambda src: worker.run(run(src)), sys.stdin, sys.stdout, sys.stderr,
                 json_out=args.json).loop()
        finally:
            worker.run(opened.close(), interruptible=False)
        return EXIT_OK
    except KeyboardInterrupt:  # outside an entry (the banner, a failed print)
        return 130
    finally:
        signal.signal(signal.SIGINT, previous)
        worker.stop()


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
        "connection: `browser` and `tab` (bridge.sdk) act as its session, top-level await "
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
    for p, run, per in ((ex, _cmd_exec, "the run"), (rp, _cmd_repl, "each entry")):
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
