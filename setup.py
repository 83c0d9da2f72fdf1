"""Build hook: the wheel carries the built extension (issue 17 item 1).

Everything else is declared in pyproject.toml. The built extension is committed once, in
``extension/dist`` (what ``node extension/build.mjs`` writes; tests/extension/test_build.py
fails when it is stale); ``build_py`` copies the files ``extension/dist/FILES`` lists into
the built ``trustbridge/supervisor/extension_dist/`` package-data folder, so the tree holds no second
copy and an installed wheel finds it through ``importlib.resources``
(supervisor/extension_copy.py ``extension_source``). The sdist carries ``extension/dist``
(MANIFEST.in), so a wheel built from it gets the same files.

An editable install (``pip install -e .``) copies nothing: the clone's ``extension/dist``
is found beside the packages.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
DIST = HERE / "extension" / "dist"
PACKAGED = ("trustbridge", "supervisor", "extension_dist")


class BuildPyWithExtension(build_py):
    """``build_py`` that also copies ``extension/dist`` into the built packages."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        listing = DIST / "FILES"
        if not listing.is_file():
            raise SystemExit(f"{listing} is missing: build the extension first "
                             "(`cd extension && npm ci && node build.mjs`)")
        dest = Path(self.build_lib, *PACKAGED)
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        for name in ["FILES", *listing.read_text().split()]:
            self.copy_file(str(DIST / name), str(dest / name))


def packages() -> list[str]:
    """``trustbridge`` and the clone's bridge/ and supervisor/ trees under it (pyproject.toml
    ``[tool.setuptools.package-dir]`` maps them)."""
    found = ["trustbridge"]
    for top in ("bridge", "supervisor"):
        found += [f"trustbridge.{top}"] + [f"trustbridge.{top}.{sub}"
                                           for sub in find_packages(str(HERE / top))]
    return found


setup(packages=packages(), cmdclass={"build_py": BuildPyWithExtension})
