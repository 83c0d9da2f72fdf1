"""The examples a new user copies, executed as written against local pages: the README's
commands and its SDK example, docs/cli.md's quickstart, docs/sdk.md's examples and
docs/mcp.md's "Try it without an MCP app" client. A doc that says something the code does
not do fails here.

How a doc states what should happen (so a reader and this test read it the same way):

- ``sh`` blocks run line by line, each command in bash from the clone's folder, with
  ``trustbridge`` on PATH and the state directory of a ``trustbridge up`` this test
  started. ``# → TEXT`` after a command (or on the next line, alone) is what it prints,
  stdout and stderr together; ``...`` stands for anything, runs of white space are one.
  Any other comment is prose. A command must exit 0 unless it prints its exit code
  (``; echo $?``). A plain block right after an ``sh`` block is the output of that
  block's commands, with the same rules.
- ``python`` blocks run as a script (a block without ``asyncio.run`` but with ``await`` is
  run inside a coroutine, with the names the previous block imported). A comment on a
  ``print(...)`` line, or alone on the line after one, is what that print shows, found in
  the script's output in order.
- The lines that set up what the test itself runs are checked, not run: ``source
  .venv/bin/activate``, the ``python -m http.server 8765 ... --directory tests/e2e/pages
  &`` page server, ``trustbridge up [&]`` and ``kill %N``. The docs' page port 8765 and
  bridge URL ``ws://127.0.0.1:17831`` stand for the ones this test got.

Chromium only: the docs' examples run the default browser.
"""

from __future__ import annotations

import ast
import os
import queue
import re
import socket
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

REPO = Path(__file__).resolve().parents[2]
PAGES = REPO / "tests" / "e2e" / "pages"
DOC_PAGE_PORT = "8765"
DOC_BRIDGE_URL = "ws://127.0.0.1:17831"
SETUP_LINES = (
    re.compile(r"source \.venv/bin/activate"),
    re.compile(r"python3? -m http\.server 8765 --bind 127\.0\.0\.1 --directory tests/e2e/pages &"),
    re.compile(r"trustbridge up( &)?"),
    re.compile(r"kill %\d"),
)
"""What the test runs itself (module docstring); checked to be written this way."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Runtime:
    """A page server on tests/e2e/pages and a ``trustbridge up`` with its own state
    directory, as the docs' quickstarts set them up."""

    home: Path
    page_port: int
    bridge_url: str
    env: dict[str, str]

    def fill(self, text: str) -> str:
        """``text`` with the docs' ports replaced by this runtime's."""
        return (text.replace(DOC_BRIDGE_URL, self.bridge_url)
                .replace(f"127.0.0.1:{DOC_PAGE_PORT}", f"127.0.0.1:{self.page_port}"))


def _start_up(env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    """``trustbridge up --port 0``; returns it and its bridge URL once it says ready."""
    proc = subprocess.Popen([sys.executable, "-m", "trustbridge", "up", "--port", "0"], env=env,
                            cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(ln) for ln in proc.stderr], daemon=True).start()
    said = []
    while True:
        try:
            line = lines.get(timeout=120)
        except queue.Empty:
            proc.kill()
            raise AssertionError("trustbridge up never said ready:\n" + "".join(said)) from None
        said.append(line)
        if m := re.search(r"ready: device \S+ on (ws://[\d.:]+)\. ", line):
            return proc, m.group(1)


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Runtime]:
    home = tmp_path / "state"
    bindir = tmp_path / "bin"
    bindir.mkdir()
    tool = bindir / "trustbridge"  # the venv's entry point, importing this tree's code
    tool.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m trustbridge "$@"\n')
    tool.chmod(0o755)
    env = dict(os.environ, TRUSTBRIDGE_HOME=str(home), HOME=str(tmp_path / "home"),
               PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    port = _free_port()
    pages = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind",
                              "127.0.0.1", "--directory", str(PAGES)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    up, url = _start_up(env)
    try:
        yield Runtime(home, port, url, env)
    finally:
        for proc in (up, pages):
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        if up.stderr is not None:
            up.stderr.close()


# -- reading the docs ----------------------------------------------------------------------


@dataclass
class Command:
    line: str
    expected: str | None = None


@dataclass
class Block:
    lang: str
    text: str
    output: str | None = None  # the plain block right after an sh block
    commands: list[Command] = field(default_factory=list)


def _section(doc: str, heading: str) -> str:
    """The text under the heading line ``heading`` up to the next heading of its level."""
    text = (REPO / doc).read_text()
    level = heading.split(" ", 1)[0]
    start = text.index(f"\n{heading}\n")
    end = re.search(rf"^{level} ", text[start + len(heading) + 2:], re.M)
    return text[start: start + len(heading) + 2 + end.start() if end else len(text)]


def _blocks(text: str) -> list[Block]:
    """The fenced blocks of ``text``, an output block folded into the sh block before it."""
    out: list[Block] = []
    for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.M | re.S):
        lang, body = m.group(1), m.group(2)
        if lang == "" and out and out[-1].lang == "sh" and out[-1].output is None:
            out[-1].output = body
        elif lang in ("sh", "python"):
            out.append(Block(lang, body))
    for block in out:
        if block.lang == "sh":
            block.commands = _commands(block.text)
    return out


