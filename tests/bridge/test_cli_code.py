"""``trustbridge exec`` and ``trustbridge repl`` (bridge/cli_code.py) against a real
BridgeServer with a fake extension and driver (tests/bridge/fakes.py), with the real code
worker (bridge/code/): what the code printed and returned, the exit codes, the requests
the code's ``tab`` made through the CLI's connection, bad input refused before
connecting, the repl fed from a pipe (variables kept, blocks, Ctrl-C, ``--session``).
No browser."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from trustbridge.bridge import cli, cli_code, cli_repl
from trustbridge.bridge.server import BridgeServer

from .fakes import FakeDriver, FakeExtension, cli_bridge, wait_until

pytestmark = pytest.mark.timeout(120)

D = "dev1"
STEP_S = 60.0
"""Upper bound, seconds, on one command (a worker process starts in each)."""
URL = "http://127.0.0.1/"
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Bridge:
    server: BridgeServer
    ext: FakeExtension
    drv: FakeDriver

    async def exec(self, *argv: str, stdin: str = "") -> int:
        """Run ``trustbridge exec ARGV --bridge URL`` in this loop; its exit code."""
        args = cli.build_parser().parse_args(["exec", *argv, "--bridge", self.server.url])
        return await asyncio.wait_for(cli_code.run_exec(args, io.StringIO(stdin)), STEP_S)

    async def repl_process(self, *argv: str) -> asyncio.subprocess.Process:
        """``trustbridge repl ARGV --bridge URL`` as a process with piped stdio, in its
        own process group (as a terminal's foreground job: Ctrl-C reaches the group)."""
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", "trustbridge", "repl", *argv, "--bridge", self.server.url,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, cwd=ROOT, start_new_session=True)

    async def repl(self, *argv: str, entries: str) -> tuple[int, str, str]:
        """Feed ``entries`` to a repl through a pipe; ``(exit code, stdout, stderr)``."""
        proc = await self.repl_process(*argv)
        try:
            out, err = await asyncio.wait_for(proc.communicate(entries.encode()), STEP_S)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        assert proc.returncode is not None
        return proc.returncode, out.decode(), err.decode()


@pytest.fixture
async def bridge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Bridge]:
    """A real bridge (token from a private state directory, as the CLI reads it) with a
    fake extension and driver for ``dev1``."""
    async with cli_bridge(tmp_path, monkeypatch, D, STEP_S) as (server, ext, drv):
        yield Bridge(server, ext, drv)


# -- exec -------------------------------------------------------------------------------


