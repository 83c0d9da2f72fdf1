"""An upload with a ref (supervisor/upload.py): a file input takes the files; another form
field is BAD_REQUEST with nothing clicked; a control whose click opens no chooser is
BAD_REQUEST saying the click was delivered; paths that do not fit the input (a folder for
a plain input, files for a ``webkitdirectory`` one, several for a single-file input) are
BAD_REQUEST with nothing given to the page. What the page saw is asserted
(tests/e2e/pages/upload_target/index.html). The button that opens a chooser is
tests/e2e/test_verbs.py's and shared case 21's."""

from __future__ import annotations

from pathlib import Path

import pytest

from trustbridge.bridge.protocol import errors as E

from .conftest import Origins, Stack, ref_of


async def _open(stack: Stack, origins: Origins) -> str:
    await stack.client.call("page.navigate", {"url": f"{origins.main}/upload_target/index.html"})
    return await stack.snapshot()


def _files(tmp_path: Path) -> tuple[Path, Path, Path]:
    one, two = tmp_path / "one.txt", tmp_path / "two.txt"
    one.write_text("1")
    two.write_text("22")
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "inside.txt").write_text("in")
    return one, two, folder


async def test_a_form_field_is_no_upload_target_and_is_not_clicked(
        stack: Stack, origins: Origins, tmp_path: Path) -> None:
    one, _, _ = _files(tmp_path)
    snap = await _open(stack, origins)
    with pytest.raises(E.BadRequest) as info:
        await stack.tab.upload(ref_of(snap, "textbox", "A text field"), [str(one)])
    assert "not a file input: nothing was uploaded or clicked" in info.value.message
    assert info.value.details["element"] == "input"
    assert await stack.page.evaluate("window.__seen") == {"clicks": 0, "textClicks": 0,
                                                          "got": {}}


async def test_a_button_that_opens_no_chooser_says_its_click_was_delivered(
        stack: Stack, origins: Origins, tmp_path: Path) -> None:
    """The button is clicked (the upload's route for a control that opens a chooser);
    no chooser comes: BAD_REQUEST saying so (not a TIMEOUT about actionability), and the
    page saw exactly that one trusted click and no file."""
    one, _, _ = _files(tmp_path)
    snap = await _open(stack, origins)
    with pytest.raises(E.BadRequest) as info:
        await stack.tab.upload(ref_of(snap, "button", "Not an input"), [str(one)])
    assert "opened no file chooser" in info.value.message, info.value.message
    assert "the click was delivered; nothing was uploaded" in info.value.message
    assert info.value.details == {"element": "button", "clicked": True}
    assert await stack.page.evaluate("window.__seen") == {"clicks": 1, "textClicks": 0,
                                                          "got": {}}


async def test_a_file_input_takes_the_file(
        stack: Stack, origins: Origins, tmp_path: Path) -> None:
    """The file input (its snapshot name comes from its label) takes the file directly."""
    one, _, _ = _files(tmp_path)
    snap = await _open(stack, origins)
    done = await stack.tab.upload(ref_of(snap, "button", "Single file"), [str(one)])
    assert done["via"] == "input"
    assert await stack.page.evaluate("window.__seen") == {
        "clicks": 0, "textClicks": 0, "got": {"single": ["one.txt"]}}


def _ref_named(snap: str, name: str) -> str:
    import re

    m = re.search(rf'"{re.escape(name)}"[^\n]*\[ref=((?:f\d+)?e\d+)\]', snap)
    assert m, f"no element named {name!r} in:\n{snap}"
    return m.group(1)


async def test_paths_that_do_not_fit_the_input_are_bad_requests(
        stack: Stack, origins: Origins, tmp_path: Path, browser: str) -> None:
    one, two, folder = _files(tmp_path)
    snap = await _open(stack, origins)
    single, many = _ref_named(snap, "Single file"), _ref_named(snap, "Many files")
    folder_input = _ref_named(snap, "A folder")
    for ref, paths, said in (
            (single, [str(folder)], "not folders"),
            (many, [str(one), str(folder)], "not folders"),
            (single, [str(one), str(two)], "takes one file"),
            (folder_input, [str(one)], "takes one folder")):
        with pytest.raises(E.BadRequest) as info:
            await stack.tab.upload(ref, paths)
        assert said in info.value.message, (ref, paths, info.value.message)
    assert await stack.page.evaluate("window.__seen.got") == {}

    # What fits is given: several files to a multiple input, a folder to a directory one
    # (Firefox: refused at once, Playwright's BiDi upload never answers for a folder).
    assert (await stack.tab.upload(many, [str(one), str(two)]))["via"] == "input"
    if browser != "chromium":
        with pytest.raises(E.TrustedInputUnavailable, match="cannot give a folder"):
            await stack.tab.upload(folder_input, [str(folder)])
        assert await stack.page.evaluate("window.__seen.got") == {"many": ["one.txt", "two.txt"]}
        return
    assert (await stack.tab.upload(folder_input, [str(folder)]))["via"] == "input"
    got = await stack.page.evaluate("window.__seen.got")
    assert got["many"] == ["one.txt", "two.txt"] and got["folder"] == ["inside.txt"], got
