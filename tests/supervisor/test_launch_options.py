"""Offline tests of the Firefox profile/prefs and the Camoufox launch options.

No browser is started and nothing is downloaded: Firefox's launch goes to a recording
stand-in for Playwright, and Camoufox's real ``launch_options`` runs against a fake
Camoufox bundle (binary, application.ini, properties.json, fontconfigs) with a bundled
fingerprint preset, so these tests run on any machine, with or without the browsers.
"""

from __future__ import annotations

import inspect
import json
import os
from pathlib import Path
from typing import Any

import pytest

from trustbridge.bridge.protocol import errors as E
from trustbridge.supervisor import launcher
from trustbridge.supervisor.launcher import (
    CAMOUFOX_FETCH_COMMAND,
    FIREFOX_HEADLESS_PREFS,
    FIREFOX_PREFS,
    FIREFOX_STARTUP_MARKER,
    camoufox_kwargs,
    camoufox_options,
    find_camoufox,
    firefox_prefs,
    gecko_id,
    launch_camoufox,
    launch_firefox,
    prepare_extension,
    prepare_firefox_profile,
)
from trustbridge.supervisor.runner import BROWSERS, Supervisor, driver_capabilities

REPO = Path(__file__).resolve().parents[2]
GECKO_ID = json.loads((REPO / "extension" / "manifest.json").read_text())[
    "browser_specific_settings"]["gecko"]["id"]


@pytest.fixture
def extension():
    """A prepared extension copy (built dist + config.json), removed afterwards."""
    copy = prepare_extension("ws://127.0.0.1:9", "t" * 32, "dev", keep_alive_ms=500)
    yield copy.path
    copy.cleanup()
    assert not copy.path.parent.exists(), "the private temp dir was left behind"


class _RecordingFirefox:
    """Stands in for ``playwright.firefox``: records the launch call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def launch_persistent_context(self, user_data_dir: str, **kwargs: Any) -> str:
        self.calls.append((user_data_dir, kwargs))
        return "context"


class _FakePlaywright:
    def __init__(self) -> None:
        self.firefox = _RecordingFirefox()


# --------------------------------------------------------------------------- Firefox


def test_firefox_prefs_allow_the_unsigned_profile_extension_and_pin_frames_in_process() -> None:
    """The prefs every trustbridge Firefox gets: unsigned add-ons, profile scope enabled,
    MV3 host permissions granted at install, Fission off (docs/browsers.md)."""
    assert FIREFOX_PREFS["xpinstall.signatures.required"] is False
    assert FIREFOX_PREFS["extensions.enabledScopes"] & 1  # profile scope
    assert FIREFOX_PREFS["extensions.autoDisableScopes"] == 0
    assert FIREFOX_PREFS["extensions.originControls.grantByDefault"] is True
    assert FIREFOX_PREFS["fission.autostart"] is False


def test_extra_prefs_override_the_defaults_without_changing_them() -> None:
    """firefox_prefs(extra) lets extra win and leaves FIREFOX_PREFS untouched."""
    merged = firefox_prefs({"fission.autostart": True, "extensions.background.idle.timeout": 2000})
    assert merged["fission.autostart"] is True
    assert merged["extensions.background.idle.timeout"] == 2000
    assert merged["xpinstall.signatures.required"] is False
    assert FIREFOX_PREFS["fission.autostart"] is False


def test_profile_holds_the_extension_under_its_gecko_id(tmp_path: Path, extension: Path) -> None:
    """The copy lands in <profile>/extensions/<gecko id>/ with manifest, scripts and the
    device's config.json; a second preparation replaces it."""
    dest = prepare_firefox_profile(tmp_path, extension)
    assert dest == tmp_path / "extensions" / GECKO_ID
    assert gecko_id(extension) == GECKO_ID == "trustbridge@trustbridge.dev"
    for name in ("manifest.json", "background.js", "content.js", "config.json"):
        assert (dest / name).is_file(), name
    assert json.loads((dest / "config.json").read_text()) == {
        "bridgeUrl": "ws://127.0.0.1:9", "token": "t" * 32, "device": "dev", "keepAliveMs": 500}
    (dest / "stale.txt").write_text("old")
    prepare_firefox_profile(tmp_path, extension)
    assert not (dest / "stale.txt").exists()


