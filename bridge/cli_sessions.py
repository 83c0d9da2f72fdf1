"""The CLI's sessions (docs/sessions.md, issue 16): ``--session NAME`` and ``trustbridge
sessions``.

``--session NAME`` (before or after the command) makes a client command's requests
belong to session NAME, opened with ``onDisconnect: "keep"``: when the command exits the
session waits for its lease (``--session-lease-ms``, default 120 s) and the next command
with the same ``--session NAME`` resumes it, with its tabs and its current tab. The
session's secret is saved in the state directory (``sessions/NAME.json``, mode 0600,
:func:`bridge.config.write_session`) and sent only to the bridge that gave it; a saved
secret of a session that is gone (lease ran out, stopped, bridge restarted) opens a new
session of that label without a word. Without ``--session`` each command has an implicit
session of its own, stopped when it exits, as before.

``trustbridge sessions`` lists your session and how many others there are (with
``--operator``: every session); ``sessions stop NAME`` stops one (its queued work is
cancelled, its tabs released, never closed): a ``--session`` of this state directory by
its saved secret, any other only with ``--operator`` (the operator credential, the state
directory's ``operator-token``; docs/security.md "Who may do what"); ``sessions release
[--tab N]`` frees the ``--session``'s tabs (all, or tab N).
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable
from typing import Any

import pydantic

from . import config
from .protocol import errors as E
from .protocol.models import SessionLabel
from .sdk import Browser, Tab

__all__ = ["add_commands", "add_session_options", "connect", "human"]

log = logging.getLogger(__name__)

DEFAULT_LEASE_MS = 120_000
"""The lease of a ``--session`` session, ms: the bridge's default (docs/sessions.md)."""
_LABEL = pydantic.TypeAdapter(SessionLabel)


def session_label(value: str) -> str:
    """argparse type of ``--session``: a valid session label (also a safe file name).

    Raises:
        argparse.ArgumentTypeError: not a label (exit 2, nothing sent).
    """
    try:
        label = _LABEL.validate_python(value)
        config.session_path(label)
    except (pydantic.ValidationError, ValueError) as exc:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a session label: 1-64 characters of letters, digits, "
            "_ . : @ - and inner spaces") from exc
    return label


def add_session_options(parser: argparse.ArgumentParser, *, top: bool = False) -> None:
    """``--session NAME`` and ``--session-lease-ms MS`` on ``parser``: the top-level parser
    (``top``: their defaults) or a client command's (no default, so a value given before
    the command is not overwritten; argparse's subparser defaults would)."""
    default: Any = None if top else argparse.SUPPRESS
    parser.add_argument("--session", metavar="NAME", type=session_label, default=default,
                        help="client commands: work in session NAME, kept between "
                        "invocations (its secret in the state directory's sessions/); "
                        "default: a session of this command only")
    parser.add_argument("--session-lease-ms", metavar="MS", type=int,
                        default=DEFAULT_LEASE_MS if top else argparse.SUPPRESS,
                        help="with --session: how long it waits for the next command, ms "
                        f"(default {DEFAULT_LEASE_MS}; 5000-3600000)")


async def connect(args: argparse.Namespace, token: str | None) -> Browser:
    """The Browser of a client command: in session ``args.session`` (resumed with its
    saved secret when the bridge still has it), else in an implicit session.

    Raises:
        DeviceNotConnected / Unauthorized / ProtocolMismatch: as Browser.connect.
        BadRequest: the label belongs to a live session this state directory has no
            secret of (another user's), or another command is attached to it right now.
    """
    label: str | None = getattr(args, "session", None)
    operator: str | None = None
    if getattr(args, "operator", False):
        try:
            operator = config.read_operator_token()
        except ValueError as exc:
            raise E.BadRequest(f"--operator: {exc}. Nothing was sent.") from exc
    if label is None:
        return await Browser.connect(args.bridge, token, device=args.device,
                                     operator=operator, ca_file=getattr(args, "ca_file", None))
    url = args.bridge or (config.read_endpoint() or {}).get("url")
    saved = config.read_session(label)
    # A secret goes only to the bridge that issued it.
    secret = saved.get("secret") if saved and saved.get("url") == url else None
    browser = await Browser.connect(
        args.bridge, token, device=args.device, session=label, on_disconnect="keep",
        lease_ms=args.session_lease_ms, secret=secret if isinstance(secret, str) else None,
        operator=operator, ca_file=getattr(args, "ca_file", None))
    opened = browser.session or {}
    if secret is not None and not opened.get("resumed"):
        log.info("session %r had ended; opened a new one of that label", label)
    if opened.get("secret") != secret:
        config.write_session(label, {"label": label, "secret": opened.get("secret"),
                                     "url": url, "sessionId": opened.get("sessionId")})
    return browser


