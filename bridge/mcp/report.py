"""How tool results read: the input path, delivery, what the action caused (effects), new
tabs and which one is followed, an open dialog or file chooser, the tab list and the page
state.

Results use Playwright MCP's sections (``### Result``, ``### New tabs``, ``### Open
tabs``, ``### Modal state``, ``### Page state``). Everything here is a pure function of
the bridge's answers (``page.act`` results, the ``completedActions`` of a ``page.batch``,
``tabs.list`` rows, a ``page.snapshot`` result); the per-call
:class:`~.response.Response` decides which sections a result gets.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Result = Mapping[str, Any]
TabRow = tuple[str, Mapping[str, Any]]
"""(device, tab as ``tabs.list`` reports it)."""

MAX_DIALOG_CHARS = 500
"""Characters of a dialog's message quoted in a result."""

FOLLOW_LATE_MS = 2_000
"""A foreground tab the page opened at most this long after the last input action's
answer is followed like one the action opened itself (issue 15 item 2), ms."""
CLOCK_SLACK_MS = 250
"""Slack between the browser's clock (a tab's ``openedAt``) and this process's, ms."""

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
                f"WARNING delivered: false: {label} did not reach its target: it was sent "
                f"as real input but the target never got it (the target saw: {seen}). "
                "Whatever was at the point may have got it instead (an overlay, a moved "
                "element) and acted on it: check with browser_snapshot before retrying.")
        elif isinstance(inner := result.get("pressedOn"), dict):
            what = f'<{inner.get("tag") or "an element"}>' + (
                f' "{inner["text"]}"' if inner.get("text") else "")
            lines.append(
                f"Note: {label} reached its target through {what} inside it, which the "
                "press hit first and which may have acted on it (a link, a menu item): "
                "check with browser_snapshot.")
        if isinstance(moved := result.get("focusFollowed"), dict):
            names = ", ".join(json.dumps(n, ensure_ascii=False)
                              for n in moved.get("names") or [])
            lines.append(
                f"Note: during {label} the page moved the focus on field by field (a "
                f"multi-box input): the text went into {moved.get('fields')} fields "
                f"({names}), and their values together are the text.")
        if isinstance(check := result.get("valueCheck"), str) and check:
            # what the read-back checked, when not simply the whole text (a formatted field,
            # a Tab that moved the focus part way): supervisor/actions.py type_text / fill
            lines.append(f"Note: the value check of {label}: {check}.")
    # A navigation that became a download left the document as it was (supervisor/watch.py).
    if any(r.get("postActionDocumentChanged") and not r.get("navigationWasDownload")
           for r in results):
        lines.append("The page loaded a new document: refs of earlier snapshots no longer work.")
    return lines


LABEL_WHY = {"zero-size": "has no size", "hidden": "is hidden",
             "covered": "is covered or clipped at its centre"}
"""``viaLabel.why`` (supervisor/labels.py) as result lines say it."""


def effects(results: Sequence[Result]) -> list[str]:
    """Lines for what the actions caused beyond their target (issue 15 item 5), from the
    results alone: a label clicked for its hidden control, a dialog, downloads, a file
    chooser. New tabs are said by
    :func:`tab_effects` (they need the tab list's indexes); a navigation by
    :func:`warnings`."""
    lines = []
    for result in results:
        if via := result.get("viaLabel"):
            # supervisor/labels.py: the input could not take the click, its label did.
            why = LABEL_WHY.get(via.get("why"), "could not take the click")
            state = "checked" if result.get("checked") else "unchecked"
            label = json.dumps(via.get("label") or "", ensure_ascii=False)
            lines.append(f"The control {why}: clicked its label {label} instead, as a "
                         f"person would; the control is now {state}.")
        if result.get("dialog"):
            kind = result["dialog"].get("type") or "JavaScript"
            article = "an" if kind[:1].lower() in "aeiou" else "a"  # "an alert"
            lines.append(f"Opened {article} {kind} dialog (see Modal state).")
        for down in result.get("downloads") or []:
            name = json.dumps(down.get("suggestedFilename") or "?", ensure_ascii=False)
            late = " (started after the previous action)" if down.get("late") else ""
            if down.get("path"):
                lines.append(f"Downloaded {name}{late}: {down.get('bytes')} bytes, saved as "
                             f"{down['path']}")
            elif down.get("finished") is False:
                lines.append(f"A download{late} started and is still running.")
            else:
                lines.append(f"The download of {name}{late} failed: "
                             f"{down.get('failure') or 'unknown reason'}.")
        if result.get("fileChooser"):
            lines.append("A file chooser opened after the previous action (see Modal state)."
                         if result["fileChooser"].get("late") else
                         "Opened a file chooser (see Modal state).")
    return lines


def file_chooser_of(results: Sequence[Result]) -> dict[str, Any] | None:
    """The file chooser an action opened (``{multiple}``), the last one if several."""
    found = None
    for result in results:
        if result.get("fileChooser"):
            found = dict(result["fileChooser"])
    return found


def chooser_section(chooser: Mapping[str, Any]) -> str:
    """The "Modal state" section for an open file chooser (Playwright MCP's wording)."""
    files = "files" if chooser.get("multiple") else "one file"
    return ("### Modal state\n- [File chooser]: give it " + files + " with "
            "browser_file_upload {paths} and no ref. The page is not blocked meanwhile.")


