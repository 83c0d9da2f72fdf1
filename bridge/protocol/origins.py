"""Origin lists (``--allowed-origins`` / ``--blocked-origins``): which origins the pages
may request. Plain policy, no I/O, shared by the bridge (navigation is refused before
anything is sent, bridge/urls.py) and the supervisor (every request is checked in the
browser, supervisor/origins.py ``install``). It lives in the protocol package because
both sides use it and the supervisor imports nothing else of the bridge (docs/design.md
§1); the policy crosses the process boundary as the supervisor's arguments
(:meth:`OriginPolicy.to_args`).

The lists are Playwright MCP's (its README, ``network.allowedOrigins`` /
``network.blockedOrigins``): semicolon-separated on the command line, the block list is
evaluated first, and with an allow list every other origin is blocked. An entry is

- a full origin, ``https://example.com:8080`` (the scheme's default port when none is
  written): that origin only;
- an origin with a wildcard port, ``http://localhost:*``: any port of that scheme and host;
- a bare host, ``example.com`` (or ``localhost:8080``): that host over http and https
  (any port, or the one written);
- ``*``: every origin.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
CHECKED_SCHEMES = frozenset(DEFAULT_PORTS)
"""Only network requests are checked; ``data:``, ``blob:``, extension and browser URLs pass."""


@dataclass(frozen=True)
class OriginPattern:
    """One entry of an origin list.

    Attributes:
        text: the entry as written.
        schemes: the schemes it matches (empty: any).
        host: lower-case host name or IP literal without brackets (``*``: any).
        port: the port it matches (None: any).
    """

    text: str
    schemes: frozenset[str]
    host: str
    port: int | None

    def matches(self, scheme: str, host: str, port: int) -> bool:
        """Whether the origin ``scheme://host:port`` is one this entry names."""
        if self.host == "*":
            return True
        return ((not self.schemes or scheme in self.schemes) and host == self.host
                and (self.port is None or port == self.port))


def parse_origin_pattern(text: str) -> OriginPattern:
    """Parse one entry (the forms in the module docstring).

    Raises:
        ValueError: the entry is none of those forms; the message names it and the forms.
    """
    entry = text.strip()
    bad = ValueError(
        f"{text!r} is not an origin: write https://example.com, https://example.com:8080, "
        "http://localhost:* (any port), example.com (a host over http and https) or *")
    if entry == "*":
        return OriginPattern(entry, frozenset(), "*", None)
    if not entry or any(c.isspace() for c in entry):
        raise bad
    wildcard_port = entry.endswith(":*")
    body = entry[:-2] if wildcard_port else entry
    if "://" not in body:
        schemes = frozenset({"http", "https"})
        body = "http://" + body
        explicit_scheme = False
    else:
        explicit_scheme = True
    try:
        parts = urlsplit(body)
        port = parts.port
    except ValueError:
        raise bad from None
    if parts.scheme not in CHECKED_SCHEMES or not parts.hostname \
            or parts.path not in ("", "/") or parts.query or parts.fragment \
            or parts.username or parts.password or (wildcard_port and port is not None):
        raise bad
    if explicit_scheme:
        schemes = frozenset({parts.scheme})
        if port is None and not wildcard_port:
            port = DEFAULT_PORTS[parts.scheme]
    return OriginPattern(entry, schemes, parts.hostname.lower(), port)


def parse_origin_list(value: str | Iterable[str] | None) -> tuple[OriginPattern, ...]:
    """A semicolon-separated string (the command line's and the environment's form) or a
    list of entries (the config file's) → patterns; empty entries are skipped.

    Raises:
        ValueError: an entry is not an origin (:func:`parse_origin_pattern`).
    """
    if value is None:
        return ()
    items = value.split(";") if isinstance(value, str) else list(value)
    out = []
    for item in items:
        if not isinstance(item, str):
            # ValueError as every other bad entry: callers report one kind of config error.
            raise ValueError(f"{item!r} is not an origin string")  # noqa: TRY004
        if item.strip():
            out.append(parse_origin_pattern(item))
    return tuple(out)


@dataclass(frozen=True)
class OriginPolicy:
    """Which origins the browser may request (Playwright MCP's rule: the block list first;
    with an allow list, only what it names).

    Attributes:
        allowed: the allow list (empty: every origin not blocked).
        blocked: the block list.
    """

    allowed: tuple[OriginPattern, ...] = ()
    blocked: tuple[OriginPattern, ...] = ()

    @property
    def active(self) -> bool:
        """Whether any request can be blocked (no route is installed otherwise)."""
        return bool(self.allowed or self.blocked)

    def refusal(self, url: str) -> str | None:
        """Why a request to ``url`` is blocked, or None when it may go out.

        Returns:
            e.g. ``"http://localhost:8123 is in --blocked-origins (localhost)"``.
        """
        try:
            parts = urlsplit(url)
            scheme = parts.scheme.lower()
            if scheme not in CHECKED_SCHEMES or not parts.hostname:
                return None
            host = parts.hostname.lower()
            port = parts.port or DEFAULT_PORTS[scheme]
        except ValueError:
            return None  # the browser refuses an unparsable URL itself
        origin = f"{scheme}://{parts.netloc.rsplit('@', 1)[-1].lower()}"
        for pattern in self.blocked:
            if pattern.matches(scheme, host, port):
                return f"{origin} is in --blocked-origins ({pattern.text})"
        if self.allowed and not any(p.matches(scheme, host, port) for p in self.allowed):
            return f"{origin} is not in --allowed-origins"
        return None

    def to_args(self) -> list[str]:
        """The ``python -m supervisor`` arguments that carry this policy."""
        args = []
        if self.allowed:
            args += ["--allowed-origins", ";".join(p.text for p in self.allowed)]
        if self.blocked:
            args += ["--blocked-origins", ";".join(p.text for p in self.blocked)]
        return args
