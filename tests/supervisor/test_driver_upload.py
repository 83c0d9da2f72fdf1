"""driver.act refuses an upload of files that do not exist before anything is sent."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import DriverActParams
from trustbridge.supervisor.driver import InputDriver, check_upload_files


class _NoFrames:
    """A frame registry that fails the test if the driver looks a frame up."""

    def __init__(self) -> None:
        self.looked_up: list[str] = []

    def frame_for(self, token: str):
        self.looked_up.append(token)
        raise AssertionError("the driver reached for the page")


def _driver() -> tuple[InputDriver, _NoFrames]:
    frames = _NoFrames()
    return InputDriver("ws://127.0.0.1:1", "t", "dev", frames), frames  # type: ignore[arg-type]


@pytest.mark.parametrize("css", ["#file", None], ids=["ref", "file-chooser"])
def test_missing_upload_path_is_bad_request_before_dispatch(tmp_path: Path, css) -> None:
    """Both upload forms name the missing path and never touch a frame."""
    real = tmp_path / "real.txt"
    real.write_text("x")
    gone = str(tmp_path / "gone.txt")
    driver, frames = _driver()
    params = DriverActParams(frameToken="f1", css=css,
                             action={"kind": "upload", "files": [str(real), gone]})
    with pytest.raises(E.BadRequest) as info:
        asyncio.run(driver.act(params))
    assert info.value.details["missing"] == [gone]
    assert gone in info.value.message
    assert frames.looked_up == []


def test_existing_files_and_directories_pass(tmp_path: Path) -> None:
    """Existing files and directories (a directory upload) are accepted."""
    (tmp_path / "a.txt").write_text("a")
    check_upload_files([str(tmp_path / "a.txt"), str(tmp_path)])
