"""Navigation: browser_navigate (load a URL) and browser_navigate_back (history back)."""

from __future__ import annotations

import json
import re
from typing import Any

from ..protocol import errors as E
from ..protocol.models import NavigateParams
from ..urls import redact_credentials
from .response import Response
from .session import Connection
from .tool import Tool, derive

NavigateArgs = derive("NavigateArgs", "Where to go.", take={NavigateParams: ["url"]})
BackArgs = derive("BackArgs", "No arguments: the current tab goes back.")


def _where(result: dict[str, Any], done: str, pending: str) -> str:
    """The result line: ``done`` + the URL now loaded, or ``pending`` + why the load has
    not finished (``transitionPending``, e.g. a dialog blocks it)."""
    if result.get("transitionPending"):
        # Not done: never worded as if the page had changed (it may never commit).
        if result.get("dialog"):
            return (f"{pending} has NOT happened yet: a JavaScript dialog blocks the page; "
                    "answer it with browser_handle_dialog, or (a page that keeps opening "
                    "dialogs) open another tab with browser_tabs new and close this one with "
                    "browser_tabs close")
        return f"{pending} has not finished loading yet; take a snapshot to see where it is"
    return f"{done} {result.get('url', '')} (tab {result.get('tabId')})"


NOTHING_SENT = re.compile(r"does not exist|is not open on device|has no open tab")
"""BROWSER_TAB_CLOSED messages given before anything reached a page (the tab was gone
when the request came: extension/src/background/tabs.js resolveTab, the bridge's session
gate). "The tab closed during navigation" is not among them: that load may have run."""


async def _navigate(conn: Connection, args: Any, response: Response) -> None:
    tab = await conn.tab()
    try:
        result = dict(await tab.goto(args.url))
    except E.BrowserTabClosed as err:
        # The session's tab is gone (closed by someone else): the agent asked to load a
        # page, so it gets a new tab for it, said in the result (issue 32 item 1).
        gone = conn.tab_id
        if gone is None or err.details.get("replacedBy") is not None \
                or not NOTHING_SENT.search(err.message):
            raise
        await conn.replace_gone_tab(gone)
        tab = await conn.tab()
        result = dict(await tab.goto(args.url))
    line = _where(result, "Navigated to", f"Navigated to {redact_credentials(args.url)}")
    if dismissed := result.get("dismissedDialog"):
        # The dialog that blocked the tab was answered (Cancel) so the load could start.
        message = json.dumps(str(dismissed.get("message", ""))[:200], ensure_ascii=False)
        line = (f"Dismissed the {dismissed.get('type') or 'JavaScript'} dialog {message} to "
                f"navigate. {line}")
    if result.get("acceptedBeforeUnload"):
        # issue 32 item 5: the agent asked to leave, so the bridge said yes for it.
        line += " (the page asked to confirm leaving; accepted)"
    if result.get("recoveredFromCrash"):
        # The crashed tab was replaced by a fresh one with a new id: follow it.
        if conn.tab_id is not None:
            conn.select(conn.device, result["tabId"], held=True)
            tab = await conn.tab()
        line += (f" (the tab's renderer had crashed: it was reloaded as tab {result['tabId']};"
                 " refs from before the crash are gone)")
    response.add_action(line, [result])
    response.include_page_state(tab)


async def _back(conn: Connection, _args: Any, response: Response) -> None:
    tab = await conn.tab()
    result = await tab.back()
    response.add_action(_where(result, "Went back to", "Went back"), [result])
    response.include_page_state(tab)


TOOLS = [
    Tool(
        name="browser_navigate",
        title="Navigate to a URL",
        description="Navigate the current tab to a URL and wait for it to load. Returns the "
        "new page's snapshot.",
        args=NavigateArgs,
        run=_navigate,
    ),
    Tool(
        name="browser_navigate_back",
        title="Go back",
        description="Go back to the previous page in the current tab's history.",
        args=BackArgs,
        run=_back,
    ),
]
