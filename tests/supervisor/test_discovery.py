"""Browser discovery (supervisor/discovery.py) on a faked file system: fake executables
in tmp_path that print a version, a fake PATH, HOME and /opt; no real browser runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from trustbridge.bridge.protocol import errors as E
from trustbridge.supervisor import discovery
from trustbridge.supervisor.discovery import (
    Candidate,
    candidates,
    chrome_refusal,
    find_browser,
    report,
)


def fake(path: Path, version: str) -> Path:
    """An executable at ``path`` whose ``--version`` prints ``version``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho '{version}'\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def machine(tmp_path: Path) -> dict[str, object]:
    """Look-up roots of an empty machine: PATH, HOME and / all inside tmp_path."""
    for d in ("bin", "home", "root"):
        (tmp_path / d).mkdir()
    return {"env": {"PATH": str(tmp_path / "bin"), "HOME": str(tmp_path / "home")},
            "root": tmp_path / "root"}


def test_chrome_refusal_reads_the_version_line() -> None:
    """Branded Google Chrome 137+ is refused; Chrome for Testing, Chromium and an older
    Chrome are not; an unknown version is not refused."""
    assert "ignores --load-extension" in str(chrome_refusal("Google Chrome 137.0.7151.55"))
    assert chrome_refusal("Google Chrome 140.0.7339.16 beta") is not None
    assert chrome_refusal("Google Chrome 136.0.7103.113") is None
    assert chrome_refusal("Google Chrome for Testing 151.0.7922.34") is None
    assert chrome_refusal("Chromium 156.0.8078.114 built on Debian GNU/Linux 12") is None
    assert chrome_refusal(None) is None


def test_the_documented_order(tmp_path: Path, machine: dict) -> None:
    """System chromium, then Playwright's (newest revision first, chrome-linux64 and
    chrome-linux), then Chrome for Testing, then Google Chrome; the first usable one is
    used and the Google Chrome after it is still recognised and refused."""
    home = tmp_path / "home"
    pw = home / ".cache" / "ms-playwright"
    system = fake(tmp_path / "bin" / "chromium", "Chromium 156.0.8078.114 built on Debian")
    pw_new = fake(pw / "chromium-1234" / "chrome-linux64" / "chrome",
                  "Google Chrome for Testing 151.0.7922.34")
    pw_old = fake(pw / "chromium-999" / "chrome-linux" / "chrome",
                  "Google Chrome for Testing 120.0.1.2")
    fake(pw / "chromium_headless_shell-1234" / "chrome-linux64" / "headless_shell", "x")
    cft = fake(home / ".cache" / "puppeteer" / "chrome" / "linux64-151.0.7922.34"
               / "chrome-linux64" / "chrome", "Google Chrome for Testing 151.0.7922.34")
    chrome = fake(tmp_path / "root" / "opt" / "google" / "chrome" / "chrome",
                  "Google Chrome 140.0.7339.80")
    found = candidates("chromium", probe_all=True, **machine)
    assert [(c.path, c.source) for c in found] == [
        (str(system), "system package"), (str(pw_new), "Playwright"),
        (str(pw_old), "Playwright"), (str(cft), "Chrome for Testing"),
        (str(chrome), "Google Chrome")]
    assert [c.usable for c in found] == [True, True, True, True, False]
    assert found[-1].version == "Google Chrome 140.0.7339.80"
    assert find_browser("chromium", **machine) == str(system)
    system.unlink()
    assert find_browser("chromium", **machine) == str(pw_new)


def test_launch_probes_only_until_the_first_usable(tmp_path: Path, machine: dict) -> None:
    """Outside doctor, versions are asked only until one is usable (one --version call
    for a machine with Debian's chromium)."""
    fake(tmp_path / "bin" / "chromium", "Chromium 156.0.8078.114")
    fake(tmp_path / "bin" / "google-chrome", "Google Chrome 140.0.7339.80")
    asked: list[str] = []
    found = candidates("chromium", probe=lambda p: asked.append(p) or "Chromium 1.0.0.0",
                       **machine)
    assert len(found) == 2 and asked == [str(tmp_path / "bin" / "chromium")]


def test_only_google_chrome_137_is_refused_with_what_to_use(tmp_path: Path,
                                                             machine: dict) -> None:
    """A machine with only Google Chrome 140: DeviceNotConnected naming the reason, the
    install command and the refused path; nothing is silently used."""
    chrome = fake(tmp_path / "bin" / "google-chrome-stable", "Google Chrome 140.0.7339.80")
    with pytest.raises(E.DeviceNotConnected) as info:
        find_browser("chromium", **machine)
    msg = info.value.message
    assert "ignores --load-extension" in msg and str(chrome) in msg
    assert "Chrome for Testing" in msg
    assert info.value.details["install"] in msg
    assert info.value.details["refused"] == [str(chrome)]


