"""The persistent code runtime: :class:`CodeRuntime` runs Python code in a worker process
(:mod:`bridge.code.worker`) that keeps its variables between calls, and answers the
worker's bridge requests with the parent's own ``call``.

One runtime per session (an MCP connection, a ``trustbridge repl``/``exec`` run); the
worker starts at the first :meth:`CodeRuntime.run`. Each call has a timeout (default
30 s, at most ``max_timeout_s``): on timeout the worker is stopped (SIGINT, then SIGKILL
after ``KILL_GRACE_S``) and its state is lost (``reset``); the next call starts a fresh
worker. Output (stdout, stderr, fds 1 and 2) is kept up to ``MAX_KEPT_CHARS`` per call;
the result carries the first ``output_budget`` characters and a cursor for the rest
(:meth:`CodeRuntime.more`), for the last ``KEPT_CALLS`` calls.

It is local trusted code, NOT a sandbox: the code can do anything this user can.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from ..protocol import errors as E
from .output import KEPT_CALLS, LATE_KEPT_CHARS, MAX_KEPT_CHARS, OutputStore, clean, cut
from .process import Worker, death_text, spawn
from .result import ExecResult

Call = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""``async call(method, params) -> result``: a ``BridgeClient.call`` (raises its errors)."""
CurrentTab = Callable[[], Awaitable[tuple[str | None, int | None]]]
"""``async () -> (device, tabId)``: the session's current tab, bound to ``tab`` per call."""

KILL_GRACE_S = 0.5
"""After SIGINT, how long a timed-out call's code may take to stop before SIGKILL, s (the
traceback it leaves says where it was)."""
CANCEL_GRACE_S = 1.0
"""After SIGINT, how long a cancelled call may take to stop before the worker is killed, s."""
START_TIMEOUT_S = 30.0
"""How long a new worker may take to say ready, s (imports on a loaded machine)."""

__all__ = ["KEPT_CALLS", "MAX_KEPT_CHARS", "CodeRuntime", "ExecResult"]


def _clean(text: Any) -> str | None:
    return None if text is None else clean(str(text))


