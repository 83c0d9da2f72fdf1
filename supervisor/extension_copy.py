"""The private copy of the built extension a supervisor loads: its ``config.json`` (the
bridge token's only way into the browser), who owns the copy, and the sweep that removes
copies whose owner died before cleaning up (issue 13 item 9).

Layout of one copy: ``<temp>/trustbridge-ext-XXXX/`` (0700) holding ``extension/`` (with
``config.json``, 0600), :data:`OWNER_FILE` and the browser profile (``profile/``, made by
supervisor/runner.py), so removing the dir removes all three.
"""

from __future__ import annotations

import importlib.resources
import json
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trustbridge.bridge.protocol import errors as E

REPO_ROOT = Path(__file__).resolve().parent.parent
EXTENSION_BUILD = REPO_ROOT / "extension" / "dist"
"""The built extension in a clone; an installed wheel has its copy in
``supervisor/extension_dist/`` instead (setup.py)."""

COPY_PREFIX = "trustbridge-ext-"
"""Name prefix of the private temp dirs holding an extension copy and its profile."""
OWNER_FILE = "owner.json"
"""``{pid, started}`` of the process that made a copy, beside ``extension/`` in its dir."""
UNOWNED_GRACE_S = 60.0
"""Age in s after which a copy without an owner file (written by an older version, or
its owner died between mkdtemp and the write) counts as stale."""


def _process_started(pid: int) -> str | None:
    """Start time of ``pid`` in clock ticks since boot (``/proc/<pid>/stat`` field 22),
    so a recycled pid is not taken for the owner; None without /proc or the process."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[19] if len(fields) > 19 else None


def _owner_alive(owner: Mapping[str, Any]) -> bool:
    pid = owner.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process holds the pid: not provably dead
    started = owner.get("started")
    return started is None or _process_started(pid) in (None, started)


def sweep_stale_copies(root: Path | None = None) -> list[Path]:
    """Remove extension copies (config.json with a token, and the profile beside it)
    whose owner process is dead: what a SIGKILLed supervisor left behind.

    Only this user's ``trustbridge-ext-*`` dirs in ``root`` (default: the temp dir) are
    looked at; a copy without an owner file is removed once older than
    :data:`UNOWNED_GRACE_S`.

    Returns:
        The dirs removed.
    """
    base = Path(root or tempfile.gettempdir())
    removed = []
    for path in base.glob(COPY_PREFIX + "*"):
        try:
            info = path.lstat()
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            continue
        try:
            owner = json.loads((path / OWNER_FILE).read_text())
        except (OSError, ValueError):
            owner = None
        if isinstance(owner, dict):
            stale = not _owner_alive(owner)
        else:
            stale = time.time() - info.st_mtime > UNOWNED_GRACE_S
        if stale:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


CONFIG_FILE = "config.json"
"""The per-run file of an extension copy (bridge URL, token, device); the rest is the build."""


@dataclass
class ExtensionCopy:
    """A private copy of the built extension with this device's ``config.json``."""

    path: Path
    """``<private temp dir>/extension``; the temp dir also holds :data:`OWNER_FILE` and
    the supervisor's browser profile."""

    def cleanup(self) -> None:
        """Remove the copy and its private temp directory."""
        shutil.rmtree(self.path.parent, ignore_errors=True)


def packaged_extension() -> Path | None:
    """The built extension an installed wheel carries (``trustbridge/supervisor/extension_dist/``,
    copied there by setup.py's ``build_py``), found through ``importlib.resources``;
    None when this is a clone (or the folder is not on the file system)."""
    folder = importlib.resources.files(__package__) / "extension_dist"
    if isinstance(folder, Path) and (folder / "manifest.json").is_file():
        return folder
    return None


def extension_source() -> Path:
    """The built extension folder: ``$TRUSTBRIDGE_EXTENSION_DIR``, else the installed
    package's copy (:func:`packaged_extension`), else the clone's ``extension/dist``.

    Raises:
        InternalError: none holds a ``manifest.json`` (a clone whose build was removed:
            build it with ``node extension/build.mjs``; an installed package without it
            was built wrongly: reinstall the wheel).
    """
    override = os.environ.get("TRUSTBRIDGE_EXTENSION_DIR")
    path = Path(override) if override else (packaged_extension() or EXTENSION_BUILD)
    if not (path / "manifest.json").is_file():
        where = ("TRUSTBRIDGE_EXTENSION_DIR names no built extension" if override else
                 "neither the installed package (supervisor/extension_dist) nor a clone "
                 "(extension/dist) holds the built extension")
        raise E.InternalError(
            f"No built extension at {path}: {where}. In a clone, build it with `cd "
            "extension && npm ci && node build.mjs`; an installed trustbridge carries it "
            "(reinstall the wheel); or point TRUSTBRIDGE_EXTENSION_DIR at a built one.",
            {"path": str(path)})
    return path


def prepare_extension(bridge_url: str, token: str, device: str, *,
                      trusted_input: bool = False,
                      keep_alive_ms: int | None = None,
                      startup_marker: str | None = None) -> ExtensionCopy:
    """Copy the extension and write its ``config.json`` ``{bridgeUrl, token, device}``.

    The copy lives in a fresh 0700 temp dir, since it holds the bridge token; the dir
    names its owner (this process) so that, if the owner is killed before it cleans up,
    the next start removes it (:func:`sweep_stale_copies`, run here first). The file is
    the token's only way into the browser: no environment variable or flag carries it.

    Args:
        keep_alive_ms: interval in ms of the background's keep-alive API call
            (default in the extension: 20000); tests shorten it together with Firefox's
            ``extensions.background.idle.timeout``.
        startup_marker: the exact URL of a start-up tab the extension closes once
            another window exists (Firefox: :data:`FIREFOX_STARTUP_MARKER`).
        trusted_input: this device's input goes through a driver; the extension says so
            in every hello (``capabilities.requiresTrustedInput``), so a restarted bridge
            keeps the promise even before the driver reconnects.
    """
    sweep_stale_copies()
    root = Path(tempfile.mkdtemp(prefix=COPY_PREFIX))
    pid = os.getpid()
    (root / OWNER_FILE).write_text(json.dumps({"pid": pid, "started": _process_started(pid)}))
    dest = root / "extension"
    shutil.copytree(extension_source(), dest)
    config: dict[str, Any] = {"bridgeUrl": bridge_url, "token": token, "device": device}
    if trusted_input:
        config["requiresTrustedInput"] = True
    if keep_alive_ms is not None:
        config["keepAliveMs"] = keep_alive_ms
    if startup_marker is not None:
        config["startupMarker"] = startup_marker
    write_private(dest / CONFIG_FILE, json.dumps(config).encode())
    return ExtensionCopy(dest)


def write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` readable by this user only (0600; it holds the token),
    truncating an existing file in place (same inode, so its folder does not change)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
