"""Launch a browser with the trustbridge extension loaded, through Playwright.

Three launch paths, one extension build (``extension/dist``):

- **chromium**: Debian's ``/usr/bin/chromium`` (or the next binary supervisor/discovery.py
  finds: Playwright's Chromium, Chrome for Testing), extension by ``--load-extension``.
- **firefox**: Debian's ``firefox-esr`` driven over WebDriver BiDi (Playwright channel
  ``moz-firefox``); the extension is copied into the profile's ``extensions/`` folder under
  its gecko id and the prefs in :data:`FIREFOX_PREFS` are written to the profile.
- **camoufox**: the anti-detect Firefox build, through the ``camoufox`` package
  (``launch_options`` + ``AsyncNewBrowser``), extension passed as an unpacked addon.

Facts of this machine (design.md §9): browsers come from Debian packages; Playwright's own
downloads and ``camoufox fetch`` are not available, so a missing binary is a clear error.
Every difference between the browsers is written down in docs/browsers.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from playwright.async_api import BrowserContext, Playwright

from trustbridge.bridge.protocol import errors as E

from . import discovery
from .extension_copy import (  # re-exported: the launch paths' callers prepare copies here
    CONFIG_FILE,
    EXTENSION_BUILD,
    REPO_ROOT,
    ExtensionCopy,
    extension_source,
    prepare_extension,
    sweep_stale_copies,
    write_private,
)

__all__ = [
    "BROWSERS", "CAMOUFOX_EXTRA_COMMAND", "CAMOUFOX_FETCH_COMMAND", "CHROME_USER_AGENT",
    "CHROMIUM_ARGS", "EXTENSION_BUILD", "FIREFOX_HEADLESS_PREFS", "FIREFOX_PREFS", "FIREFOX_STARTUP_MARKER",
    "FIREFOX_STARTUP_PREFS", "REPO_ROOT", "VIEWPORT", "ExtensionCopy", "PrefValue",
    "camoufox_kwargs", "camoufox_options", "camoufox_package_missing", "chromium_args",
    "chromium_user_agent", "extension_source", "find_camoufox", "find_chromium",
    "find_firefox", "firefox_prefs", "gecko_id", "launch_camoufox", "launch_chromium",
    "launch_firefox", "prepare_extension", "prepare_firefox_profile", "screen_for",
    "sweep_stale_copies",
]

BROWSERS = ("chromium", "firefox", "camoufox")
"""Names accepted by ``--browser``."""

# Chromium flags: load only our extension; no background traffic to the (closed) network.
CHROMIUM_ARGS = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    # Page-visible trace (issue 13 item 12, docs/security.md): without it Blink sets
    # navigator.webdriver to true for a browser under automation.
    "--disable-blink-features=AutomationControlled",
)

CHROME_USER_AGENT = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
                     "Chrome/{major}.0.0.0 Safari/537.36")
"""The reduced user agent Chromium sends on Linux (every Linux build reports
``X11; Linux x86_64`` and ``<major>.0.0.0`` since UA reduction), with ``Chrome`` where
headless mode says ``HeadlessChrome``."""

VIEWPORT = {"width": 1280, "height": 720}
"""CSS px of the top-level viewport: Playwright's default (and so Playwright MCP's), a
desktop size the regression pages under tests/e2e/pages/ lay out for (sticky headers,
hover menus, padded frames)."""


def screen_for(viewport: Mapping[str, int] | None) -> dict[str, int]:
    """The ``window.screen`` size, CSS px, a headed desktop browser showing ``viewport``
    would report (issue 35 item 4): a 1920×1080 display (the most common desktop size,
    StatCounter 2024) or, for a larger viewport, the viewport plus room for the browser's
    own toolbars (120 px) and a taskbar. Playwright's default makes ``screen`` equal to the
    viewport, which no headed browser reports."""
    vp = dict(viewport or VIEWPORT)
    return {"width": max(1920, vp["width"]), "height": max(1080, vp["height"] + 120)}

PrefValue = bool | int | str

FIREFOX_PREFS: dict[str, PrefValue] = {
    # Our build is unsigned. Debian's firefox-esr allows unsigned add-ons only in the
    # scopes of `extensions.unsignedScopes` (12: application + system), not in the
    # profile scope our copy lives in; this pref lifts that (docs/browsers.md).
    "xpinstall.signatures.required": False,
    # Load add-ons from the profile (1) and application (4) scopes, enabled without the
    # "an add-on was added" prompt. Playwright writes the same values; stated here so
    # the profile does not depend on Playwright's defaults.
    "extensions.enabledScopes": 5,
    "extensions.autoDisableScopes": 0,
    # Firefox MV3 treats host permissions (and so content scripts) as optional until
    # granted; with this pref they are granted when the add-on is installed. Default
    # true in Firefox ESR 153 (greprefs.js), false in older releases.
    "extensions.originControls.grantByDefault": True,
    # Playwright over WebDriver BiDi does not reach input into out-of-process
    # (Fission) cross-origin iframes; keep them in the page's process (design.md §9).
    "fission.autostart": False,
    # Playwright's BiDi defaults turn this on, which defines `window.TestUtils` in every
    # page from its first script: a one-line test for automation (issue 35 item 3).
    "dom.testing.testutils.enabled": False,
}
FIREFOX_HEADLESS_PREFS: dict[str, PrefValue] = {
    # Headless Firefox has no pointer device: `(pointer: fine)` and `(hover: hover)` are
    # false, which no desktop browser reports. These test prefs set the capabilities
    # (a bit mask: 2 fine, 4 hover; widget/LookAndFeel) a mouse gives (issue 35 item 4).
    "ui.primaryPointerCapabilities": 6,
    "ui.allPointerCapabilities": 6,
}
"""Prefs every trustbridge Firefox profile gets (Firefox ESR and Camoufox)."""

FIREFOX_STARTUP_MARKER = "about:blank#trustbridge-startup"
"""URL of Firefox's start-up window under WebDriver BiDi. Playwright opens its own window
for the pages it drives, so the start-up one is never driven; the extension closes the
tab showing exactly this URL once another window exists (extension/src/background/startup.js)."""

FIREFOX_STARTUP_PREFS: dict[str, PrefValue] = {
    "browser.startup.page": 1,  # open the home page at start-up ...
    "browser.startup.homepage": FIREFOX_STARTUP_MARKER,  # ... which is the marker
}

CAMOUFOX_FETCH_COMMAND = discovery.INSTALL["camoufox"]
CAMOUFOX_EXTRA_COMMAND = discovery.CAMOUFOX_EXTRA
camoufox_package_missing = discovery.camoufox_package_missing
# The camoufox package (an optional extra) is imported inside the Camoufox functions only:
# importing it takes about 1 s, which Chromium and Firefox launches should not pay, and
# it may be absent.


def _require_camoufox_package() -> None:
    """Raises DeviceNotConnected (details ``install``, ``fetch``) when the camoufox
    package is absent: :func:`camoufox_package_missing`."""
    if (missing := camoufox_package_missing()) is not None:
        raise E.DeviceNotConnected(missing, {"install": CAMOUFOX_EXTRA_COMMAND,
                                             "fetch": CAMOUFOX_FETCH_COMMAND})


# ----------------------------------------------------------------------------- Chromium


def find_chromium(executable_path: str | None = None) -> str:
    """Path of the Chromium binary, in the order of supervisor/discovery.py:
    ``executable_path`` (``--executable-path``), ``$TRUSTBRIDGE_CHROMIUM``,
    ``$TRUSTBRIDGE_EXECUTABLE_PATH``, the system ``chromium``, Playwright's Chromium,
    Chrome for Testing, then Google Chrome older than 137.

    Raises:
        DeviceNotConnected: none usable (the message names the install command and why
            any found one was refused, e.g. Google Chrome 137+), or the explicit path is
            not an executable file.
    """
    return discovery.find_browser("chromium", executable_path)


@functools.cache
def chromium_user_agent(executable: str) -> str | None:
    """The user agent of the Chromium at ``executable`` as a headed window sends it.

    Headless Chromium says ``HeadlessChrome/<major>.0.0.0``, which any page reads in
    ``navigator.userAgent`` (issue 13 item 12); this is the same string with ``Chrome``,
    the major version read from ``<executable> --version`` (e.g. "Chromium 156.0.8078.114
    built on Debian"; about 50 ms, once per binary).

    Returns:
        The user agent, or None when the version cannot be read (the browser's own is
        kept then).
    """
    try:
        out = subprocess.run([executable, "--version"], capture_output=True, text=True,
                             timeout=10, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"\b(\d+)\.\d+\.\d+\.\d+\b", out)
    return CHROME_USER_AGENT.format(major=found.group(1)) if found else None


def chromium_args(extension: Path, user_agent: str | None) -> list[str]:
    """Command-line flags of a trustbridge Chromium (pure).

    ``--user-agent`` is a browser flag rather than Playwright's per-page override, so
    frames, workers and the extension's own requests all send the same user agent.
    """
    args = [
        f"--disable-extensions-except={extension}",
        f"--load-extension={extension}",
        *CHROMIUM_ARGS,
    ]
    if user_agent:
        args.append(f"--user-agent={user_agent}")
    return args


async def launch_chromium(playwright: Playwright, extension: Path, *, headless: bool = True,
                          user_data_dir: str | None = None,
                          viewport: Mapping[str, int] | None = None,
                          executable_path: str | None = None) -> BrowserContext:
    """Start Chromium with the extension loaded; returns its persistent context.

    Extensions need a persistent context; Debian's Chromium honours ``--load-extension``
    with ``--disable-extensions-except`` in headless mode (design.md §9).

    Args:
        user_data_dir: profile folder (kept; a temp dir if None).
        viewport: ``{width, height}`` in CSS px of the top-level viewport (default
            :data:`VIEWPORT`).
        executable_path: the browser binary (default: :func:`find_chromium`).
    """
    data_dir = user_data_dir or tempfile.mkdtemp(prefix="trustbridge-profile-")
    executable = find_chromium(executable_path)
    user_agent = await asyncio.get_running_loop().run_in_executor(
        None, chromium_user_agent, executable)
    return await playwright.chromium.launch_persistent_context(
        data_dir,
        executable_path=executable,
        headless=headless,
        args=chromium_args(extension, user_agent),
        viewport=dict(viewport or VIEWPORT),
        screen=screen_for(viewport),
    )


# ----------------------------------------------------------------------------- Firefox


def gecko_id(extension: Path) -> str:
    """The add-on id in ``browser_specific_settings.gecko.id`` of the extension manifest.

    Raises:
        InternalError: the manifest has no gecko id (Firefox would not load the folder).
    """
    manifest = json.loads((extension / "manifest.json").read_text())
    addon_id = manifest.get("browser_specific_settings", {}).get("gecko", {}).get("id")
    if not addon_id:
        raise E.InternalError(
            f"{extension / 'manifest.json'} has no browser_specific_settings.gecko.id; "
            "Firefox loads a profile extension only under its id."
        )
    return str(addon_id)


def firefox_prefs(extra: Mapping[str, PrefValue] | None = None) -> dict[str, PrefValue]:
    """:data:`FIREFOX_PREFS` updated with ``extra`` (``extra`` wins)."""
    return {**FIREFOX_PREFS, **(extra or {})}


def _tree(root: Path) -> dict[str, bytes]:
    """``{relative path: bytes}`` of every file under ``root`` but :data:`CONFIG_FILE`."""
    return {str(f.relative_to(root)): f.read_bytes() for f in sorted(root.rglob("*"))
            if f.is_file() and f.relative_to(root) != Path(CONFIG_FILE)}


def prepare_firefox_profile(profile: Path, extension: Path) -> Path:
    """Put the extension into ``<profile>/extensions/<gecko id>/`` (an unpacked folder).

    Firefox installs what it finds there at start-up (profile scope); the folder must be
    named after the gecko id. Playwright writes the prefs (``user.js``) at launch.

    A profile kept across runs (``--user-data-dir``) already holds the folder. When its
    build is the same, only ``config.json`` is rewritten in place, so the folder's and the
    manifest's modification times stay as Firefox recorded them. Replacing the folder
    changes them, and Firefox then "updates" the add-on during start-up
    (``XPIDatabase.processFileChanges``): the copy it had already started from its
    start-up cache (``addonStartup.json.lz4``) is stopped and started again, and its
    WebSocket to the bridge closes a few ms after connecting, failing the first request
    (the CI failure of test_user_data_dir_keeps_local_storage_across_runs[firefox]).
    When the build differs (another trustbridge version) the folder is replaced and the
    start-up cache is removed, so Firefox reads the add-on anew before starting it.

    Returns:
        The folder the extension was copied to.
    """
    dest = profile / "extensions" / gecko_id(extension)
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.is_dir() and _tree(dest) == _tree(extension):
        write_private(dest / CONFIG_FILE, (extension / CONFIG_FILE).read_bytes())
        return dest
    if dest.exists():
        shutil.rmtree(dest)
        (profile / "addonStartup.json.lz4").unlink(missing_ok=True)
    shutil.copytree(extension, dest)
    return dest


def find_firefox(executable_path: str | None = None) -> str:
    """Path of Firefox: ``executable_path`` (``--executable-path``), else
    ``$TRUSTBRIDGE_FIREFOX`` / ``$TRUSTBRIDGE_EXECUTABLE_PATH``, else ``firefox-esr`` or
    ``firefox`` on PATH (supervisor/discovery.py).

    Raises:
        DeviceNotConnected: no Firefox found (install Debian's ``firefox-esr`` package), or
            the explicit path is not an executable file.
    """
    return discovery.find_browser("firefox", executable_path)


async def launch_firefox(playwright: Playwright, extension: Path, *, headless: bool = True,
                         user_data_dir: str | None = None,
                         prefs: Mapping[str, PrefValue] | None = None,
                         viewport: Mapping[str, int] | None = None,
                         executable_path: str | None = None) -> BrowserContext:
    """Start Firefox (ESR) over WebDriver BiDi with the extension in its profile.

    Playwright's ``moz-firefox`` channel speaks WebDriver BiDi to a stock Firefox (no
    Juggler patches); ``executable_path`` points it at Debian's binary. Playwright opens
    its own window for the first page, so Firefox's start-up window stays open beside it,
    undriven; it is pointed at :data:`FIREFOX_STARTUP_MARKER`, which the extension closes
    when its copy was prepared with ``startup_marker`` (docs/browsers.md).

    Args:
        extension: the prepared extension copy (with ``config.json``).
        user_data_dir: profile folder (created if missing; a temp dir if None).
        prefs: extra prefs on top of :data:`FIREFOX_PREFS`.
        viewport: ``{width, height}`` in CSS px of the top-level viewport (default
            :data:`VIEWPORT`).
        executable_path: the browser binary (default: :func:`find_firefox`).

    Raises:
        DeviceNotConnected: Firefox is not installed.
    """
    profile = Path(user_data_dir or tempfile.mkdtemp(prefix="trustbridge-profile-"))
    profile.mkdir(parents=True, exist_ok=True)
    executable = find_firefox(executable_path)
    prepare_firefox_profile(profile, extension)
    return await playwright.firefox.launch_persistent_context(
        str(profile),
        channel="moz-firefox",
        executable_path=executable,
        headless=headless,
        firefox_user_prefs={**FIREFOX_STARTUP_PREFS,
                            **(FIREFOX_HEADLESS_PREFS if headless else {}),
                            **firefox_prefs(prefs)},
        viewport=dict(viewport or VIEWPORT),
        screen=screen_for(viewport),
    )


# ----------------------------------------------------------------------------- Camoufox


def find_camoufox(executable_path: str | None = None) -> str:
    """Path of the Camoufox binary, never downloading it.

    Order: ``executable_path``, ``$TRUSTBRIDGE_CAMOUFOX``, ``$CAMOUFOX_EXECUTABLE_PATH``,
    then the build ``camoufox fetch`` installed.

    Raises:
        DeviceNotConnected: the camoufox package (the ``camoufox`` extra) is not
            installed, the message names ``pip install 'trustbridge[camoufox]'``; or no
            binary, the message names the fetch command.
    """
    _require_camoufox_package()  # the launch needs it even with an explicit binary
    explicit = (executable_path or os.environ.get("TRUSTBRIDGE_CAMOUFOX")
                or os.environ.get("CAMOUFOX_EXECUTABLE_PATH"))
    if explicit:
        if Path(explicit).is_file():
            return str(Path(explicit).resolve())
        raise E.DeviceNotConnected(
            f"No Camoufox binary at {explicit}. Point TRUSTBRIDGE_CAMOUFOX at camoufox-bin, "
            f"or install the browser with `{CAMOUFOX_FETCH_COMMAND}`.",
            {"path": explicit},
        )
    from camoufox.exceptions import CamoufoxNotInstalled, UnsupportedVersion
    from camoufox.pkgman import camoufox_path, launch_path

    try:
        # download_if_missing=False: camoufox would otherwise fetch the browser here. What
        # it prints goes to stderr: stdout may be the MCP server's JSON-RPC stream.
        with contextlib.redirect_stdout(sys.stderr):
            return launch_path(camoufox_path(download_if_missing=False))
    except (CamoufoxNotInstalled, UnsupportedVersion, FileNotFoundError) as exc:
        raise E.DeviceNotConnected(
            f"The Camoufox browser is not installed ({exc}). Run `{CAMOUFOX_FETCH_COMMAND}` "
            "(needs internet access to GitHub), or set TRUSTBRIDGE_CAMOUFOX to a "
            "camoufox-bin path.",
            {"fetch": CAMOUFOX_FETCH_COMMAND},
        ) from exc


def camoufox_kwargs(extension: Path, *, executable_path: str, user_data_dir: str,
                    headless: bool = True, humanize: bool | float | None = None,
                    keep_ublock: bool = False,
                    prefs: Mapping[str, PrefValue] | None = None) -> dict[str, Any]:
    """Keyword arguments for ``camoufox.utils.launch_options`` (pure; no I/O).

    Args:
        extension: the prepared extension copy, loaded as an unpacked addon.
        executable_path: the Camoufox binary (:func:`find_camoufox`).
        user_data_dir: the persistent profile folder.
        headless: no window.
        humanize: Camoufox's human-like cursor: True, or the longest movement in
            seconds; None leaves it off.
        keep_ublock: keep Camoufox's default uBlock Origin addon (excluded by default:
            it can hide or block the elements an agent is asked to act on).
        prefs: extra Firefox prefs on top of :data:`FIREFOX_PREFS`.
    """
    _require_camoufox_package()
    from camoufox import DefaultAddons

    kwargs: dict[str, Any] = {
        "addons": [str(extension)],
        "exclude_addons": [] if keep_ublock else [DefaultAddons.UBO],
        "executable_path": executable_path,
        "headless": headless,
        "user_data_dir": user_data_dir,
        "firefox_user_prefs": firefox_prefs(prefs),
    }
    if humanize is not None:
        kwargs["humanize"] = humanize
    return kwargs


def camoufox_options(extension: Path, *, user_data_dir: str, headless: bool = True,
                     humanize: bool | float | None = None, keep_ublock: bool = False,
                     prefs: Mapping[str, PrefValue] | None = None,
                     executable_path: str | None = None,
                     overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Playwright launch options for Camoufox, produced by ``camoufox.launch_options``.

    Blocking (camoufox reads its bundle and draws a fingerprint); call it off the loop.

    Args:
        overrides: extra ``launch_options`` arguments (tests pass a bundled fingerprint
            preset so no model download is needed).

    Returns:
        ``{executable_path, args, env, firefox_user_prefs, headless, user_data_dir, ...}``
        for ``playwright.firefox.launch_persistent_context``.

    Raises:
        DeviceNotConnected: the binary is missing, or camoufox could not prepare the
            launch (e.g. its fingerprint model is not downloaded); names the fetch command.
    """
    _require_camoufox_package()
    from camoufox.utils import launch_options

    binary = find_camoufox(executable_path)
    kwargs = camoufox_kwargs(extension, executable_path=binary, user_data_dir=user_data_dir,
                             headless=headless, humanize=humanize, keep_ublock=keep_ublock,
                             prefs=prefs)
    kwargs.update(overrides or {})
    try:
        return launch_options(**kwargs)
    except Exception as exc:  # camoufox raises requests/OS/its own errors here
        raise E.DeviceNotConnected(
            f"Camoufox could not prepare its launch ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0][:200] if str(exc) else ''}). Run "
            f"`{CAMOUFOX_FETCH_COMMAND}` to install the browser and its fingerprint data.",
            {"fetch": CAMOUFOX_FETCH_COMMAND},
        ) from exc


