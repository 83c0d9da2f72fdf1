"""The ``upload`` verb with a target (``driver.act`` with ``css``): :func:`upload`.

The target must be a file input, or a label whose control is one (Playwright's
``set_input_files`` follows a label to its control, as a click on the label would open
that input's chooser). Anything else is refused before anything is sent: an upload never
clicks a control to find out whether it opens a chooser (a button that does not would get
a click it was never asked for, and Playwright's wait for a chooser would end in a
misleading TIMEOUT). A control that opens a file chooser is clicked on its own
(``browser_click``: the result reports the chooser, supervisor/watch.py holds it), then
the upload with no target answers that chooser (:func:`supervisor.watch.answer_file_chooser`),
as in Playwright MCP.

The files must fit the input (Playwright's own rules, checked first so the refusal is a
clear BAD_REQUEST, not the browser's error): a ``webkitdirectory`` input takes one folder;
any other takes files only, one unless it is ``multiple``.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PlaywrightError

from bridge.protocol import errors as E
from bridge.protocol.models import UploadAction

from .isolated_eval import evaluate_isolated

if TYPE_CHECKING:
    from .actions import Target

__all__ = ["FILE_SHAPE_ERROR", "file_shape_error", "refusal_of", "upload"]

NOT_A_FILE_INPUT_STEP = ("Click the control that opens the file chooser (browser_click), "
                         "then call browser_file_upload without a ref; or give the ref of "
                         "the file input itself.")

_KIND_JS = """el => {
  // Playwright's retarget(node, 'follow-label') for setInputFiles: an element that is no
  // control itself stands for the control of the label around it (or the label's own).
  let input = el;
  if (!el.matches('a, input, textarea, button, select, [role=link], [role=button], '
                  + '[role=checkbox], [role=switch], [role=radio]') && !el.isContentEditable) {
    const label = el.closest('label');
    if (label && label.control) input = label.control;
  }
  const type = el.getAttribute('type');
  const element = el.localName + (type ? `[type=${type}]` : '');
  if (!(input instanceof HTMLInputElement) || input.type !== 'file') return {file: false, element};
  return {file: true, element, directory: !!input.webkitdirectory, multiple: !!input.multiple};
}"""
"""What the target is: ``{file: false, element}`` or ``{file: true, element, directory,
multiple}`` (``element``: its tag and type attribute, e.g. ``button[type=submit]``)."""

FILE_SHAPE_ERROR = re.compile(
    r"File input does not support directories|Non-multiple file input can only accept "
    r"single file|\[webkitdirectory\] input requires passing a path to a directory|"
    r"Multiple directories are not supported|File paths must be all files or a single "
    r"directory|Node is not an HTMLInputElement")
"""Playwright's refusals of files that do not fit the input (``set_input_files``,
``FileChooser.set_files``): the caller's mistake, nothing was given to the page."""


def file_shape_error(files: list[str], *, directory: bool,
                     multiple: bool) -> E.BadRequest | None:
    """Why ``files`` (paths on this machine) do not fit a file input, or None if they do.

    Args:
        directory: the input has ``webkitdirectory`` (takes one folder).
        multiple: the input has ``multiple`` (takes several files).
    """
    folders = [f for f in files if os.path.isdir(f)]
    if directory:
        if len(files) == 1 and folders:
            return None
        return E.BadRequest("This file input takes one folder (it has webkitdirectory); give "
                            "the path of one folder. Nothing was uploaded.",
                            {"files": len(files), "folders": len(folders)})
    if folders:
        return E.BadRequest(f"This file input takes files, not folders ({', '.join(folders)} "
                            "is a folder); give the files' paths. Nothing was uploaded.",
                            {"folders": folders})
    if len(files) > 1 and not multiple:
        return E.BadRequest(f"This file input takes one file; {len(files)} were given. "
                            "Nothing was uploaded.", {"files": len(files), "multiple": False})
    return None


def refusal_of(exc: PlaywrightError) -> E.BadRequest | None:
    """The BAD_REQUEST for Playwright's refusal of files that do not fit the input (see
    FILE_SHAPE_ERROR), or None for any other error."""
    m = FILE_SHAPE_ERROR.search(str(exc))
    if m is None:
        return None
    return E.BadRequest(f"The file input refused these paths: {m.group(0)}. Nothing was "
                        "uploaded.", {"reason": m.group(0)})


async def upload(t: Target, a: UploadAction, timeout_ms: int) -> dict[str, Any]:
    """Give ``a.files`` to the target file input (or the one its label names).

    Returns:
        ``{"via": "input"}``.

    Raises:
        BadRequest: the target is no file input (nothing was sent; ``details.element``),
            or the files do not fit it (a folder for a plain input, files for a
            ``webkitdirectory`` one, several for a single-file input).
        TrustedInputUnavailable: a folder on Firefox (Playwright's BiDi upload does not
            answer for one).
    """
    kind = await evaluate_isolated(t.frame, t.selector, _KIND_JS, timeout_ms / 1000)
    if not kind.get("file"):
        raise E.BadRequest(
            f"The target ({kind.get('element')}) is not a file input: nothing was uploaded "
            "or clicked. Use the control that opens a file chooser, then browser_file_upload "
            "without ref.", {"element": kind.get("element")}, next_step=NOT_A_FILE_INPUT_STEP)
    if (err := file_shape_error(a.files, directory=bool(kind.get("directory")),
                                multiple=bool(kind.get("multiple")))) is not None:
        raise err
    if kind.get("directory") and a.files and t.bidi:
        # Playwright over WebDriver BiDi (input.setFiles) never answered for a folder
        # (Firefox: the 10 s timeout, measured); refuse rather than wait and mislead.
        raise E.TrustedInputUnavailable(
            "Firefox (WebDriver BiDi) cannot give a folder to a webkitdirectory input; "
            "nothing was uploaded.", {"inputType": "file"},
            next_step="Upload the folder in Chromium, or give its files to an input that "
            "takes files.")
    try:
        await t.locator.set_input_files(a.files, timeout=timeout_ms)
    except PlaywrightError as exc:
        if (refused := refusal_of(exc)) is not None:
            raise refused from exc
        raise
    return {"via": "input"}
