"""The CLI's sessions (bridge/cli_sessions.py): ``--session NAME`` kept and resumed
across invocations with its claimed tab, a stale saved secret, ``trustbridge sessions``
(list, stop — cancelling queued work — and release), against a real BridgeServer with a
fake extension and driver (tests/bridge/fakes.py). No browser."""

from __future__ import annotations

import asyncio
import json
import stat
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from trustbridge.bridge import cli, config, sdk
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.server import BridgeServer

from .fakes import FakeDriver, FakeExtension, cli_bridge, wait_until

pytestmark = pytest.mark.timeout(30)

D = "dev1"
STEP_S = 5.0
"""Upper bound, seconds, on any single await in these tests."""
URL = "http://127.0.0.1/"


@dataclass
class Bridge:
    server: BridgeServer
    ext: FakeExtension
    drv: FakeDriver

    async def run(self, *argv: str) -> int:
        """Run ``trustbridge ARGV --bridge URL`` in this loop; returns its exit code."""
        args = cli.build_parser().parse_args([*argv, "--bridge", self.server.url])
        return await asyncio.wait_for(cli._cmd_client(args), STEP_S)

    def acts(self) -> int:
        return self.drv.methods().count("driver.act")


@pytest.fixture
async def bridge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Bridge]:
    """A real bridge (token from a private state directory, as the CLI reads it) with a
    fake extension and driver for ``dev1``."""
    async with cli_bridge(tmp_path, monkeypatch, D, STEP_S) as (server, ext, drv):
        yield Bridge(server, ext, drv)


async def test_a_session_is_resumed_by_the_next_invocation_with_its_tab(
        bridge: Bridge, capsys: pytest.CaptureFixture[str]) -> None:
    assert await bridge.run("open", URL, "--session", "work") == cli.EXIT_OK
    book = bridge.server.executor.sessions
    first = book.find("work")
    assert first is not None and first.peer is None  # kept after the command exited
    assert first.tabs == {(D, 1)} and first.on_disconnect == "keep"
    path = config.session_path("work")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    saved = json.loads(path.read_text())
    assert saved["secret"] == first.secret and saved["url"] == bridge.server.url

    # The next invocation (option before the command) resumes it and acts in its tab.
    assert await bridge.run("--session", "work", "click", "e7") == cli.EXIT_OK
    assert book.find("work") is first and bridge.acts() == 1

    # A command outside the session is refused there; the driver receives nothing.
    capsys.readouterr()
    assert await bridge.run("click", "e7") == cli.EXIT_ERROR
    err = capsys.readouterr().err
    assert err.startswith("error TAB_CLAIMED:") and "'work'" in err
    assert first.secret not in err and bridge.acts() == 1


async def test_a_stale_secret_silently_opens_a_new_session(
        bridge: Bridge, capsys: pytest.CaptureFixture[str]) -> None:
    config.write_session("work", {"label": "work", "secret": "x" * 32,
                                  "url": bridge.server.url})
    assert await bridge.run("tabs", "--session", "work") == cli.EXIT_OK
    assert capsys.readouterr().err == ""
    session = bridge.server.executor.sessions.find("work")
    assert session is not None
    assert json.loads(config.session_path("work").read_text())["secret"] == session.secret


async def test_a_secret_goes_only_to_the_bridge_that_gave_it(bridge: Bridge) -> None:
    config.write_session("work", {"label": "work", "secret": "y" * 32,
                                  "url": "ws://127.0.0.1:1"})
    assert await bridge.run("tabs", "--session", "work") == cli.EXIT_OK
    saved = json.loads(config.session_path("work").read_text())
    assert saved["url"] == bridge.server.url and saved["secret"] != "y" * 32


async def test_a_label_live_elsewhere_is_an_error(
        bridge: Bridge, capsys: pytest.CaptureFixture[str]) -> None:
    async with await sdk.Browser.connect(bridge.server.url, bridge.server.token,
                                         session="work"):
        assert await bridge.run("tabs", "--session", "work") == cli.EXIT_ERROR
    assert "in use by a live session" in capsys.readouterr().err


def test_a_bad_label_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    for label in ("a/b", "", " lead", "x" * 65):
        with pytest.raises(SystemExit) as info:
            cli.build_parser().parse_args(["tabs", "--session", label])
        assert info.value.code == cli.EXIT_USAGE
    assert "is not a session label" in capsys.readouterr().err


