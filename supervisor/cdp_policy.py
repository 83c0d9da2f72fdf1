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

It also keeps the door from reaching past the browser's pages (tests/e2e/test_cdp.py
``test_the_door_refuses_the_extension_local_files_and_browser_pages``):

- **The extension's own targets** (its service worker, any page or frame of a
  ``chrome-extension:`` origin): no command naming one (``Target.attachToTarget``,
  ``closeTarget``, ``activateTarget``, ``autoAttachRelated``...) is sent, and
  auto-attach skips them. Attached, a client could read the extension's ``config.json``
  (the bridge token) or end it with ``chrome.runtime.reload()``. The ``Extensions``
  domain is refused whole (``getStorageItems`` reads an extension's storage,
  ``uninstall`` / ``loadUnpacked`` change what runs).
- **URLs the bridge would not load** (bridge/urls.py): ``Target.createTarget`` and
  ``Page.navigate`` with a ``file:`` URL (unless the runtime allows them:
  ``TRUSTBRIDGE_ALLOW_FILE_URLS=1``), ``chrome:``, ``chrome-extension:``, ``devtools:``,
  ``view-source:``, ``data:``, ``javascript:`` or another non-web URL. The browser runs
  as the user (as root, without a sandbox, in a container): a ``file:`` page reads local
  files.
- **Files of the state directory** in ``DOM.setFileInputFiles`` (bridge/files.py): a page
  would read the bridge token from its file input.

Deliberately passed:

- ``Page.crash`` crashes one renderer: that tab (and tabs of the same site sharing its
  process), as a page can crash on its own; a client may close any tab anyway.
- ``Browser.executeBrowserCommand`` (opens or closes browser UI panels), ``SystemInfo.*``
  (reads), ``Memory.*``, ``Browser.setPermission`` / ``resetPermissions``,
  ``Storage.*``: profile state like cookies, which a client may read and change anyway.
"""

from __future__ import annotations

import os
from typing import Any

from trustbridge.bridge.files import upload_refusal
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.urls import check_navigation_url

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


EXTENSION_SCHEMES = ("chrome-extension:", "moz-extension:")
NAVIGATING = frozenset({"Target.createTarget", "Page.navigate"})
"""Commands whose ``url`` loads a document: checked like the bridge's navigations."""
TARGET_COMMANDS_ALLOWED = frozenset({"Target.getTargetInfo"})
"""Target commands naming a ``targetId`` that may name the extension's (a read)."""


def is_extension_target(info: dict[str, Any]) -> bool:
    """A target of an extension: its service worker, background page or one of its
    pages or frames (``url`` of a ``chrome-extension:`` origin)."""
    return str(info.get("url", "")).lower().startswith(EXTENSION_SCHEMES)


def names_target(method: str, params: dict[str, Any]) -> str | None:
    """The ``targetId`` a Target command acts on (None: none, or a read)."""
    target = params.get("targetId")
    if method.startswith("Target.") and method not in TARGET_COMMANDS_ALLOWED \
            and isinstance(target, str):
        return target
    return None


def refusal(method: str, params: dict[str, Any] | None = None) -> str | None:
    """The CDP error message refusing ``method`` with ``params`` on any session, or None:
    it passes (the extension-target check needs the browser: supervisor/cdp_flat.py)."""
    params = params or {}
    reason = REFUSED.get(method)
    if reason is None and method.startswith("Extensions."):
        reason = ("the Extensions domain reads and changes extensions, trustbridge's own "
                  "included (its storage holds the bridge's credential)")
    if reason is None and method in NAVIGATING and isinstance(params.get("url"), str) \
            and params["url"] not in ("", "about:blank"):
        try:
            check_navigation_url(params["url"], os.environ.get(
                "TRUSTBRIDGE_ALLOW_FILE_URLS", "") == "1")
        except E.BadRequest as err:
            reason = err.message
    files = params.get("files")
    if reason is None and isinstance(files, list):  # DOM.setFileInputFiles, and any other
        reason = upload_refusal([str(f) for f in files], None)
    if reason is None:
        return None
    return f"{method} is refused by the trustbridge CDP door: {reason}{STAYS_UP}"


def extension_refusal(method: str) -> str:
    """The CDP error message for a command naming one of the extension's targets."""
    return (f"{method} is refused by the trustbridge CDP door: that target is the "
            "trustbridge extension's (its service worker or one of its pages), which "
            f"holds the bridge's credential{STAYS_UP}")


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
