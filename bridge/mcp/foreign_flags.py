"""Playwright MCP flags ``trustbridge mcp`` does not implement: which are taken and ignored
with a warning, which are mapped, and which are refused, and why.

A client configured for Playwright MCP (``npx @playwright/mcp@0.0.86 --no-sandbox
--timeout-action 10000 ...``) should still start this server when a flag only tunes
something trustbridge does its own way; a flag whose absence would change what the page
sees or weaken security without saying so is refused (the CLI exits 2 with the reason).
The list is Playwright MCP 0.0.86's ``--help`` (``node
scripts/conformance/node_modules/@playwright/mcp/cli.js --help``); the flags it shares
with trustbridge (``--browser``, ``--headless``, ``--viewport-size``, ...) are
bridge/mcp/options.py's. ``--port`` maps to ``--http`` and ``--host`` to loopback only
(:func:`http_port`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .options import OptionsError

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
"""``--host`` values taken: the HTTP server binds 127.0.0.1 only (docs/security.md)."""


@dataclass(frozen=True)
class ForeignFlag:
    """One Playwright MCP flag.

    Attributes:
        flag: as written on the command line.
        nargs: argparse ``nargs``: 0 for a switch, None for one value, ``"+"`` for a list.
        refuse: why it is refused; None: it is ignored with :attr:`ignored` said.
        ignored: what ignoring it means, for the warning.
    """

    flag: str
    nargs: int | str | None = None
    refuse: str | None = None
    ignored: str = "no trustbridge equivalent"

    @property
    def dest(self) -> str:
        """The argparse destination: ``pw_`` and the flag's name."""
        return "pw_" + self.flag.lstrip("-").replace("-", "_")


_TIMEOUTS = "trustbridge's own timeouts apply (each tool's timeoutMs where it has one)"
_BROWSER = ("trustbridge launches and owns its browser (its extension and input driver "
            "give the trusted input); to use a browser it already runs, give --bridge")