async def test_exec_prints_the_output_then_the_last_value(
        bridge: Bridge, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "s.py"
    script.write_text("print('hi')\nx = 41\nx + 1\n")
    assert await bridge.exec(str(script)) == cli.EXIT_OK
    out = capsys.readouterr()
    assert out.out == "hi\n42\n" and out.err == ""


async def test_exec_stdin_code_acts_through_the_commands_connection(
        bridge: Bridge, capsys: pytest.CaptureFixture[str]) -> None:
    code = f"r = await tab.goto({URL!r})\nprint(r['url'], r['tabId'])\n"
    assert await bridge.exec("-", stdin=code) == cli.EXIT_OK
    assert capsys.readouterr().out == f"{URL} 1\n"
    [nav] = [r for r in bridge.ext.requests if r.method == "page.navigate"]
    assert nav.params["url"] == URL


async def test_exec_an_exception_is_its_traceback_and_exit_1(
        bridge: Bridge, capsys: pytest.CaptureFixture[str]) -> None:
    assert await bridge.exec("-", stdin="print('before')\n1 / 0\n") == cli.EXIT_ERROR
    out = capsys.readouterr()
    assert out.out == "before\n"
    assert "Traceback" in out.err and "ZeroDivisionError: division by zero" in out.err
    # Only the code's own frames: none of the CLI's or the worker's.
    assert "cli_code" not in out.err and "worker.py" not in out.err


async def test_exec_past_its_timeout_stops_and_says_so(
        bridge: Bridge, capsys: pytest.CaptureFixture[str]) -> None:
    code = "print('started', flush=True)\nwhile True:\n    pass\n"
    assert await bridge.exec("-", "--timeout", "1", stdin=code) == cli.EXIT_ERROR
    out = capsys.readouterr()
    assert out.out == "started\n"
    assert "ran longer than 1 s" in out.err and "reset" in out.err


async def test_exec_json_is_the_exec_result(
        bridge: Bridge, capsys: pytest.CaptureFixture[str]) -> None:
    assert await bridge.exec("-", "--json", stdin="print('a')\n6 * 7\n") == cli.EXIT_OK
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is True
    res = doc["result"]
    assert res["output"] == "a\n" and res["value"] == "42" and res["error"] is None
    assert res["timed_out"] is False and res["cursor"] is None

    assert await bridge.exec("-", "--json", stdin="raise KeyError('k')\n") == cli.EXIT_ERROR
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is False and "KeyError: 'k'" in doc["result"]["error"]


async def test_exec_prints_all_of_a_long_output(
        bridge: Bridge, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Pages of 7,000 characters (the CLI's are 1,000,000): every page is read.
    monkeypatch.setattr(cli_code, "PAGE_CHARS", 7_000)
    code = "for i in range(2000):\n    print(f'{i:05d}' + 'x' * 45)\n"
    assert await bridge.exec("-", stdin=code) == cli.EXIT_OK
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"{i:05d}" + "x" * 45 for i in range(2000)]


@pytest.mark.parametrize(("argv", "stdin", "says"), [
    (["/nonexistent/s.py"], "", "error: cannot read /nonexistent/s.py: No such file"),
    (["-"], "x = (\n", "error: <stdin>, line 1: SyntaxError:"),
    (["-"], "print('a')\n  print('b')\n", "error: <stdin>, line 2: IndentationError:"),
])
async def test_exec_bad_input_is_refused_before_connecting(
        argv: list[str], stdin: str, says: str, capsys: pytest.CaptureFixture[str]) -> None:
    # A bridge URL nothing listens on: connecting would be exit 3, so 2 means it never tried.
    args = cli.build_parser().parse_args(["exec", *argv, "--bridge", "ws://127.0.0.1:9"])
    assert await cli_code.run_exec(args, io.StringIO(stdin)) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith(says) and "Traceback" not in err


async def test_exec_without_a_bridge_is_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    args = cli.build_parser().parse_args(["exec", "-", "--bridge", "ws://127.0.0.1:9"])
    assert await cli_code.run_exec(args, io.StringIO("1\n")) == cli.EXIT_NO_BRIDGE
    assert capsys.readouterr().err.startswith("error: Cannot reach the bridge")


def test_a_bad_timeout_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    for value in ("0", "-1", "soon", "nan", "inf"):
        with pytest.raises(SystemExit) as info:
            cli.build_parser().parse_args(["exec", "-", "--timeout", value])
        assert info.value.code == cli.EXIT_USAGE
    assert "is not a timeout" in capsys.readouterr().err


# -- repl -------------------------------------------------------------------------------


async def test_repl_from_a_pipe_keeps_variables_runs_blocks_and_await(bridge: Bridge) -> None:
    entries = "\n".join([
        "x = 41",
        "x + 1",
        "for i in range(2):",
        "    print('line', i)",
        "",
        "y = (",   # a syntax error: printed, the repl goes on
        ")) + 1",
        "r = await tab.goto(" + repr(URL) + ")",
        "r['url']",
        "None",    # not printed, as Python's prompt does
        "x",
    ]) + "\n"
    rc, out, err = await bridge.repl(entries=entries)
    assert rc == cli.EXIT_OK, err
    assert out.splitlines() == ["42", "line 0", "line 1", repr(URL), "41"]
    assert "SyntaxError" in err and "tb> " not in out  # no prompts on a pipe
    assert [r.params["url"] for r in bridge.ext.requests if r.method == "page.navigate"] == [URL]


async def test_repl_ctrl_c_stops_the_running_entry_and_the_repl_goes_on(
        bridge: Bridge, tmp_path: Path) -> None:
    marks = [tmp_path / "blocking", tmp_path / "awaiting"]
    proc = await bridge.repl_process()
    assert proc.stdin is not None
    try:
        proc.stdin.write(b"x = 41\nimport time\n")
        # Python code busy in a blocking call, then code waiting on an await: both stop.
        for mark, wait in zip(marks, ("time.sleep(120)", "await asyncio.sleep(120)"),
                              strict=True):
            proc.stdin.write(f"open({str(mark)!r}, 'w').close(); {wait}\n".encode())
            await proc.stdin.drain()
            await wait_until(mark.exists, STEP_S)
            os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole group
        proc.stdin.write(b"print('after', x + 1)\n")
        proc.stdin.close()  # Ctrl-D
        out, err = await asyncio.wait_for(proc.communicate(), STEP_S)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == cli.EXIT_OK, err
    assert out.decode().splitlines() == ["after 42"]  # the variables survived both
    assert err.decode().count("KeyboardInterrupt") >= 2


async def test_repl_code_that_will_not_stop_loses_its_worker_and_the_next_entry_says_so(
        bridge: Bridge, tmp_path: Path) -> None:
    mark = tmp_path / "stubborn"
    # The mark is made inside the try: a Ctrl-C landing between the mark and the try
    # would stop the entry (the worker kept), which is not what this test is about.
    stubborn = ("while True:\n    try:\n"
                f"        open({str(mark)!r}, 'w').close()\n        time.sleep(120)\n"
                "    except KeyboardInterrupt:\n        pass\n\n")
    proc = await bridge.repl_process()
    assert proc.stdin is not None
    try:
        proc.stdin.write(b"x = 41\nimport time\n" + stubborn.encode())
        await proc.stdin.drain()
        await wait_until(mark.exists, STEP_S)
        os.killpg(proc.pid, signal.SIGINT)
        proc.stdin.write(b"'x' in globals()\n")
        proc.stdin.close()
        out, err = await asyncio.wait_for(proc.communicate(), STEP_S)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == cli.EXIT_OK, err
    assert "KeyboardInterrupt" in err.decode()
    assert "this ran in a fresh worker" in err.decode()  # the next entry's, and true:
    assert out.decode().splitlines() == ["False"]  # x is gone


async def test_exec_ctrl_c_stops_the_code_and_its_worker(bridge: Bridge, tmp_path: Path) -> None:
    mark = tmp_path / "pid"
    code = (f"import os, time\nopen({str(mark)!r}, 'w').write(str(os.getpid()))\n"
            "time.sleep(120)\n")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "trustbridge", "exec", "-", "--bridge", bridge.server.url,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, cwd=ROOT, start_new_session=True)
    assert proc.stdin is not None
    try:
        proc.stdin.write(code.encode())
        proc.stdin.close()
        await wait_until(lambda: mark.exists() and mark.read_text() != "", STEP_S)
        os.killpg(proc.pid, signal.SIGINT)
        _out, err = await asyncio.wait_for(proc.communicate(), STEP_S)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 130 and "KeyboardInterrupt" in err.decode()
    assert "Traceback" not in err.decode()

    def gone(pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False

    await wait_until(lambda: gone(int(mark.read_text())), STEP_S)  # no worker left behind


async def test_repl_session_keeps_its_tab_across_runs(bridge: Bridge) -> None:
    rc, out, err = await bridge.repl("--session", "work",
                                     entries=f"await tab.goto({URL!r})\n")
    assert rc == cli.EXIT_OK, err
    book = bridge.server.executor.sessions
    first = book.find("work")
    assert first is not None and first.peer is None and first.tabs == {(D, 1)}
    rc, out, err = await bridge.repl("--session", "work",
                                     entries="browser.client.session['resumed']\n"
                                     "(await tab.snapshot()).splitlines()[0]\n")
    assert rc == cli.EXIT_OK, err
    assert out.splitlines() == ["True", repr('- button "Save" [ref=e7]')]
    assert book.find("work") is first
    [snap] = [r for r in bridge.ext.requests if r.method == "page.snapshot"]
    assert snap.params.get("tabId") == 1  # the session's current tab, resumed


async def test_repl_on_a_terminal_prompts_and_survives_ctrl_c(
        bridge: Bridge, tmp_path: Path) -> None:
    """A pseudo-terminal on stdin/stdout: the prompts, a block's continuation, Ctrl-C
    while an entry runs and while one is typed, Ctrl-D."""
    import pty

    master, slave = pty.openpty()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "trustbridge", "repl", "--bridge", bridge.server.url,
        stdin=slave, stdout=slave, stderr=slave, cwd=ROOT, start_new_session=True)
    os.close(slave)
    seen = bytearray()
    loop = asyncio.get_running_loop()

    def on_read() -> None:
        try:
            seen.extend(os.read(master, 4096))
        except OSError:  # the terminal's last writer left
            loop.remove_reader(master)

    loop.add_reader(master, on_read)

    async def expect(text: str) -> None:
        """Wait for ``text`` on the terminal and consume up to its end."""
        await wait_until(lambda: text.encode() in seen, STEP_S)
        del seen[:seen.index(text.encode()) + len(text)]

    def typed(line: str) -> None:
        os.write(master, line.encode() + b"\r")

    try:
        await expect("not a sandbox")
        await expect("tb> ")
        typed("x = 41")
        await expect("tb> ")
        typed("for i in range(2):")
        await expect("... ")
        typed("    print('row', i)")
        await expect("... ")
        typed("")
        await expect("row 1")
        await expect("tb> ")
        mark = tmp_path / "running"
        typed(f"import time; open({str(mark)!r}, 'w').close(); time.sleep(120)")
        await wait_until(mark.exists, STEP_S)
        os.killpg(proc.pid, signal.SIGINT)  # as the terminal's Ctrl-C: to its process group
        await expect("KeyboardInterrupt")
        await expect("tb> ")
        typed("half = (")
        await expect("... ")
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C while typing: the entry is dropped
        await expect("KeyboardInterrupt")
        await expect("tb> ")
        typed("x + 1")
        await expect("42")
        await expect("tb> ")
        os.write(master, b"\x04")  # Ctrl-D
        assert await asyncio.wait_for(proc.wait(), STEP_S) == cli.EXIT_OK
    finally:
        loop.remove_reader(master)
        os.close(master)
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def test_repl_decides_completeness_as_python_does() -> None:
    """The entry boundaries, without a worker: what each complete entry sends."""
    sent: list[str] = []

    def run(source: str, on_output: object = None) -> object:
        sent.append(source)
        return cli_repl._Cancelled()

    lines = "if True:\n    a = 1\n\nb = 2\ndef f():\n    return 1\n\n\nawait f_async()\n"
    out, err = io.StringIO(), io.StringIO()
    cli_repl.Repl(run, io.StringIO(lines), out, err, json_out=False).loop()
    assert sent == ["if True:\n    a = 1\n", "b = 2", "def f():\n    return 1\n",
                    "await f_async()"]


async def test_exec_system_exit_is_the_programs_exit_status(
        bridge: Bridge, capsys: pytest.CaptureFixture[str]) -> None:
    """``sys.exit()`` is exit 0, ``sys.exit(3)`` 3, ``sys.exit('bye')`` 1 with 'bye' on
    stderr, as a Python program; no traceback, no note about the worker's state."""
    for code, status, err in (("sys.exit(0)", 0, ""), ("sys.exit()", 0, ""),
                              ("sys.exit(3)", 3, ""), ("sys.exit('bye')", 1, "bye\n")):
        rc = await bridge.exec("-", stdin=f"import sys\nprint('out')\n{code}\n")
        out = capsys.readouterr()
        assert (rc, out.out, out.err) == (status, "out\n", err), code


async def _exec_process(bridge: Bridge, code: str) -> asyncio.subprocess.Process:
    """``trustbridge exec - --bridge URL`` as a process with ``code`` on its stdin."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "trustbridge", "exec", "-", "--bridge", bridge.server.url,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, cwd=ROOT)
    assert proc.stdin is not None
    proc.stdin.write(code.encode())
    proc.stdin.close()
    return proc


async def test_exec_prints_a_lone_surrogate_escaped(bridge: Bridge) -> None:
    """A value whose repr has a lone surrogate is printed escaped (a UnicodeEncodeError
    traceback of the CLI's print before), exit 0."""
    proc = await _exec_process(bridge, "class R:\n  def __repr__(self): return 'bad\\ud800'\n"
                                       "print('x\\udcff')\nR()\n")
    out, err = await asyncio.wait_for(proc.communicate(), STEP_S)
    assert (proc.returncode, out, err) == (0, b"x\\udcff\nbad\\ud800\n", b"")


async def test_exec_into_a_closed_pipe_ends_quietly(bridge: Bridge) -> None:
    """``exec - | head -2``: once stdout's reader is gone the run stops and the command
    exits 141 (128 + SIGPIPE) without a traceback."""
    proc = await _exec_process(bridge, "import itertools\n"
                                       "for i in itertools.count(): print(i, flush=True)\n")
    assert proc.stdout is not None and proc.stderr is not None
    assert await asyncio.wait_for(proc.stdout.readline(), STEP_S) == b"0\n"
    proc.stdout.feed_eof()
    transport = proc._transport  # type: ignore[attr-defined]
    transport.get_pipe_transport(1).close()  # the reader goes away, as head's exit does
    err = await asyncio.wait_for(proc.stderr.read(), STEP_S)
    assert await asyncio.wait_for(proc.wait(), STEP_S) == 141
    assert b"Traceback" not in err and b"Error" not in err, err


def test_print_result_says_fresh_worker_even_when_the_entry_raised() -> None:
    """The repl's "fresh worker" note is printed whenever the worker had been reset
    before the entry, also when the entry raised (its variables are gone: NameError)."""
    from trustbridge.bridge.code import ExecResult

    out, err = io.StringIO(), io.StringIO()
    cli_code.print_result(ExecResult(error="NameError: name 'a' is not defined\n",
                                     reset=True, reset_before=True), repl=True, out=out,
                          err=err)
    assert "fresh worker" in err.getvalue() and "NameError" in err.getvalue()
    out, err = io.StringIO(), io.StringIO()
    cli_code.print_result(ExecResult(output="own\n", late_output="old\n", late_chars=4),
                          repl=True, out=out, err=err)
    assert out.getvalue() == "old\nown\n" and "after an earlier entry ended" in err.getvalue()
