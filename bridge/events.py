"""What the extension told the bridge during an action, as plain Python with no I/O.

The extension pushes two kinds of events while an input action runs (docs/design.md §2
rule 3 is the action's route; §10 "each room once" is why they are pushed, not asked):

- ``page.receipt``: a trusted click reached the target of receipt ``receiptId``
  (§2.3, extension/src/page/receipt.js), pushed again with ``fileInput`` when a file
  input was clicked right after it;
- ``tab.opened``: a page opened tab ``tabId`` whose opener is ``openerTabId``
  (``tabs.onCreated`` in extension/src/background/main.js).

:class:`ActionEvents` keeps them; the executor feeds it (with the arrival time, monotonic
seconds, passed in: nothing here reads a clock) and queries it after the driver's answer:
the receipt of one click, and the tabs the action opened. A tab the acted-on tab opens
after the result went out is reported once, with the next snapshot or wait on that tab
(:meth:`ActionEvents.late_tabs`), even when another input ran on the tab meanwhile.
It is the one place where the bridge decides which new tabs an action opened (and,
:func:`may_open_tab`, after which actions a tab may still come a little later); the MCP
server and the SDK only read the ``newTabs`` the bridge puts in input results. Nothing
here waits: the short waits for a pushed receipt or tab are in bridge/after_input.py.

Memory is bounded: receipts are kept only while an action expects them, and the last
:data:`OPENED_KEEP` ``tab.opened`` events of the last :data:`EXTENSIONS_KEEP` extension
connections.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass

from .protocol.models import (
    Action,
    ClickAction,
    PressAction,
    ReceiptEvent,
    TabOpenedEvent,
    TypeAction,
)

OPENED_KEEP = 32
"""``tab.opened`` events remembered per extension connection."""
EXTENSIONS_KEEP = 16
"""Extension connections whose ``tab.opened`` events are remembered (the least recently
heard from is forgotten first: a reconnecting extension gets a new peer id)."""
RECEIPTS_KEEP = 256
"""Receipts expected at once, across all extensions (one per click in progress); past it
the oldest expectation is dropped and that click reads its receipt from the extension."""
ACTIVATING_KEYS = frozenset({"Enter", "Space", " "})
"""Keys that activate the focused link or button (and so may open a tab), with or without
modifiers (``Control+Enter``)."""


def may_open_tab(action: Action) -> bool:
    """Whether ``action`` may open a tab a little after it returned (the executor then
    waits briefly for one, ``after_input.LATE_TAB_S``): a click, a press of a key that
    activates a link or button (ACTIVATING_KEYS), or typing that presses Enter
    (``submit``, or a line break in the text: it may submit a form)."""
    if isinstance(action, ClickAction):
        return True
    if isinstance(action, TypeAction):
        return action.submit or "\n" in action.text or "\r" in action.text
    return isinstance(action, PressAction) and action.key.rsplit("+", 1)[-1] in ACTIVATING_KEYS


@dataclass(frozen=True)
class Opened:
    """One ``tab.opened`` event and when it arrived (monotonic s)."""

    at: float
    tab_id: int
    opener: int
    url: str = ""
    """The URL the tab was opened with (often still empty or ``about:blank``)."""


class ActionEvents:
    """Receipts and opened tabs pushed by extensions, queried after an action.

    Every method takes the extension's peer id: a receipt or a tab of one extension is
    never reported for an action on another.
    """

    def __init__(self) -> None:
        # (extension, receiptId) → the pushed receipt, or None while still expected
        self._receipts: OrderedDict[tuple[str, str], ReceiptEvent | None] = OrderedDict()
        self._opened: OrderedDict[str, deque[Opened]] = OrderedDict()
        # (extension, tabId) → when the last input action on that tab started (monotonic s)
        self._inputs: OrderedDict[tuple[str, int], float] = OrderedDict()
        # (extension, tabId of a new tab) already reported in some result
        self._reported: OrderedDict[tuple[str, int], None] = OrderedDict()

    # -- receipts ---------------------------------------------------------------------

    def expect_receipt(self, extension: str, receipt_id: str) -> None:
        """A click armed receipt ``receipt_id`` (``page.resolveTarget`` answered with it):
        keep its push when it comes. Call :meth:`forget_receipt` when the action ends."""
        self._receipts[(extension, receipt_id)] = None
        while len(self._receipts) > RECEIPTS_KEEP:
            self._receipts.popitem(last=False)

    def receipt_pushed(self, extension: str, receipt: ReceiptEvent) -> bool:
        """Keep a pushed receipt if an action expects it.

        A second push of the same id counts only when it adds ``fileInput`` (the page
        clicked a file input right after the press, after the first push went out) or
        ``navigates`` (a submit button's form submission, its activation behaviour after
        the dispatch: extension/src/page/receipt.js); it sets those flags and nothing else
        (the first push's verdict stands).

        Returns:
            True when kept; False for a receipt nobody expects (late, unknown, from another
            extension, or a second push that adds nothing), which is dropped.
        """
        key = (extension, receipt.receiptId)
        if key not in self._receipts:
            return False
        kept = self._receipts[key]
        if kept is None:
            self._receipts[key] = receipt
            return True
        adds = {flag: True for flag in ("fileInput", "navigates")
                if getattr(receipt, flag) and not getattr(kept, flag)}
        if not adds:
            return False
        self._receipts[key] = kept.model_copy(update=adds)
        return True

    def receipt(self, extension: str, receipt_id: str) -> ReceiptEvent | None:
        """The pushed receipt ``receipt_id``, or None if none came (yet)."""
        return self._receipts.get((extension, receipt_id))

    def forget_receipt(self, extension: str, receipt_id: str) -> None:
        """The action that expected ``receipt_id`` ended: a later push is dropped."""
        self._receipts.pop((extension, receipt_id), None)

    # -- opened tabs ------------------------------------------------------------------

    def tab_opened(self, extension: str, event: TabOpenedEvent, at: float) -> None:
        """Remember a ``tab.opened`` event that arrived at ``at`` (monotonic s)."""
        kept = self._opened.pop(extension, None) or deque(maxlen=OPENED_KEEP)
        kept.append(Opened(at, event.tabId, event.openerTabId, event.url))
        self._opened[extension] = kept  # most recently heard from last
        while len(self._opened) > EXTENSIONS_KEEP:
            self._opened.popitem(last=False)

    def opened_since(self, extension: str, since: float, opener: int | None) -> list[Opened]:
        """The tabs announced at or after ``since`` (monotonic s) whose opener is
        ``opener`` (None: any opener), in arrival order."""
        return [o for o in self._opened.get(extension, ())
                if o.at >= since and (opener is None or o.opener == opener)]

    def new_tabs(self, extension: str, since: float, acted_on: int | None,
                 popups: int) -> list[Opened]:
        """The tabs an action that started at ``since`` (monotonic s) opened, as far as
        the extension has announced them.

        Args:
            acted_on: the tab the action ran on (None: unknown).
            popups: how many new pages the driver saw the action open (``popups`` in
                ``driver.act``'s result; 0 on the synthetic path).

        Returns:
            The tabs announced since ``since`` whose opener is ``acted_on``; when there are
            none but the driver saw popups, every tab announced since (Chromium names the
            *active* tab as the opener of a popup from a background tab, docs/design.md
            §9). Empty when nothing is known to have opened.
        """
        mine = self.opened_since(extension, since, acted_on) if acted_on is not None else []
        if mine or not popups:
            return mine
        return self.opened_since(extension, since, None)

    # -- tabs opened after the action's result -----------------------------------------

    def input_ran(self, extension: str, tab_id: int | None, started: float,
                  reported: list[int]) -> None:
        """An input action that started at ``started`` (monotonic s) ran on ``tab_id`` and
        its result reported the new tabs ``reported``: a tab that tab opens later is
        reported once by :meth:`late_tabs`.

        The window starts at the tab's *first* input and is never narrowed by a later one:
        a tab opened between two inputs (a window.open 1 s after a click, then another
        click before any snapshot) is still reported by the next snapshot or wait, not
        lost (issue 15 item 2); tabs already reported are left out by id."""
        self.mark_reported(extension, reported)
        if tab_id is None:
            return
        first = self._inputs.pop((extension, tab_id), started)
        self._inputs[(extension, tab_id)] = min(first, started)
        while len(self._inputs) > OPENED_KEEP * EXTENSIONS_KEEP:
            self._inputs.popitem(last=False)

    def mark_reported(self, extension: str, tab_ids: list[int]) -> None:
        """These new tabs were reported in a result: never report them again."""
        for tab_id in tab_ids:
            self._reported[(extension, tab_id)] = None
        while len(self._reported) > OPENED_KEEP * EXTENSIONS_KEEP:
            self._reported.popitem(last=False)

    def late_tabs(self, extension: str, tab_id: int | None) -> list[Opened]:
        """Tabs that ``tab_id`` opened after its first input action started and that no
        result has reported yet (a page that opens a popup a while after the click, e.g.
        from a timer or after a fetch), marked reported now. Empty when no input ran on
        that tab."""
        since = self._inputs.get((extension, tab_id)) if tab_id is not None else None
        if since is None:
            return []
        late = [o for o in self.opened_since(extension, since, tab_id)
                if (extension, o.tab_id) not in self._reported]
        self.mark_reported(extension, [o.tab_id for o in late])
        return late
