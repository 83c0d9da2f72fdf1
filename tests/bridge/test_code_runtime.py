"""The code runtime (bridge/code/) with a fake ``call`` and no browser: state between
calls, top-level await, timeouts that reset, paged output, cancellation, typed errors
across the pipe, bad input and a worker that dies."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from trustbridge.bridge.code import CodeRuntime
from trustbridge.bridge.code import runtime as runtime_module
from trustbridge.bridge.protocol import errors as E

from .fakes import wait_until


class FakeBridge:
    """A ``call`` that records requests; ``errors`` and ``gates`` shape the answers."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.errors: dict[str, E.TrustbridgeError] = {}
        self.gates: dict[str, asyncio.Event] = {}
        self.finished: list[str] = []

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.requests.append((method, params))
        if method in self.gates:
            await self.gates[method].wait()
        self.finished.append(method)
        if method in self.errors:
            raise self.errors[method]
        return {"method": method, "params": params}


@pytest.fixture
async def fake() -> FakeBridge:
    return FakeBridge()


@pytest.fixture
async def rt(fake: FakeBridge) -> AsyncIterator[CodeRuntime]:
    runtime = CodeRuntime(fake.call, protocol_version=7, session={"label": "s", "secret": "x"})
    try:
        yield runtime
    finally:
        await runtime.close()


async def test_state_survives_between_calls(rt: CodeRuntime) -> None:
    """``x = 41`` then ``x + 1`` answers '42' from the same worker; a None value prints
    nothing."""
    first = await rt.run("x = 41\nprint('set')")
    assert first.ok and first.output == "set\n" and first.value is None
    pid = rt.worker_pid
    second = await rt.run("x + 1")
    assert second.ok and second.value == "42" and not second.reset
    assert rt.worker_pid == pid
    assert (await rt.run("None")).value is None


async def test_top_level_await_and_the_relay(rt: CodeRuntime, fake: FakeBridge) -> None:
    """``await`` at top level; ``browser`` and ``tab`` send their requests through the
    parent's call; the session reaches the worker without its secret."""
    result = await rt.run("await asyncio.sleep(0)\n"
                          "r = await tab.goto('http://127.0.0.1:1/')\n"
                          "(r['method'], browser.protocol_version, browser.session)")
    assert result.ok, result.error
    assert result.value == "('page.navigate', 7, {'label': 's'})"
    assert fake.requests[0][0] == "page.navigate"
    assert fake.requests[0][1]["url"] == "http://127.0.0.1:1/"


async def test_timeout_resets_and_keeps_what_was_printed(rt: CodeRuntime) -> None:
    """``while True: pass`` with a 1 s timeout: timed out, reset, the output printed
    before it kept; the next call runs in a fresh worker without the old variables."""
    await rt.run("y = 1")
    old = rt.worker_pid
    result = await rt.run("import os\nprint('before')\nos.write(2, b'raw\\n')\nwhile True: pass",
                          timeout_s=1)
    assert result.timed_out and result.reset and not result.ok
    assert result.output == "before\nraw\n"
    assert "state" in (result.error or "") and "lost" in (result.error or "")
    assert rt.worker_pid is None
    after = await rt.run("1 + 1")
    assert after.ok and after.value == "2"
    assert rt.worker_pid not in (None, old)
    gone = await rt.run("y")
    assert "NameError" in (gone.error or "")


async def test_timeout_is_capped(fake: FakeBridge) -> None:
    """A timeout above the maximum runs with the maximum."""
    runtime = CodeRuntime(fake.call, protocol_version=1, max_timeout_s=1)
    try:
        result = await runtime.run("while True: pass", timeout_s=500)
        assert result.timed_out and result.timeout_s == 1
    finally:
        await runtime.close()


