"""Chromium's launch flags (supervisor/launcher.py): no automation flag for the page and
a user agent without "Headless", derived from the binary's version; no browser started."""

from __future__ import annotations

from pathlib import Path

from trustbridge.supervisor.launcher import chromium_args, chromium_user_agent


def _fake_binary(tmp_path: Path, version_line: str) -> str:
    exe = tmp_path / "chromium"
    exe.write_text(f"#!/bin/sh\necho '{version_line}'\n")
    exe.chmod(0o755)
    return str(exe)


def test_the_user_agent_is_chrome_of_the_binarys_major_version(tmp_path: Path) -> None:
    """Debian's version line gives Chrome/<major>.0.0.0, never HeadlessChrome."""
    exe = _fake_binary(tmp_path, "Chromium 156.0.8078.114 built on Debian GNU/Linux 12")
    agent = chromium_user_agent(exe)
    assert agent == ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
                     "Chrome/156.0.0.0 Safari/537.36")


def test_an_unreadable_version_keeps_the_browsers_own_user_agent(tmp_path: Path) -> None:
    """No version in the output (or no binary): None, so no --user-agent flag is passed."""
    assert chromium_user_agent(_fake_binary(tmp_path, "something else")) is None
    assert chromium_user_agent(str(tmp_path / "missing")) is None
    assert not any(a.startswith("--user-agent") for a in chromium_args(tmp_path, None))


def test_flags_hide_the_automation_flag_and_set_the_user_agent(tmp_path: Path) -> None:
    """AutomationControlled is disabled (navigator.webdriver false) and the UA is a flag."""
    args = chromium_args(tmp_path, "UA/1")
    assert "--disable-blink-features=AutomationControlled" in args
    assert "--user-agent=UA/1" in args
    assert f"--load-extension={tmp_path}" in args
