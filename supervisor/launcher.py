"""Launch a browser with the trustbridge extension loaded, through Playwright.

Only Chromium is wired end to end here; Firefox and Camoufox have their own launch
paths (issue 6). Facts of this machine (DESIGN §9): browsers come from Debian packages
(``/usr/bin/chromium``); Playwright's own downloads are not available.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from playwright.async_api import BrowserContext, Playwright

from bridge.protocol import errors as E

REPO_ROOT = Path(__file__).resolve().parent.parent
EXTENSION_BUILD = REPO_ROOT / "extension" / "dist"

# Chromium flags: load only our extension; no background traffic to the (closed) network.
CHROMIUM_ARGS = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
)

VIEWPORT = {"width": 1280, "height": 800}
"""CSS px; the cases in shared/cases need at least 1280x800."""


@dataclass
class ExtensionCopy:
    """A private copy of the built extension with this device's ``config.json``."""

    path: Path

    def cleanup(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def extension_source() -> Path:
    """The built extension folder (``$TRUSTBRIDGE_EXTENSION_DIR`` or ``extension/dist``).

    Raises:
        InternalError: it is missing (run ``python scripts/build_extension.py``).
    """
    path = Path(os.environ.get("TRUSTBRIDGE_EXTENSION_DIR") or EXTENSION_BUILD)
    if not (path / "manifest.json").is_file():
        raise E.InternalError(
            f"No built extension at {path}; run `python scripts/build_extension.py`."
        )
    return path


def prepare_extension(bridge_url: str, token: str, device: str) -> ExtensionCopy:
    """Copy the extension and write its ``config.json`` ``{bridgeUrl, token, device}``.

    The copy lives in a fresh 0700 temp dir, since it holds the bridge token.
    """
    root = Path(tempfile.mkdtemp(prefix="trustbridge-ext-"))
    dest = root / "extension"
    shutil.copytree(extension_source(), dest)
    config = {"bridgeUrl": bridge_url, "token": token, "device": device}
    fd = os.open(dest / "config.json", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(config, fh)
    return ExtensionCopy(dest)


def find_chromium() -> str:
    """Path of the Chromium binary: ``$TRUSTBRIDGE_CHROMIUM``, else ``chromium`` on PATH.

    Raises:
        DeviceNotConnected: no Chromium found (install Debian's ``chromium`` package).
    """
    for candidate in (os.environ.get("TRUSTBRIDGE_CHROMIUM"), shutil.which("chromium"),
                      shutil.which("chromium-browser"), shutil.which("google-chrome")):
        if candidate and Path(candidate).exists():
            return candidate
    raise E.DeviceNotConnected(
        "Chromium was not found. Install it (`apt-get install chromium`) or set "
        "TRUSTBRIDGE_CHROMIUM to its path."
    )


async def launch_chromium(playwright: Playwright, extension: Path, *, headless: bool = True,
                          user_data_dir: str | None = None) -> BrowserContext:
    """Start Chromium with the extension loaded; returns its persistent context.

    Extensions need a persistent context; Debian's Chromium honours ``--load-extension``
    with ``--disable-extensions-except`` in headless mode (DESIGN §9).
    """
    data_dir = user_data_dir or tempfile.mkdtemp(prefix="trustbridge-profile-")
    args = [
        f"--disable-extensions-except={extension}",
        f"--load-extension={extension}",
        *CHROMIUM_ARGS,
    ]
    return await playwright.chromium.launch_persistent_context(
        data_dir,
        executable_path=find_chromium(),
        headless=headless,
        args=args,
        viewport=VIEWPORT,
    )
