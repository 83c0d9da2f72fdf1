"""The ``upload`` verb with a target (``driver.act`` with ``css``): :func:`upload`.

What the target is decides the route, read first (one isolated-world round trip):

- a file input, or a label whose control is one (Playwright's ``set_input_files`` follows
  a label to its control): the files are set on it (``via: "input"``);
- another form field (a text input, textarea, select, checkbox...: no file chooser comes
  from clicking one): BAD_REQUEST at once, nothing clicked;
- any other control (a button whose handler clicks a hidden input, a drop zone with
  ``role=button``: shared case 21, microsoft/playwright-mcp#132): it is clicked with
  trusted input and the file chooser it opens gets the files (``via: "file-chooser"``).
  A chooser comes within ms of the click (the browser announces it as the click is
  handled), so one that has not come CHOOSER_AFTER_CLICK_S after the click was delivered
  never will: BAD_REQUEST saying the click was delivered and nothing was uploaded (it
  was a TIMEOUT "did not become actionable" after the whole action timeout, untrue).

The files must fit the input (Playwright's own rules, checked first where the input is
known so the refusal is a clear BAD_REQUEST, not the browser's error): a
``webkitdirectory`` input takes one folder; any other takes files only, one unless it is
``multiple``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PlaywrightError

from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import UploadAction

from .isolated_eval import evaluate_isolated

if TYPE_CHECKING:
    from .actions import Target

__all__ = ["FILE_SHAPE_ERROR", "file_shape_error", "refusal_of", "upload"]

CHOOSER_AFTER_CLICK_S = 2.0
"""How long after a control's click was delivered its file chooser may still come, s
(the bridge's bound for a chooser announced late, bridge/after_input.py
FILE_CHOOSER_WAIT_MS; Chromium announced one within a few round trips even under load)."""
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
  if (input instanceof HTMLInputElement && input.type === 'file')
    return {file: true, element, directory: !!input.webkitdirectory, multiple: !!input.multiple};
  // A form field of another kind opens no file chooser when clicked.
  const field = input.matches('input, textarea, select') || input.isContentEditable;
  return {file: false, field, element};
}"""
"""What the target is: ``{file: true, element, directory, multiple}``, or ``{file: false,
field, element}`` (``field``: a form field that is no file input); ``element``: its tag
and type attribute, e.g. ``input[type=text]``."""

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
    """Give ``a.files`` to the target file input (or the one its label names), or to the
    file chooser the target's click opens (see the module docstring).

    Returns:
        ``{"via": "input"}`` or ``{"via": "file-chooser"}``.

    Raises:
        BadRequest: the target is a form field that is no file input (nothing was sent;
            ``details.element``); its click opened no file chooser (``details.clicked``:
            the click was delivered; nothing was uploaded); or the files do not fit the
            input (a folder for a plain input, files for a ``webkitdirectory`` one,
            several for a single-file input).
        TrustedInputUnavailable: a folder on Firefox (Playwright's BiDi upload does not
            answer for one).
        Timeout / ElementObscured / ...: the click's actionability failed (nothing was
            clicked), as for a click.
    """
    kind = await evaluate_isolated(t.frame, t.selector, _KIND_JS, timeout_ms / 1000)
    if kind.get("file"):
        return await _to_input(t, a, kind, timeout_ms)
    if kind.get("field"):
        raise E.BadRequest(
            f"The target ({kind.get('element')}) is a form field, not a file input: nothing "
            "was uploaded or clicked.", {"element": kind.get("element")},
            next_step=NOT_A_FILE_INPUT_STEP)
    return await _through_chooser(t, a, kind, timeout_ms)


async def _to_input(t: Target, a: UploadAction, kind: dict[str, Any],
                    timeout_ms: int) -> dict[str, Any]:
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


async def _through_chooser(t: Target, a: UploadAction, kind: dict[str, Any],
                           timeout_ms: int) -> dict[str, Any]:
    """Click ``t`` (trusted) and give the files to the chooser it opens."""
    came = asyncio.ensure_future(t.page.wait_for_event("filechooser", timeout=timeout_ms))
    try:
        await t.locator.click(timeout=timeout_ms)  # its actionability errors: nothing sent
        try:
            chooser = await asyncio.wait_for(asyncio.shield(came), CHOOSER_AFTER_CLICK_S)
        except (TimeoutError, PlaywrightError):
            raise E.BadRequest(
                f"The target ({kind.get('element')}) is not a file input, and its click "
                f"opened no file chooser within {int(CHOOSER_AFTER_CLICK_S * 1000)} ms: the "
                "click was delivered; nothing was uploaded.",
                {"element": kind.get("element"), "clicked": True},
                next_step=NOT_A_FILE_INPUT_STEP) from None
    finally:
        if not came.done():
            came.cancel()
        with contextlib.suppress(BaseException):
            await came
    try:
        await chooser.set_files(a.files, timeout=timeout_ms)
    except PlaywrightError as exc:
        if (refused := refusal_of(exc)) is not None:
            raise refused from exc
        raise
    return {"via": "file-chooser"}
