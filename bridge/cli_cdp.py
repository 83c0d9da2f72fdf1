"""``trustbridge cdp``: print the device's loopback CDP URL (issue 19, docs/cdp.md).

The bridge's ``cdp.endpoint`` asks the device's input driver for its CDP door
(supervisor/cdp_proxy.py): a WebSocket URL on 127.0.0.1 with a token in its path that
Playwright's ``chromium.connect_over_cdp`` and Puppeteer's ``connect`` accept. stdout
gets the URL alone (``URL=$(trustbridge cdp)``); what it means goes to stderr. The URL
is issued to this command's session (``--session NAME``: that label; the same label gets
the same URL while the driver runs). The command connects with the operator credential
(the state directory's ``operator-token``): the door reaches every tab, so the bridge
issues it to operator connections only (docs/security.md "Who may do what").

Chromium devices only: a Firefox or Camoufox device answers BAD_REQUEST with the reason.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from .sdk import Browser, Tab

__all__ = ["add_commands", "human"]

NOTE = ("CDP clients act on this browser directly: on every tab, other sessions' included, "
        "bypassing refs and trusted-input routing; the bridge never reports their actions "
        "as trusted input (docs/cdp.md). Valid until the device's driver stops.")


async def _run(args: argparse.Namespace, browser: Browser, _tab: Tab) -> dict[str, Any]:
    """The endpoint (a refusal, e.g. a Firefox device, is printed by cli.py with its
    next step)."""
    params: dict[str, Any] = {"device": browser.device} if browser.device else {}
    return dict(await browser.client.call("cdp.endpoint", params))


def human(args: argparse.Namespace, result: dict[str, Any]) -> str:
    """The URL for stdout; the http form and the caveats on stderr."""
    print(f"device {result.get('device')}, session {result.get('session')}; "
          f"http form (reads /json/version): {result.get('httpUrl')}\n{NOTE}",
          file=sys.stderr)
    return str(result.get("url"))


def add_commands(client: Callable[[str, str, Any], argparse.ArgumentParser]) -> None:
    """Register ``cdp`` with cli.py's client-command helper (``client(name, help, run)``
    → its parser, with ``--json``, ``--bridge``, ``--device``, ``--session``)."""
    p = client("cdp", "print the device's loopback CDP WebSocket URL (token-protected) for "
               "Playwright connect_over_cdp / Puppeteer; Chromium devices only", _run)
    p.set_defaults(human=human, operator=True)  # the door is an operator's (see above)
