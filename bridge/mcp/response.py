"""What one MCP tool call answers: :class:`Response`, built per call, in the shape of
Playwright MCP's Response (microsoft/playwright-mcp ``src/response.ts``).

A tool handler fills it: result lines, the bridge's results of the input it sent (which
carry the input path, ``delivered: false``, ``newTabs`` and an opened dialog), a tab
list, images, and whether the page state is wanted. :meth:`Response.finish` then asks
the bridge only for what those sections need, and :meth:`Response.render` turns it into
the tool's content. Sections, in order: ``### Result``, ``### New tabs``, ``### Open
tabs``, then ``### Modal state`` or ``### Page state``.

Requests :meth:`~Response.finish` may make, and when (never any other):

- page state wanted, :attr:`Connection.snapshot_after_action` on and no dialog known:
  one ``page.snapshot``; only if that fails with DIALOG_OPEN, one ``devices.list``;
- a result reported ``newTabs``: ``devices.list`` and ``tabs.list`` per device, for the
  index browser_tabs takes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import mcp_types as types

from ..protocol import errors as E
from ..sdk import Tab
from .report import (
    Result,
    dialog_of,
    input_path,
    modal_section,
    new_tabs_of,
    page_state_section,
    render_tabs,
    warnings,
)
from .session import Connection, TabList

Content = types.TextContent | types.ImageContent

SELECT_HINT = "(select one with browser_tabs action select and its index)"


PAGE_STATE_BUDGET_MS = 1_000
"""How long the page state after an action may walk the page, ms."""


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
        self._late: Result = {}
        """The page-state snapshot's ``newTabs`` (tabs opened after the action's result)."""
        self._state = ""
        self._new_tabs = ""
        self._images: list[types.ImageContent] = []

    def add_result(self, text: str) -> None:
        """Add ``text`` as it is to the ``### Result`` section."""
        self._lines.append(text)

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
        self._results += results

    def include_page_state(self, tab: Tab | None = None) -> None:
        """Show the page state of ``tab`` (default: the current tab) after the call, when
        the server's ``snapshot_after_action`` is on (Playwright's setIncludeSnapshot)."""
        self._want_page_state, self._page_tab = True, tab

    def set_snapshot(self, snap: Mapping[str, Any]) -> None:
        """Show this snapshot result (``page.snapshot``) as the page state; nothing more
        is asked for it; tabs it reports opened late go to ``### New tabs``."""
        self._state = page_state_section(snap)
        self._late = {"newTabs": snap.get("newTabs") or []}

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
        if self._state:
            pass  # the tool showed a snapshot of its own
        elif dialog is not None:
            self._state = modal_section(dialog)
        elif self._want_page_state and self.conn.snapshot_after_action:
            self._state = await self._page_state()
        # The snapshot's result reports tabs the page opened after the action's result
        # went out (a popup from a timer); the bridge reports each new tab once.
        reported = new_tabs_of([*self._results, self._late])
        if reported:
            self._new_tabs = await self._new_tabs_section(reported)

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
        self._late = {"newTabs": snap.get("newTabs") or []}
        return page_state_section(snap)

    async def _new_tabs_section(self, reported: list[dict[str, Any]]) -> str:
        """``### New tabs``: the tabs the results reported, with the index browser_tabs
        takes when the tab list still has them; else as reported (already closed, or the
        list is unavailable)."""
        ids = {t.get("tabId") for t in reported}
        try:
            rows = (await self.conn.tab_list()).rows
        except E.TrustbridgeError:
            rows = []
        if not ids & {t.get("tabId") for _, t in rows}:
            lines = [f"- [{t.get('title', '')}]({t.get('url', '')}) tab {t.get('tabId')}"
                     for t in reported]
            return "### New tabs\n" + "\n".join(lines)
        return render_tabs(rows, self.conn.is_current, only=ids, heading="### New tabs") \
            + "\n" + SELECT_HINT

    def render(self) -> list[Content]:
        """The tool's content: one text block of the sections, then any images."""
        sections = []
        if self._lines:
            sections.append("### Result\n" + "\n".join(self._lines))
        if self._new_tabs:
            sections.append(self._new_tabs)
        if self._tabs is not None:
            sections.append(render_tabs(self._tabs.rows, self.conn.is_current))
        if self._state:
            sections.append(self._state)
        return [types.TextContent(type="text", text="\n\n".join(sections)), *self._images]
