"""``trustbridge exec -`` end to end (bridge/cli_code.py on bridge/code/): code read from
stdin loads a local page with ``await tab.goto(url)``, finds a button's ref
(``tab.find``, as docs/cli.md shows) and clicks it twice, all through the CLI's own
connection to a real bridge and browser. What counts is what the PAGE counted
(``#count``: clicks with ``isTrusted`` true and false)."""

from __future__ import annotations

import asyncio
import io
import os
from pathlib import Path

import pytest

from trustbridge.bridge import cli, cli_code

from .conftest import CHROMIUM_ONLY, Origins, Stack, page_eval

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180), CHROMIUM_ONLY]

STEP_S = 90.0
"""Upper bound on the command, s (a worker process starts, the page loads, two clicks)."""

CODE = """\
r = await tab.goto({url!r})
print('loaded', r['url'])
ref = (await tab.find(role='button', name='Add one'))['matches'][0]['ref']
first = await tab.click(ref)
second = await tab.click(ref)
print(first['inputPath'], second['inputPath'])
(await tab.snapshot()).splitlines()[-1].strip()  # the status's text, as a snapshot reads it
"""


async def test_exec_from_stdin_goes_to_a_page_and_clicks_with_trusted_input(
        stack: Stack, origins: Origins, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    token_file = tmp_path / "bridge-token"
    token_file.write_text(stack.server.token)
    os.chmod(token_file, 0o600)
    url = f"{origins.main}/cli_exec/counter.html"
    args = cli.build_parser().parse_args(
        ["exec", "-", "--bridge", stack.server.url, "--token-file", str(token_file)])

    rc = await asyncio.wait_for(cli_code.run_exec(args, io.StringIO(CODE.format(url=url))),
                                STEP_S)
    out = capsys.readouterr()
    assert rc == cli.EXIT_OK, out.err
    lines = out.out.splitlines()
    assert lines[0] == f"loaded {url}" and lines[1] == "trusted trusted"
    assert lines[2] == repr("- text: trusted 2, untrusted 0")  # the last value's repr
    # What the page itself counted.
    assert stack.page.url == url
    assert await page_eval(stack.page, "document.getElementById('count').textContent") \
        == "trusted 2, untrusted 0"
