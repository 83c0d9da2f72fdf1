"""Token hygiene (bridge/config.py, bridge/client.py, bridge/cli.py): the state directory's
token goes only to a loopback bridge, a remote one gets only a token the user named, over
wss://; ``trustbridge token --rotate`` writes a new one and says what must restart."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from trustbridge.bridge import cli, config
from trustbridge.bridge.client import BridgeClient, resolve_endpoint
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.server import BridgeServer

REPO = Path(__file__).resolve().parents[2]
STEP_S = 10.0
"""Upper bound, seconds, on any single await or subprocess here."""


@pytest.fixture(autouse=True)
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    return tmp_path


@pytest.fixture
def connects(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str | None, str | None]]:
    """Every ``BridgeClient.connect(url, token)`` the CLI makes; each fails as if nothing
    listened there (so nothing leaves the machine)."""
    seen: list[tuple[str | None, str | None]] = []

    async def fake_connect(cls: type, url: str | None = None, token: str | None = None,
                           open_timeout_s: float = 10.0) -> Any:
        seen.append((url, token))
        raise E.DeviceNotConnected(f"nothing at {url}")

    monkeypatch.setattr(BridgeClient, "connect", classmethod(fake_connect))
    return seen


LOOPBACK = ["ws://127.0.0.1:17831", "ws://127.9.8.7:1", "ws://[::1]:17831",
            "ws://localhost:17831", "wss://LOCALHOST/bridge", "wss://127.0.0.1:443"]


@pytest.mark.parametrize("url", LOOPBACK)
def test_loopback_urls_get_the_token(url: str) -> None:
    """Loopback hosts (127.0.0.0/8, ::1, localhost), ws:// or wss://: the token may go."""
    assert config.token_refusal(url, token_named=False) is None


@pytest.mark.parametrize(("url", "named", "says"), [
    ("ws://192.0.2.7:17831", False, "plain text"),
    ("ws://192.0.2.7:17831", True, "plain text"),
    ("ws://127.0.0.1.evil.example:1", True, "plain text"),
    ("wss://bridge.example", False, "--token-file"),
    ("http://127.0.0.1:17831", False, "not a ws://"),
    ("127.0.0.1:17831", False, "not a ws://"),
])
def test_other_urls_are_refused_with_the_reason(url: str, named: bool, says: str) -> None:
    """ws:// beyond this machine never gets a token; wss:// elsewhere only a named one;
    the reason says which."""
    reason = config.token_refusal(url, token_named=named)
    assert reason is not None and says in reason


def test_wss_elsewhere_with_a_named_token_is_allowed() -> None:
    """A remote wss:// bridge may get the token the user named."""
    assert config.token_refusal("wss://bridge.example:8443", token_named=True) is None


def test_sdk_does_not_send_the_state_token_elsewhere(state_dir: Path) -> None:
    """resolve_endpoint (SDK, MCP Session): an explicit non-loopback URL without a token
    is Unauthorized before anything is sent; with a token, or loopback, it resolves."""
    token = config.load_or_create_token()
    with pytest.raises(E.Unauthorized, match="Not sending the token"):
        resolve_endpoint("ws://192.0.2.7:17831")
    assert resolve_endpoint("wss://bridge.example", "t0k") == ("wss://bridge.example", "t0k")
    assert resolve_endpoint("ws://127.0.0.1:1") == ("ws://127.0.0.1:1", token)


CLIENT_COMMANDS = [["doctor"], ["tabs"], ["open", "http://x/"], ["snapshot"], ["click", "e1"],
                   ["hover", "e1"], ["type", "e1", "t"], ["fill", "e1", "v"], ["press", "Enter"],
                   ["wait", "--ms", "1"]]


@pytest.mark.parametrize("argv", CLIENT_COMMANDS, ids=[a[0] for a in CLIENT_COMMANDS])
@pytest.mark.parametrize("url", ["ws://192.0.2.7:17831", "wss://bridge.example"])
async def test_client_commands_refuse_a_remote_bridge_before_connecting(
        argv: list[str], url: str, connects: list[Any],
        capsys: pytest.CaptureFixture[str]) -> None:
    """Every client command with ``--bridge`` elsewhere (and no --token-file): exit 2, the
    reason on stderr, no connection attempted."""
    config.load_or_create_token()
    args = cli.build_parser().parse_args([*argv, "--bridge", url])
    assert await asyncio.wait_for(cli._cmd_client(args), STEP_S) == cli.EXIT_USAGE
    assert connects == []
    err = capsys.readouterr().err
    assert f"not connecting to {url}" in err and ("--token-file" in err)


