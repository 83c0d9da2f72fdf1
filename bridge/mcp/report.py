"""How tool results read: the input path, delivery, new tabs, an open dialog, the tab
list and the page state.

Results use Playwright MCP's sections (``### Result``, ``### New tabs``, ``### Open
tabs``, ``### Modal state``, ``### Page state``). Everything here is a pure function of
the bridge's answers (``page.act`` results, the ``completedActions`` of a ``page.batch``,
``tabs.list`` rows, a ``page.snapshot`` result); the per-call
:class:`~.response.Response` decides which sections a result gets.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Result = Mapping[str, Any]
TabRow = tuple[str, Mapping[str, Any]]
"""(device, tab as ``tabs.list`` reports it)."""

MAX_DIALOG_CHARS = 500
"""Characters of a dialog's message quoted in a result."""

SYNTHETIC = ("SYNTHETIC input: this browser has no input driver, so the page saw untrusted "
             "(isTrusted=false) events")


def input_path(results: Sequence[Result]) -> str | None:
    """How the input reached the page, e.g. ``"trusted input"``; None when no result says.

    Any synthetic result makes the whole answer synthetic: it is never passed off as trusted.
    """
    paths = {r.get("inputPath") for r in results} - {None}
    if not paths:
        return None
    if "synthetic" in paths:
        return SYNTHETIC
    if "script" in paths:  # the agent's allowScript opt-in: never called trusted
        return ("SCRIPT input (allowScript: the value was set by script; the page saw "
                "untrusted input and change events)")
    if "trusted-coordinates" in paths:
        return ("trusted input (at a hit-tested point: the target is in a closed shadow "
                "root)")
    return "trusted input"


def warnings(results: Sequence[Result], labels: Sequence[str]) -> list[str]:
    """Lines for what did not go as asked although no error was raised.

    Args:
        results: one result per action, in order.
        labels: how to name each action in the text, e.g. ``"the click on Buy (ref e7)"``
            (same order).

    Returns:
        ``delivered: false`` warnings (a trusted click its target never received), then a
        note if the page loaded a new document.
    """
    lines = []
    for result, label in zip(results, labels):
        if result.get("delivered") is False:
            seen = ", ".join(result.get("deliveredEvents") or []) or "none"
            lines.append(
                f"WARNING delivered: false: {label} was dispatched as real "
                "input but its target did not receive it (events the target saw: "
                f"{seen}); something else took it, e.g. an overlay or a moved element. "
                "It did NOT work as intended: check with browser_snapshot before retrying.")
    if any(r.get("postActionDocumentChanged") for r in results):
        lines.append("The page loaded a new document: refs of earlier snapshots no longer work.")
    return lines


def dialog_of(results: Sequence[Result]) -> dict[str, Any] | None:
    """The JavaScript dialog an action opened (``{type, message, defaultValue?, url?}``)."""
    for result in results:
        if result.get("dialog"):
            return dict(result["dialog"])
    return None


def new_tabs_of(results: Sequence[Result]) -> list[dict[str, Any]]:
    """Tabs the actions opened (``newTabs`` of each result), in order, without repeats."""
    seen: dict[Any, dict[str, Any]] = {}
    for result in results:
        for tab in result.get("newTabs") or []:
            seen.setdefault(tab.get("tabId"), dict(tab))
    return list(seen.values())


def modal_section(dialog: Mapping[str, Any]) -> str:
    """The "Modal state" section for an open JavaScript dialog."""
    message = str(dialog.get("message") or "")
    if len(message) > MAX_DIALOG_CHARS:
        message = message[:MAX_DIALOG_CHARS] + "…"
    line = f"- [{json.dumps(dialog.get('type') or 'unknown')} dialog with message " \
           f"{json.dumps(message, ensure_ascii=False)}"
    if dialog.get("type") == "prompt" and dialog.get("defaultValue"):
        line += f", default {json.dumps(str(dialog['defaultValue'])[:200], ensure_ascii=False)}"
    line += ("]: answer it with browser_handle_dialog. Until then the page is blocked: other "
             "tools fail with DIALOG_OPEN and no snapshot can be taken.")
    return "### Modal state\n" + line


def render_tabs(tabs: Sequence[TabRow], is_current: Callable[[str, Mapping[str, Any]], bool],
                only: set[Any] | None = None, heading: str = "### Open tabs") -> str:
    """The tab list as ``- INDEX: (current) [title](url) tab ID``.

    Args:
        tabs: every tab, in the order whose positions are the indexes browser_tabs takes.
        is_current: whether a (device, tab) is the tab later tools act on.
        only: list only these tab ids (their indexes stay those of the full list).
        heading: the section heading.
    """
    devices = {d for d, _ in tabs}
    lines = [heading]
    for i, (device, tab) in enumerate(tabs):
        if only is not None and tab.get("tabId") not in only:
            continue
        where = f" on {device}" if len(devices) > 1 else ""
        lines.append(f"- {i}:{' (current)' if is_current(device, tab) else ''} "
                     f"[{tab.get('title', '')}]({tab.get('url', '')}) tab {tab['tabId']}{where}")
    return "\n".join(lines) if len(lines) > 1 else f"{heading}\n(no tabs)"


def page_state_section(snap: Mapping[str, Any]) -> str:
    """The "Page state" section of a ``page.snapshot`` result, as Playwright MCP shows it."""
    lines = ["### Page state", f"- Page URL: {snap.get('url', '')}",
             f"- Page Title: {snap.get('title', '')}"]
    if "tabId" in snap:
        on = f" on {snap['device']}" if "device" in snap else ""
        lines.append(f"- Tab: {snap['tabId']}{on}")
    # The extension's truncation trailer names the wire method; the model calls the tool.
    text = snap.get("snapshot", "").replace("call page.snapshot with cursor",
                                            "call browser_snapshot with cursor")
    lines += ["- Page Snapshot:", "```yaml", text, "```"]
    return "\n".join(lines)