@dataclass(frozen=True)
class OpenedTab:
    """A tab a bridge result reported opened (``newTabs``), with where it came from.

    Attributes:
        device: the device of the result (None: not said).
        tab: the tab as ``tabs.list`` lists it (``tabId``, ``active``, ``openedAt``, ...).
        late: reported by a snapshot, wait or find (it opened after an input action's
            result went out), not by that action's own result.
    """

    device: str | None
    tab: Mapping[str, Any]
    late: bool


def tab_to_follow(opened: Sequence[OpenedTab],
                  inputs: Sequence[tuple[float, float]]) -> OpenedTab | None:
    """The tab later tool calls should act on, if an action opened one in the foreground.

    Rule (issue 15 item 2): the last reported tab that is ``active`` (the browser brought
    it to the front: target=_blank, window.open). A tab opened in the background (Ctrl or
    middle click) is not active and is only listed. A late tab is followed only when its
    ``openedAt`` falls within an input call or at most FOLLOW_LATE_MS after its answer.

    Args:
        opened: the reported tabs, in order.
        inputs: ``(sent, answered)`` of recent input calls, ms since the epoch.
    """
    def soon_after_input(at: Any) -> bool:
        if not isinstance(at, (int, float)):
            return False
        return any(sent - CLOCK_SLACK_MS <= at <= answered + FOLLOW_LATE_MS + CLOCK_SLACK_MS
                   for sent, answered in inputs)

    for item in reversed(opened):
        if not item.tab.get("active") or not isinstance(item.tab.get("tabId"), int):
            continue
        if item.late and not soon_after_input(item.tab.get("openedAt")):
            continue
        return item
    return None


def tab_effects(opened: Sequence[Mapping[str, Any]], index: Mapping[Any, int],
                followed: Any, late: Collection[Any] = ()) -> list[str]:
    """``Opened tab 2 "Invoice" — now current`` per new tab; for a late one (``OpenedTab.late``:
    reported by a snapshot, wait or find, not by an action's own result) ``Tab 2 "Invoice"
    opened after an action had returned — now current``, so the call that reports it is
    not taken for its opener (it may be this call's own action, or an earlier one).

    Args:
        opened: the new tabs, as listed now (title, url).
        index: tab id → the index browser_tabs takes (absent: the tab is gone).
        followed: the id of the tab that became current, if any.
        late: ids of the tabs that were reported late.
    """
    lines = []
    for tab in opened:
        tab_id = tab.get("tabId")
        title = json.dumps(tab.get("title") or tab.get("url") or "", ensure_ascii=False)
        shown = index.get(tab_id, tab_id)
        said = (f"Tab {shown} {title} opened after an action had returned" if tab_id in late
                else f"Opened tab {shown} {title}")
        if tab_id not in index:
            lines.append(f"{said}; it is closed already.")
        elif tab_id == followed:
            lines.append(f"{said} — now current: later tools act on it.")
        else:
            lines.append(f"{said} in the background; not current (browser_tabs select "
                         f"{shown} to act on it).")
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
             "tools fail with DIALOG_OPEN and no snapshot can be taken. To leave the page "
             "instead: browser_navigate dismisses the dialog, then loads unless the page opens "
             "another at once; from a page that keeps opening dialogs, browser_tabs new then "
             "browser_tabs close this tab.")
    return "### Modal state\n" + line


def owner_mark(tab: Mapping[str, Any]) -> str:
    """Who holds a tab, when it is not this session nor free (issue 16): `` (session
    "x")`` for another session's (``owner``, ``mine`` false), `` (a person's tab: claim
    it to use it)`` for a person's (``person``); the ``tabs.list`` row facts."""
    if tab.get("owner") and not tab.get("mine"):
        return f" (session {json.dumps(tab['owner'], ensure_ascii=False)})"
    if tab.get("person"):
        return " (a person's tab: claim it to use it)"
    return ""


def render_tabs(tabs: Sequence[TabRow], is_current: Callable[[str, Mapping[str, Any]], bool],
                only: set[Any] | None = None, heading: str = "### Open tabs") -> str:
    """The tab list as ``- INDEX: (current) [title](url) tab ID``, then who holds the tab
    when it is another session's or a person's (:func:`owner_mark`).

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
                     f"[{tab.get('title', '')}]({tab.get('url', '')}) tab {tab['tabId']}{where}"
                     f"{owner_mark(tab)}")
    return "\n".join(lines) if len(lines) > 1 else f"{heading}\n(no tabs)"


def page_state_section(snap: Mapping[str, Any], saved_to: str | None = None) -> str:
    """The "Page state" section of a ``page.snapshot`` result, as Playwright MCP shows it;
    with ``saved_to``, the snapshot itself is named by that file instead of shown."""
    lines = ["### Page state", f"- Page URL: {snap.get('url', '')}",
             f"- Page Title: {snap.get('title', '')}"]
    if "tabId" in snap:
        on = f" on {snap['device']}" if "device" in snap else ""
        lines.append(f"- Tab: {snap['tabId']}{on}")
    # The extension's truncation trailer names the wire method; the model calls the tool.
    text = snap.get("snapshot", "").replace("call page.snapshot with cursor",
                                            "call browser_snapshot with cursor")
    if saved_to is not None:
        lines.append(f"- Page Snapshot: saved to {saved_to} ({len(text)} characters)")
    else:
        lines += ["- Page Snapshot:", "```yaml", text, "```"]
    return "\n".join(lines)
