"""Navigation: browser_navigate (load a URL) and browser_navigate_back (history back)."""

from __future__ import annotations

from typing import Any

from ..protocol.models import NavigateParams
from .session import Session
from .tool import Tool, derive

NavigateArgs = derive("NavigateArgs", "Where to go.", take={NavigateParams: ["url"]})
BackArgs = derive("BackArgs", "No arguments: the current tab goes back.")


def _where(result: dict[str, Any], done: str, pending: str) -> str:
    """The result line: ``done`` + the URL now loaded, or ``pending`` + why the load has
    not finished (``transitionPending``, e.g. a dialog blocks it)."""
    if result.get("transitionPending"):
        why = "a dialog blocks it" if result.get("dialog") else "it has not finished"
        return f"{pending}; the page is still loading ({why})"
    return f"{done} {result.get('url', '')} (tab {result.get('tabId')})"


async def _navigate(session: Session, args: Any) -> str:
    tab = await session.tab()
    result = dict(await tab.goto(args.url))
    line = _where(result, "Navigated to", f"Navigated to {args.url}")
    return await session.after_action(line, tab, [result])


async def _back(session: Session, _args: Any) -> str:
    tab = await session.tab()
    result = await tab.back()
    return await session.after_action(_where(result, "Went back to", "Went back"), tab, [result])


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
