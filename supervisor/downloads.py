"""Where the driver saves the downloads an action started (issue 15 item 3), and how each
is reported: ``{suggestedFilename, path, bytes}`` (supervisor/watch.py watches for them).

Playwright keeps every download of a context in a temporary file deleted with the
context; :func:`save` copies it into :func:`downloads_dir` under the name the page
suggested (``name (1).ext`` when taken).
"""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from playwright.async_api import Download
from playwright.async_api import Error as PlaywrightError

DOWNLOADS_ENV = "TRUSTBRIDGE_DOWNLOADS_DIR"
"""Environment variable naming the folder downloads are saved in, when
:func:`configure_downloads` named none."""
DOWNLOAD_SAVE_S = 30.0
"""How long the answer waits for a started download to finish and be saved, s; past it
the download is reported with ``bytes: null`` and ``finished: false`` (it is still
saved when it completes)."""

_made_dir: Path | None = None
_configured: Path | None = None


def configure_downloads(output_dir: str | os.PathLike[str] | None) -> None:
    """Save downloads in ``output_dir`` (the supervisor's ``--output-dir``; None: back to
    the default of :func:`downloads_dir`)."""
    global _configured
    _configured = Path(output_dir).expanduser() if output_dir else None


def downloads_dir() -> Path:
    """Where downloads are saved, made if missing: the folder given to
    :func:`configure_downloads`, else ``$TRUSTBRIDGE_DOWNLOADS_DIR`` (read at each
    download), else one ``trustbridge-downloads-*`` folder in the system temp dir made for
    this supervisor process (kept after it exits: the files are the agent's)."""
    global _made_dir
    named = _configured or os.environ.get(DOWNLOADS_ENV)
    if named:
        path = Path(named).expanduser()
        path.mkdir(parents=True, exist_ok=True)
        return path
    if _made_dir is None or not _made_dir.is_dir():
        _made_dir = Path(tempfile.mkdtemp(prefix="trustbridge-downloads-"))
    return _made_dir


def free_path(folder: Path, suggested: str) -> Path:
    """``folder/suggested`` made safe (no folders, no leading dots), ``name (1).ext``
    when taken."""
    name = re.sub(r"[\x00-\x1f/\\]", "_", suggested).strip().lstrip(".") or "download"
    stem, dot, ext = name.partition(".")
    candidate, n = folder / name, 1
    while candidate.exists():
        candidate = folder / f"{stem} ({n}){dot}{ext}"
        n += 1
    return candidate


async def save(download: Download) -> dict[str, Any]:
    """Copy ``download`` into :func:`downloads_dir`: ``{suggestedFilename, path, bytes}``,
    or with ``failure`` when the browser could not download it."""
    suggested = download.suggested_filename
    target = free_path(downloads_dir(), suggested)
    target.touch()  # reserve the name at once: two downloads may share one
    try:
        await download.save_as(target)
    except PlaywrightError as exc:
        target.unlink(missing_ok=True)
        failure = await download.failure() if not download.page.is_closed() else None
        return {"suggestedFilename": suggested, "path": None, "bytes": None,
                "failure": failure or str(exc).splitlines()[0]}
    return {"suggestedFilename": suggested, "path": str(target),
            "bytes": target.stat().st_size}


async def reports(saves: list[asyncio.Task[dict[str, Any]]],
                   late: bool = False) -> list[dict[str, Any]]:
    """The report of each save, waiting up to DOWNLOAD_SAVE_S for all of them; one not
    done by then says ``finished: false`` (it goes on in the background)."""
    if not saves:
        return []
    await asyncio.wait(saves, timeout=DOWNLOAD_SAVE_S)
    out = []
    for save in saves:
        if save.done() and not save.cancelled() and save.exception() is None:
            report = save.result()
        else:
            report = {"suggestedFilename": None, "path": None, "bytes": None,
                      "finished": False}
        out.append({**report, "late": True} if late else report)
    return out
