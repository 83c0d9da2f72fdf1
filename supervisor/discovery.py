"""Which browser binary a launch runs: every candidate this machine has, in one
documented order, each used, usable or refused with the reason (issue 17 item 2).

Order (docs/install.md, "Which browser runs"), first usable one wins:

1. ``--executable-path`` (:func:`find_browser`'s ``executable_path``);
2. ``$TRUSTBRIDGE_<BROWSER>`` (``TRUSTBRIDGE_CHROMIUM`` / ``_FIREFOX`` / ``_CAMOUFOX``),
   then ``$TRUSTBRIDGE_EXECUTABLE_PATH`` (the environment form of ``--executable-path``
   that ``trustbridge mcp`` also reads; ``$TRUSTBRIDGE_BROWSER`` is the browser *name*
   there, so it is not a path here);
3. chromium: the system package (Debian ``chromium``, Ubuntu ``chromium-browser``) on
   PATH; Playwright's Chromium (``playwright install chromium``: a Chrome for Testing
   build under ``$PLAYWRIGHT_BROWSERS_PATH`` or ``~/.cache/ms-playwright``); Chrome for
   Testing as ``npx @puppeteer/browsers install chrome`` leaves it
   (``~/.cache/puppeteer``); Google Chrome last.
   firefox: ``firefox-esr``, then ``firefox`` on PATH.
   camoufox: the build ``python -m camoufox fetch`` installed (never downloaded here).

Google Chrome 137 and later is recognised and refused, also when named explicitly: its
branded builds no longer honour ``--load-extension`` (Chrome release notes 137, "Remove
the --load-extension switch"), so our extension would never connect. Chromium, Chrome
for Testing and Playwright's Chromium still load it.

A path named explicitly (1, 2) that is missing is an error naming where it came from,
never silently replaced by another browser. Everything here is pure but for
:func:`probe_version` (one ``<binary> --version``, about 50 ms, cached per path) and the
file-system look-ups, which take their roots as arguments so tests fake them.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from trustbridge.bridge.protocol import errors as E

CHROME_MIN_REFUSED = 137
"""First Google Chrome major that ignores ``--load-extension``."""

CHROME_REFUSAL = ("Google Chrome {major} ignores --load-extension (branded Chrome removed "
                  "it in version 137), so the trustbridge extension would never load; use "
                  "Chromium, Playwright's Chromium or Chrome for Testing instead")

INSTALL = {
    "chromium": "sudo apt-get install chromium",
    "firefox": "sudo apt-get install firefox-esr",
    "camoufox": "python -m camoufox fetch",
}
"""The one command that installs each browser on Debian/Ubuntu (camoufox: its own fetch)."""

CAMOUFOX_EXTRA = "pip install 'trustbridge[camoufox]'"
"""What adds the camoufox package, an optional extra (pyproject.toml): the base install
carries what Chromium and Firefox need only."""


def camoufox_package_missing() -> str | None:
    """Why ``--browser camoufox`` cannot run for want of the camoufox package, with the
    commands that add it and the browser; None when it is importable (not imported here:
    importing it takes about 1 s)."""
    if _has_module("camoufox"):
        return None
    return (f"Camoufox support is an optional extra that is not installed here: run "
            f"`{CAMOUFOX_EXTRA}` in the environment trustbridge runs from, then "
            f"`{INSTALL['camoufox']}` for the browser itself (or use --browser chromium or "
            "firefox, which need no extra).")

PLAYWRIGHT_INSTALL = "python -m playwright install chromium"
"""Where apt-get is not available (and the network allows): Playwright's own Chromium."""

Which = Callable[[str, str | None], str | None]
Probe = Callable[[str], str | None]