def _commands(text: str) -> list[Command]:
    commands: list[Command] = []
    for raw in text.splitlines():
        parts = re.split(r"(?:^|\s+)#(?:\s|$)", raw, maxsplit=1)
        code, comment = parts[0].strip(), (parts[1] if len(parts) > 1 else "")
        expected = comment.split("→", 1)[1].strip() if "→" in comment else None
        if code:
            commands.append(Command(code, expected))
        elif expected is not None:
            assert commands, f"an output line before any command: {raw!r}"
            commands[-1].expected = expected
    return commands


def _pattern(expected: str) -> re.Pattern[str]:
    """``expected`` as a regex: ``...`` is anything (the spaces around it too), white
    space runs are one space."""
    parts = [re.escape(p) for p in re.split(r"\s*\.\.\.\s*", " ".join(expected.split()))]
    return re.compile(".*?".join(parts).replace(r"\ ", r"\s+"), re.S)


def _norm(output: str) -> str:
    return " ".join(output.split())


def run_sh(rt: Runtime, block: Block) -> str:
    """Run the block's commands (module docstring); returns what they printed."""
    printed = []
    for cmd in block.commands:
        if any(p.fullmatch(cmd.line) for p in SETUP_LINES):
            continue
        assert not cmd.line.startswith(("python", "trustbridge up")), (
            f"a setup line written otherwise than the test runs it: {cmd.line!r}")
        done = subprocess.run(["bash", "-c", rt.fill(cmd.line)], cwd=REPO, env=rt.env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=120)
        said = done.stdout
        printed.append(said)
        if "echo $?" not in cmd.line:
            assert done.returncode == 0, f"{cmd.line!r} exited {done.returncode}:\n{said}"
        if cmd.expected is not None:
            want = rt.fill(cmd.expected)
            assert _pattern(want).fullmatch(_norm(said)), (
                f"{cmd.line!r} printed:\n{said}\nthe doc says:\n{want}")
    if block.output is not None:
        said, want = "".join(printed), rt.fill(block.output)
        assert _pattern(want).fullmatch(_norm(said)), (
            f"the block printed:\n{said}\nthe doc says:\n{want}")
    return "".join(printed)


def _prints(code: str) -> list[str]:
    """The comments of ``print(...)`` lines (or alone on the next line), in order."""
    found, after_print = [], False
    for line in code.splitlines():
        stripped = line.strip()
        if stripped.startswith("#") and after_print:
            found.append(stripped[1:].strip())
            after_print = False
            continue
        after_print = "print(" in line
        if after_print and "#" in line.split("print(", 1)[1]:
            comment = re.split(r"\s+#\s", line, maxsplit=1)
            if len(comment) == 2:
                found.append(comment[1].strip())
                after_print = False
    return found


