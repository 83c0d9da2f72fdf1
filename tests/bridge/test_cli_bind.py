"""``trustbridge up --host``: binding beyond loopback is explicit, warned about, and never
drops the token. Nothing here binds a socket (tests bind 127.0.0.1 only)."""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from trustbridge.bridge import cli, config
from trustbridge.bridge.embedded import Embedded
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.errors import DeviceNotConnected


@pytest.fixture(autouse=True)
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    return tmp_path


def test_up_binds_loopback_unless_told_otherwise() -> None:
    """`up` defaults to 127.0.0.1; --host ADDR is taken as given."""
    parser = cli.build_parser()
    assert parser.parse_args(["up"]).host == "127.0.0.1"
    assert parser.parse_args(["up", "--host", "192.0.2.7"]).host == "192.0.2.7"


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_no_warning_for_loopback(host: str) -> None:
    """Loopback addresses print no warning."""
    assert config.is_loopback_host(host)
    assert cli.bind_warning(host) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.7", "10.0.0.1", "bridge.example"])
def test_warning_for_anything_else(host: str) -> None:
    """Any other address (wildcards, LAN addresses, host names) gets a warning naming it,
    saying the token is still required and pointing to TLS in docs/security.md."""
    assert not config.is_loopback_host(host)
    warning = cli.bind_warning(host)
    assert warning is not None and host in warning
    assert "token" in warning and "docs/security.md" in warning and "TLS" in warning


def test_embedded_passes_the_host_to_the_bridge_and_keeps_the_token() -> None:
    """Embedded(host=...) binds the bridge there (not started here), with the token from
    the state directory (mode 0600) like the default."""
    emb = Embedded(port=0, host="192.0.2.7")
    assert emb.server.host == "192.0.2.7"
    assert emb.server.token == emb.token == config.load_or_create_token()
    assert (config.state_dir() / "token").stat().st_mode & 0o777 == 0o600
    assert Embedded(port=0).server.host == "127.0.0.1"


@pytest.mark.parametrize(("host", "url"), [
    ("127.0.0.1", "ws://127.0.0.1:5"),
    ("0.0.0.0", "ws://127.0.0.1:5"),
    ("::", "ws://[::1]:5"),
    ("192.0.2.7", "ws://192.0.2.7:5"),
    ("fd00::7", "ws://[fd00::7]:5"),
])
def test_local_peers_reach_a_wildcard_bind_through_loopback(host: str, url: str) -> None:
    """The URL written for the supervisor, CLI and SDK: loopback for a wildcard bind,
    brackets for IPv6."""
    assert config.connect_url(host, 5) == url


async def test_up_prints_the_warning_before_starting(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`up --host 0.0.0.0` prints the warning to stderr and hands the host to Embedded."""
    seen: dict[str, Any] = {}

    class Stub:
        def __init__(self, **kwargs: Any) -> None:
            seen.update(kwargs)

        async def start(self) -> None:
            raise DeviceNotConnected("stub: starts nothing")

        async def stop(self) -> None:
            seen["stopped"] = True

    monkeypatch.setattr("trustbridge.bridge.embedded.Embedded", Stub)
    args = cli.build_parser().parse_args(["up", "--host", "0.0.0.0", "--port", "0",
                                          "--plain-ws"])
    assert isinstance(args, argparse.Namespace)
    assert await cli._cmd_up(args) == cli.EXIT_ERROR
    err = capsys.readouterr().err
    assert "WARNING: binding 0.0.0.0" in err
    assert seen["host"] == "0.0.0.0" and seen["stopped"] is True


async def test_up_beyond_loopback_without_tls_is_refused_unless_plain_ws_is_said(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bridge that listens elsewhere requires TLS (issue 36): `up --host 0.0.0.0` alone
    exits 2 before anything starts, naming --tls-listen and --plain-ws."""
    started: list[Any] = []
    monkeypatch.setattr("trustbridge.bridge.embedded.Embedded", lambda **kw: started.append(kw))
    args = cli.build_parser().parse_args(["up", "--host", "0.0.0.0", "--port", "0"])
    assert await cli._cmd_up(args) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert "--tls-listen" in err and "--plain-ws" in err and started == []


async def test_second_bridge_on_the_same_state_dir_is_refused(state_dir: Path) -> None:
    """A live bridge (another process, accepting connections at the URL in endpoint.json)
    keeps its endpoint file: a second Embedded refuses to start, naming it, and binds
    nothing; a stale file (dead pid) does not block."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        config.write_endpoint(f"ws://127.0.0.1:{port}")
        info = config.read_endpoint()
        assert info is not None
        info["pid"] = other.pid
        (state_dir / "endpoint.json").write_text(json.dumps(info))
        assert config.live_endpoint() == info
        emb = Embedded(port=0)
        with pytest.raises(E.BadRequest) as err:
            await emb.start()
        assert f"ws://127.0.0.1:{port}" in str(err.value) and str(other.pid) in str(err.value)
        assert emb.server._server is None  # never bound
        assert config.read_endpoint() == info  # untouched
    finally:
        other.kill()
        other.wait()
        listener.close()
    assert config.live_endpoint() is None  # the pid is gone: stale, does not block


async def test_up_falls_back_to_a_free_port_only_when_none_was_named(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The default port taken: `up` says so and starts on a free one (port 0); an explicit
    --port that is taken is an error, with no second try."""
    tried: list[int] = []

    class Stub:
        def __init__(self, **kwargs: Any) -> None:
            self.port = kwargs["port"]

        async def start(self) -> None:
            tried.append(self.port)
            if self.port != 0:
                raise OSError(98, "Address already in use")
            raise DeviceNotConnected("stub: starts nothing after binding")

        async def stop(self) -> None:
            pass

    monkeypatch.setattr("trustbridge.bridge.embedded.Embedded", Stub)
    assert await cli._cmd_up(cli.build_parser().parse_args(["up"])) == cli.EXIT_ERROR
    assert tried == [config.DEFAULT_PORT, 0]
    assert f"port {config.DEFAULT_PORT} is taken" in capsys.readouterr().err
    tried.clear()
    args = cli.build_parser().parse_args(["up", "--port", "4321"])
    assert await cli._cmd_up(args) == cli.EXIT_ERROR
    assert tried == [4321]
    assert "cannot listen on port 4321" in capsys.readouterr().err