FOREIGN_FLAGS: tuple[ForeignFlag, ...] = (
    # Ignored: they tune what trustbridge does its own way; nothing seen changes silently.
    ForeignFlag("--no-sandbox", 0, ignored="the browser keeps its sandbox"),
    ForeignFlag("--sandbox", 0, ignored="the browser's sandbox is on already"),
    ForeignFlag("--timeout-action", ignored=_TIMEOUTS),
    ForeignFlag("--timeout-navigation", ignored=_TIMEOUTS),
    ForeignFlag("--timeout-settle", ignored="results wait for the page their own way "
                "(a new tab up to 2 s, downloads, file choosers)"),
    ForeignFlag("--cdp-timeout", ignored="no CDP endpoint is used"),
    ForeignFlag("--idle-timeout", ignored="the browser stays up while the server runs"),
    ForeignFlag("--save-session", 0, ignored="no session log is saved"),
    ForeignFlag("--save-trace", 0, ignored="no trace is saved"),
    ForeignFlag("--save-video", ignored="no video is saved"),
    ForeignFlag("--image-responses", ignored="screenshots are returned as images"),
    ForeignFlag("--shared-browser-context", 0,
                ignored="every client of this server shares its one browser already"),
    ForeignFlag("--allowed-hosts", "+", ignored="the HTTP server binds 127.0.0.1 and "
                "checks a bearer token"),
    ForeignFlag("--codegen", ignored="results carry no generated code"),
    ForeignFlag("--console-level", ignored="browser_console_messages takes its own level"),
    ForeignFlag("--file-paths", ignored="results give absolute paths"),
    ForeignFlag("--output-max-size", ignored="output files are not evicted"),
    ForeignFlag("--snapshot-mode", ignored="actions append the page state (see "
                "--no-page-state)"),
    ForeignFlag("--snapshot-boxes", 0, ignored="snapshots carry no bounding boxes"),
    ForeignFlag("--no-webmcp", 0, ignored="page WebMCP tools are never listed"),
    ForeignFlag("--test-id-attribute", ignored="refs come from the snapshot, not test ids"),
    ForeignFlag("--profile-dir-name", ignored="no --extension profile is used"),
    ForeignFlag("--ignore-roots", 0, ignored="the client's workspace roots are not asked "
                "for"),
    # Playwright MCP 0.0.86's tab-group flags of its --extension mode (refused below).
    ForeignFlag("--background", 0, ignored="no --extension mode: its tab focus does not "
                "apply"),
    ForeignFlag("--no-tab-group", 0, ignored="no --extension mode: tabs are not grouped"),
    ForeignFlag("--session-name", ignored="no --extension mode; sessions are named by the "
                "server (docs/sessions.md)"),
    ForeignFlag("--session-color", ignored="no --extension mode: tabs are not grouped"),
    # Refused: ignoring them would change what pages see, or security, without a word.
    ForeignFlag("--device", refuse="no device emulation: pages would see a desktop browser"),
    ForeignFlag("--mobile", 0, refuse="no device emulation: pages would see a desktop "
                "browser"),
    ForeignFlag("--redact-url-params", refuse="named URL parameters are not redacted: their "
                "values would reach the model"),
    ForeignFlag("--user-agent", refuse="the user agent is the browser's own; pages would "
                "see it, not the one asked for"),
    ForeignFlag("--proxy-server", refuse="no proxy support: traffic would go direct"),
    ForeignFlag("--proxy-bypass", refuse="no proxy support: traffic would go direct"),
    ForeignFlag("--ignore-https-errors", 0, refuse="certificate errors stay errors: pages "
                "that need it would fail to load"),
    ForeignFlag("--storage-state", refuse="no storage state is loaded: pages would see a "
                "signed-out profile (keep one with --user-data-dir)"),
    ForeignFlag("--grant-permissions", "+", refuse="no permissions are granted: pages would "
                "see them denied"),
    ForeignFlag("--block-service-workers", 0, refuse="service workers are not blocked: "
                "pages would behave differently from what was asked"),
    ForeignFlag("--secrets", refuse="secrets are not masked in results: they would reach "
                "the model"),
    ForeignFlag("--init-script", "+", refuse="no init scripts: pages would run without "
                "them"),
    ForeignFlag("--init-page", "+", refuse="no init scripts: pages would run without them"),
    ForeignFlag("--cdp-endpoint", refuse=_BROWSER),
    ForeignFlag("--cdp-header", "+", refuse=_BROWSER),
    ForeignFlag("--endpoint", refuse=_BROWSER),
    ForeignFlag("--extension", 0, refuse=_BROWSER),
)
"""Playwright MCP 0.0.86's flags with no trustbridge equivalent, ``--port`` and
``--host`` aside."""


def check_foreign(given: Mapping[str, Any]) -> list[str]:
    """Warnings for the ignored flags given; the first refused one raises.

    Args:
        given: argparse destination (:attr:`ForeignFlag.dest`) → value; None or False
            is "not given".

    Returns:
        One line per ignored flag: the flag and what ignoring it means.

    Raises:
        OptionsError: a refused flag was given; the message says why.
    """
    warnings: list[str] = []
    for flag in FOREIGN_FLAGS:
        value = given.get(flag.dest)
        if value is None or value is False:
            continue
        if flag.refuse is not None:
            raise OptionsError(f"{flag.flag} (Playwright MCP) is not supported: "
                               f"{flag.refuse}. Leave it out.")
        warnings.append(f"{flag.flag} (Playwright MCP) ignored: {flag.ignored}")
    return warnings


def http_port(http: int | None, port: int | None, host: str | None) -> int | None:
    """The ``--http`` port, from ``--http`` or Playwright MCP's ``--port``.

    ``--host`` is taken only as a loopback name: the HTTP server binds 127.0.0.1 and
    nothing else (docs/security.md), so another host would be a promise not kept.

    Raises:
        OptionsError: a non-loopback ``--host``; ``--host`` without a port; ``--port``
            and ``--http`` naming different ports.
    """
    if host is not None and host.strip().lower() not in LOOPBACK_HOSTS:
        raise OptionsError(f"--host {host}: the MCP HTTP server binds 127.0.0.1 only "
                           "(loopback; docs/security.md); give --host 127.0.0.1 or "
                           "localhost, or put a TLS reverse proxy in front")
    if port is not None and http is not None and port != http:
        raise OptionsError(f"--port {port} and --http {http} name different ports: give one")
    chosen = http if http is not None else port
    if host is not None and chosen is None:
        raise OptionsError("--host applies to the HTTP server: give --port PORT (or --http)")
    return chosen