def test_kept_profile_with_the_same_build_keeps_the_folder_firefox_recorded(
        tmp_path: Path, extension: Path) -> None:
    """A kept profile (--user-data-dir) and the same build: only config.json is rewritten,
    in place, so the folder's and manifest's mtimes stay and Firefox does not restart the
    add-on mid-start (its WebSocket closed a few ms after connecting). Another build
    replaces the folder and drops Firefox's start-up cache."""
    dest = prepare_firefox_profile(tmp_path, extension)
    os.utime(dest, (1_000_000, 1_000_000))
    os.utime(dest / "manifest.json", (1_000_000, 1_000_000))
    inode = (dest / "config.json").stat().st_ino
    (extension / "config.json").write_text(json.dumps({"bridgeUrl": "ws://127.0.0.1:10"}))
    assert prepare_firefox_profile(tmp_path, extension) == dest
    assert json.loads((dest / "config.json").read_text()) == {"bridgeUrl": "ws://127.0.0.1:10"}
    assert (dest / "config.json").stat().st_ino == inode
    assert dest.stat().st_mtime == 1_000_000
    assert (dest / "manifest.json").stat().st_mtime == 1_000_000
    cache = tmp_path / "addonStartup.json.lz4"
    cache.write_bytes(b"cache")
    assert prepare_firefox_profile(tmp_path, extension) == dest
    assert cache.exists()  # same build: Firefox's cache still describes it
    (extension / "background.js").write_text("// another build")
    prepare_firefox_profile(tmp_path, extension)
    assert (dest / "background.js").read_text() == "// another build"
    assert dest.stat().st_mtime != 1_000_000
    assert not cache.exists()


def test_manifest_keeps_ws_unupgraded_and_names_a_firefox_background() -> None:
    """Firefox MV3 needs the gecko id, an event-page background script and the CSP that
    stops ws://127.0.0.1 being upgraded to wss:// (design.md §9)."""
    manifest = json.loads((REPO / "extension" / "dist" / "manifest.json").read_text())
    assert manifest["content_security_policy"]["extension_pages"] == "script-src 'self'"
    assert manifest["background"]["scripts"] == ["background.js"]
    assert manifest["browser_specific_settings"]["gecko"]["id"] == GECKO_ID


def test_startup_marker_reaches_the_extension_config() -> None:
    """prepare_extension(startup_marker=...) writes it as config.json startupMarker, which
    the background closes once another window exists (Firefox only)."""
    copy = prepare_extension("ws://127.0.0.1:9", "t", "d", startup_marker=FIREFOX_STARTUP_MARKER)
    try:
        config = json.loads((copy.path / "config.json").read_text())
        assert config["startupMarker"] == "about:blank#trustbridge-startup"
    finally:
        copy.cleanup()


def test_extension_without_gecko_id_is_refused_clearly(tmp_path: Path) -> None:
    """A manifest without a gecko id raises InternalError naming the missing key."""
    (tmp_path / "manifest.json").write_text(json.dumps({"manifest_version": 3}))
    with pytest.raises(E.InternalError, match="gecko.id"):
        gecko_id(tmp_path)