def run_python(rt: Runtime, code: str, prelude: str = "", *, env: dict[str, str] | None = None,
               tmp: Path) -> str:
    """Run ``code`` as a script from the clone's folder (module docstring)."""
    script = rt.fill(code)
    if "asyncio.run(" not in script and "await " in script:
        script = (f"import asyncio\n{prelude}\n\nasync def _example() -> None:\n"
                  + textwrap.indent(script, "    ") + "\n\nasyncio.run(_example())\n")
    ast.parse(script)
    path = tmp / "example.py"
    path.write_text(script)
    done = subprocess.run([sys.executable, str(path)], cwd=REPO, env=env or rt.env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=240)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    rest = _norm(done.stdout)
    for want in _prints(code):
        m = _pattern(rt.fill(want)).search(rest)
        assert m, f"the doc says a print shows {want!r}; the output was:\n{done.stdout}"
        rest = rest[m.end():]
    return done.stdout


def _imports(code: str) -> str:
    return "\n".join(ln for ln in code.splitlines() if ln.startswith(("import ", "from ")))


# -- the docs ------------------------------------------------------------------------------


def test_cli_quickstart_runs_as_written(runtime: Runtime) -> None:
    """docs/cli.md's Quickstart, typed verbatim: every command exits 0 (or as it says),
    prints what the doc shows (doctor's protocol version, the snapshot's refs), and the
    page records the trusted click and keys the doc says."""
    blocks = _blocks(_section("docs/cli.md", "## Quickstart"))
    assert [b.lang for b in blocks] == ["sh", "sh", "sh"]
    printed = "".join(run_sh(runtime, b) for b in blocks)
    assert "note=bye; trusted keys 8/8" in printed


def test_readme_commands_run_as_written(runtime: Runtime) -> None:
    """The README's "Using it" commands on its local page: open, snapshot, type, click
    (which opens a confirm), dialog accept, hover, doctor, pair, cdp."""
    blocks = [b for b in _blocks(_section("README.md", "## Using it")) if b.lang == "sh"]
    assert blocks, "README's Using it has no sh block"
    printed = "".join(run_sh(runtime, b) for b in blocks)
    assert "saved: hello (click isTrusted=true" in printed


def test_readme_sdk_example_runs_as_written(runtime: Runtime, tmp_path: Path) -> None:
    """The README's Python SDK example against the `trustbridge up` it says to run."""
    (code,) = [b.text for b in _blocks(_section("README.md", "## Using it"))
               if b.lang == "python"]
    run_python(runtime, code, tmp=tmp_path)


def test_sdk_doc_examples_run_as_written(runtime: Runtime, tmp_path: Path) -> None:
    """docs/sdk.md: the Quickstart's launch example, its connect snippet (against the
    running bridge) and the synchronous example. A launch starts its own bridge, which
    refuses to share a running one's state directory: those get their own."""
    quick = _blocks(_section("docs/sdk.md", "## Quickstart"))
    assert [b.lang for b in quick] == ["sh", "python", "python"]
    run_sh(runtime, quick[0])
    own = dict(runtime.env, TRUSTBRIDGE_HOME=str(tmp_path / "launched"))
    run_python(runtime, quick[1].text, env=own, tmp=tmp_path)
    run_python(runtime, quick[2].text, _imports(quick[1].text), tmp=tmp_path)
    (sync,) = [b for b in _blocks(_section("docs/sdk.md", "## Synchronous use"))
               if b.lang == "python"]
    run_python(runtime, sync.text, env=own, tmp=tmp_path)


def test_mcp_doc_client_example_runs_as_written(runtime: Runtime, tmp_path: Path) -> None:
    """docs/mcp.md "Try it without an MCP app": the mcp package's client starts
    `trustbridge mcp` (its own browser: the client passes the server only HOME, PATH and
    the like, so the state directory is HOME's), navigates and gets REF_NOT_FOUND."""
    (code,) = [b.text for b in _blocks(_section("docs/mcp.md", "### Try it without an MCP app"))
               if b.lang == "python"]
    env = dict(runtime.env)
    env.pop("TRUSTBRIDGE_HOME")  # as a user's shell: the server's state is under HOME
    out = run_python(runtime, code, env=env, tmp=tmp_path)
    assert "browser_navigate" in out and "REF_NOT_FOUND" in out