async def launch_camoufox(playwright: Playwright, extension: Path, *, headless: bool = True,
                          user_data_dir: str | None = None,
                          humanize: bool | float | None = None, keep_ublock: bool = False,
                          prefs: Mapping[str, PrefValue] | None = None,
                          executable_path: str | None = None,
                          viewport: Mapping[str, int] | None = None) -> BrowserContext:
    """Start Camoufox (Playwright's Juggler protocol) with the extension as an addon.

    Args:
        viewport: ``{width, height}`` in CSS px: Camoufox's window size (its
            ``window`` launch option; not run here, no binary); None leaves the size its
            fingerprint picks.

    Raises:
        DeviceNotConnected: the ``camoufox`` extra is not installed (the message names
            ``pip install 'trustbridge[camoufox]'``), or the browser is not (run
            ``python -m camoufox fetch``).
    """
    _require_camoufox_package()
    from camoufox.async_api import AsyncNewBrowser

    profile = user_data_dir or tempfile.mkdtemp(prefix="trustbridge-profile-")
    # A Playwright viewport deadlocks Juggler when Camoufox spoofs the window size
    # (daijro/camoufox#666, noted in camoufox.async_api); its own ``window`` option
    # sizes the window instead, and the page gets no separate viewport.
    overrides = {"window": (viewport["width"], viewport["height"])} if viewport else None
    options = await asyncio.get_running_loop().run_in_executor(None, partial(
        camoufox_options, extension, user_data_dir=profile, headless=headless,
        humanize=humanize, keep_ublock=keep_ublock, prefs=prefs,
        executable_path=executable_path, overrides=overrides))
    return await AsyncNewBrowser(playwright, from_options=options, persistent_context=True)
