"""``trustbridge --version`` and doctor's browser lines, which need no bridge (issue 17)."""

from __future__ import annotations

import importlib.metadata
import json
import socket
import tomllib
from pathlib import Path

import pytest

from trustbridge.bridge import cli
from trustbridge.supervisor import discovery

REPO = Path(__file__).resolve().parents[2]


def test_version_is_pyprojects(capsys: pytest.CaptureFixture[str]) -> None:
    """--version prints the installed package's version, which is pyproject.toml's; the
    extension's manifest carries the same one."""
    with pytest.raises(SystemExit) as info:
        cli.build_parser().parse_args(["--version"])
    assert info.value.code == 0
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert capsys.readouterr().out == f"trustbridge {version}\n"
    assert importlib.metadata.version("trustbridge") == version
    manifest = json.loads((REPO / "extension" / "manifest.json").read_text())
    assert manifest["version"] == version, "bump extension/manifest.json with pyproject.toml"


FAKE = [{"browser": "chromium", "install": None, "candidates": [
    {"browser": "chromium", "path": "/usr/bin/chromium", "source": "system package",
     "version": "Chromium 156.0.8078.114", "status": "used", "reason": None},
    {"browser": "chromium", "path": "/opt/google/chrome/chrome", "source": "Google Chrome",
     "version": "Google Chrome 140.0.7339.80", "status": "refused",
     "reason": discovery.CHROME_REFUSAL.format(major=140)}]},
    {"browser": "firefox", "install": "sudo apt-get install firefox-esr", "candidates": []}]


@pytest.mark.parametrize("as_json", [False, True])
async def test_doctor_without_a_bridge_still_lists_browsers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        as_json: bool) -> None:
    """No bridge: exit 3 with the hint, and the browsers this machine could run: each
    candidate's path, version, status and reason, and the install command of a missing
    one."""
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    monkeypatch.setattr(cli, "_browsers", lambda: FAKE)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    argv = ["doctor", "--bridge", f"ws://127.0.0.1:{port}"] + (["--json"] if as_json else [])
    assert await cli._cmd_client(cli.build_parser().parse_args(argv)) == cli.EXIT_NO_BRIDGE
    out, err = capsys.readouterr()
    assert "trustbridge up" in err
    if as_json:
        assert json.loads(out) == {"ok": False, "browsers": FAKE}
        return
    lines = out.splitlines()
    assert "no devices connected" not in out
    assert lines[1] == ("  chromium: /usr/bin/chromium (Chromium 156.0.8078.114; system "
                        "package) used")
    assert lines[2].startswith("  chromium: /opt/google/chrome/chrome (Google Chrome 140."
                               "0.7339.80; Google Chrome) refused: Google Chrome 140 ignores "
                               "--load-extension")
    assert lines[3:] == ["  firefox: none found",
                         "  firefox: install with `sudo apt-get install firefox-esr`"]