class CodeRuntime:
    """Python code in a persistent worker, acting as the caller's bridge session.

    Args:
        call: ``async call(method, params)`` that answers the worker's bridge requests
            (``BridgeClient.call``); its TrustbridgeErrors reach the code as the same
            classes.
        device: the device ``browser`` and ``tab`` address (None: the only one).
        protocol_version: the bridge's protocol version (``browser.protocol_version``).
        session: the ``session.open`` answer WITHOUT its secret (``browser.session``).
        default_timeout_s: a call's timeout when none is given, s.
        max_timeout_s: the largest timeout a call may ask for, s (larger is capped).
        output_budget: characters of output (and of the value's repr) per result page.
        current_tab: ``async () -> (device, tabId)``, asked before each call: ``tab`` in
            the code is bound to that tab (unless the code rebound ``tab``); None: ``tab``
            is the session's current tab at each request (``Tab(client, device, None)``).
    """

    def __init__(self, call: Call, *, device: str | None = None, protocol_version: int,
                 session: dict[str, Any] | None = None, default_timeout_s: float = 30.0,
                 max_timeout_s: float = 300.0, output_budget: int = 20_000,
                 current_tab: CurrentTab | None = None) -> None:
        self._call = call
        self.device = device
        self.protocol_version = protocol_version
        self.session = {k: v for k, v in (session or {}).items() if k != "secret"} \
            if session is not None else None
        self.default_timeout_s = default_timeout_s
        self.max_timeout_s = max_timeout_s
        self.output_budget = max(1, output_budget)
        self.current_tab = current_tab
        self._worker: Worker | None = None
        self._lost = False  # the last worker died or was killed since the last call
        self._lock = asyncio.Lock()
        self._stopping: asyncio.Task[None] | None = None  # a cancelled call being stopped
        self._outputs: OrderedDict[int, OutputStore] = OrderedDict()
        self._late = OutputStore(LATE_KEPT_CHARS)  # printed between calls, not yet shown
        self._runs = 0
        self._closed = False
        self._pid_box: list[int | None] = [None]
        """``[pid]`` of the current worker, shared with finalizers that must kill it
        without a loop (bridge/mcp/code.py)."""

    @property
    def worker_pid(self) -> int | None:
        """The pid of the current worker (None before the first call or after a reset);
        it leads its own process group."""
        return self._pid_box[0]

    @worker_pid.setter
    def worker_pid(self, pid: int | None) -> None:
        self._pid_box[0] = pid

    # ------------------------------------------------------------------ public API

    async def run(self, code: str, timeout_s: float | None = None, *,
                  on_output: Callable[[str], None] | None = None) -> ExecResult:
        """Run ``code`` in the worker (started now if there is none) and wait for it.

        Args:
            code: Python source; top-level ``await`` allowed; the last expression's value
                is the result's ``value``.
            timeout_s: s; default ``default_timeout_s``; capped at ``max_timeout_s``.
            on_output: called with each piece of output as the worker forwards it (all of
                it, kept or not), on this event loop; its exceptions are ignored.

        Returns:
            The result; an exception in the code, a timeout or a dead worker is a result
            with ``error`` (never raised).

        Raises:
            asyncio.CancelledError: the caller cancelled; the code was interrupted first
                (the worker is killed if it does not stop within ``CANCEL_GRACE_S``).
            BadRequest: the runtime is closed, or ``timeout_s`` is not positive.
            InternalError: a worker could not be started.
        """
        if self._closed:
            raise E.BadRequest("This code runtime is closed.")
        timeout = self.default_timeout_s if timeout_s is None else float(timeout_s)
        if not timeout > 0:
            raise E.BadRequest(f"timeout must be a positive number of seconds, not {timeout_s!r}.")
        timeout = min(timeout, self.max_timeout_s)
        async with self._lock:
            return await self._run(code, timeout, on_output)

    def more(self, cursor: str) -> ExecResult:
        """The next page of an earlier call's output.

        Raises:
            BadRequest: the cursor is malformed, or its call's output is no longer kept
                (only the last KEPT_CALLS calls' are).
        """
        try:
            run_s, offset_s = cursor.split(".", 1)
            run, offset = int(run_s.removeprefix("c")), int(offset_s)
        except (ValueError, AttributeError):
            raise E.BadRequest(f"{cursor!r} is not a cursor of this runtime; pass the "
                               "cursor an earlier result gave.") from None
        store = self._outputs.get(run)
        if store is None or not cursor.startswith("c"):
            raise E.BadRequest(
                f"Cursor {cursor!r} is stale: only the output of the last {KEPT_CALLS} calls "
                "is kept (or the runtime was closed). Run the code again to see its output.",
                {"cursor": cursor})
        if not 0 <= offset <= len(store.text):
            raise E.BadRequest(f"Cursor {cursor!r} points past the end of that output.",
                               {"cursor": cursor})
        page, nxt = self._page(run, store, offset)
        return ExecResult(output=page, cursor=nxt, total_chars=store.total,
                          offset=offset, dropped_chars=store.dropped)

    async def reset(self) -> None:
        """Kill the worker (state is lost); the next :meth:`run` starts a fresh one."""
        worker, self._worker = self._worker, None
        self.worker_pid = None
        if worker is not None:
            await worker.kill()

    async def close(self) -> None:
        """Kill the worker and forget every output; later calls are refused."""
        self._closed = True
        if self._stopping is not None:
            self._stopping.cancel()
        worker = self._worker
        await self.reset()
        if worker is not None:
            for task in list(worker.calls.values()):
                task.cancel()
        self._outputs.clear()

    # ------------------------------------------------------------------ the run

    async def _run(self, code: str, timeout: float,
                   on_output: Callable[[str], None] | None) -> ExecResult:
        started = time.monotonic()
        if self._stopping is not None:  # the cancelled call before this one, still stopping
            await asyncio.shield(self._stopping)
            self._stopping = None
        reset = False
        tab = None
        if self.current_tab is not None:
            device, tab_id = await self.current_tab()
            tab = {"device": device, "tabId": tab_id}
        if self._worker is not None and not self._worker.alive:
            await self.reset()
            self._lost = True
        if self._lost:
            reset, self._lost = True, False
        worker = self._worker or await self._start()
        self._runs += 1
        run_id = self._runs
        store = OutputStore(MAX_KEPT_CHARS)
        store.listener = on_output
        self._keep(run_id, store)
        worker.out = store
        done_fut = worker.done = asyncio.get_running_loop().create_future()
        worker.run_id = run_id
        result = ExecResult(reset=reset, reset_before=reset, timeout_s=timeout)
        cancelled = False
        try:
            await worker.send({"t": "run", "id": run_id, "code": code, "tab": tab})
            done = await asyncio.wait_for(asyncio.shield(worker.done), timeout)
        except TimeoutError:
            worker.interrupt()
            with contextlib.suppress(TimeoutError):
                done = await asyncio.wait_for(asyncio.shield(worker.done), KILL_GRACE_S)
                result.error = _clean(done.get("error"))
            await self._lose(worker)
            result.timed_out, result.reset = True, True
            where = f"\n{result.error}" if result.error else ""
            result.error = (f"TimeoutError: the code ran longer than {timeout:g} s and was "
                            "stopped; the worker was reset and its state (variables, "
                            "imports) is lost. The next call starts fresh." + where)
        except asyncio.CancelledError:
            # Stopped in a task of its own: a caller's cancel scope (anyio: MCP) cancels
            # every await here again, and the next run waits for it (the lock is free).
            cancelled = True
            worker.interrupt()
            self._stopping = asyncio.create_task(self._settle(worker, done_fut))
            raise
        else:
            if done.get("t") == "died":
                await self._lose(worker)
                result.reset = result.died = True
                result.error = done["error"]
            else:
                result.error = _clean(done.get("error"))
                result.error_code = done.get("errorCode")
                if done.get("value") is not None:
                    result.value = cut(clean(str(done["value"])), self.output_budget,
                                       done.get("valueChars", len(done["value"])))
                if done.get("systemExit"):
                    status = done.get("exitStatus")
                    result.exit_status = status if isinstance(status, int) else 1
                    result.exit_message = _clean(done.get("exitMessage"))
                    result.error = (result.error or "") + \
                        "(SystemExit does not end the worker; its state is kept.)"
        finally:
            if not cancelled:
                worker.out = None
                worker.done = None
                store.listener = None
        result.duration_ms = (time.monotonic() - started) * 1000
        page, nxt = self._page(run_id, store, 0)
        result.output, result.cursor = page, nxt
        result.total_chars, result.dropped_chars = store.total, store.dropped
        # Printed between calls, received before this call's end (the worker tags it).
        late, self._late = self._late, OutputStore(LATE_KEPT_CHARS)
        result.late_output, result.late_chars = late.text, late.total
        return result

    async def _settle(self, worker: Worker, done: asyncio.Future[dict[str, Any]]) -> None:
        """After a cancel: the interrupted code stops within CANCEL_GRACE_S (the worker
        and its state live on), else the worker is killed (the next call says reset)."""
        try:
            await asyncio.wait({done}, timeout=CANCEL_GRACE_S)
            if not done.done() or done.result().get("t") == "died":
                await self._lose(worker)
                self._lost = True
        finally:
            if worker.done is done:
                worker.out = None
                worker.done = None

    async def _lose(self, worker: Worker) -> None:
        """The worker is gone (killed here, or dead): the next call starts fresh."""
        if self._worker is worker:
            self._worker = None
            self.worker_pid = None
        await worker.kill()

    def _keep(self, run_id: int, store: OutputStore) -> None:
        self._outputs[run_id] = store
        while len(self._outputs) > KEPT_CALLS:
            self._outputs.popitem(last=False)

    def _page(self, run_id: int, store: OutputStore, offset: int) -> tuple[str, str | None]:
        end = offset + self.output_budget
        page = store.text[offset:end]
        return page, (f"c{run_id}.{end}" if end < len(store.text) else None)

    # ------------------------------------------------------------------ the worker

    async def _start(self) -> Worker:
        worker = await spawn()
        worker.reader = asyncio.create_task(self._read(worker))
        await worker.send({"t": "hello", "protocolVersion": self.protocol_version,
                           "session": self.session, "device": self.device})
        try:
            ready = await asyncio.wait_for(asyncio.shield(worker.ready), START_TIMEOUT_S)
        except (TimeoutError, E.InternalError) as exc:
            await worker.kill()
            raise E.InternalError(f"The code worker did not start: {exc}") from None
        except BaseException:
            await worker.kill()
            raise
        self._worker = worker
        self.worker_pid = ready.get("pid")
        return worker

    async def _read(self, worker: Worker) -> None:
        """Dispatch the worker's messages until its stdout ends; then settle what waits."""
        assert worker.proc.stdout is not None
        try:
            while line := await worker.proc.stdout.readline():
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue  # the channel is the worker's own fd: never user text
                kind = msg.get("t")
                if kind == "out":
                    text = clean(str(msg.get("s", "")))
                    if msg.get("late") or worker.out is None:
                        self._late.add(text)
                    else:
                        worker.out.add(text)
                elif kind == "call":
                    task = asyncio.create_task(self._serve_call(worker, msg))
                    worker.calls[msg.get("id")] = task
                elif kind == "cancel":
                    task = worker.calls.get(msg.get("id"))
                    if task is not None:
                        task.cancel()
                elif kind == "done" and worker.done is not None and not worker.done.done() \
                        and msg.get("id") == worker.run_id:
                    worker.done.set_result(msg)
                elif kind == "ready" and not worker.ready.done():
                    worker.ready.set_result(msg)
        except (ValueError, OSError) as exc:  # a line over LINE_LIMIT, a broken pipe
            err = f"{type(exc).__name__}: {exc}"
        else:
            err = None
        try:  # the channel ends when the process does (or closed it: then it is killed)
            rc: int | None = await asyncio.wait_for(worker.proc.wait(), 2)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                worker.proc.kill()
            rc = await worker.proc.wait()
        why = await death_text(worker, rc, err)
        if not worker.ready.done():
            worker.ready.set_exception(E.InternalError(why))
            worker.ready.exception()  # retrieved: no "never retrieved" warning
        if worker.done is not None and not worker.done.done():
            worker.done.set_result({"t": "died", "error": why})

    async def _serve_call(self, worker: Worker, msg: dict[str, Any]) -> None:
        """Make one bridge request for the worker and send the answer (dropped when the
        worker is gone; the request itself always runs to its end)."""
        req_id = msg.get("id")
        reply: dict[str, Any] = {"t": "reply", "id": req_id}
        try:
            params = msg.get("params")
            reply["result"] = await self._call(str(msg.get("method")),
                                               params if isinstance(params, dict) else {})
        except E.TrustbridgeError as err:
            reply["error"] = err.to_payload().model_dump(mode="json")
        except asyncio.CancelledError:
            reply["error"] = E.Cancelled("The code stopped waiting for this request.") \
                .to_payload().model_dump(mode="json")
        except Exception as exc:  # noqa: BLE001 - the worker must get an answer
            reply["error"] = E.InternalError(f"{type(exc).__name__}: {exc}") \
                .to_payload().model_dump(mode="json")
        finally:
            worker.calls.pop(req_id, None)  # type: ignore[arg-type]
        if worker.alive:
            await worker.send(reply)
