"""``tabs.new {url}`` on a device whose driver reports dialogs (issue 13, item 6;
docs/bridge.md "Dialogs"): the answer comes at once with the dialog when the new page
raises one while it loads, instead of after the extension's 30 s load wait.

Chromium: a blank tab, then ``page.navigate`` of it. Playwright reports a page to the
driver only once it has set it up, and a page that alerts in its head while being set up
is never reported (nor its dialog) until the dialog closes: with one ``tabs.new {url}``
call that happened about every other time (tests/e2e/test_dialogs.py). A blank tab is set
up at once (the driver says ``page.opened``); the load that follows is an ordinary
navigation, whose dialog is reported. As ``tabs.new`` always did, a load that fails or
times out still answers with the tab it opened.

Firefox: navigating a blank tab at once aborts its own first load, which the extension
reports as a failed navigation; there the one ``tabs.new {url}`` call is raced against a
dialog placed on a tab that was not there before it.
"""

from __future__ import annotations

from typing import Any

from .dialog_waits import DialogWaits, on_tab
from .protocol import errors as E

PAGE_SETUP_S = 3.0
"""How long the blank tab waits for the driver's ``page.opened`` before the URL is loaded,
s (Playwright sets a page up in ~0.1 s; past it the load goes ahead)."""
CALL_TIMEOUT_S = 10.0
"""How long the bridge waits for ``tabs.new`` (blank) and ``tabs.list``, s."""
LOAD_TIMEOUT_MS = 30_000
"""The load's own timeout, ms (the extension's ``tabs.new`` waits as long)."""
LOAD_MARGIN_S = 5.0
"""Extra seconds the bridge waits for the load's answer beyond LOAD_TIMEOUT_MS."""


async def open_tab(ext: Any, waits: DialogWaits, device: str, url: str,
                   browser: str | None, window: bool = False) -> dict[str, Any]:
    """Open a tab on ``url`` and answer ``{tabId, url, title}``, or with
    ``transitionPending: true`` and ``dialog`` when a dialog blocks its load.

    Args:
        ext: the device's extension peer (``call(method, params, timeout_s)``).
        waits: the executor's dialog waits.
        browser: the driver's browser name from its hello (``chromium 131.0``, ...).
        window: open the tab in a new window of its own (``tabs.new {window}``).

    Raises:
        TrustbridgeError: the extension's own errors (the tab could not be opened).
    """
    if not (browser or "").lower().startswith(("chromium", "chrome")):
        return await _one_call(ext, waits, device, url, window)
    seen = waits.pages_seen.get(device, 0)
    tab = (await ext.call("tabs.new", {"window": True} if window else {},
                          CALL_TIMEOUT_S))["tabId"]
    await waits.page_after(device, seen, PAGE_SETUP_S)
    before = waits.known(device)
    load = ext.call("page.navigate", {"tabId": tab, "url": url, "timeoutMs": LOAD_TIMEOUT_MS},
                    LOAD_TIMEOUT_MS / 1000 + LOAD_MARGIN_S)
    try:
        loaded, dialog = await waits.race(device, load, before, on_tab(tab))
    except (E.Timeout, E.BadRequest, E.BrowserDocumentChanged):
        listed = await ext.call("tabs.list", {}, CALL_TIMEOUT_S)
        now = next((t for t in listed.get("tabs", []) if t.get("tabId") == tab), {})
        return {"tabId": tab, "url": now.get("url") or url, "title": now.get("title", "")}
    if dialog is not None:
        shown = dialog.public()
        return {"tabId": tab, "url": shown.get("url") or url, "title": "",
                "transitionPending": True, "dialog": shown}
    assert loaded is not None
    return {"tabId": tab, "url": loaded.get("url") or url, "title": loaded.get("title", "")}


async def _one_call(ext: Any, waits: DialogWaits, device: str, url: str,
                    window: bool) -> dict[str, Any]:
    listed = await ext.call("tabs.list", {}, CALL_TIMEOUT_S)
    known = {t["tabId"] for t in listed.get("tabs", [])}
    before = waits.known(device)
    call = ext.call("tabs.new", {"url": url, **({"window": True} if window else {})},
                    LOAD_TIMEOUT_MS / 1000 + LOAD_MARGIN_S)
    result, dialog = await waits.race(device, call, before,
                                      lambda d: d.tabs is not None and bool(d.tabs - known))
    if dialog is None:
        assert result is not None
        return result
    shown = dialog.public()
    return {"tabId": shown.get("tabId"), "url": shown.get("url") or url, "title": "",
            "transitionPending": True, "dialog": shown}