def test_explicit_paths_win_and_are_never_replaced(tmp_path: Path, machine: dict) -> None:
    """--executable-path, then $TRUSTBRIDGE_CHROMIUM, then $TRUSTBRIDGE_EXECUTABLE_PATH; a
    named path that is missing, not executable or Google Chrome 137+ is an error, even
    when a usable system chromium exists."""
    fake(tmp_path / "bin" / "chromium", "Chromium 156.0.8078.114")
    mine = fake(tmp_path / "mine" / "chrome", "Chromium 150.0.1.2")
    env = machine["env"]
    assert find_browser("chromium", str(mine), **machine) == str(mine)
    env["TRUSTBRIDGE_EXECUTABLE_PATH"] = str(tmp_path / "other")
    env["TRUSTBRIDGE_CHROMIUM"] = str(mine)
    assert find_browser("chromium", **machine) == str(mine)
    del env["TRUSTBRIDGE_CHROMIUM"]
    with pytest.raises(E.DeviceNotConnected, match=r"\$TRUSTBRIDGE_EXECUTABLE_PATH .*no such"):
        find_browser("chromium", **machine)
    plain = tmp_path / "plain"
    plain.write_text("")
    with pytest.raises(E.DeviceNotConnected, match="--executable-path .* not an executable"):
        find_browser("chromium", str(plain), **machine)
    branded = fake(tmp_path / "opt" / "chrome", "Google Chrome 137.0.7151.55")
    with pytest.raises(E.DeviceNotConnected, match="ignores --load-extension") as info:
        find_browser("chromium", str(branded), **machine)
    assert info.value.details == {"path": str(branded), "source": "--executable-path"}


def test_playwright_registry_follows_its_variables(tmp_path: Path) -> None:
    """$PLAYWRIGHT_BROWSERS_PATH, else $XDG_CACHE_HOME/ms-playwright, else
    ~/.cache/ms-playwright; "0" (inside the package) is not looked into."""
    home = tmp_path
    assert discovery.playwright_registry({}, home) == home / ".cache" / "ms-playwright"
    assert discovery.playwright_registry({"XDG_CACHE_HOME": "/c"}, home) == Path("/c/ms-playwright")
    assert discovery.playwright_registry({"PLAYWRIGHT_BROWSERS_PATH": "/pw"}, home) == Path("/pw")
    assert discovery.playwright_registry({"PLAYWRIGHT_BROWSERS_PATH": "0"}, home) is None


def test_firefox_order_and_same_binary_once(tmp_path: Path, machine: dict) -> None:
    """firefox-esr before firefox; a firefox that is a link to firefox-esr is listed once."""
    esr = fake(tmp_path / "bin" / "firefox-esr", "Mozilla Firefox 153.8.0esr")
    (tmp_path / "bin" / "firefox").symlink_to(esr)
    found = candidates("firefox", probe_all=True, **machine)
    assert [(c.path, c.version) for c in found] == [(str(esr), "Mozilla Firefox 153.8.0esr")]
    assert find_browser("firefox", **machine) == str(esr)


def test_nothing_found_names_the_install_command(machine: dict) -> None:
    """An empty machine: apt-get where it exists, Playwright's download where not."""
    with pytest.raises(E.DeviceNotConnected, match="apt-get install firefox-esr"):
        find_browser("firefox", **machine)
    assert discovery.install_command("chromium", has_apt=True) == "sudo apt-get install chromium"
    assert discovery.install_command("chromium", has_apt=False) == discovery.PLAYWRIGHT_INSTALL


def test_report_marks_used_usable_refused(tmp_path: Path, machine: dict,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """doctor's report: each candidate with path, version, source and status; the install
    command only for a browser with nothing usable; the lines say the same."""
    fake(tmp_path / "bin" / "chromium", "Chromium 156.0.8078.114")
    fake(tmp_path / "bin" / "chromium-browser", "Chromium 155.0.1.2")
    fake(tmp_path / "bin" / "google-chrome", "Google Chrome 140.0.7339.80")
    monkeypatch.setattr(discovery, "_camoufox_place", lambda: iter(()))
    entries = report(**machine)
    chromium, firefox, camoufox = entries
    assert [c["status"] for c in chromium["candidates"]] == ["used", "usable", "refused"]
    assert chromium["candidates"][2]["reason"].startswith("Google Chrome 140 ignores")
    assert chromium["install"] is None
    assert firefox["candidates"] == [] and "firefox-esr" in firefox["install"]
    assert camoufox["install"] == "python -m camoufox fetch"
    lines = discovery.report_lines(entries)
    assert any(line.startswith(f"  chromium: {tmp_path}/bin/chromium (Chromium 156")
               and line.endswith(" used") for line in lines)
    assert "  firefox: none found" in lines
    assert Candidate("chromium", "/x", "s").to_json(False)["status"] == "usable"
