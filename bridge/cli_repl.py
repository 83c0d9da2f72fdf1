"""``trustbridge repl`` (issue 19, docs/cli.md): Python entries read from a terminal or a
pipe, run one by one in one code worker bound to the command's connection
(:mod:`bridge.cli_code` has the connection, the runtime and how a result is printed).

Entries: the prompt is ``tb> ``, the continuation ``... ``; an entry is complete when
Python's own prompt would run it (:mod:`codeop`, with top-level ``await``), so a block
ends with an empty line. Variables persist between entries. Ctrl-C stops the running
entry (the runtime interrupts the code) or drops the one being typed; Ctrl-D ends.

The terminal stays in the main thread (``input()`` with line editing; SIGINT handled
there) and the connection and runtime run on an event loop in a second thread.
"""

from __future__ import annotations

import argparse
import asyncio
import codeop
import concurrent.futures
import contextlib
import signal
import sys
import threading
from collections.abc import Coroutine
from typing import Any, TextIO, TypeVar

from .cli_code import (
    COMPILE_FLAGS,
    EXIT_OK,
    BadInput,
    Streamer,
    as_json,
    check_syntax,
    open_runtime,
    print_result,
    syntax_message,
    whole,
)
from .protocol import errors as E

__all__ = ["Repl", "cmd_repl"]

PROMPT, CONTINUATION = "tb> ", "... "
_T = TypeVar("_T")


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
        run: ``run(source, on_output)`` runs one entry's source, calling ``on_output``
            with its output as it comes (None: ``--json``), and returns its ExecResult (or
            _Cancelled).
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
        self.compile.compiler.flags |= COMPILE_FLAGS
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
        streamer = None if self.json_out else Streamer(self.stdout)
        try:
            res = self._run(source, streamer)
        except E.TrustbridgeError as err:
            self.failures += 1
            from .cli import error_text  # cli imports this module

            self.stderr.write(error_text(err) + "\n")
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
            self.stdout.write(as_json(res) + "\n")
            self.stdout.flush()
        else:
            print_result(res, repl=True, out=self.stdout, err=self.stderr, streamed=streamer)
        return True


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def cmd_repl(args: argparse.Namespace) -> int:
    """``trustbridge repl``: 0 at EOF, else the connection's exit code. An entry that
    fails is printed and the loop goes on; it does not change the exit code."""
    from .code.process import keep_child_status

    keep_child_status()  # here: the runtime spawns its worker off the main thread
    worker = _LoopThread()
    previous = signal.signal(signal.SIGINT, worker.on_sigint)
    try:
        opened = worker.run(open_runtime(args))
        if isinstance(opened, _Cancelled):
            return 130
        if isinstance(opened, int):
            return opened

        async def run(source: str, on_output: Streamer | None) -> Any:
            # Ctrl-C cancels this: the runtime interrupts the code (and kills a worker whose
            # code does not stop; the next entry's result then says state was lost).
            res = await opened.runtime.run(source, timeout_s=args.timeout, on_output=on_output)
            return res if on_output is not None else whole(opened.runtime, res)

        try:
            if _isatty(sys.stdin) and not args.json:
                print("trustbridge repl: Python with `browser`, `tab` and top-level await; "
                      "local code with your rights, not a sandbox. Ctrl-C stops an entry, "
                      "Ctrl-D ends.", file=sys.stderr)
            Repl(lambda src, out: worker.run(run(src, out)), sys.stdin, sys.stdout, sys.stderr,
                 json_out=args.json).loop()
        finally:
            worker.run(opened.close(), interruptible=False)
        return EXIT_OK
    except KeyboardInterrupt:  # outside an entry (the banner, a failed print)
        return 130
    finally:
        signal.signal(signal.SIGINT, previous)
        worker.stop()