@dataclass(frozen=True)
class Candidate:
    """One browser binary found for a ``--browser`` name."""

    browser: str
    """The ``--browser`` it serves: chromium, firefox or camoufox."""
    path: str
    source: str
    """Where it was found, e.g. "--executable-path", "$TRUSTBRIDGE_CHROMIUM", "system
    package", "Playwright", "Chrome for Testing", "Google Chrome"."""
    version: str | None = None
    """First line of ``<path> --version`` (None: not asked, or it printed nothing)."""
    refused: str | None = None
    """Why it is never used (None: usable)."""
    explicit: bool = False
    """Named by the user (flag or variable): an error if it cannot run, no fallback."""

    @property
    def usable(self) -> bool:
        return self.refused is None

    def to_json(self, used: bool) -> dict[str, Any]:
        """``{browser, path, source, version, status, reason}``; status is "used",
        "usable" (found after the used one) or "refused"."""
        data = asdict(self)
        data.pop("explicit")
        data["status"] = "refused" if self.refused else ("used" if used else "usable")
        data["reason"] = data.pop("refused")
        return data


@functools.cache
def probe_version(path: str) -> str | None:
    """First line of ``<path> --version``, e.g. "Chromium 156.0.8078.114 built on Debian
    GNU/Linux 12 (bookworm)" or "Google Chrome 140.0.7339.80"; None when it cannot run."""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10,
                             check=False, stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    return lines[0] if lines else None


def chrome_refusal(version: str | None) -> str | None:
    """Why a Chromium-family binary reporting ``version`` cannot load our extension
    (branded Google Chrome ≥ :data:`CHROME_MIN_REFUSED`), else None (pure).

    "Google Chrome for Testing …" and "Chromium …" are never refused.
    """
    found = re.match(r"Google Chrome (\d+)\.", version or "")
    if found and int(found.group(1)) >= CHROME_MIN_REFUSED:
        return CHROME_REFUSAL.format(major=found.group(1))
    return None


def _by_version_desc(paths: list[Path], pattern: str) -> list[Path]:
    """``paths`` newest first by the numbers in the folder ``pattern`` matches."""
    def key(path: Path) -> tuple[int, ...]:
        found = re.search(pattern, str(path))
        return tuple(int(n) for n in re.findall(r"\d+", found.group(1))) if found else ()
    return sorted(paths, key=key, reverse=True)


def playwright_registry(env: Mapping[str, str], home: Path) -> Path | None:
    """Playwright's browser folder: ``$PLAYWRIGHT_BROWSERS_PATH`` (``0`` means inside the
    playwright package, which we do not look into: None), else
    ``${XDG_CACHE_HOME:-~/.cache}/ms-playwright`` (Playwright's registry, Linux)."""
    custom = env.get("PLAYWRIGHT_BROWSERS_PATH")
    if custom:
        return None if custom == "0" else Path(custom).expanduser()
    return Path(env.get("XDG_CACHE_HOME") or home / ".cache") / "ms-playwright"


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _chromium_places(env: Mapping[str, str], home: Path, root: Path,
                     which: Which) -> Iterator[tuple[str, str]]:
    """``(source, path)`` of every Chromium-family binary, in the documented order."""
    path_var = env.get("PATH")
    for name in ("chromium", "chromium-browser"):
        if found := which(name, path_var):
            yield "system package", found
    registry = playwright_registry(env, home)
    if registry is not None:
        # chrome-linux64 (x64, Playwright ≥ 1.57's Chrome for Testing builds), chrome-linux
        # (arm64 and older releases). The headless shell cannot load extensions: skipped.
        found_pw = [*registry.glob("chromium-*/chrome-linux64/chrome"),
                    *registry.glob("chromium-*/chrome-linux/chrome")]
        for path in _by_version_desc(found_pw, r"chromium-(\d+)"):
            if path.parent.parent.name.startswith("chromium-") and "tip-of-tree" not in str(path):
                yield "Playwright", str(path)
    puppeteer = Path(env.get("PUPPETEER_CACHE_DIR") or home / ".cache" / "puppeteer")
    for path in _by_version_desc(list(puppeteer.glob("chrome/linux*-*/chrome-linux64/chrome")),
                                 r"linux\w*-([\d.]+)"):
        yield "Chrome for Testing", str(path)
    for name in ("google-chrome", "google-chrome-stable", "google-chrome-beta",
                 "google-chrome-unstable"):
        if found := which(name, path_var):
            yield "Google Chrome", found
    for fixed in ("opt/google/chrome/chrome", "opt/google/chrome-beta/chrome"):
        if _executable(root / fixed):
            yield "Google Chrome", str(root / fixed)


