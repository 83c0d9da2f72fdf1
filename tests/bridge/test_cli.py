"""The ``trustbridge`` client commands (bridge/cli.py) against a real BridgeServer with a
fake extension and a fake input driver (tests/bridge/fakes.py) over loopback: which SDK
call each command line makes (seen as what the peers receive), its output and exit code.
No browser."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from trustbridge.bridge import cli, config
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import PROTOCOL_VERSION
from trustbridge.bridge.server import BridgeServer

from .fakes import FakeDriver, FakeExtension

pytestmark = pytest.mark.timeout(20)

D = "dev1"
STEP_S = 5.0
"""Upper bound, seconds, on any single await in these tests."""


@dataclass
class Bridge:
    url: str
    ext: FakeExtension
    drv: FakeDriver

    async def run(self, *argv: str) -> int:
        """Run ``trustbridge ARGV --bridge URL`` in this loop; returns its exit code."""
        args = cli.build_parser().parse_args([*argv, "--bridge", self.url])
        return await asyncio.wait_for(cli._cmd_client(args), STEP_S)

    def received(self, method: str) -> list[dict[str, Any]]:
        """Params of every ``method`` request either fake peer received, in order."""
        return [r.params for r in [*self.ext.requests, *self.drv.requests] if r.method == method]


@pytest.fixture
async def bridge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Bridge]:
    """A real bridge (token from a private state directory, as the CLI reads it) with a
    fake extension and driver for ``dev1``."""
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    token = config.load_or_create_token()
    async with contextlib.AsyncExitStack() as stack:
        server = BridgeServer(token, host="127.0.0.1", port=0)
        await asyncio.wait_for(server.start(), STEP_S)
        stack.push_async_callback(server.stop)
        ext = FakeExtension(server.url, token, D)
        drv = FakeDriver(server.url, token, D)
        for fake in (ext, drv):
            await asyncio.wait_for(fake.connect(), STEP_S)
            stack.push_async_callback(fake.close)
        yield Bridge(server.url, ext, drv)
        assert ext.malformed == [] and drv.malformed == []


CLICK = {"kind": "click", "button": "left", "clickCount": 1, "modifiers": [],
         "position": None}
ACTS = [
    (["click", "e7"], "e7", CLICK),
    (["click", "e7", "--double"], "e7", {**CLICK, "clickCount": 2}),
    (["hover", "f1e3"], "f1e3", {"kind": "hover"}),
    (["type", "e7", "hi there"], "e7", {"kind": "type", "text": "hi there", "submit": False}),
    (["type", "e7", "hi", "--submit"], "e7", {"kind": "type", "text": "hi", "submit": True}),
    (["fill", "e7", "new value"], "e7", {"kind": "fill", "value": "new value"}),
    (["press", "Control+A", "--ref", "e7"], "e7", {"kind": "press", "key": "Control+A"}),
    (["select", "e7", "red", "Blue"], "e7", {"kind": "select", "values": ["red", "Blue"]}),
    (["check", "e7"], "e7", {"kind": "check", "checked": True}),
    (["uncheck", "e7"], "e7", {"kind": "check", "checked": False}),
]


@pytest.mark.parametrize(("argv", "ref", "action"), ACTS, ids=[" ".join(a[0]) for a in ACTS])
async def test_input_command_sends_its_action(
        bridge: Bridge, capsys: pytest.CaptureFixture[str], argv: list[str], ref: str,
        action: dict[str, Any]) -> None:
    """Each input command reaches the driver as its SDK verb's action (type key by key,
    fill one edit) on the ref given, and prints the one-line human result."""
    assert await bridge.run(*argv) == cli.EXIT_OK
    assert [p["action"] for p in bridge.received("driver.act")] == [action]
    assert [p["ref"] for p in bridge.received("page.resolveTarget")] == [ref]
    assert capsys.readouterr().out == f"{argv[0]} ok — inputPath=trusted tab=1\n"


async def test_press_without_ref_goes_to_the_focused_element(bridge: Bridge) -> None:
    """press KEY without --ref resolves no element (the tab's focused one gets the key)."""
    assert await bridge.run("press", "Enter") == cli.EXIT_OK
    assert [p["action"] for p in bridge.received("driver.act")] == [
        {"kind": "press", "key": "Enter"}]
    assert "ref" not in bridge.received("page.resolveTarget")[0]


async def test_tab_option_addresses_that_tab(bridge: Bridge) -> None:
    """--tab N is the tabId of the request (here: where the ref is resolved)."""
    assert await bridge.run("fill", "e7", "x", "--tab", "4") == cli.EXIT_OK
    assert bridge.received("page.resolveTarget")[0]["tabId"] == 4


async def test_open_snapshot_and_wait_send_their_params(
        bridge: Bridge, capsys: pytest.CaptureFixture[str]) -> None:
    """open, snapshot and wait pass their flags to page.navigate / page.snapshot /
    page.wait and print the human form of the result."""
    assert await bridge.run("open", "http://127.0.0.1:9/x") == cli.EXIT_OK
    assert bridge.received("page.navigate")[0]["url"] == "http://127.0.0.1:9/x"
    assert await bridge.run("snapshot", "--mode", "read", "--max-chars", "2000",
                            "--ref", "e7") == cli.EXIT_OK
    snap = bridge.received("page.snapshot")[0]
    assert (snap["mode"], snap["maxChars"], snap["ref"]) == ("read", 2000, "e7")
    assert await bridge.run("wait", "--text", "Done") == cli.EXIT_OK
    assert bridge.received("page.wait")[0]["text"] == "Done"
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "opened http://127.0.0.1/ (tab 1): "
    assert out[1:3] == ["#  — ", '- button "Save" [ref=e7]']


async def test_json_output_is_the_bridge_result(
        bridge: Bridge, capsys: pytest.CaptureFixture[str]) -> None:
    """--json prints {"ok": true, "result": <the bridge's result>}."""
    assert await bridge.run("fill", "e7", "x", "--json") == cli.EXIT_OK
    printed = json.loads(capsys.readouterr().out)
    assert printed["ok"] is True
    assert (printed["result"]["inputPath"], printed["result"]["device"]) == ("trusted", D)


async def test_bridge_error_exits_1_with_its_code(
        bridge: Bridge, capsys: pytest.CaptureFixture[str]) -> None:
    """An error from the bridge exits 1 and prints its code (stderr), or the error
    payload with --json (stdout); the driver receives nothing."""
    bridge.ext.errors["page.resolveTarget"] = E.RefNotFound("Ref e9 not found.", {"ref": "e9"})
    assert await bridge.run("click", "e9") == cli.EXIT_ERROR
    assert capsys.readouterr().err == ("error REF_NOT_FOUND: Ref e9 not found.\n"
                                       f"next step: {cli.CLI_NEXT_STEP['REF_NOT_FOUND']}\n")
    assert await bridge.run("click", "e9", "--json") == cli.EXIT_ERROR
    printed = json.loads(capsys.readouterr().out)
    assert printed["ok"] is False and printed["error"]["code"] == "REF_NOT_FOUND"
    assert bridge.drv.requests == []


async def test_a_bad_ref_is_refused_before_anything_is_sent(
        bridge: Bridge, capsys: pytest.CaptureFixture[str]) -> None:
    """A ref that is not a ref exits 1 with BAD_REQUEST from the SDK; no peer is asked."""
    assert await bridge.run("type", "button", "x") == cli.EXIT_ERROR
    assert capsys.readouterr().err.startswith("error BAD_REQUEST: Invalid params for page.act")
    assert (bridge.ext.requests, bridge.drv.requests) == ([], [])


async def test_doctor_and_tabs(bridge: Bridge, capsys: pytest.CaptureFixture[str]) -> None:
    """doctor names the bridge, protocol and device input path; tabs marks the active tab."""
    assert await bridge.run("doctor") == cli.EXIT_OK
    assert await bridge.run("tabs") == cli.EXIT_OK
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"bridge {bridge.url}: protocol {PROTOCOL_VERSION}"
    assert out[1].startswith("device dev1: extension connected, driver online, input trusted")
    assert out[-1] == "* 1:  — http://127.0.0.1/"  # after doctor's browser lines
    assert await bridge.run("doctor", "--json") == cli.EXIT_OK
    result = json.loads(capsys.readouterr().out)["result"]
    assert (result["bridge"], result["protocolVersion"]) == (bridge.url, PROTOCOL_VERSION)
    assert [d["device"] for d in result["devices"]] == [D]
    assert await bridge.run("tabs", "--json") == cli.EXIT_OK
    result = json.loads(capsys.readouterr().out)["result"]
    assert (result["device"], [t["tabId"] for t in result["tabs"]]) == (D, [1])


async def test_no_bridge_exits_3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing listening at --bridge: exit 3 and the hint to start one."""
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    args = cli.build_parser().parse_args(["click", "e7", "--bridge", f"ws://127.0.0.1:{port}"])
    assert await cli._cmd_client(args) == cli.EXIT_NO_BRIDGE
    assert "trustbridge up" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["fill", "e7"], ["type", "e7"], ["frobnicate"]])
def test_usage_errors_exit_2(argv: list[str]) -> None:
    """A missing argument or unknown command is a usage error (exit 2)."""
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    assert info.value.code == cli.EXIT_USAGE


def test_help_says_what_type_and_fill_mean() -> None:
    """type's help says key by key without clearing; fill's says one edit replacing it."""
    sub = cli.build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert "key by key" in sub["type"].description and "not clear" in sub["type"].description
    assert "replace" in sub["fill"].description and "one edit" in sub["fill"].description


async def test_dialog_command_answers_the_dialog(bridge: Bridge) -> None:
    """`dialog accept --text T` and `dialog dismiss` send page.dialog to the driver."""
    bridge.drv.results["driver.dialog"] = {"type": "prompt", "message": "Name?", "accepted": True}
    assert await bridge.run("dialog", "accept", "--text", "Ada") == cli.EXIT_OK
    assert await bridge.run("dialog", "dismiss") == cli.EXIT_OK
    sent = bridge.received("driver.dialog")
    assert [(p["accept"], p.get("promptText")) for p in sent] == [(True, "Ada"), (False, None)]


async def test_human_output_names_what_the_action_led_to(
        bridge: Bridge, capsys: pytest.CaptureFixture[str]) -> None:
    """The one-line summary of an input result also says a missed click, an opened dialog
    and new tabs (which --json carries), one line each."""
    bridge.drv.results["driver.act"] = {
        "done": True, "action": "click",
        "dialog": {"type": "confirm", "message": "Really?"}}
    assert await bridge.run("click", "e7") == cli.EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith("click ok — inputPath=trusted")
    assert "dialog open: confirm 'Really?'" in out and "trustbridge dialog" in out


def test_mcp_launch_options_against_a_given_bridge_say_they_do_not_apply(
        capsys: pytest.CaptureFixture[str]) -> None:
    """``mcp --bridge URL --browser firefox``: the options are validated and kept, and a
    warning says they only shape a browser this server starts (the bridge has its own)."""
    args = cli.build_parser().parse_args(
        ["mcp", "--bridge", "ws://127.0.0.1:9", "--browser", "firefox", "--caps", "vision"])
    options = cli.mcp_options(args, {})
    assert options.browser == "firefox" and options.caps == {"vision"}
    err = capsys.readouterr().err
    assert "browser only apply to the browser `trustbridge mcp` starts" in err
    assert "ws://127.0.0.1:9 has its own" in err


def test_mcp_bad_option_is_a_usage_refusal() -> None:
    """A bad option value becomes the CLI's usage refusal (exit 2 in _cmd_mcp)."""
    args = cli.build_parser().parse_args(["mcp", "--caps", "x-ray"])
    with pytest.raises(cli._Refused, match="--caps: unknown capability 'x-ray'"):
        cli.mcp_options(args, {})
    assert asyncio.run(cli._cmd_mcp(args)) == cli.EXIT_USAGE


def test_mcp_headless_and_headed_are_exclusive(capsys: pytest.CaptureFixture[str]) -> None:
    """--headless and --headed together are an argparse usage error (exit 2)."""
    with pytest.raises(SystemExit) as exc:
        cli.build_parser().parse_args(["mcp", "--headless", "--headed"])
    assert exc.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_demo_beside_a_running_bridge_says_so_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`trustbridge demo` while another bridge (a `trustbridge up`) uses the state folder:
    exit 1 and the one-line reason, as `up` gives it, not a traceback; no browser starts
    (the refusal comes before any launch)."""
    import subprocess
    import sys

    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    listener = socket.create_server(("127.0.0.1", 0))
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        port = listener.getsockname()[1]
        (tmp_path / "endpoint.json").write_text(json.dumps(
            {"url": f"ws://127.0.0.1:{port}", "pid": other.pid}))
        assert cli.main(["demo"]) == cli.EXIT_ERROR
    finally:
        other.kill()
        other.wait(10)
        listener.close()
    err = capsys.readouterr().err
    assert "A bridge is already running" in err and "Traceback" not in err, err


def test_up_camoufox_without_the_extra_says_how_to_add_it(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`up --browser camoufox` where the camoufox package (the optional extra) is absent:
    exit 1 before any bridge starts, naming `pip install 'trustbridge[camoufox]'` and the
    fetch after it; doctor's install command for camoufox names both too."""
    import sys

    from trustbridge.bridge import embedded
    from trustbridge.supervisor import discovery

    monkeypatch.setitem(sys.modules, "camoufox", None)  # as an install without the extra

    def no_start(*a: Any, **k: Any) -> None:
        raise AssertionError("a bridge was started for a browser that cannot run")

    monkeypatch.setattr(embedded, "Embedded", no_start)
    args = cli.build_parser().parse_args(["up", "--browser", "camoufox"])
    assert asyncio.run(cli._cmd_up(args)) == cli.EXIT_ERROR
    err = capsys.readouterr().err
    assert "pip install 'trustbridge[camoufox]'" in err and "python -m camoufox fetch" in err
    assert discovery.install_command("camoufox") == (
        "pip install 'trustbridge[camoufox]' && python -m camoufox fetch")


async def test_dialog_prints_one_line_and_json_on_request(
        bridge: Bridge, capsys: pytest.CaptureFixture[str]) -> None:
    """`dialog accept` prints one line saying what was answered ("accepted alert dialog
    'Hi'"), as every verb does; --json prints the raw result."""
    bridge.drv.results["driver.dialog"] = {"type": "alert", "message": "Hi", "accepted": True}
    assert await bridge.run("dialog", "accept") == cli.EXIT_OK
    assert capsys.readouterr().out == "accepted alert dialog 'Hi'\n"
    assert await bridge.run("dialog", "dismiss", "--json") == cli.EXIT_OK
    assert json.loads(capsys.readouterr().out)["result"]["type"] == "alert"


async def test_an_action_not_delivered_exits_4(
        bridge: Bridge, capsys: pytest.CaptureFixture[str]) -> None:
    """A click whose result says ``delivered: false`` (another element took it) exits 4,
    with the warning line, and with --json too: a script must not read it as success."""
    bridge.drv.results["driver.act"] = {"done": True, "action": "click", "delivered": False}
    assert await bridge.run("click", "e7") == cli.EXIT_NOT_DELIVERED
    out = capsys.readouterr().out
    assert out.startswith("click ok") and "never got the click" in out and "exit code 4" in out
    assert await bridge.run("click", "e7", "--json") == cli.EXIT_NOT_DELIVERED
    assert json.loads(capsys.readouterr().out)["result"]["delivered"] is False


async def test_error_next_step_is_in_the_cli_words(
        bridge: Bridge, capsys: pytest.CaptureFixture[str]) -> None:
    """A DIALOG_OPEN error's next step names `trustbridge dialog accept`, not the protocol
    method page.dialog; the message says "An alert dialog"."""
    bridge.ext.errors["page.resolveTarget"] = E.DialogOpen(
        f"{E.a_dialog('alert')} blocks tab 1 ('Hi').", {"dialog": {"type": "alert"}})
    assert await bridge.run("click", "e7") == cli.EXIT_ERROR
    err = capsys.readouterr().err
    assert err.startswith("error DIALOG_OPEN: An alert dialog blocks tab 1")
    assert "next step: answer it with `trustbridge dialog accept`" in err
    assert "page.dialog" not in err


def test_a_dialog_takes_the_right_article() -> None:
    assert [E.a_dialog(k) for k in ("alert", "confirm", "prompt", "beforeunload", None)] == [
        "An alert dialog", "A confirm dialog", "A prompt dialog", "A beforeunload dialog",
        "A JavaScript dialog"]


def _commands() -> dict[str, Any]:
    return cli.build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]


