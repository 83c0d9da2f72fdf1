"""The embedded default learns of browser restarts from its supervisor's stderr
(bridge/embedded.py): the line it counts is the one supervisor/__main__.py says."""

from __future__ import annotations

import asyncio

from trustbridge.bridge import embedded
from trustbridge.bridge.embedded import Embedded
from trustbridge.supervisor import __main__ as supervisor_main


def test_the_counted_line_is_the_one_the_supervisor_says() -> None:
    """One marker for both sides: a renamed line would silently stop the count."""
    assert embedded.RESTARTED_LINE.decode() == supervisor_main.RESTARTED_LINE


async def test_restart_lines_are_counted_and_every_line_passed_through(tmp_path, monkeypatch,
                                                                       capfdbinary) -> None:
    """Two restart lines among others: restarts == 2, progress told twice, and all four
    lines reach our stderr unchanged."""
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    told: list[str] = []
    emb = Embedded(port=0, progress=told.append)
    reader = asyncio.StreamReader()
    lines = [b"supervisor: chromium up for device d\n",
             supervisor_main.RESTARTED_LINE.encode() + b" chromium for device d (restart 1)\n",
             b"some warning\n",
             supervisor_main.RESTARTED_LINE.encode() + b" chromium for device d (restart 2)\n"]
    for line in lines:
        reader.feed_data(line)
    reader.feed_eof()
    await emb._relay_stderr(reader)
    assert emb.restarts == 2
    assert len(told) == 2 and all("started again" in t for t in told)
    assert capfdbinary.readouterr().err == b"".join(lines)