def _firefox_places(env: Mapping[str, str], which: Which) -> Iterator[tuple[str, str]]:
    for name in ("firefox-esr", "firefox"):
        if found := which(name, env.get("PATH")):
            yield "system package", found


def _camoufox_place() -> Iterator[tuple[str, str]]:
    """The build ``camoufox fetch`` installed, asked with ``download_if_missing=False``.

    Looking has no side effects: camoufox's own ``camoufox_path`` deletes an install
    folder it finds incompatible (and prints "Cleaning old data..." on stdout), so such a
    folder is left alone and reported as nothing found; whatever the library prints goes
    to stderr (stdout is the MCP server's JSON-RPC stream)."""
    try:
        from camoufox.multiversion import COMPAT_FLAG
        from camoufox.pkgman import INSTALL_DIR, camoufox_path, launch_path

        if os.path.isdir(INSTALL_DIR) and os.listdir(INSTALL_DIR) and not COMPAT_FLAG.exists():
            return  # camoufox_path would remove it: a look must not
        with contextlib.redirect_stdout(sys.stderr):
            path = launch_path(camoufox_path(download_if_missing=False))
    except Exception:  # noqa: BLE001 - not installed, unsupported version, no package
        return
    yield "camoufox fetch", str(path)


def candidates(browser: str, executable_path: str | None = None, *,
               env: Mapping[str, str] | None = None, home: Path | None = None,
               root: Path = Path("/"), which: Which | None = None,
               probe: Probe = probe_version, probe_all: bool = False) -> list[Candidate]:
    """Every binary for ``browser`` in the documented order (module docstring).

    Args:
        browser: chromium, firefox or camoufox.
        executable_path: ``--executable-path``; when given it is the only candidate.
        env: the environment (default ``os.environ``): PATH, HOME, the variables above.
        home: the home folder (default ``$HOME`` of ``env``, else ``Path.home()``).
        root: prefix of fixed absolute paths (``/opt/google/chrome``); tests pass a tmp dir.
        which: ``shutil.which(name, path)``-like lookup on ``env``'s PATH.
        probe: ``path → version line`` (default :func:`probe_version`).
        probe_all: ask every candidate its version (doctor); else only until the first
            usable one, Chromium-family ones only (the Google Chrome check needs it).

    Returns:
        Candidates, duplicates (same real path) removed; an explicit one first.
    """
    env = os.environ if env is None else env
    home = home or Path(env.get("HOME") or Path.home())
    which = which or (lambda name, path: shutil.which(name, path=path))
    places: list[tuple[str, str, bool]] = []
    if executable_path:
        places.append(("--executable-path", executable_path, True))
    else:
        named = (f"TRUSTBRIDGE_{browser.upper()}", "TRUSTBRIDGE_EXECUTABLE_PATH",
                 *(("CAMOUFOX_EXECUTABLE_PATH",) if browser == "camoufox" else ()))
        for var in named:
            if env.get(var):
                places.append((f"${var}", env[var], True))
                break
        else:
            found = (_chromium_places(env, home, root, which) if browser == "chromium"
                     else _firefox_places(env, which) if browser == "firefox"
                     else _camoufox_place())
            places.extend((source, path, False) for source, path in found)
    out: list[Candidate] = []
    seen: set[str] = set()
    settled = False
    for source, path, explicit in places:
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        version = refused = None
        if source == "--executable-path" and not _executable(Path(path).expanduser()):
            refused = "not an executable file"
        elif explicit and not Path(path).expanduser().is_file():
            refused = "no such file"
        elif probe_all or (browser == "chromium" and not settled):
            version = probe(path)
            if browser == "chromium":
                refused = chrome_refusal(version)
        out.append(Candidate(browser, path, source, version, refused, explicit))
        settled = settled or refused is None
    return out


