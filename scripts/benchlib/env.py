"""Facts about the run: machine, versions, and the Playwright MCP install the peer arms use.

``@playwright/mcp`` is installed with npm into a cache folder outside the repository
(``$XDG_CACHE_HOME/trustbridge-bench``, default ``~/.cache/trustbridge-bench``) with
``PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1``: it is pointed at Debian's Chromium and never
downloads a browser.
"""

from __future__ import annotations

import datetime as dt
import functools
import importlib.metadata
import json
import os
import platform
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PLAYWRIGHT_MCP_VERSION = "0.0.86"
"""The ``@playwright/mcp`` version the peer arms run (pinned so runs compare)."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "trustbridge-bench"


def ensure_playwright_mcp(version: str = PLAYWRIGHT_MCP_VERSION) -> Path:
    """Install ``@playwright/mcp@version`` with npm (once) and return its CLI path.

    Raises:
        RuntimeError: npm is missing or the install failed (its output in the message).
    """
    folder = cache_dir() / f"playwright-mcp-{version}"
    cli = folder / "node_modules" / ".bin" / "playwright-mcp"
    if cli.exists():
        return cli
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not installed (apt-get install npm)")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text('{"private": true}\n')
    env = dict(os.environ, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1")
    proc = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--prefix", str(folder),
         f"@playwright/mcp@{version}"],
        env=env, capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode != 0 or not cli.exists():
        raise RuntimeError(f"npm install @playwright/mcp@{version} failed: "
                           f"{(proc.stderr or proc.stdout)[-800:]}")
    return cli


def installed_playwright_mcp_version(cli: Path) -> str:
    """The version in the installed package's package.json, or ``?``."""
    pkg = cli.parent.parent / "@playwright" / "mcp" / "package.json"
    try:
        return str(json.loads(pkg.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return "?"


def _meminfo_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "?"


@functools.cache
def _git_revision() -> str:
    """The checkout's revision, ``+dirty`` with uncommitted changes; read once, at the first
    call (bench.py calls :func:`versions` at the start, before it writes its own results
    into the tree, which made every run of a clean checkout look dirty)."""
    try:
        rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=False).stdout.strip()
        return rev + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "?"


def _node_version() -> str:
    node = shutil.which("node")
    if not node:
        return "?"
    try:
        return subprocess.run([node, "--version"], capture_output=True, text=True,
                              timeout=10, check=False).stdout.strip().lstrip("v")
    except (OSError, subprocess.SubprocessError):
        return "?"


def machine() -> dict[str, object]:
    """``{cpu, cores, ram_gib, os, python, date}`` (date: UTC, ISO 8601)."""
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "ram_gib": _meminfo_gib(),
        "os": f"{platform.system()} {platform.release()} {platform.machine()}",
        "python": platform.python_version(),
        "date": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
    }


def versions(chromium: str, playwright_mcp: str | None) -> dict[str, str]:
    """Versions of everything measured: browser, packages, the repo revision."""
    return {
        "chromium": chromium,
        "playwright_python": _version("playwright"),
        "trustbridge": f"{_version('trustbridge')} ({_git_revision()})",
        "playwright_mcp": playwright_mcp or "not run",
        "mcp_python": _version("mcp"),
        "websockets": _version("websockets"),
        "node": _node_version(),
    }
