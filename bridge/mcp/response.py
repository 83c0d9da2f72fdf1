"""What one MCP tool call answers: :class:`Response`, built per call, in the shape of
Playwright MCP's Response (microsoft/playwright-mcp ``src/response.ts``).

A tool handler fills it: result lines, the bridge's results of the input it sent (which
carry the input path, ``delivered: false``, ``newTabs``, an opened dialog, downloads and
a file chooser), a tab list, images, and whether the page state is wanted.
:meth:`Response.finish` then asks the bridge only for what those sections need, and
:meth:`Response.render` turns it into the tool's content. Sections, in order:
``### Result`` (the action, its warnings and its effects), ``### New tabs``, ``### Open
tabs``, then ``### Modal state`` (a dialog, or a file chooser) and/or ``### Page state``.

Tab following (issue 15 item 2): a tab any result of this call reported opened in the
foreground (:func:`~.report.tab_to_follow`; the Connection collects every result's
``newTabs``, including the late ones a snapshot or wait reports) becomes the
Connection's current tab, and the page state is that tab's, taken once it has loaded.

Requests :meth:`~Response.finish` may make, and when (never any other):

- page state wanted, :attr:`Connection.snapshot_after_action` on and no dialog known:
  one ``page.snapshot``; only if that fails with DIALOG_OPEN, one ``devices.list``;
- a result reported ``newTabs``: ``devices.list`` and ``tabs.list`` per device, for the
  index browser_tabs takes;
- a tab is followed: ``tabs.list`` of its device every FOLLOW_POLL_S until it has
  loaded (at most FOLLOW_LOAD_S), then the page state is taken of it (a second
  ``page.snapshot`` when the first one, of the old tab, reported it).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import Any

import mcp_types as types

from ..protocol import errors as E
from ..sdk import Tab
from .report import (
    OpenedTab,
    Result,
    chooser_section,
    dialog_of,
    effects,
    file_chooser_of,
    input_path,
    modal_section,
    page_state_section,
    render_tabs,
    tab_effects,
    tab_to_follow,
    warnings,
)
from .session import PAGE_STATE_BUDGET_MS, Connection, TabList

Content = types.TextContent | types.ImageContent

SELECT_HINT = "(select one with browser_tabs action select and its index)"


FOLLOW_LOAD_S = 5.0
"""How long a followed tab may take to load before its page state is taken anyway, s."""
FOLLOW_POLL_S = 0.05
"""How often a followed tab's load status is read meanwhile, s."""