def test_help_lists_each_command_once_in_plain_words(capsys: pytest.CaptureFixture[str]) -> None:
    """`trustbridge --help`: each command once, no reST double backticks, no pointers at
    source files (the wheel's users have no docs/ or .py to open there), the connection
    options and the exit codes described once."""
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    for name in _commands():
        # (?![\w-]): `device` is not counted in `device-token`'s line.
        assert len(re.findall(rf"^    {re.escape(name)}(?![\w-])", out,
                              flags=re.MULTILINE)) == 1, name
    assert "``" not in out and not re.search(r"\b\w+/\w+\.py\b", out)
    assert "{up," not in out  # argparse's brace list of every command
    for option in ("--device ID", "--tab N", "--bridge URL", "--token-file PATH",
                   "--ca-file PEM", "--session NAME", "--session-lease-ms MS"):
        assert out.count(f"\n  {option}") == 1, option
    assert "4 the\naction ran but did not reach its target" in out


def test_every_option_has_help_and_verbs_do_not_repeat_connection_options() -> None:
    """Every option of every command says what it does (up --headed, demo --json, wait
    --ms/--text were bare); a client verb's --help names the shared connection options in
    one line instead of describing them again."""
    for name, command in _commands().items():
        for action in command._actions:
            if action.option_strings and action.dest != "help":
                assert action.help, f"{name} {action.option_strings[0]} has no help"
        text = command.format_help()
        assert "``" not in text, name
        if command.get_default("run") is not None:
            assert "--token-file PATH" not in text and "--bridge BRIDGE" not in text, name
            assert "connection options (see `trustbridge --help`)" in text, name
