"""``trustbridge extension`` / ``pair`` / ``attach`` (bridge/cli_attach.py) without a
browser: the folder and steps printed, a code made through a real bridge, the refusals
``attach`` gives before it would drive anything."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest

from trustbridge.bridge import cli, cli_attach, config
from trustbridge.bridge.pairing import CODE_ALPHABET, normalise_code
from trustbridge.bridge.server import BridgeServer

pytestmark = pytest.mark.timeout(30)


def test_extension_prints_the_built_folder_and_both_browsers_steps(
        capsys: pytest.CaptureFixture[str]) -> None:
    from trustbridge.supervisor.extension_copy import extension_source

    assert cli.main(["extension"]) == 0
    out = capsys.readouterr().out
    folder = str(extension_source())
    assert folder in out and "Load unpacked" in out and "Load Temporary Add-on" in out
    assert f"{folder}/manifest.json" in out
    assert (Path(folder) / "options.html").is_file()  # the page that pairs it
    assert cli.main(["extension", "--path"]) == 0
    assert capsys.readouterr().out.strip() == folder


async def test_pair_prints_a_code_of_the_running_bridge(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    server = BridgeServer(config.load_or_create_token(), port=0)
    await server.start()
    try:
        args = cli.build_parser().parse_args(["pair", "--device", "laptop",
                                              "--bridge", server.url])
        assert await asyncio.wait_for(cli._cmd_client(args), 10) == 0
        out = capsys.readouterr().out
        line = next(x for x in out.splitlines() if x.startswith("pairing code: "))
        code = normalise_code(line.removeprefix("pairing code: "))
        assert len(code) == 8 and set(code) <= set(CODE_ALPHABET)
        assert "device: laptop (valid 5 min, once)" in out and server.url in out
        assert server.pairing.redeem(code)[0] == "laptop"  # the bridge made that code
    finally:
        await server.stop()


def test_attach_refuses_a_bridge_url_beyond_loopback_before_connecting(
        capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["attach", "--cdp", "http://127.0.0.1:9", "--bridge", "ws://10.1.2.3:1"])
    assert code == cli.EXIT_USAGE
    assert "not connecting" in capsys.readouterr().err


def test_attach_without_a_devtools_endpoint_fails_with_the_next_step(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = cli.main(["attach", "--cdp", f"http://127.0.0.1:{port}",
                     "--bridge", "ws://127.0.0.1:1"])
    err = capsys.readouterr().err
    assert code == cli.EXIT_ERROR
    assert "DEVICE_NOT_CONNECTED" in err and "--remote-debugging-port" in err


def test_a_devtools_endpoint_beyond_loopback_is_warned_about() -> None:
    assert cli_attach.cdp_warning("http://127.0.0.1:9222") is None
    assert cli_attach.cdp_warning("http://localhost:9222") is None
    assert "drives that browser" in (cli_attach.cdp_warning("http://192.168.1.5:9222") or "")
