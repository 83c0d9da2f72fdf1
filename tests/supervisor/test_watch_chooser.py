"""supervisor/watch.py answer_file_chooser with fake page and chooser objects."""

from __future__ import annotations

from typing import Any

import pytest

from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import UploadAction
from trustbridge.supervisor import watch


class _Chooser:
    def __init__(self) -> None:
        self.given: list[Any] = []

    def is_multiple(self) -> bool:
        return False

    async def set_files(self, files: Any) -> None:
        self.given.append(files)


class _Page:
    """Hashable stand-in for a Playwright Page (the state is keyed by page)."""


async def test_no_files_cancels_the_held_chooser_and_frees_it() -> None:
    """files [] reaches set_files([]) (Playwright MCP's cancel), files 0 is returned and
    the chooser is no longer held: a second answer is BAD_REQUEST."""
    page, chooser = _Page(), _Chooser()
    watch._pages[page] = watch._PageState(chooser=chooser)  # type: ignore[index,call-arg]
    out = await watch.answer_file_chooser(page, UploadAction(files=[]))  # type: ignore[arg-type]
    assert out == {"via": "file-chooser", "files": 0} and chooser.given == [[]]
    with pytest.raises(E.BadRequest):
        await watch.answer_file_chooser(page, UploadAction(files=[]))  # type: ignore[arg-type]