class Response:
    """The answer of one tool call, filled by its handler and rendered once.

    Args:
        conn: the server's connection (current tab, options, the bridge).
    """

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._lines: list[str] = []
        self._results: list[Result] = []
        self._tabs: TabList | None = None
        self._page_tab: Tab | None = None
        self._want_page_state = False
        self._opened: list[OpenedTab] = []
        """Tabs results of this call reported opened (Connection.take_opened)."""
        self._followed: OpenedTab | None = None
        self._state = ""
        self._chooser = ""
        self._new_tabs = ""
        self._images: list[types.ImageContent] = []

    def add_result(self, text: str) -> None:
        """Add ``text`` as it is to the ``### Result`` section."""
        self._lines.append(text)

    def prepend(self, lines: Sequence[str]) -> None:
        """Put ``lines`` first in the ``### Result`` section (what the connection did
        before the tool's own work, e.g. the window it opened for the session)."""
        self._lines[:0] = lines

    def add_action(self, line: str, results: Sequence[Result] = (),
                   labels: Sequence[str] = ()) -> None:
        """Say what was done, and keep the bridge's results of it.

        The line reads ``<line> with trusted input.`` (or ``with SYNTHETIC input.``) when
        ``results`` carry an input path, else ``<line>.``; warnings such as ``delivered:
        false`` follow it. The results' ``newTabs`` and ``dialog`` shape the later
        sections.

        Args:
            line: what was done, without a final full stop.
            results: the bridge's result of each action (``page.act`` results or the
                ``completedActions`` of a batch), in order.
            labels: how to name each action in warnings, e.g. ``"the click on Buy (ref
                e7)"`` (same order; default ``"the click"``).
        """
        how = input_path(results)
        self._lines.append(line + (f" with {how}." if how else "."))
        self._lines += warnings(results, list(labels) or ["the click"] * len(results))
        self._lines += effects(results)
        self._results += results

    def include_page_state(self, tab: Tab | None = None) -> None:
        """Show the page state of ``tab`` (default: the current tab) after the call, when
        the server's ``snapshot_after_action`` is on (Playwright's setIncludeSnapshot)."""
        self._want_page_state, self._page_tab = True, tab

    def set_snapshot(self, snap: Mapping[str, Any], saved_to: str | None = None) -> None:
        """Show this snapshot result (``page.snapshot``) as the page state (with
        ``saved_to``: its snapshot named by that file, not shown); nothing more is asked
        for it unless it reports a tab opened late in the foreground, which is followed
        (its page state replaces this one)."""
        self._state = page_state_section(snap, saved_to)

    def set_tabs(self, tabs: TabList) -> None:
        """Show the tab list (``### Open tabs``); its dialog counts as the one open."""
        self._tabs = tabs

    def add_image(self, image: types.ImageContent) -> None:
        """Add an image after the text."""
        self._images.append(image)

    async def finish(self) -> None:
        """Ask the bridge for what the sections need (see the module docstring). Never
        raises: a section it cannot fill says why."""
        dialog = dialog_of(self._results)
        if dialog is None and self._tabs is not None:
            dialog = self._tabs.dialog
        if dialog is None and (chooser := file_chooser_of(self._results)) is not None:
            self._chooser = chooser_section(chooser)
        # The tabs this call's results reported: the action's own, and the late ones the
        # tool's snapshot or wait reported (a window.open a while after the last click).
        if dialog is None:
            await self._follow_reported()
        if self._state and self._followed is None:
            pass  # the tool showed a snapshot of its own
        elif dialog is not None:
            self._state = modal_section(dialog)
        elif self._followed is not None and (self._state or self._want_page_state):
            # The tab later tools act on is the followed one: its refs, not the old tab's.
            self._state = await self._page_state() if self.conn.snapshot_after_action \
                or self._state else ""
        elif self._want_page_state and self.conn.snapshot_after_action:
            # The snapshot this call's last request through its tab brought back
            # (Connection.tab page_state), when it is of the tab the state is wanted of.
            snap = getattr(self._page_tab, "snapshot_after", None)
            want = self._page_tab.tab_id if self._page_tab is not None else None
            if snap is not None and want in (None, snap.get("tabId")):
                self._state = page_state_section(snap)
            else:
                self._state = await self._page_state()
            # That snapshot reports tabs opened since the action's result went out.
            if dialog is None and await self._follow_reported():
                self._state = await self._page_state()
        self._opened += self.conn.take_opened()  # each new tab is reported once anyway
        if self._opened:
            self._new_tabs = await self._new_tabs_section()

    async def _follow_reported(self) -> bool:
        """Take the tabs reported so far; follow a foreground one (at most one per call).
        Returns whether a tab was followed now."""
        opened = self.conn.take_opened()
        self._opened += opened
        if self._followed is not None:
            return False
        follow = tab_to_follow(opened, self.conn.input_windows)
        if follow is None:
            return False
        self._followed = follow
        # held: a followed tab that turns out to be another session's is left for a
        # window of this session's own at its next refusal, never looped on (session.py
        # lost_tab; issue 32 soak).
        self.conn.select(follow.device or self.conn.device, follow.tab["tabId"], held=True)
        self._page_tab = None  # the page state is the followed tab's
        await self._until_loaded(follow)
        return True

    async def _until_loaded(self, follow: OpenedTab) -> None:
        """Wait until the followed tab has loaded (``status`` no longer ``loading``), it is
        gone, or FOLLOW_LOAD_S passed; never raises (the page state says what it finds)."""
        deadline = time.monotonic() + FOLLOW_LOAD_S
        tab_id = follow.tab["tabId"]
        while True:
            try:
                tabs = await (await self.conn.browser()).tabs()
            except E.TrustbridgeError:
                return
            now = next((t for t in tabs if t.get("tabId") == tab_id), None)
            if now is None or now.get("status") != "loading" \
                    or time.monotonic() >= deadline:
                return
            await asyncio.sleep(FOLLOW_POLL_S)

    async def _page_state(self) -> str:
        """``### Page state`` from one snapshot; while a JavaScript dialog blocks the page,
        ``### Modal state`` instead (one ``devices.list``, only then)."""
        try:
            tab = self._page_tab or await self.conn.tab()
            # Budgeted in time as well as characters (issue 14 item 6): a huge page never
            # makes an action's answer slow; the rest is a cursor away.
            snap = await tab.snapshot_result(session=self.conn.snapshot_session,
                                             time_budget_ms=PAGE_STATE_BUDGET_MS)
        except E.DialogOpen:
            dialog = await self.conn.open_dialog()
            if dialog is not None:
                return modal_section(dialog)
            return "### Page state\n(snapshot unavailable: a dialog blocks the page)"
        except E.TrustbridgeError as err:
            return ("### Page state\n"
                    f"(snapshot unavailable: {err.code.value}; call browser_snapshot)")
        return page_state_section(snap)

    async def _new_tabs_section(self) -> str:
        """``### New tabs``: the tabs the results reported, with the index browser_tabs
        takes when the tab list still has them; else as reported (already closed, or the
        list is unavailable). Adds the ``Opened tab 2 "Invoice" — now current`` lines to
        the result."""
        reported: dict[Any, dict[str, Any]] = {}
        for item in self._opened:
            reported.setdefault(item.tab.get("tabId"), dict(item.tab))
        try:
            rows = (await self.conn.tab_list()).rows
        except E.TrustbridgeError:
            rows = []
        listed = {t.get("tabId"): (i, t) for i, (_, t) in enumerate(rows)}
        followed = self._followed.tab.get("tabId") if self._followed else None
        if not set(reported) & set(listed):
            lines = [f"- [{t.get('title', '')}]({t.get('url', '')}) tab {t.get('tabId')}"
                     for t in reported.values()]
            return "### New tabs\n" + "\n".join(lines)
        now = [dict(listed[i][1]) if i in listed else t for i, t in reported.items()]
        self._lines += tab_effects(now, {i: n for i, (n, _) in listed.items()}, followed,
                                   late={o.tab.get("tabId") for o in self._opened if o.late})
        section = render_tabs(rows, self.conn.is_current, only=set(reported),
                              heading="### New tabs")
        return section if set(reported) <= {followed} else section + "\n" + SELECT_HINT

    def render(self) -> list[Content]:
        """The tool's content: one text block of the sections, then any images."""
        sections = []
        if self._lines:
            sections.append("### Result\n" + "\n".join(self._lines))
        if self._new_tabs:
            sections.append(self._new_tabs)
        if self._tabs is not None:
            sections.append(render_tabs(self._tabs.rows, self.conn.is_current))
        if self._chooser:
            sections.append(self._chooser)
        if self._state:
            sections.append(self._state)
        return [types.TextContent(type="text", text="\n\n".join(sections)), *self._images]