async def test_output_beyond_the_budget_reads_through_cursors(fake: FakeBridge) -> None:
    """Output over the budget: the first page and a cursor; the pages read to the end
    give back exactly what was printed; a value's repr is cut to the budget."""
    runtime = CodeRuntime(fake.call, protocol_version=1, output_budget=1000)
    try:
        result = await runtime.run("for i in range(500): print(f'line {i:04d}')\n'v' * 5000")
        want = "".join(f"line {i:04d}\n" for i in range(500))
        assert result.total_chars == len(want) and result.cursor is not None
        assert result.value is not None and len(result.value) <= 1000
        assert "5002 characters in all" in result.value  # the repr has its quotes
        text, cursor, pages = result.output, result.cursor, 1
        while cursor is not None:
            page = runtime.more(cursor)
            assert page.offset == len(text)
            text, cursor, pages = text + page.output, page.cursor, pages + 1
        assert text == want and pages == -(-len(want) // 1000)
    finally:
        await runtime.close()


async def test_stale_and_bad_cursors_are_bad_requests(rt: CodeRuntime) -> None:
    """A cursor of a call older than the last KEPT_CALLS is a clear BadRequest, and so is
    a made-up one."""
    rt.output_budget = 10
    first = await rt.run("print('x' * 100)")
    assert first.cursor is not None
    for _ in range(runtime_module.KEPT_CALLS):
        await rt.run("pass")
    with pytest.raises(E.BadRequest, match="stale"):
        rt.more(first.cursor)
    with pytest.raises(E.BadRequest):
        rt.more("nonsense")


async def test_output_past_the_kept_limit_is_counted(fake: FakeBridge,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond MAX_KEPT_CHARS the output is counted and dropped, and the result says how
    much."""
    monkeypatch.setattr(runtime_module, "MAX_KEPT_CHARS", 3000)
    runtime = CodeRuntime(fake.call, protocol_version=1, output_budget=5000)
    try:
        result = await runtime.run("print('z' * 9999)")
        assert result.total_chars == 10000 and result.dropped_chars == 7000
        assert result.output == "z" * 3000 and result.cursor is None
    finally:
        await runtime.close()


async def test_cancel_stops_running_code(rt: CodeRuntime, tmp_path: Path) -> None:
    """A cancelled run of a loop that counts into a file: CancelledError reaches the
    caller, the loop stopped (the next call runs in the same worker, single-threaded, and
    the file holds the count the loop's variable has), and the state is kept."""
    counter = tmp_path / "count"
    code = (f"import pathlib, time\np = pathlib.Path({str(counter)!r})\ni = 0\n"
            "while True:\n    i += 1\n    p.write_text(str(i))\n    time.sleep(0.005)\n")
    task = asyncio.create_task(rt.run(code))
    await wait_until(lambda: counter.exists() and counter.read_text() not in ("", "1"))
    pid = rt.worker_pid
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    after = await rt.run("i")
    assert after.ok and rt.worker_pid == pid and not after.reset
    # The interrupt may land between `i += 1` and the write: the file is i or i - 1.
    assert int(counter.read_text()) in (int(after.value), int(after.value) - 1)
    assert (await rt.run("i")).value == after.value  # nothing counts any more


async def test_cancel_while_awaiting_cancels_the_request(rt: CodeRuntime,
                                                         fake: FakeBridge) -> None:
    """Code waiting on a bridge request is cancelled: the parent's request is cancelled
    too, and the worker goes on."""
    fake.gates["page.wait"] = asyncio.Event()
    task = asyncio.create_task(rt.run("await browser.client.call('page.wait', {})"))
    await wait_until(lambda: fake.requests != [])
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (await rt.run("3")).value == "3"
    assert "page.wait" not in fake.finished


async def test_cancel_of_code_that_ignores_it_kills_the_worker(rt: CodeRuntime,
                                                                 tmp_path: Path) -> None:
    """Code that swallows the interrupt is killed after the grace: the next call starts
    without its state."""
    mark = tmp_path / "started"
    task = asyncio.create_task(rt.run(
        f"import pathlib, time\nstarted = True\n"
        "while True:\n    try:\n"  # the mark inside the try: every interrupt is swallowed
        f"        pathlib.Path({str(mark)!r}).touch()\n        time.sleep(10)\n"
        "    except BaseException:\n        pass\n"))
    await wait_until(mark.exists)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    after = await rt.run("'started' in globals()")  # waits until the old one is stopped
    assert after.value == "False" and after.reset


async def test_typed_bridge_error_is_the_same_class(rt: CodeRuntime, fake: FakeBridge) -> None:
    """A TrustbridgeError of the parent's call is raised in the code as the same class
    with its facts; one the code lets escape names its wire code."""
    fake.errors["page.act"] = E.RefNotFound("No element has ref e9.", {"ref": "e9"})
    caught = await rt.run("from trustbridge.bridge.protocol import errors as E\n"
                          "try:\n    await tab.click('e9')\n"
                          "except E.RefNotFound as err:\n    print(type(err).__name__, err.details)")
    assert caught.ok and caught.output == "RefNotFound {'ref': 'e9'}\n"
    escaped = await rt.run("await tab.click('e9')")
    assert escaped.error_code == "REF_NOT_FOUND"
    assert "RefNotFound: REF_NOT_FOUND: No element has ref e9." in (escaped.error or "")
    assert "bridge/code" not in (escaped.error or "")  # the worker's own frames are left out


async def test_bad_input_is_an_error_and_the_worker_survives(rt: CodeRuntime) -> None:
    """A syntax error, a NUL byte and SystemExit are error results; state is kept."""
    await rt.run("kept = 'yes'")
    pid = rt.worker_pid
    for code, word in (("def f(:", "SyntaxError"), ("x = '\0'", "SyntaxError"),
                       ("raise SystemExit(2)", "SystemExit")):
        result = await rt.run(code)
        assert not result.ok and word in (result.error or ""), (code, result.error)
    assert (await rt.run("kept")).value == "'yes'" and rt.worker_pid == pid


async def test_a_worker_that_dies_is_reported_and_replaced(rt: CodeRuntime) -> None:
    """``os._exit`` during a call: an error saying the worker died, reset; the next call
    runs in a fresh one. A worker that dies between calls: the next call says reset."""
    await rt.run("a = 1")
    died = await rt.run("import os\nos._exit(3)")
    assert died.reset and "died" in (died.error or "") and "status 3" in (died.error or "")
    fresh = await rt.run("'a' in globals()")
    assert fresh.ok and fresh.value == "False" and not fresh.reset
    worker = rt._worker
    assert worker is not None
    await rt.run("import threading, os, time\n"
                 "threading.Thread(target=lambda: (time.sleep(0.05), os._exit(0))).start()")
    await wait_until(lambda: worker.proc.returncode is not None)
    later = await rt.run("1")
    assert later.ok and later.reset and later.value == "1"


async def test_a_worker_dying_with_a_request_in_flight_breaks_nothing(
        rt: CodeRuntime, fake: FakeBridge) -> None:
    """The worker dies while the parent's request for it is in flight: the call reports
    the death, the request still runs to its end (its answer is dropped), and the next
    call works."""
    fake.gates["page.slow"] = asyncio.Event()
    result = await rt.run("import os, threading\n"
                          "threading.Timer(0.3, lambda: os._exit(1)).start()\n"
                          "await browser.client.call('page.slow', {})")
    assert result.reset and "died" in (result.error or "")
    assert fake.requests[-1][0] == "page.slow" and "page.slow" not in fake.finished
    fake.gates["page.slow"].set()
    await wait_until(lambda: "page.slow" in fake.finished)
    assert (await rt.run("5")).value == "5"


async def test_a_timeout_while_awaiting_withdraws_the_request(rt: CodeRuntime,
                                                              fake: FakeBridge) -> None:
    """A timeout interrupts code waiting on a request: the parent's request is cancelled
    (BridgeClient.call withdraws it at the bridge), and the next call works."""
    fake.gates["page.slow"] = asyncio.Event()
    result = await rt.run("await browser.client.call('page.slow', {})", timeout_s=1)
    assert result.timed_out and result.reset
    assert "CancelledError" in (result.error or "")
    fake.gates["page.slow"].set()
    assert (await rt.run("5")).value == "5"
    assert "page.slow" not in fake.finished


async def test_the_protocol_fds_are_out_of_reach(rt: CodeRuntime) -> None:
    """What user code writes to fds 1 and 2, reads from fd 0 or prints from a child
    process is output (or nothing), never a corrupted channel."""
    result = await rt.run("import os, subprocess, sys\n"
                          "os.write(1, b'{\"t\": \"done\"}\\n')\n"
                          "subprocess.run([sys.executable, '-c', 'print(\"child\")'])\n"
                          "os.read(0, 10)")
    assert result.ok, result.error
    assert result.output == '{"t": "done"}\nchild\n' and result.value == "b''"
    assert (await rt.run("6")).value == "6"


async def test_closed_runtime_refuses(fake: FakeBridge) -> None:
    """After close, run is a BadRequest and the worker is gone."""
    runtime = CodeRuntime(fake.call, protocol_version=1)
    await runtime.run("1")
    pid = runtime.worker_pid
    await runtime.close()
    assert pid is not None and not _alive(pid)
    with pytest.raises(E.BadRequest):
        await runtime.run("1")


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (the runtime reaps its workers: a gone one is no zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_output_reaches_on_output_while_the_code_still_runs(
        rt: CodeRuntime, fake: FakeBridge) -> None:
    """``on_output`` gets each piece as the worker forwards it (the CLI prints progress):
    the first line arrives while the code waits on a bridge request that has not answered."""
    gate = fake.gates["page.snapshot"] = asyncio.Event()
    pieces: list[str] = []
    first = asyncio.Event()

    def on_output(text: str) -> None:
        pieces.append(text)
        if "".join(pieces) == "before\n":  # print may write the line in two pieces
            first.set()

    task = asyncio.create_task(rt.run(
        "print('before', flush=True)\nawait browser.client.call('page.snapshot', {})\n"
        "print('after')", on_output=on_output))
    await asyncio.wait_for(first.wait(), 30)
    assert not task.done()
    gate.set()
    res = await asyncio.wait_for(task, 30)
    assert res.ok, res.error
    assert "".join(pieces) == res.output == "before\nafter\n"


def _valid(text: str | None) -> bool:
    """Whether ``text`` is valid Unicode (UTF-8 can encode it: no lone surrogate)."""
    try:
        (text or "").encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


async def test_lone_surrogates_leave_the_runtime_escaped(rt: CodeRuntime) -> None:
    """A lone surrogate in an error, a value's repr or output is escaped (as ``print``
    writes it): every string of the result is valid Unicode (an MCP server's JSON writer
    died on one)."""
    err = await rt.run("raise ValueError('\\ud800')")
    assert "ValueError" in (err.error or "") and "\\ud800" in (err.error or "")
    val = await rt.run("class R:\n    def __repr__(self): return 'bad\\ud800'\nR()")
    assert val.ok and val.value == "bad\\ud800"
    out = await rt.run("print('x\\ud800')\nimport sys\nsys.exit('e\\ud800')")
    assert out.exit_message == "e\\ud800"
    for res in (err, val, out):
        assert all(_valid(getattr(res, f)) for f in ("output", "value", "error",
                                                      "exit_message")), res


async def test_reset_before_a_call_is_not_a_death_during_it(rt: CodeRuntime) -> None:
    """A worker that died between calls: the next call says it ran in a fresh worker
    (``reset_before``) and, when it raises (its variables are gone), it did not die."""
    await rt.run("a = 1")
    worker = rt._worker
    assert worker is not None
    await rt.run("import threading, os\nthreading.Timer(0.3, lambda: os._exit(1)).start()")
    await wait_until(lambda: worker.proc.returncode is not None)
    later = await rt.run("a")
    assert later.reset_before and later.reset and not later.died
    assert "NameError" in (later.error or "")
    died = await rt.run("import os\nos._exit(4)")
    assert died.died and not died.reset_before


def _gone(pid: int) -> bool:
    """``pid`` no longer runs (gone, or a zombie nobody reaped yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


async def test_children_of_code_die_with_a_sigkilled_parent(tmp_path: Path) -> None:
    """The process that runs the runtime is SIGKILLed while code's child process runs:
    the worker sees its channel end and kills its process group, the child included."""
    script = tmp_path / "parent.py"
    script.write_text(
        "import asyncio, sys\nfrom trustbridge.bridge.code import CodeRuntime\n"
        "async def call(m, p): return {}\n"
        "async def main():\n"
        "    rt = CodeRuntime(call, protocol_version=1)\n"
        "    r = await rt.run(\"import subprocess\\nsubprocess.Popen(['sleep', '888']).pid\")\n"
        "    print(rt.worker_pid, r.value, flush=True)\n"
        "    await asyncio.sleep(600)\n"
        "asyncio.run(main())\n")
    root = Path(__file__).resolve().parents[2]
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(script), stdout=asyncio.subprocess.PIPE, cwd=root,
        env=dict(os.environ, PYTHONPATH=str(root)))
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        worker_pid, child_pid = (int(x) for x in line.split())
        assert not _gone(child_pid)
    finally:
        proc.kill()
        await proc.wait()
    await wait_until(lambda: _gone(child_pid) and _gone(worker_pid), timeout_s=30)


async def test_output_printed_between_calls_is_shown_apart(rt: CodeRuntime,
                                                           tmp_path: Path) -> None:
    """A thread prints after its call returned: the next result shows it as late output,
    never in that call's own output; nothing is lost between calls."""
    mark = tmp_path / "printed"
    await rt.run("import threading, pathlib\n"
                 "def later():\n    print('late line')\n"
                 f"    pathlib.Path({str(mark)!r}).touch()\n"
                 "threading.Timer(0.2, later).start()")
    await wait_until(mark.exists)
    res = await rt.run("print('own')")
    assert res.output == "own\n" and res.late_output == "late line\n"
    assert res.late_chars == len("late line\n")
    assert (await rt.run("1")).late_output == ""


async def test_a_call_that_breaks_fds_1_and_2_breaks_only_itself(rt: CodeRuntime) -> None:
    """``os.close(1)``, ``os.dup2(devnull, 1)``, a replaced ``sys.stdout``: the next call
    prints as usual (fds and streams are put back on the pipe at each call's start)."""
    for breaker in ("import os\nos.close(1)\nos.close(2)",
                    "import os\nn = os.open(os.devnull, os.O_WRONLY)\nos.dup2(n, 1)\nos.dup2(n, 2)",
                    "import sys, io\nsys.stdout = io.StringIO()\nsys.stderr = None"):
        broke = await rt.run(breaker)
        assert broke.ok, broke.error
        res = await rt.run("import os, sys\nprint('p')\nos.write(1, b'w\\n')\n"
                           "print('e', file=sys.stderr)")
        assert res.ok and res.output == "p\nw\ne\n", (breaker, res)


async def test_output_streams_have_a_binary_buffer(rt: CodeRuntime) -> None:
    """``sys.stdout.buffer`` takes bytes (an invalid one arrives as U+FFFD);
    ``fileno()`` is 1 and 2, ``isatty()`` False, ``encoding`` utf-8."""
    res = await rt.run("import sys\nsys.stdout.buffer.write(b'raw \\xff\\n')\n"
                       "sys.stderr.buffer.write(memoryview(b'err\\n'))\nsys.stdout.buffer.flush()\n"
                       "(sys.stdout.fileno(), sys.stderr.fileno(), sys.stdout.isatty(), "
                       "sys.stdout.encoding, sys.stdout.buffer.fileno())")
    assert res.ok, res.error
    assert res.output == "raw \ufffd\nerr\n" and res.value == "(1, 2, False, 'utf-8', 1)"


async def test_system_exit_carries_its_status(rt: CodeRuntime) -> None:
    """SystemExit's status as a program would exit with it; the worker lives on."""
    for code, status, message in (("sys.exit()", 0, None), ("sys.exit(3)", 3, None),
                                  ("sys.exit('bye')", 1, "bye"), ("1", None, None)):
        res = await rt.run(f"import sys\n{code}")
        assert (res.exit_status, res.exit_message) == (status, message), code


def test_an_inherited_ignored_sigchld_loses_no_status(tmp_path: Path) -> None:
    """Started with SIGCHLD ignored (inherited from a launcher): a worker's death still
    reports its own status, and asyncio warns of no unknown child (the kernel reaped it
    before)."""
    script = tmp_path / "ignored.py"
    script.write_text(
        "import asyncio, signal\nsignal.signal(signal.SIGCHLD, signal.SIG_IGN)\n"
        "from trustbridge.bridge.code import CodeRuntime\n"
        "async def call(m, p): return {}\n"
        "async def main():\n"
        "    rt = CodeRuntime(call, protocol_version=1)\n"
        "    print((await rt.run('import os\\nos._exit(3)')).error.splitlines()[0])\n"
        "    print((await rt.run('import subprocess\\n"
        "subprocess.run([\"sh\", \"-c\", \"exit 5\"]).returncode')).value)\n"
        "    await rt.close()\n"
        "asyncio.run(main())\n")
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=root, env=dict(os.environ, PYTHONPATH=str(root)), timeout=120,
                          check=False)
    assert "status 3" in proc.stdout and proc.stdout.splitlines()[-1] == "5", proc
    assert "Unknown child process" not in proc.stderr, proc.stderr
