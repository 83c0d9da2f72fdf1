"""``trustbridge --session NAME`` end to end (bridge/cli_sessions.py): CLI commands run one
after another against a real bridge and browser; the session the first opens is resumed
by the next with its tab, a command outside it is refused there and the PAGE records
nothing, and ``sessions stop`` frees the tab. What counts is what the page recorded
(``#status``: the click's ``isTrusted``)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from trustbridge.bridge import cli

from .conftest import CHROMIUM_ONLY, Origins, Stack, ref_of

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120), CHROMIUM_ONLY]

STEP_S = 30.0


async def test_cli_session_is_resumed_with_its_tab_and_others_are_refused(
        stack: Stack, origins: Origins, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))  # the session files go here
    token_file = tmp_path / "bridge-token"
    token_file.write_text(stack.server.token)
    os.chmod(token_file, 0o600)

    async def run(*argv: str) -> int:
        args = cli.build_parser().parse_args(
            [*argv, "--bridge", stack.server.url, "--token-file", str(token_file)])
        return await asyncio.wait_for(cli._cmd_client(args), STEP_S)

    async def status() -> str:
        return await stack.page.evaluate("document.getElementById('status').textContent")

    assert await run("--session", "cli-a", "open", f"{origins.main}/mcp.html") == cli.EXIT_OK
    capsys.readouterr()
    assert await run("--session", "cli-a", "snapshot", "--json") == cli.EXIT_OK
    record = ref_of(json.loads(capsys.readouterr().out)["result"]["snapshot"],
                    "button", "Record")

    # Outside the session: refused before anything reaches the page.
    assert await run("click", record) == cli.EXIT_ERROR
    assert "TAB_CLAIMED" in capsys.readouterr().err
    assert await status() == "nothing recorded"

    # The session, resumed by a third command, still owns the tab and acts in it.
    assert await run("--session", "cli-a", "click", record) == cli.EXIT_OK
    assert (await status()).startswith("click isTrusted=true")

    capsys.readouterr()
    assert await run("sessions", "stop", "cli-a") == cli.EXIT_OK
    assert capsys.readouterr().out.startswith("stopped session cli-a")
    await stack.page.evaluate("document.getElementById('status').textContent = 'reset'")
    assert await run("click", record) == cli.EXIT_OK  # the tab is free: anyone may act
    assert (await status()).startswith("click isTrusted=true")