async def test_sessions_lists_them(bridge: Bridge, capsys: pytest.CaptureFixture[str]) -> None:
    assert await bridge.run("open", URL, "--session", "work") == cli.EXIT_OK
    capsys.readouterr()
    # Without --operator: no other session's label (docs/security.md "Who may do what").
    assert await bridge.run("sessions") == cli.EXIT_OK
    assert capsys.readouterr().out.splitlines() == [
        "no sessions of yours", "1 other session(s): their labels are shown with --operator"]
    assert await bridge.run("sessions", "--operator") == cli.EXIT_OK
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["LABEL", "TABS", "CONNECTED", "LEASE", "LEFT", "LAST",
                                "ACTION", "IN", "FLIGHT"]
    assert len(lines) == 2  # this command's own throwaway session is not shown
    row = lines[1]
    assert row.split()[:4] == ["work", "dev1:1", "no", "(keep)"]
    assert "page.navigate" in row and row.rstrip().endswith("0")

    assert await bridge.run("sessions", "--json", "--operator") == cli.EXIT_OK
    rows = json.loads(capsys.readouterr().out)["result"]["sessions"]
    work = next(r for r in rows if r["label"] == "work")
    assert work["tabs"] == [{"device": D, "tabId": 1}] and work["connected"] is False
    assert 0 < work["expiresInMs"] <= 120_000 and "secret" not in work

    assert await bridge.run("sessions", "--session", "work") == cli.EXIT_OK
    assert capsys.readouterr().out.splitlines()[1].startswith("*  work")  # yours, listed


async def test_sessions_stop_cancels_queued_work_and_frees_the_tab(
        bridge: Bridge, capsys: pytest.CaptureFixture[str]) -> None:
    browser = await sdk.Browser.connect(bridge.server.url, bridge.server.token, D,
                                        session="busy")
    async with browser:
        tab = sdk.Tab(browser.client, D, 1)
        await asyncio.wait_for(tab.goto(URL), STEP_S)  # claims tab 1
        bridge.ext.delays["page.navigate"] = 3.0
        running = asyncio.create_task(tab.goto(URL))
        await wait_until(lambda: bridge.ext.methods().count("page.navigate") == 2)
        queued = asyncio.create_task(tab.click("e7"))  # waits behind the navigation
        session = bridge.server.executor.sessions.find("busy")
        assert session is not None
        await wait_until(lambda: session.busy() == 2)  # the bridge has it queued
        # "busy" is an SDK session: no saved secret, so only an operator stops it.
        assert await bridge.run("sessions", "stop", "busy", "--json") == cli.EXIT_ERROR
        assert "UNAUTHORIZED" in capsys.readouterr().out  # --json: the error payload
        assert await bridge.run("sessions", "stop", "busy", "--json",
                                "--operator") == cli.EXIT_OK
        result = json.loads(capsys.readouterr().out)["result"]
        assert (result["stopped"], result["cancelled"], result["running"]) == (True, 1, 1)
        assert result["released"] == [{"device": D, "tabId": 1}]
        with pytest.raises(E.Cancelled):
            await asyncio.wait_for(queued, STEP_S)
        assert (await asyncio.wait_for(running, 10.0))["tabId"] == 1  # it finished
        assert bridge.acts() == 0  # the queued click never ran
    del bridge.ext.delays["page.navigate"]
    assert bridge.server.executor.sessions.find("busy") is None
    assert await bridge.run("click", "e7") == cli.EXIT_OK  # the tab is free again


async def test_sessions_stop_forgets_the_saved_secret(
        bridge: Bridge, capsys: pytest.CaptureFixture[str]) -> None:
    assert await bridge.run("open", URL, "--session", "work") == cli.EXIT_OK
    assert config.read_session("work") is not None
    capsys.readouterr()
    assert await bridge.run("sessions", "stop", "work") == cli.EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith("stopped session work: 0 queued request(s) cancelled")
    assert "dev1:1" in out
    assert config.read_session("work") is None
    assert bridge.server.executor.sessions.find("work") is None
    assert await bridge.run("sessions", "stop", "work",
                            "--operator") == cli.EXIT_ERROR  # none live
    assert "No live session" in capsys.readouterr().err
    assert await bridge.run("sessions", "stop") == cli.EXIT_ERROR
    assert "Name the session to stop" in capsys.readouterr().err


async def test_sessions_release_frees_your_tabs(
        bridge: Bridge, capsys: pytest.CaptureFixture[str]) -> None:
    assert await bridge.run("open", URL, "--session", "work") == cli.EXIT_OK
    capsys.readouterr()
    assert await bridge.run("sessions", "release", "--session", "work") == cli.EXIT_OK
    assert capsys.readouterr().out.strip() == \
        "session work released tabs (left open): dev1:1"
    session = bridge.server.executor.sessions.find("work")
    assert session is not None and session.tabs == set()
    assert await bridge.run("sessions", "release") == cli.EXIT_ERROR
    assert "--session NAME" in capsys.readouterr().err