async def test_launch_firefox_uses_the_bidi_channel_with_the_prefs(
    tmp_path: Path, extension: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """launch_firefox drives the given binary over WebDriver BiDi (channel moz-firefox),
    with the extension already in the profile and FIREFOX_PREFS plus extras."""
    binary = tmp_path / "firefox-esr"
    binary.write_text("")
    monkeypatch.setenv("TRUSTBRIDGE_FIREFOX", str(binary))
    pw = _FakePlaywright()
    profile = tmp_path / "profile"
    ctx = await launch_firefox(pw, extension, headless=True, user_data_dir=str(profile),  # type: ignore[arg-type]
                               prefs={"extensions.background.idle.timeout": 2000})
    assert ctx == "context"
    ((data_dir, kwargs),) = pw.firefox.calls
    assert data_dir == str(profile)
    assert kwargs["channel"] == "moz-firefox"
    assert kwargs["executable_path"] == str(binary)
    assert kwargs["headless"] is True
    assert kwargs["firefox_user_prefs"] == {**FIREFOX_PREFS, **FIREFOX_HEADLESS_PREFS,
                                            "extensions.background.idle.timeout": 2000,
                                            "browser.startup.page": 1,
                                            "browser.startup.homepage": FIREFOX_STARTUP_MARKER}
    assert (profile / "extensions" / GECKO_ID / "config.json").is_file()


async def test_missing_firefox_is_a_clear_error(
    tmp_path: Path, extension: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No Firefox on PATH and no override: DeviceNotConnected naming the Debian package,
    raised before anything is launched."""
    monkeypatch.delenv("TRUSTBRIDGE_FIREFOX", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    pw = _FakePlaywright()
    with pytest.raises(E.DeviceNotConnected, match="apt-get install firefox-esr"):
        await launch_firefox(pw, extension, user_data_dir=str(tmp_path / "p"))  # type: ignore[arg-type]
    assert pw.firefox.calls == []


# --------------------------------------------------------------------------- Camoufox


def _fake_camoufox_bundle(root: Path) -> Path:
    """The files camoufox.launch_options reads beside its binary; returns the binary."""
    root.mkdir(parents=True)
    binary = root / "camoufox-bin"
    binary.write_text("#!/bin/sh\nexit 1\n")
    binary.chmod(0o755)
    (root / "application.ini").write_text("[App]\nVersion=135.0.1\n")
    (root / "properties.json").write_text(json.dumps([
        {"property": "addons", "type": "array"},
        {"property": "humanize", "type": "bool"},
        {"property": "humanize:maxTime", "type": "double"},
    ]))
    for system in ("linux", "macos", "windows"):
        (root / "fontconfigs" / system).mkdir(parents=True)
        (root / "fontconfigs" / system / "fonts.conf").write_text("<fontconfig/>")
    return binary


@pytest.fixture
def offline_camoufox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A fake bundle, a cached fake uBlock Origin, and downloads that fail the test."""
    import camoufox.addons
    import camoufox.pkgman

    def no_download(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"camoufox tried to download {args[:1]}")

    monkeypatch.setattr(camoufox.pkgman, "webdl", no_download)
    monkeypatch.setattr(camoufox.addons, "webdl", no_download)
    addons_dir = tmp_path / "camoufox-addons"
    (addons_dir / "UBO").mkdir(parents=True)
    (addons_dir / "UBO" / "manifest.json").write_text('{"name": "uBlock Origin"}')
    monkeypatch.setattr(camoufox.addons, "ADDONS_DIR", addons_dir)
    binary = _fake_camoufox_bundle(tmp_path / "bundle")
    overrides = {
        # Offline stand-ins for what `camoufox fetch` downloads (its fingerprint model):
        # a bundled real-device preset, and WebGL off so no GPU table is consulted.
        "fingerprint_preset": True, "block_webgl": True, "i_know_what_im_doing": True,
        "env": {"HOME": str(tmp_path)},
    }
    return {"binary": str(binary), "ubo": str(addons_dir / "UBO"), "overrides": overrides}


def _camou_config(options: dict[str, Any]) -> dict[str, Any]:
    """The CAMOU_CONFIG_n chunks of the launch env, joined and parsed."""
    env = options["env"]
    keys = sorted((k for k in env if k.startswith("CAMOU_CONFIG_")),
                  key=lambda k: int(k.rsplit("_", 1)[1]))
    return json.loads("".join(env[k] for k in keys))


def test_camoufox_kwargs_load_our_addon_and_exclude_ublock_by_default(extension: Path) -> None:
    """Defaults: our extension is the addon, uBlock Origin excluded, humanize not set; the
    keyword names all exist in camoufox.launch_options."""
    from camoufox import DefaultAddons
    from camoufox.utils import launch_options

    kw = camoufox_kwargs(extension, executable_path="/x/camoufox-bin", user_data_dir="/p")
    assert kw["addons"] == [str(extension)]
    assert kw["exclude_addons"] == [DefaultAddons.UBO]
    assert "humanize" not in kw
    assert kw["firefox_user_prefs"] == FIREFOX_PREFS
    inspect.signature(launch_options).bind(**kw)
    kept = camoufox_kwargs(extension, executable_path="/x", user_data_dir="/p",
                           keep_ublock=True, humanize=1.5)
    assert kept["exclude_addons"] == [] and kept["humanize"] == 1.5


def test_camoufox_launch_options_exclude_ublock_by_default(
    extension: Path, offline_camoufox: dict[str, Any]
) -> None:
    """camoufox.launch_options, fed by us: the addon list is exactly our extension (the
    cached uBlock is left out), our prefs and profile pass through, nothing downloads."""
    opts = camoufox_options(extension, user_data_dir="/tmp/profile-x", headless=True,
                            executable_path=offline_camoufox["binary"],
                            overrides=offline_camoufox["overrides"])
    assert opts["executable_path"] == offline_camoufox["binary"]
    assert opts["user_data_dir"] == "/tmp/profile-x"
    assert opts["headless"] is True
    config = _camou_config(opts)
    assert config["addons"] == [str(extension)]
    assert "humanize" not in config
    for key, value in FIREFOX_PREFS.items():
        assert opts["firefox_user_prefs"][key] == value


def test_camoufox_keeps_ublock_when_asked_and_passes_humanize(
    extension: Path, offline_camoufox: dict[str, Any]
) -> None:
    """keep_ublock=True adds Camoufox's uBlock Origin next to our extension; humanize=2.5
    reaches Camoufox's config as humanize + humanize:maxTime (seconds)."""
    opts = camoufox_options(extension, user_data_dir="/tmp/p", keep_ublock=True, humanize=2.5,
                            executable_path=offline_camoufox["binary"],
                            overrides=offline_camoufox["overrides"])
    config = _camou_config(opts)
    assert config["addons"] == [str(extension), offline_camoufox["ubo"]]
    assert config["humanize"] is True
    assert config["humanize:maxTime"] == 2.5


def test_camoufox_humanize_true_sets_no_max_time(
    extension: Path, offline_camoufox: dict[str, Any]
) -> None:
    """humanize=True turns the humanized cursor on with Camoufox's own duration."""
    opts = camoufox_options(extension, user_data_dir="/tmp/p", humanize=True,
                            executable_path=offline_camoufox["binary"],
                            overrides=offline_camoufox["overrides"])
    config = _camou_config(opts)
    assert config["humanize"] is True and "humanize:maxTime" not in config


def test_missing_camoufox_binary_names_the_fetch_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No installed build: DeviceNotConnected naming `python -m camoufox fetch`, and
    camoufox is never asked to download (download_if_missing=False)."""
    import camoufox.pkgman
    from camoufox.exceptions import CamoufoxNotInstalled

    for var in ("TRUSTBRIDGE_CAMOUFOX", "CAMOUFOX_EXECUTABLE_PATH"):
        monkeypatch.delenv(var, raising=False)
    asked: list[bool] = []

    def not_installed(download_if_missing: bool = True) -> Path:
        asked.append(download_if_missing)
        raise CamoufoxNotInstalled("camoufox is not installed")

    monkeypatch.setattr(camoufox.pkgman, "camoufox_path", not_installed)
    with pytest.raises(E.DeviceNotConnected) as info:
        find_camoufox()
    assert CAMOUFOX_FETCH_COMMAND in info.value.message
    assert info.value.details["fetch"] == CAMOUFOX_FETCH_COMMAND
    assert asked == [False]


def test_camoufox_path_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    """An explicit binary path that is not a file: DeviceNotConnected with the fetch hint."""
    with pytest.raises(E.DeviceNotConnected, match="camoufox fetch"):
        find_camoufox(str(tmp_path / "nope" / "camoufox-bin"))


async def test_launch_camoufox_without_binary_fails_before_launching(
    tmp_path: Path, extension: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """launch_camoufox with a missing binary raises DeviceNotConnected and never reaches
    camoufox.launch_options or Playwright."""
    import camoufox.utils

    monkeypatch.setenv("TRUSTBRIDGE_CAMOUFOX", str(tmp_path / "missing-bin"))
    monkeypatch.setattr(camoufox.utils, "launch_options",
                        lambda **kw: pytest.fail("launch_options was called"))
    pw = _FakePlaywright()
    with pytest.raises(E.DeviceNotConnected, match=r"python -m camoufox fetch"):
        await launch_camoufox(pw, extension, user_data_dir=str(tmp_path / "p"))  # type: ignore[arg-type]
    assert pw.firefox.calls == []


def test_camoufox_preparation_failure_is_mapped(
    extension: Path, offline_camoufox: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """When camoufox cannot prepare the launch (as here, offline, when its fingerprint
    model would have to be downloaded), the error is DeviceNotConnected naming the fetch
    command, chained to camoufox's own exception."""
    import camoufox.utils

    cause = OSError("Failed to resolve 'github.com'")

    def offline(**kwargs: Any) -> dict[str, Any]:
        raise cause

    monkeypatch.setattr(camoufox.utils, "launch_options", offline)
    with pytest.raises(E.DeviceNotConnected, match="python -m camoufox fetch") as info:
        camoufox_options(extension, user_data_dir="/tmp/p",
                         executable_path=offline_camoufox["binary"])
    assert info.value.__cause__ is cause
    assert "github.com" in info.value.message


# --------------------------------------------------------------------------- supervisor


def test_supervisor_accepts_the_three_browsers_and_refuses_others() -> None:
    """chromium, firefox and camoufox are accepted; anything else is a ValueError."""
    assert BROWSERS == ("chromium", "firefox", "camoufox")
    for name in BROWSERS:
        assert Supervisor("ws://127.0.0.1:9", "t", browser=name).browser_name == name
    with pytest.raises(ValueError, match="webkit"):
        Supervisor("ws://127.0.0.1:9", "t", browser="webkit")


def test_driver_capabilities_per_browser() -> None:
    """Every browser's driver promises trusted input; Chromium has every capability,
    Firefox (WebDriver BiDi) lacks multi-clicks, HTML5 drops, non-US-layout text and a safe
    coordinate route, Camoufox (Gecko, Juggler) only the coordinate route."""
    lacking = {name: {k for k, v in driver_capabilities(name).items() if not v}
               for name in BROWSERS}
    assert all(driver_capabilities(name)["trustedInput"] for name in BROWSERS)
    assert lacking == {
        "chromium": set(),
        "firefox": {"multiClick", "html5DragDrop", "unicodeText", "coordinateRoute"},
        "camoufox": {"coordinateRoute"},
    }
    with pytest.raises(ValueError):
        driver_capabilities("webkit")


def test_cli_up_offers_the_supervisor_browsers() -> None:
    """`trustbridge up --browser` offers exactly the supervisor's browsers."""
    from trustbridge.bridge.cli import build_parser

    up = build_parser()._subparsers._group_actions[0].choices["up"]  # type: ignore[union-attr]
    (browser_action,) = [a for a in up._actions if a.dest == "browser"]
    assert tuple(browser_action.choices) == launcher.BROWSERS


# --------------------------------------------------------------------------- launch options
# (trustbridge mcp --viewport-size / --executable-path / --user-data-dir / origins, issue 15)


async def test_launch_firefox_takes_viewport_and_executable_path(
    tmp_path: Path, extension: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--viewport-size and --executable-path reach Playwright's launch; $TRUSTBRIDGE_FIREFOX
    is not consulted then."""
    binary = tmp_path / "my-firefox"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    monkeypatch.setenv("TRUSTBRIDGE_FIREFOX", str(tmp_path / "not-this-one"))
    pw = _FakePlaywright()
    await launch_firefox(pw, extension, user_data_dir=str(tmp_path / "new" / "profile"),  # type: ignore[arg-type]
                         viewport={"width": 800, "height": 600}, executable_path=str(binary))
    ((data_dir, kwargs),) = pw.firefox.calls
    assert kwargs["viewport"] == {"width": 800, "height": 600}
    assert kwargs["executable_path"] == str(binary)
    assert Path(data_dir).is_dir()  # a --user-data-dir that did not exist yet is made


async def test_an_executable_path_that_is_not_executable_is_refused(
    tmp_path: Path, extension: Path
) -> None:
    """--executable-path naming a non-executable file: DeviceNotConnected naming the flag,
    nothing launched."""
    plain = tmp_path / "firefox"
    plain.write_text("")
    pw = _FakePlaywright()
    with pytest.raises(E.DeviceNotConnected, match="--executable-path .* not an executable"):
        await launch_firefox(pw, extension, user_data_dir=str(tmp_path / "p"),  # type: ignore[arg-type]
                             executable_path=str(plain))
    assert pw.firefox.calls == []


async def test_launch_camoufox_sizes_its_window_for_a_viewport(
    tmp_path: Path, extension: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Camoufox gets the viewport as its own ``window`` option (a Playwright viewport
    deadlocks Juggler under a spoofed window) and the executable path."""
    import camoufox.async_api

    seen: dict[str, Any] = {}

    def options(extension: Path, **kwargs: Any) -> dict[str, Any]:
        seen.update(kwargs)
        return {"executable_path": kwargs["executable_path"]}

    async def new_browser(pw: Any, *, from_options: dict[str, Any], persistent_context: bool):
        seen["from_options"] = from_options
        return "context"

    monkeypatch.setattr(launcher, "camoufox_options", options)
    monkeypatch.setattr(camoufox.async_api, "AsyncNewBrowser", new_browser)
    ctx = await launch_camoufox(_FakePlaywright(), extension, user_data_dir=str(tmp_path),  # type: ignore[arg-type]
                                viewport={"width": 800, "height": 600},
                                executable_path="/opt/camoufox/camoufox-bin")
    assert ctx == "context"
    assert seen["overrides"] == {"window": (800, 600)}
    assert seen["executable_path"] == "/opt/camoufox/camoufox-bin"
    assert "viewport" not in seen["from_options"]


async def test_supervisor_hands_its_launch_options_to_each_browser(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    """Supervisor(viewport, executable_path) reaches the launch of every browser."""
    from trustbridge.supervisor import runner

    calls: list[tuple[str, dict[str, Any]]] = []

    def recorder(name: str):
        async def launch(pw: Any, extension: Path, **kwargs: Any) -> str:
            calls.append((name, kwargs))
            return "context"
        return launch

    for name in BROWSERS:
        monkeypatch.setattr(runner, f"launch_{name}", recorder(name))
        sup = Supervisor("ws://127.0.0.1:9", "t", browser=name,
                         viewport={"width": 640, "height": 480}, executable_path="/bin/b")
        assert await sup._launch(object(), Path("/ext"), "/profile") == "context"  # type: ignore[arg-type]
    assert [n for n, _ in calls] == list(BROWSERS)
    for _name, kwargs in calls:
        assert kwargs["viewport"] == {"width": 640, "height": 480}
        assert kwargs["executable_path"] == "/bin/b"
        assert kwargs["user_data_dir"] == "/profile"


class _Request:
    def __init__(self, url: str, navigation: bool) -> None:
        self.url = url
        self._navigation = navigation

    def is_navigation_request(self) -> bool:
        return self._navigation


class _Route:
    def __init__(self, url: str, navigation: bool = False) -> None:
        self.request = _Request(url, navigation)
        self.outcome: str | None = None

    async def abort(self, error_code: str) -> None:
        self.outcome = f"abort:{error_code}"

    async def fallback(self) -> None:
        self.outcome = "fallback"


class _Context:
    def __init__(self) -> None:
        self.routes: list[tuple[str, Any]] = []

    async def route(self, pattern: str, handler: Any) -> None:
        self.routes.append((pattern, handler))


async def test_origin_route_aborts_blocked_requests_and_passes_the_rest(
    capsys: pytest.CaptureFixture[str]
) -> None:
    """install(): no route without lists; with them a blocked request is aborted as
    blockedbyclient (a blocked navigation is said on stderr), others fall through."""
    from trustbridge.supervisor.origins import OriginPolicy, install, parse_origin_list

    idle = _Context()
    await install(idle, OriginPolicy())  # type: ignore[arg-type]
    assert idle.routes == []
    ctx = _Context()
    await install(ctx, OriginPolicy(blocked=parse_origin_list("http://localhost:*")))  # type: ignore[arg-type]
    ((pattern, handler),) = ctx.routes
    assert pattern == "**/*"
    blocked, nav, other = (_Route("http://localhost:81/x"),
                           _Route("http://localhost:82/", navigation=True),
                           _Route("http://127.0.0.1:81/x"))
    for route in (blocked, nav, other):
        await handler(route)
    assert (blocked.outcome, nav.outcome, other.outcome) == \
        ("abort:blockedbyclient", "abort:blockedbyclient", "fallback")
    err = capsys.readouterr().err
    assert "blocked a navigation to http://localhost:82/" in err and ":81" not in err


async def test_supervisor_output_dir_is_where_downloads_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Supervisor(output_dir=DIR).start() points the download path
    (supervisor/downloads.py) at DIR before the browser starts."""
    from trustbridge.supervisor import downloads, runner

    monkeypatch.setattr(downloads, "_configured", None)

    def no_playwright() -> Any:
        raise RuntimeError("stop before launching")

    monkeypatch.setattr(runner, "async_playwright", no_playwright)
    sup = Supervisor("ws://127.0.0.1:9", "t", output_dir=str(tmp_path / "out"))
    with pytest.raises(RuntimeError, match="stop before launching"):
        await sup.start()
    assert downloads.downloads_dir() == tmp_path / "out" and (tmp_path / "out").is_dir()


def test_camoufox_without_the_extra_names_it_before_any_camoufox_import(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Without the camoufox package (an optional extra), every Camoufox entry point raises
    DEVICE_NOT_CONNECTED naming `pip install 'trustbridge[camoufox]'`, never an
    ImportError; even with an explicit binary (the launch needs the package)."""
    import sys

    monkeypatch.setitem(sys.modules, "camoufox", None)
    binary = tmp_path / "camoufox-bin"
    binary.write_text("")
    calls = [lambda: find_camoufox(), lambda: find_camoufox(str(binary)),
             lambda: launcher.camoufox_options(tmp_path, user_data_dir=str(tmp_path),
                                               executable_path=str(binary))]
    for call in calls:
        with pytest.raises(E.DeviceNotConnected) as info:
            call()
        assert "pip install 'trustbridge[camoufox]'" in info.value.message
        assert info.value.details["install"] == "pip install 'trustbridge[camoufox]'"
    monkeypatch.delitem(sys.modules, "camoufox")
    assert launcher.camoufox_package_missing() is None  # this test venv has the extra
