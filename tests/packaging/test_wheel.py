"""The package as a new user gets it (issue 17 item 1): an sdist built from this tree, a
wheel built from that sdist, installed into a fresh virtual environment (no system or
project site-packages), then ``trustbridge demo`` run from an empty folder: it must find
the packaged extension through importlib.resources and the machine's Chromium.

The wheel's dependencies come from a wheelhouse (``$TRUSTBRIDGE_WHEELHOUSE``, default
``~/.cache/trustbridge/wheelhouse``) filled from the package index the first time
(``pip download``, about 60 s and 150 MB), so later runs install offline. Slow: about
30 s with a filled wheelhouse, 90 s without (measured on a loaded 2-core machine).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DIST = REPO / "extension" / "dist"
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
WHEELHOUSE = Path(os.environ.get("TRUSTBRIDGE_WHEELHOUSE")
                  or Path.home() / ".cache" / "trustbridge" / "wheelhouse")
SKIP_IN_COPY = shutil.ignore_patterns(
    ".git", ".venv", "node_modules", "__pycache__", ".pytest_cache", ".hypothesis",
    ".ruff_cache", "*.egg-info", "build", "dist-wheel", "tests", "docs")

WHERE = ("import supervisor, trustbridge, trustbridge.bridge.sdk, trustbridge.supervisor; "
         "from trustbridge import Browser, SyncBrowser; "
         "from trustbridge.supervisor.extension_copy import extension_source; "
         "print(trustbridge.bridge.sdk.__file__, trustbridge.supervisor.__file__, "
         "extension_source(), supervisor.__file__)")
"""Prints where the installed packages and the extension they load come from, and where
``supervisor`` (PyPI's process control system, installed beside) comes from."""

PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
"""The project venv's pip; ``--python`` points it at the venv it installs into."""

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def run(cmd: list[str | Path], *, timeout: float, **kwargs: object) -> subprocess.CompletedProcess[str]:
    """``cmd`` with output captured; a failure shows the command's output."""
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                          timeout=timeout, check=False, **kwargs)  # type: ignore[call-overload]
    assert done.returncode == 0, f"{cmd} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what would let the fresh venv see the clone."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "TRUSTBRIDGE_EXTENSION_DIR",
                        "PYTHONHOME", "PYTHONSTARTUP")}
    return {**env, "PIP_DISABLE_PIP_VERSION_CHECK": "1", **extra}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``{sdist, wheel}``: the sdist of a copy of this tree, and the wheel built from it."""
    work = tmp_path_factory.mktemp("pkg")
    tree = work / "tree"
    shutil.copytree(REPO, tree, ignore=SKIP_IN_COPY, symlinks=True)
    env = clean_env()
    builder = work / "build-env"
    run([sys.executable, "-m", "venv", "--without-pip", builder], timeout=120, env=env)
    # setuptools ≥ 70.1 builds wheels itself (no `wheel` package); pyproject asks ≥ 68.
    install(builder, "setuptools>=70.1", env)
    out = work / "out"
    sdist = run([builder / "bin" / "python", "-c",
                 f"from setuptools import build_meta as b; print(b.build_sdist({str(out)!r}))"],
                timeout=300, cwd=tree, env=env).stdout.strip().splitlines()[-1]
    wheels = work / "wheels"
    run([*PIP, "--python", builder / "bin" / "python", "wheel", "-q", "--no-deps",
         "--no-build-isolation", "-w", wheels, out / sdist], timeout=300, env=env)
    (wheel,) = wheels.glob("trustbridge-*.whl")
    return {"sdist": out / sdist, "wheel": wheel}


def test_sdist_and_wheel_carry_the_built_extension(built: dict[str, Path]) -> None:
    """The sdist holds extension/dist; the wheel built from it holds the same files,
    byte for byte, in trustbridge/supervisor/extension_dist/, its version is pyproject's, and
    everything it installs lives under ``trustbridge/`` (issue 34 item 2: no top-level
    ``bridge`` or ``supervisor`` to collide with another distribution's)."""
    names = (DIST / "FILES").read_text().split()
    with tarfile.open(built["sdist"]) as sdist:
        inside = {Path(m.name).relative_to(Path(m.name).parts[0]).as_posix()
                  for m in sdist.getmembers() if len(Path(m.name).parts) > 1}
    assert {f"extension/dist/{n}" for n in [*names, "FILES"]} <= inside
    assert built["wheel"].name == f"trustbridge-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(built["wheel"]) as wheel:
        for name in [*names, "FILES"]:
            assert (wheel.read(f"trustbridge/supervisor/extension_dist/{name}")
                    == (DIST / name).read_bytes())
        tops = {n.split("/")[0] for n in wheel.namelist()}
        assert tops == {"trustbridge", f"trustbridge-{VERSION}.dist-info"}, tops
        assert "trustbridge/bridge/sdk.py" in wheel.namelist()


def install(venv: Path, requirement: str | Path, env: dict[str, str]) -> None:
    """Install ``requirement`` and its dependencies into ``venv`` (made ``--without-pip``:
    this process's pip installs into it) from :data:`WHEELHOUSE`, filling that from the
    index first when something is missing."""
    pip = [*PIP, "--python", venv / "bin" / "python"]
    offline = [*pip, "install", "-q", "--no-index", "--find-links", WHEELHOUSE, requirement]
    first = subprocess.run([str(c) for c in offline], capture_output=True, text=True,
                           timeout=600, check=False, env=env)
    if first.returncode == 0:
        return
    WHEELHOUSE.mkdir(parents=True, exist_ok=True)
    run([*pip, "download", "-q", "-d", WHEELHOUSE, requirement], timeout=900, env=env)
    for own in WHEELHOUSE.glob("trustbridge-*.whl"):
        own.unlink()  # the wheel under test always comes from its own path
    run(offline, timeout=600, env=env)


def test_installed_wheel_runs_the_demo_from_anywhere(built: dict[str, Path],
                                                     tmp_path: Path) -> None:
    """A fresh venv with the wheel (and its dependencies) and PyPI's ``supervisor`` (the
    process control system, whose top-level name our supervisor/ folder shares): both
    import, --version is pyproject's, the packages and the extension come from the venv,
    and `trustbridge demo` run from an empty folder drives the machine's Chromium with
    trusted input."""
    if shutil.which("chromium") is None:
        pytest.fail("Debian's chromium is not installed (scripts/bootstrap.sh installs it)")
    venv = tmp_path / "venv"
    env = clean_env(TRUSTBRIDGE_HOME=str(tmp_path / "state"))
    run([sys.executable, "-m", "venv", "--without-pip", venv], timeout=120, env=env)
    install(venv, built["wheel"], env)
    install(venv, "supervisor>=4.2", env)
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    tb = venv / "bin" / "trustbridge"
    assert run([tb, "--version"], timeout=60, cwd=cwd, env=env).stdout == f"trustbridge {VERSION}\n"
    where = run([venv / "bin" / "python", "-c", WHERE], timeout=60, cwd=cwd, env=env).stdout.split()
    site = next((venv / "lib").glob("python3*/site-packages"))
    assert all(Path(p).is_relative_to(site) for p in where), where
    assert Path(where[2]) == site / "trustbridge" / "supervisor" / "extension_dist"
    assert Path(where[3]) == site / "supervisor" / "__init__.py"  # PyPI's, untouched
    assert (site / "supervisor" / "supervisord.py").is_file()
    demo = run([tb, "demo"], timeout=300, cwd=cwd, env=env)
    assert "click isTrusted=true; 3 of 3 key events trusted" in demo.stdout, demo.stdout
    assert '"inputPath": "trusted"' in demo.stdout
    assert list(cwd.iterdir()) == []  # nothing written where it was run


@pytest.mark.parametrize("runner", ["pipx", "uvx"])
def test_run_without_installing(built: dict[str, Path], runner: str, tmp_path: Path) -> None:
    """`pipx run --spec <wheel> trustbridge` / `uvx --from <wheel> trustbridge`, as
    docs/install.md says, where that tool is installed."""
    if shutil.which(runner) is None:
        pytest.skip(f"{runner} is not installed on this machine")
    cmd = ([runner, "run", "--spec", built["wheel"], "trustbridge", "--version"]
           if runner == "pipx" else [runner, "--from", built["wheel"], "trustbridge", "--version"])
    out = run(cmd, timeout=600, cwd=tmp_path, env=clean_env()).stdout
    assert out.strip().endswith(f"trustbridge {VERSION}")
