"""What the CDP door refuses, and what it answers without applying (no I/O; docs/cdp.md).

A CDP client shares the runtime's browser process with the bridge, every session and a
person's tabs. The door passes the protocol through, page-level power included (a client
may navigate, rewrite or close any tab: docs/cdp.md says so), and stops only the few
commands whose effect is on the **shared process or what it exposes**, where one client
would take the browser away from everyone or open it beyond the door's token. The
commands were chosen from the protocol's own descriptions (ChromeDevTools/devtools-protocol,
json/browser_protocol.json, the ``Browser``, ``Target``, ``Tethering`` and ``Extensions``
domains); each is refused on the root session and on every target session alike (some
reach the browser from a page session, e.g. the ``Browser`` domain, and a session
attached to the ``browser`` target carries all of them).

Deliberately passed:

- ``Page.crash`` crashes one renderer: that tab (and tabs of the same site sharing its
  process), as a page can crash on its own; a client may close any tab anyway.
- ``Browser.executeBrowserCommand`` (opens or closes browser UI panels), ``SystemInfo.*``
  (reads), ``Memory.*``, ``Browser.setPermission`` / ``resetPermissions``,
  ``Storage.*``: profile state like cookies, which a client may read and change anyway.
"""

from __future__ import annotations

from typing import Any

STAYS_UP = "; this connection stays open."

REFUSED: dict[str, str] = {
    "Browser.crash": "it would crash the browser process, and with it every session's "
                     "tabs (the browser is the trustbridge runtime's, shared)",
    "Browser.crashGpuProcess": "it would crash the GPU process every tab of the shared "
                               "browser draws with",
    "Tethering.bind": "it would open a listening port on the browser, outside this "
                      "token-protected loopback door",
    "Tethering.unbind": "Tethering.bind is refused here, so there is nothing to unbind",
    "Target.exposeDevToolsProtocol": "it would give a page's JavaScript a browser-level "
                                     "CDP channel that bypasses this door's token and "
                                     "its refusals",
    "Extensions.uninstall": "it could remove trustbridge's own extension, which every "
                            "session reads pages through",
    "Target.attachToBrowserTarget": "a browser-target session is not available through "
                                    "the trustbridge CDP proxy; use this connection's "
                                    "root session",
    "Target.sendMessageToTarget": "this connection speaks flat mode: send the command "
                                  "with its sessionId (the proxy carries nested messages "
                                  "itself, and a client's own would collide with them)",
}
"""Method → why it is refused. The answer is a CDP error (:func:`refusal`)."""

DOWNLOAD_BEHAVIOUR = frozenset({"Browser.setDownloadBehavior", "Page.setDownloadBehavior"})
"""Download behaviour is per browser context (``Page.setDownloadBehavior``, deprecated,
sets the page's context's): the runtime's downloads must keep landing where it saves
them (supervisor/watch.py, ``--output-dir``)."""


def refusal(method: str) -> str | None:
    """The CDP error message refusing ``method`` on any session, or None: it passes."""
    reason = REFUSED.get(method)
    if reason is None:
        return None
    return f"{method} is refused by the trustbridge CDP door: {reason}{STAYS_UP}"


def answered_not_applied(method: str, params: dict[str, Any],
                         own_contexts: set[str]) -> bool:
    """Whether ``method`` is answered ``{}`` without being sent.

    ``Browser.setDownloadBehavior`` for a browser context this client created
    (``Target.createBrowserContext``, e.g. Playwright's ``browser.new_context()``) is
    sent: that context is the client's own; for the runtime's contexts, or none named
    (the default one), it is answered and not applied, as is ``Page.setDownloadBehavior``.
    """
    if method not in DOWNLOAD_BEHAVIOUR:
        return False
    context = params.get("browserContextId")
    return not (method == "Browser.setDownloadBehavior" and isinstance(context, str)
                and context in own_contexts)