def not_found(browser: str, found: list[Candidate], *, has_apt: bool | None = None) -> E.DeviceNotConnected:
    """The error of a launch with no usable binary: what was refused and why, and the one
    install command (:func:`install_command`)."""
    command = install_command(browser, has_apt=has_apt)
    refused = "; ".join(f"{c.path} ({c.version or c.source}): {c.refused}" for c in found)
    head = {"chromium": "Chromium", "firefox": "Firefox", "camoufox": "Camoufox"}[browser]
    message = (f"No usable {head} found" + (f" (refused: {refused})" if refused else "")
               + f". Install it (`{command}`), point --executable-path or "
               f"TRUSTBRIDGE_{browser.upper()} at one, or see `trustbridge doctor`.")
    return E.DeviceNotConnected(message, {"browser": browser, "install": command,
                                          "refused": [c.path for c in found]})


def install_command(browser: str, *, has_apt: bool | None = None) -> str:
    """The one command that installs ``browser``: apt-get where it exists, else (chromium)
    Playwright's own download; camoufox: its fetch, after the ``camoufox`` extra when the
    package is absent."""
    if has_apt is None:
        has_apt = shutil.which("apt-get") is not None or Path("/usr/bin/apt-get").exists()
    if browser == "chromium" and not has_apt:
        return PLAYWRIGHT_INSTALL
    if browser == "camoufox" and not _has_module("camoufox"):
        # The fetch command is the package's own: without the extra it does not exist.
        return f"{CAMOUFOX_EXTRA} && {INSTALL[browser]}"
    return INSTALL[browser]


def _has_module(name: str) -> bool:
    """``name`` is importable here (found without importing it)."""
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def find_browser(browser: str, executable_path: str | None = None, **kwargs: Any) -> str:
    """The path of the binary a launch of ``browser`` runs.

    Args:
        kwargs: :func:`candidates`' look-up roots (tests).

    Raises:
        DeviceNotConnected: an explicit path (``--executable-path``, a variable) is
            missing or refused (``details.path``, ``details.source``), or nothing usable
            was found (``details.install``: the command to run).
    """
    found = candidates(browser, executable_path, **kwargs)
    for cand in found:
        if cand.explicit and cand.refused:
            what = "--executable-path" if cand.source == "--executable-path" else cand.source
            raise E.DeviceNotConnected(
                f"{what} {cand.path}: {cand.refused}. Point it at a {browser} binary or "
                "leave it out to use the installed one (`trustbridge doctor` lists them).",
                {"path": cand.path, "source": cand.source})
        if cand.usable:
            return cand.path
    raise not_found(browser, found)


def report(browsers: tuple[str, ...] = ("chromium", "firefox", "camoufox"),
           **kwargs: Any) -> list[dict[str, Any]]:
    """What ``trustbridge doctor`` prints per browser: ``{browser, candidates:
    [Candidate.to_json], install}`` (``install``: the command, when none is usable)."""
    out = []
    for browser in browsers:
        found = candidates(browser, probe_all=True, **kwargs)
        used = next((c for c in found if c.usable), None)
        out.append({"browser": browser,
                    "candidates": [c.to_json(c is used) for c in found],
                    "install": None if used else install_command(browser)})
    return out


def report_lines(entries: list[dict[str, Any]]) -> list[str]:
    """Human lines of :func:`report` (pure)."""
    lines = ["browsers on this machine (first usable one runs; --executable-path overrides):"]
    for entry in entries:
        if not entry["candidates"]:
            lines.append(f"  {entry['browser']}: none found")
        for c in entry["candidates"]:
            state = c["status"] + (f": {c['reason']}" if c["reason"] else "")
            lines.append(f"  {entry['browser']}: {c['path']} ({c['version'] or 'version unknown'}"
                         f"; {c['source']}) {state}")
        if entry["install"]:
            lines.append(f"  {entry['browser']}: install with `{entry['install']}`")
    return lines
