"""Which URLs an agent may load (``page.navigate``, ``tabs.new``): plain policy, no I/O.

- ``http:``, ``https:`` and ``about:blank`` load.
- ``data:`` is refused: Chromium and Firefox block top-level ``data:`` documents (a
  phishing defence), so the load never completes (it timed out after 30 s); serve the
  HTML over ``http://127.0.0.1`` instead.
- ``file:`` is refused unless the bridge was started with local file access
  (``TRUSTBRIDGE_ALLOW_FILE_URLS=1`` or ``trustbridge up --allow-file-urls``): a page the
  agent opens could otherwise read local files, and an agent told by a page to open
  ``file:///home/...`` would leak them into its context. Playwright MCP refuses ``file:``
  by default for the same reason (microsoft/playwright#39600).
- ``javascript:`` is refused: it runs script in the current page, which is
  ``page.evaluate``'s job, not navigation's.
- Browser-internal pages (``chrome:``, ``about:`` other than ``about:blank``,
  ``chrome-extension:``, ``moz-extension:``, ``view-source:``, ``devtools:``...) are
  refused: extensions may not script them, so there would be no snapshot and no refs.
- With an origin policy (``--allowed-origins`` / ``--blocked-origins``,
  bridge/protocol/origins.py), an http(s) URL of an origin it blocks is refused before
  anything is sent; the browser would only fail the load with
  ``net::ERR_BLOCKED_BY_CLIENT`` (supervisor/origins.py checks every request there).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from .protocol import errors as E
from .protocol.origins import OriginPolicy

ALLOWED_SCHEMES = frozenset({"http", "https"})

_USERINFO = re.compile(r"(?i)\b((?:https?|wss?|ftp)://)[^\s/?#@\"'<>]+@")
"""The user info (``user:password@``) of an http(s), ws(s) or ftp URL in any text."""
REDACTED_USERINFO = "***@"


def redact_credentials(text: str) -> str:
    """``text`` with the user info of every http(s)/ws(s)/ftp URL in it replaced by
    ``***`` (``http://user:pw@host/`` → ``http://***@host/``): credentials in a URL never
    reach an agent's context or a log (docs/security.md "Files"). The page itself still
    gets the URL as asked."""
    if "@" not in text or "://" not in text:
        return text
    return _USERINFO.sub(lambda m: m.group(1) + REDACTED_USERINFO, text)


def redact(value: Any) -> Any:
    """:func:`redact_credentials` on every string in ``value`` (dicts, lists, nested);
    the same object when nothing changed."""
    if isinstance(value, str):
        return redact_credentials(value)
    if isinstance(value, dict):
        out = {k: redact(v) for k, v in value.items()}
        return value if all(out[k] is value[k] for k in value) else out
    if isinstance(value, list):
        items = [redact(v) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value

BLOCKED_ORIGIN_NEXT_STEP = (
    "Nothing was loaded. Open a URL of an origin the lists allow; the lists are the "
    "--allowed-origins / --blocked-origins this server was started with (Playwright MCP's "
    "network.allowedOrigins / network.blockedOrigins in a config file).")


def check_navigation_url(url: str, allow_file_urls: bool = False,
                         origins: OriginPolicy | None = None) -> None:
    """Raise BadRequest unless ``url`` may be loaded (the rules above).

    Args:
        url: the absolute URL an agent asked for.
        allow_file_urls: the bridge was started with local file access.
        origins: the origin lists the browser enforces, if any.

    Raises:
        BadRequest: relative URL, refused scheme, or ``file:`` without permission
            (``details.scheme`` names the scheme); an origin the policy blocks
            (``details = {scheme, reason}``, ``reason`` from
            :meth:`OriginPolicy.refusal`, with a next step).
    """
    try:
        scheme = urlsplit(url.strip()).scheme.lower()
    except ValueError as exc:
        raise E.BadRequest("The URL cannot be parsed.", {"scheme": None}) from exc
    if scheme in ALLOWED_SCHEMES:
        reason = origins.refusal(url.strip()) if origins is not None else None
        if reason is not None:
            # "Navigation failed" as the browser's own refusal reads; this one comes first.
            raise E.BadRequest(
                f"Navigation failed before anything was sent: {reason}.",
                {"scheme": scheme, "reason": reason}, next_step=BLOCKED_ORIGIN_NEXT_STEP)
        return
    if scheme == "about" and url.strip().lower() == "about:blank":
        return
    if scheme == "file":
        if allow_file_urls:
            return
        raise E.BadRequest(
            "Local files (file:) are not loaded by default: a page or an agent could read "
            "this machine's files. Serve the file over http://127.0.0.1, or restart the "
            "bridge with TRUSTBRIDGE_ALLOW_FILE_URLS=1 (trustbridge up --allow-file-urls).",
            {"scheme": "file"},
            next_step="Nothing was loaded. Serve the folder over loopback "
                      "(python3 -m http.server --bind 127.0.0.1 8000) and open "
                      "http://127.0.0.1:8000/..., or restart with --allow-file-urls.")
    if scheme == "data":
        raise E.BadRequest(
            "Browsers do not load data: URLs as a top-level page (they block them against "
            "phishing); serve the HTML over http://127.0.0.1 instead.", {"scheme": "data"},
            next_step="Nothing was loaded. Serve the HTML over http://127.0.0.1, or open "
                      "about:blank and set its content with page.evaluate (browser_evaluate).")
    if scheme == "javascript":
        raise E.BadRequest(
            "javascript: URLs are not navigation; run script with page.evaluate "
            "(browser_evaluate).", {"scheme": "javascript"},
            next_step="Nothing ran. Run the script with page.evaluate (browser_evaluate).")
    if not scheme:
        raise E.BadRequest(
            "Give an absolute URL with its scheme, e.g. https://example.com/.", {"scheme": None},
            next_step="Nothing was loaded. Retry with the scheme: https://... or http://....")
    raise E.BadRequest(
        f"{scheme}: pages are browser-internal or unsupported; extensions cannot read or act "
        "in them. Use http(s): or about:blank.", {"scheme": scheme[:32]},
        next_step="Nothing was loaded. Open an http(s): URL or about:blank.")
