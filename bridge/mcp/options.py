"""Options of ``trustbridge mcp`` (issue 15 item 4): Playwright MCP's command line.

Each option is a flag of ``trustbridge mcp``, an environment variable and a key of the
``--config`` JSON file, with Playwright MCP's names (its README's options table and
config schema, microsoft/playwright-mcp): ``--viewport-size`` is
``PLAYWRIGHT_MCP_VIEWPORT_SIZE`` (or ``TRUSTBRIDGE_VIEWPORT_SIZE``) and
``browser.contextOptions.viewport``. Precedence, per option: flag > environment
(``TRUSTBRIDGE_*`` before ``PLAYWRIGHT_MCP_*``) > config file > default.

:func:`build_options` turns the three sources into one validated :class:`McpOptions`
or raises :class:`OptionsError` naming the source and the value, before anything starts
(the CLI exits 2). The :class:`~.session.Connection` keeps the options; its embedded
launch passes them to ``python -m supervisor`` (:meth:`McpOptions.embedded_kwargs`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..protocol.origins import OriginPolicy, parse_origin_list

BROWSERS = ("chromium", "firefox", "camoufox")
"""``--browser`` values (docs/browsers.md)."""
CAPS = ("vision", "pdf", "devtools", "code")
"""``--caps`` values that list tools here (``Tool.cap``; bridge/mcp/server.py tools_for).
``devtools``: Playwright MCP's tracing tools (bridge/mcp/recording.py); ``code``:
browser_exec, local trusted Python (bridge/mcp/code.py; not Playwright MCP's)."""
DEFAULT_CODE_TIMEOUT_MAX_S = 300.0
"""Largest browser_exec timeout a call may ask for unless ``--code-timeout-max`` says, s."""
FOREIGN_CAPS = frozenset({"config", "core", "core-navigation", "core-tabs", "core-input",
                          "core-install", "network", "storage", "testing", "tracing"})
"""Playwright MCP capabilities with no trustbridge tools: accepted and ignored (said in
:attr:`McpOptions.warnings`), so a client's Playwright MCP line still starts. ``core``
tools are always listed."""
DEFAULT_VIEWPORT = (1280, 720)
"""CSS px (supervisor/launcher.py VIEWPORT)."""
MAX_VIEWPORT_PX = 10000
"""Largest viewport side accepted, CSS px (supervisor/__main__.py checks the same)."""
ENV_PREFIXES = ("TRUSTBRIDGE_", "PLAYWRIGHT_MCP_")
"""Environment variable prefixes, the first found wins."""


class OptionsError(ValueError):
    """A bad option value; the message names where it came from and what is accepted."""


@dataclass(frozen=True)
class McpOptions:
    """What ``trustbridge mcp`` was started with (defaults: today's embedded launch).

    Attributes:
        browser: ``chromium``, ``firefox`` or ``camoufox``.
        headless: no window (default True; Playwright MCP defaults to headed).
        viewport: ``(width, height)`` of the top-level viewport in CSS px; None: 1280x720.
        user_data_dir: a profile kept across runs; None: a fresh temp profile per launch.
        isolated: ``--isolated`` was asked for (the default behaviour here).
        output_dir: where produced files go (downloads, screenshots, PDFs); None: the
            consumer's default.
        allowed_origins / blocked_origins: the entries as written
            (supervisor/origins.py gives their meaning).
        allowed_roots: folders ``browser_file_upload`` may take files from, besides the
            output directory (bridge/files.py; never the state directory).
        unrestricted_file_access: Playwright MCP's ``--allow-unrestricted-file-access``:
            uploads from any path (the state directory still refused) and, in a browser
            this server starts, ``file:`` URLs.
        caps: extra tool capabilities listed (``vision``, ``pdf``: Playwright MCP's names;
            ``code``: browser_exec).
        code_timeout_max_s: the largest timeout a browser_exec call may ask for, s.
        executable_path: the browser binary; None: the installed one.
        session_label: the label of this server's session on the bridge (what other
            sessions and people see); None: the MCP client's name and a random suffix
            (bridge/mcp/session.py session_label).
        config_file: the ``--config`` file read, if any.
        launch_set: names of the launch options some source set (they only shape a
            browser this server starts, not one a running bridge already has).
        warnings: what was accepted and ignored, one line each, for stderr.
    """

    browser: str = "chromium"
    headless: bool = True
    viewport: tuple[int, int] | None = None
    user_data_dir: Path | None = None
    isolated: bool = False
    output_dir: Path | None = None
    allowed_origins: tuple[str, ...] = ()
    blocked_origins: tuple[str, ...] = ()
    allowed_roots: tuple[Path, ...] = ()
    unrestricted_file_access: bool = False
    caps: frozenset[str] = field(default_factory=frozenset)
    code_timeout_max_s: float = DEFAULT_CODE_TIMEOUT_MAX_S
    executable_path: Path | None = None
    config_file: Path | None = None
    session_label: str | None = None
    launch_set: frozenset[str] = field(default_factory=frozenset, compare=False)
    warnings: tuple[str, ...] = field(default=(), compare=False)

    @property
    def origins(self) -> OriginPolicy:
        """The origin policy the browser enforces."""
        return OriginPolicy(parse_origin_list(self.allowed_origins),
                            parse_origin_list(self.blocked_origins))

    def embedded_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of :class:`bridge.embedded.Embedded` for this launch."""
        return {
            "device": self.browser, "browser": self.browser, "headless": self.headless,
            "viewport": ({"width": self.viewport[0], "height": self.viewport[1]}
                         if self.viewport else None),
            "user_data_dir": str(self.user_data_dir) if self.user_data_dir else None,
            "executable_path": str(self.executable_path) if self.executable_path else None,
            "origins": self.origins,
            "output_dir": str(self.output_dir) if self.output_dir else None,
            "allow_file_urls": True if self.unrestricted_file_access else None,
        }


# ----------------------------------------------------------------------------- parsers
# Each takes the raw value (a string from a flag or the environment, a JSON value from the
# config file) and returns the field's value or raises ValueError saying what is accepted.


def parse_browser(value: Any) -> str:
    """``chromium`` | ``firefox`` | ``camoufox`` (case-insensitive)."""
    name = str(value).strip().lower() if isinstance(value, str) else value
    if name in BROWSERS:
        return name
    hint = ""
    if name in ("chrome", "msedge", "chrome-for-testing") or (
            isinstance(name, str) and name.startswith(("chrome-", "msedge-"))):
        hint = (f" ({name!r} is a Playwright MCP channel of Google Chrome / Edge; trustbridge "
                "runs Debian's Chromium: use chromium, with --executable-path for another "
                "Chromium-based binary)")
    elif name == "webkit":
        hint = " (WebKit cannot load the trustbridge extension)"
    raise ValueError(f"unknown browser {value!r}; use one of {', '.join(BROWSERS)}{hint}")


def parse_bool(value: Any) -> bool:
    """JSON true/false, or ``true``/``1``/``false``/``0`` (Playwright MCP's env values)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower() if isinstance(value, str) else None
    if text in ("true", "1"):
        return True
    if text in ("false", "0"):
        return False
    raise ValueError(f"{value!r} is not a boolean; use true or false (1 or 0)")


def parse_viewport(value: Any) -> tuple[int, int] | None:
    """``"WxH"`` (or the legacy ``"W,H"``), or ``{width, height}``; CSS px, 1..10000.
    JSON null (Playwright MCP's default "no fixed viewport") keeps the default."""
    if value is None:
        return None
    bad = ValueError(f"{value!r} is not a viewport size; write WIDTHxHEIGHT in CSS px, "
                     f"e.g. 1280x720 (each 1 to {MAX_VIEWPORT_PX})")
    if isinstance(value, Mapping):
        width, height = value.get("width"), value.get("height")
        if set(value) - {"width", "height"}:
            raise bad
    elif isinstance(value, str):
        text = value.strip().lower()
        sep = "x" if "x" in text else ","
        width, _, height = (p.strip() for p in text.partition(sep))
        if not (width.isdigit() and height.isdigit()):
            raise bad
        width, height = int(width), int(height)
    else:
        raise bad
    if not all(isinstance(v, int) and not isinstance(v, bool) and 0 < v <= MAX_VIEWPORT_PX
               for v in (width, height)):
        raise bad
    return (width, height)


def parse_caps(value: Any) -> frozenset[str]:
    """A comma-separated string or a list of capability names (:data:`CAPS`; the
    :data:`FOREIGN_CAPS` are dropped by :func:`build_options` with a warning)."""
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(c, str) for c in items):
        raise ValueError(f"{value!r} is not a list of capabilities")
    caps = frozenset(c.strip().lower() for c in items if c.strip())
    unknown = sorted(caps - set(CAPS) - FOREIGN_CAPS)
    if unknown:
        raise ValueError(f"unknown capability {', '.join(map(repr, unknown))}; use a comma "
                         f"list of {', '.join(CAPS)}")
    return caps


def parse_seconds(value: Any) -> float:
    """A positive number of seconds (a JSON number, or a string such as ``300`` or
    ``0.5``), at most one day."""
    if isinstance(value, bool):  # a JSON true is no duration (float(True) is 1.0)
        raise ValueError(f"{value!r} is not a number of seconds")  # noqa: TRY004 - parsers raise ValueError
    try:
        seconds = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        raise ValueError(f"{value!r} is not a number of seconds; write e.g. 300") from None
    if not 0 < seconds <= 86_400:
        raise ValueError(f"{value!r} is out of range; use more than 0 and at most 86400 s")
    return seconds


def parse_origins(value: Any) -> tuple[str, ...]:
    """A semicolon-separated string or a list of origins (supervisor/origins.py forms)."""
    return tuple(p.text for p in parse_origin_list(value))


LABEL_PATTERN = re.compile(r"^[A-Za-z0-9_.:@-][A-Za-z0-9_.:@ -]{0,63}$")
"""A session label (bridge/protocol/models.py SessionLabel: 1 to 64 characters)."""


def parse_label(value: Any) -> str:
    """A session label: 1 to 64 letters, digits, spaces and ``_.:@-``, not starting
    with a space."""
    if isinstance(value, str) and LABEL_PATTERN.match(value.strip()):
        return value.strip()
    raise ValueError(f"{value!r} is not a session label; use 1 to 64 letters, digits, "
                     "spaces and _.:@- (e.g. research-agent)")


def _path(value: Any) -> Path:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{value!r} is not a path")
    return Path(value.strip()).expanduser().resolve()


def parse_dir(value: Any) -> Path:
    """A folder path (made absolute against the working directory); it may not exist yet,
    but must not be a file."""
    path = _path(value)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{path} is a file, not a folder")
    return path


def parse_roots(value: Any) -> tuple[Path, ...]:
    """A semicolon-separated string or a list of folder paths (made absolute)."""
    items = value if isinstance(value, list) else str(value).split(";")
    roots = tuple(parse_dir(v) for v in items if not isinstance(v, str) or v.strip())
    if not roots:
        raise ValueError(f"{value!r} names no folder")
    return roots


def parse_executable(value: Any) -> Path:
    """The path of an executable file."""
    path = _path(value)
    if not path.is_file() or not os.access(path, os.X_OK):
        raise ValueError(f"{path} is not an executable file")
    return path


@dataclass(frozen=True)
class _Option:
    name: str  # McpOptions field
    flag: str  # as written on the command line
    env: str  # after the prefix
    parse: Callable[[Any], Any]
    launch: bool = True  # shapes the browser launch


OPTIONS = (
    _Option("browser", "--browser", "BROWSER", parse_browser),
    _Option("headless", "--headless/--headed", "HEADLESS", parse_bool),
    _Option("viewport", "--viewport-size", "VIEWPORT_SIZE", parse_viewport),
    _Option("user_data_dir", "--user-data-dir", "USER_DATA_DIR", parse_dir),
    _Option("isolated", "--isolated", "ISOLATED", parse_bool),
    _Option("output_dir", "--output-dir", "OUTPUT_DIR", parse_dir),
    _Option("allowed_origins", "--allowed-origins", "ALLOWED_ORIGINS", parse_origins),
    _Option("blocked_origins", "--blocked-origins", "BLOCKED_ORIGINS", parse_origins),
    _Option("allowed_roots", "--allowed-roots", "ALLOWED_ROOTS", parse_roots, launch=False),
    _Option("unrestricted_file_access", "--allow-unrestricted-file-access",
            "ALLOW_UNRESTRICTED_FILE_ACCESS", parse_bool, launch=False),
    _Option("caps", "--caps", "CAPS", parse_caps, launch=False),
    _Option("code_timeout_max_s", "--code-timeout-max", "CODE_TIMEOUT_MAX", parse_seconds,
            launch=False),
    _Option("executable_path", "--executable-path", "EXECUTABLE_PATH", parse_executable),
    _Option("session_label", "--session-label", "SESSION_LABEL", parse_label, launch=False),
)
"""Every option: its field, flag, environment name (after :data:`ENV_PREFIXES`) and parser."""


def env_value(env: Mapping[str, str], name: str) -> tuple[str, str] | None:
    """``(variable, value)`` of the first non-empty ``<prefix><name>``, or None."""
    for prefix in ENV_PREFIXES:
        value = env.get(prefix + name, "")
        if value.strip():
            return prefix + name, value
    return None


# ----------------------------------------------------------------------------- config file

_CONFIG_KEYS: dict[tuple[str, ...], str] = {
    ("browser", "browserName"): "browser",
    ("browser", "isolated"): "isolated",
    ("browser", "userDataDir"): "user_data_dir",
    ("browser", "launchOptions", "headless"): "headless",
    ("browser", "launchOptions", "executablePath"): "executable_path",
    ("browser", "contextOptions", "viewport"): "viewport",
    ("capabilities",): "caps",
    ("outputDir",): "output_dir",
    ("network", "allowedOrigins"): "allowed_origins",
    ("network", "blockedOrigins"): "blocked_origins",
}
"""Playwright MCP config key path → :class:`McpOptions` field (its config.d.ts)."""
_CONFIG_GROUPS = {("browser",), ("browser", "launchOptions"), ("browser", "contextOptions"),
                  ("network",)}


def read_config(path: Path) -> tuple[dict[str, tuple[str, Any]], list[str]]:
    """Read a Playwright MCP config file.

    Returns:
        ``({field: (key path, raw value)}, warnings)``: the keys it maps, and one line
        per key it has no equivalent for (ignored).

    Raises:
        OptionsError: the file cannot be read, is not JSON, is not an object, or a
            mapped group (``browser``, ``network``...) is not an object.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except OSError as exc:
        raise OptionsError(f"--config {path}: cannot read it ({exc.strerror or exc})") from exc
    except ValueError as exc:
        raise OptionsError(f"--config {path}: not JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise OptionsError(f"--config {path}: the file must hold a JSON object")
    found: dict[str, tuple[str, Any]] = {}
    ignored: list[str] = []

    def walk(node: Mapping[str, Any], at: tuple[str, ...]) -> None:
        for key, value in node.items():
            here = (*at, key)
            dotted = ".".join(here)
            if here in _CONFIG_KEYS:
                found[_CONFIG_KEYS[here]] = (dotted, value)
            elif here in _CONFIG_GROUPS:
                if not isinstance(value, dict):
                    raise OptionsError(f"--config {path}: {dotted} must be a JSON object")
                walk(value, here)
            else:
                ignored.append(dotted)

    walk(data, ())
    warnings = [f"--config {path}: {', '.join(ignored)} ignored (no trustbridge equivalent)"] \
        if ignored else []
    return found, warnings


# ----------------------------------------------------------------------------- the builder


def build_options(flags: Mapping[str, Any], env: Mapping[str, str] | None = None,
                  ) -> McpOptions:
    """The options from the command line, the environment and the config file.

    Args:
        flags: the flags given, by field name (:data:`OPTIONS`) plus ``config``; a value
            of None is "not given". Strings as typed; ``headless`` and ``isolated`` bools.
        env: the environment (default ``os.environ``).

    Raises:
        OptionsError: a value is bad (the message names the flag, variable or config
            key and the accepted values); ``--isolated`` and ``--user-data-dir`` come
            from the same source.
    """
    env = os.environ if env is None else env
    config_file: Path | None = None
    config_raw = flags.get("config")
    config_from = "--config"
    if config_raw is None and (found := env_value(env, "CONFIG")) is not None:
        config_from, config_raw = found
    config: dict[str, tuple[str, Any]] = {}
    warnings: list[str] = []
    if config_raw is not None:
        try:
            config_file = _path(config_raw)
        except ValueError as exc:
            raise OptionsError(f"{config_from}: {exc}") from None
        config, warnings = read_config(config_file)

    values: dict[str, Any] = {}
    layer: dict[str, int] = {}  # 0 flag, 1 environment, 2 config file
    for opt in OPTIONS:
        candidates: list[tuple[int, str, Any]] = []
        if flags.get(opt.name) is not None:
            candidates.append((0, opt.flag, flags[opt.name]))
        if (found := env_value(env, opt.env)) is not None:
            candidates.append((1, f"{found[0]}={found[1]!r}", found[1]))
        if opt.name in config:
            key, raw = config[opt.name]
            candidates.append((2, f"--config {config_file}: {key}", raw))
        if not candidates:
            continue
        level, source, raw = candidates[0]
        try:
            values[opt.name] = opt.parse(raw)
        except ValueError as exc:
            raise OptionsError(f"{source}: {exc}") from None
        layer[opt.name] = level

    if values.get("isolated") and values.get("user_data_dir") is not None:
        if layer["isolated"] == layer["user_data_dir"]:
            raise OptionsError(
                "--isolated keeps no profile and --user-data-dir keeps one: give one of them")
        loser = "isolated" if layer["isolated"] > layer["user_data_dir"] else "user_data_dir"
        warnings.append(f"{'--isolated' if loser == 'isolated' else '--user-data-dir'} "
                        "ignored: a source of higher precedence chose the other")
        values.pop(loser)
    if "caps" in values:
        foreign = sorted(values["caps"] & FOREIGN_CAPS)
        if foreign:
            warnings.append(f"--caps {', '.join(foreign)}: Playwright MCP capabilities with "
                            "no trustbridge tools; ignored")
        values["caps"] = values["caps"] - FOREIGN_CAPS
    launch = frozenset(o.name for o in OPTIONS if o.launch and o.name in values)
    return McpOptions(**values, config_file=config_file, launch_set=launch,
                      warnings=tuple(warnings))