async def test_named_token_goes_to_wss_and_loopback_gets_the_state_token(
        state_dir: Path, connects: list[Any]) -> None:
    """``--token-file`` with a wss:// bridge: that token is what the CLI presents; a
    loopback ``--bridge`` gets the state directory's token as before."""
    state_token = config.load_or_create_token()
    named = state_dir / "remote-token"
    named.write_text("r" * 64 + "\n")
    parser = cli.build_parser()
    remote = parser.parse_args(["doctor", "--bridge", "wss://bridge.example",
                                "--token-file", str(named)])
    local = parser.parse_args(["doctor", "--bridge", "ws://127.0.0.1:9"])
    assert await cli._cmd_client(remote) == cli.EXIT_NO_BRIDGE
    assert await cli._cmd_client(local) == cli.EXIT_NO_BRIDGE
    assert connects == [("wss://bridge.example", "r" * 64), ("ws://127.0.0.1:9", None)]
    assert resolve_endpoint("ws://127.0.0.1:9")[1] == state_token


async def test_an_unreadable_token_file_is_usage_error(state_dir: Path, connects: list[Any],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A --token-file that is missing: exit 2 naming it, nothing sent."""
    args = cli.build_parser().parse_args(["doctor", "--token-file", str(state_dir / "nope")])
    assert await cli._cmd_client(args) == cli.EXIT_USAGE
    assert connects == [] and str(state_dir / "nope") in capsys.readouterr().err


def test_mcp_refuses_a_remote_bridge_before_serving(state_dir: Path) -> None:
    """``trustbridge mcp --bridge ws://elsewhere``: exit 2 with the reason, before it
    serves anything on stdout."""
    proc = subprocess.run(
        [sys.executable, "-m", "trustbridge", "mcp", "--bridge", "ws://192.0.2.7:17831"],
        check=False, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=STEP_S,
        cwd=str(REPO), env=dict(os.environ, TRUSTBRIDGE_HOME=str(state_dir)))
    assert proc.returncode == cli.EXIT_USAGE, proc.stderr
    assert "plain text" in proc.stderr and proc.stdout == ""


def test_rotate_writes_a_new_private_token_and_says_to_restart(
        state_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``token --rotate``: a new 64-hex token, mode 0600, other tokens untouched; the
    output says a running bridge keeps the old one until restarted."""
    old = config.load_or_create_token()
    http_old = config.load_or_create_token(config.mcp_http_token_path())
    assert cli.main(["token", "--rotate"]) == cli.EXIT_OK
    new = config.read_token_file(state_dir / "token")
    assert new != old and len(new) == 64 and int(new, 16) >= 0
    assert (state_dir / "token").stat().st_mode & 0o777 == 0o600
    assert config.read_token_file(config.mcp_http_token_path()) == http_old
    out = capsys.readouterr().out
    assert "keeps the old token until it is restarted" in out
    assert "no bridge is running" in out
    assert new not in out and old not in out

    assert cli.main(["token", "--rotate", "--mcp-http"]) == cli.EXIT_OK
    assert config.read_token_file(config.mcp_http_token_path()) != http_old
    assert config.read_token_file(state_dir / "token") == new
    assert "restart it" in capsys.readouterr().out


async def test_a_running_bridge_keeps_the_old_token_until_restarted(
        state_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--rotate`` names the running bridge to restart, and what it says is true: that
    bridge still takes the old token and refuses the new one, which a bridge started
    afterwards takes."""
    old = config.load_or_create_token()
    server = BridgeServer(old, host="127.0.0.1", port=0)
    await server.start()
    sleeper = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "import time; time.sleep(60)")
    try:
        # The endpoint file as `trustbridge up` (another process) leaves it.
        (state_dir / "endpoint.json").write_text(
            json.dumps({"url": server.url, "pid": sleeper.pid}))
        assert cli.main(["token", "--rotate"]) == cli.EXIT_OK
        said = capsys.readouterr().out
        assert f"pid {sleeper.pid}, {server.url}" in said and "restart" in said
        new = config.read_token_file(state_dir / "token")
        assert new != old
        with pytest.raises(E.Unauthorized):
            await asyncio.wait_for(BridgeClient.connect(server.url, new), STEP_S)
        async with await asyncio.wait_for(BridgeClient.connect(server.url, old), STEP_S):
            pass
    finally:
        sleeper.kill()
        await sleeper.wait()
        await server.stop()
    restarted = BridgeServer(config.load_or_create_token(), host="127.0.0.1", port=0)
    await restarted.start()
    try:
        async with await asyncio.wait_for(BridgeClient.connect(restarted.url), STEP_S):
            pass
    finally:
        await restarted.stop()
