"""supervisor/upload.py: which paths fit which file input, and Playwright's refusals of
the rest as BAD_REQUEST (the messages are Playwright's own, from set_input_files on
headless Chromium)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Error as PlaywrightError

from trustbridge.bridge.protocol import errors as E
from trustbridge.supervisor.upload import file_shape_error, refusal_of


@pytest.fixture
def paths(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "b.txt").write_text("b")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir2").mkdir()
    return {name: str(tmp_path / name) for name in ("a.txt", "b.txt", "dir", "dir2")}


def test_a_plain_input_takes_files_one_unless_multiple(paths: dict[str, str]) -> None:
    assert file_shape_error([paths["a.txt"]], directory=False, multiple=False) is None
    assert file_shape_error([], directory=False, multiple=False) is None  # clears it
    assert file_shape_error([paths["a.txt"], paths["b.txt"]], directory=False,
                            multiple=True) is None
    two = file_shape_error([paths["a.txt"], paths["b.txt"]], directory=False, multiple=False)
    assert isinstance(two, E.BadRequest) and "takes one file" in two.message
    folder = file_shape_error([paths["dir"]], directory=False, multiple=True)
    assert isinstance(folder, E.BadRequest) and folder.details["folders"] == [paths["dir"]]
    assert "Nothing was uploaded" in folder.message


def test_a_directory_input_takes_one_folder(paths: dict[str, str]) -> None:
    assert file_shape_error([paths["dir"]], directory=True, multiple=False) is None
    for given in ([paths["a.txt"]], [paths["dir"], paths["dir2"]],
                  [paths["dir"], paths["a.txt"]], []):
        err = file_shape_error(given, directory=True, multiple=False)
        assert isinstance(err, E.BadRequest) and "takes one folder" in err.message, given


@pytest.mark.parametrize("said", [
    ("Locator.set_input_files: Error: File input does not support directories, pass "
     "individual files instead"),
    "Error: Non-multiple file input can only accept single file",
    "Error: [webkitdirectory] input requires passing a path to a directory",
    "Multiple directories are not supported",
    "File paths must be all files or a single directory",
    "Locator.set_input_files: Error: Node is not an HTMLInputElement",
])
def test_playwright_s_refusals_are_bad_requests(said: str) -> None:
    err = refusal_of(PlaywrightError(said))
    assert isinstance(err, E.BadRequest) and "Nothing was uploaded" in err.message


def test_other_playwright_errors_are_left_alone() -> None:
    assert refusal_of(PlaywrightError("Target page, context or browser has been closed")) \
        is None