async def _run(args: argparse.Namespace, browser: Browser, _tab: Tab) -> dict[str, Any]:
    """``trustbridge sessions [list | stop [NAME] | release]``."""
    own: str | None = getattr(args, "session", None)
    if args.action == "list":
        if args.name is not None:
            raise E.BadRequest("`sessions list` takes no NAME. Nothing was sent.")
        return dict(await browser.client.call("sessions.list"))
    if args.action == "stop":
        label = args.name or own
        if label is None:
            raise E.BadRequest("Name the session to stop: `trustbridge sessions stop NAME` "
                               "(`trustbridge sessions` lists them). Nothing was sent.")
        # Stopping one's own session by name is stopping it, not another's; a kept
        # session of this state directory is stopped with its saved secret (its holder
        # is that session); any other needs --operator.
        secret = None
        if label != own:
            saved = config.read_session(label) or {}
            url = args.bridge or (config.read_endpoint() or {}).get("url")
            if saved.get("url") == url and isinstance(saved.get("secret"), str):
                secret = saved["secret"]
        result = dict(await browser.stop_session(None if label == own else label,
                                                 secret=secret))
        config.remove_session(label)  # its secret resumes nothing any more
        return result
    if own is None or args.name is not None:
        raise E.BadRequest("`sessions release` frees the tabs of your --session NAME: "
                           "`trustbridge sessions release --session NAME [--tab N]`. "
                           "Nothing was sent.")
    return dict(await browser.release(args.tab))


def add_commands(client: Callable[[str, str, Any], argparse.ArgumentParser]) -> None:
    """Register ``sessions`` with cli.py's client-command helper (``client(name, help,
    run)`` → its parser, with ``--json``, ``--bridge``, ``--device``, ``--tab``)."""
    p = client("sessions", "list the bridge's sessions (label, tabs, connected, lease left, "
               "last action, in flight); `sessions stop NAME` stops one (cancels its queued "
               "work, frees its tabs); `sessions release --session NAME [--tab N]` frees "
               "your session's tabs", _run)
    p.add_argument("action", nargs="?", choices=("list", "stop", "release"), default="list")
    p.add_argument("name", nargs="?", help="stop: the session's label")
    p.add_argument("--operator", action="store_true",
                   help="connect with the operator credential (the state directory's "
                   "operator-token): list every session, stop another's")
    p.set_defaults(human=human)


def _tabs(tabs: list[dict[str, Any]]) -> str:
    return ", ".join(f"{t.get('device')}:{t.get('tabId')}" for t in tabs) or "-"


def human(args: argparse.Namespace, result: dict[str, Any]) -> str:
    """The human output of ``trustbridge sessions`` (``--json`` prints ``result``)."""
    if args.action == "stop":
        if not result.get("stopped"):
            return f"session {result.get('label')} had already stopped"
        return (f"stopped session {result.get('label')}: {result.get('cancelled', 0)} queued "
                f"request(s) cancelled (never ran), {result.get('running', 0)} still running "
                f"(each finishes), tabs released (left open): {_tabs(result.get('released', []))}")
    if args.action == "release":
        return f"session {result.get('label')} released tabs (left open): " \
               f"{_tabs(result.get('tabs', []))}"
    rows = [s for s in result.get("sessions", [])
            # This command's own throwaway implicit session is nobody's work: not shown.
            if not (s.get("yours") and str(s.get("label", "")).startswith("client-")
                    and not s.get("tabs"))]
    others = result.get("others") or 0
    more = (f"\n{others} other session(s): their labels are shown with --operator"
            if others else "")
    if not rows:
        return ("no sessions of yours" + more) if others else "no sessions"
    table = [("", "LABEL", "TABS", "CONNECTED", "LEASE LEFT", "LAST ACTION", "IN FLIGHT")]
    for s in rows:
        left = s.get("expiresInMs")
        ago = s.get("lastActionAgoMs")
        last = s.get("lastAction") or "-"
        if ago is not None and s.get("lastAction"):
            last += f" ({ago / 1000:.0f} s ago)"
        table.append(("*" if s.get("yours") else "", str(s.get("label")),
                      _tabs(s.get("tabs", [])),
                      "yes" if s.get("connected") else f"no ({s.get('onDisconnect')})",
                      "busy" if left is None else f"{left / 1000:.0f} s", last,
                      str(s.get("inFlight", 0))))
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                      for r in table) + more
