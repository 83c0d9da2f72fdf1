"""ActionEvents (bridge/events.py) tested by calling it: no sockets, no event loop, no clock."""

from __future__ import annotations

from typing import Any

import pytest

from trustbridge.bridge import events
from trustbridge.bridge.events import ActionEvents, may_open_tab
from trustbridge.bridge.protocol.models import (
    ClickAction,
    FillAction,
    HoverAction,
    PressAction,
    ReceiptEvent,
    TabOpenedEvent,
    TypeAction,
)

EXT = "p1"
OTHER = "p2"


def receipt(receipt_id: str, delivered: bool = True) -> ReceiptEvent:
    return ReceiptEvent(tabId=1, receiptId=receipt_id, delivered=delivered,
                        events=["click", "pointerdown"])


def opened(tab: int, opener: int, url: str = "") -> TabOpenedEvent:
    return TabOpenedEvent(tabId=tab, openerTabId=opener, url=url)


def ids(found: list[events.Opened]) -> list[int]:
    return [o.tab_id for o in found]


# -- receipts ----------------------------------------------------------------------------------


def test_an_expected_receipt_is_kept_until_forgotten() -> None:
    """A receipt pushed while its click expects it is returned; after forget it is gone."""
    ev = ActionEvents()
    ev.expect_receipt(EXT, "r1")
    assert ev.receipt(EXT, "r1") is None
    assert ev.receipt_pushed(EXT, receipt("r1")) is True
    got = ev.receipt(EXT, "r1")
    assert got is not None and got.delivered is True and got.events == ["click", "pointerdown"]
    ev.forget_receipt(EXT, "r1")
    assert ev.receipt(EXT, "r1") is None


def test_receipts_nobody_expects_are_dropped() -> None:
    """Unknown ids, late pushes (after forget) and another extension's push are dropped."""
    ev = ActionEvents()
    assert ev.receipt_pushed(EXT, receipt("never")) is False
    assert ev.receipt(EXT, "never") is None
    ev.expect_receipt(EXT, "r1")
    assert ev.receipt_pushed(OTHER, receipt("r1")) is False
    assert ev.receipt(EXT, "r1") is None and ev.receipt(OTHER, "r1") is None
    ev.forget_receipt(EXT, "r1")
    assert ev.receipt_pushed(EXT, receipt("r1")) is False
    assert ev.receipt(EXT, "r1") is None


def test_a_second_push_of_one_receipt_does_not_replace_the_first() -> None:
    """The first push of a receipt id wins; a repeat with another verdict is dropped."""
    ev = ActionEvents()
    ev.expect_receipt(EXT, "r1")
    assert ev.receipt_pushed(EXT, receipt("r1", delivered=True))
    assert not ev.receipt_pushed(EXT, receipt("r1", delivered=False))
    got = ev.receipt(EXT, "r1")
    assert got is not None and got.delivered is True


def test_a_second_push_that_adds_file_input_sets_only_that_flag() -> None:
    """The page clicked a file input after the first push: the repeat with fileInput is
    kept (the flag only: the first verdict stands); a third push, or one without the
    flag, is dropped; an unexpected receipt with the flag is dropped too."""
    ev = ActionEvents()
    ev.expect_receipt(EXT, "r1")
    assert ev.receipt_pushed(EXT, receipt("r1"))
    assert ev.receipt(EXT, "r1").fileInput is False  # type: ignore[union-attr]
    again = receipt("r1", delivered=False).model_copy(update={"fileInput": True})
    assert ev.receipt_pushed(EXT, again) is True
    got = ev.receipt(EXT, "r1")
    assert got is not None and got.fileInput is True and got.delivered is True
    assert ev.receipt_pushed(EXT, again) is False
    assert ev.receipt_pushed(EXT, receipt("r1")) is False
    assert ev.receipt(EXT, "r1").fileInput is True  # type: ignore[union-attr]
    assert ev.receipt_pushed(OTHER, again) is False
    ev.forget_receipt(EXT, "r1")
    assert ev.receipt_pushed(EXT, again) is False


def test_expected_receipts_are_bounded() -> None:
    """Past RECEIPTS_KEEP expectations the oldest is dropped; the newest still works."""
    ev = ActionEvents()
    for i in range(events.RECEIPTS_KEEP + 1):
        ev.expect_receipt(EXT, f"r{i}")
    assert not ev.receipt_pushed(EXT, receipt("r0"))
    assert ev.receipt_pushed(EXT, receipt(f"r{events.RECEIPTS_KEEP}"))
    assert ev.receipt_pushed(EXT, receipt("r1"))


# -- opened tabs -------------------------------------------------------------------------------


def test_opened_since_filters_by_time_and_opener() -> None:
    """Tabs announced before the action started, or by another opener, are not its tabs;
    opener None takes every opener; arrival order is kept."""
    ev = ActionEvents()
    ev.tab_opened(EXT, opened(10, opener=1), at=99.9)  # before the action
    ev.tab_opened(EXT, opened(11, opener=1), at=100.0)
    ev.tab_opened(EXT, opened(12, opener=2), at=100.5)
    ev.tab_opened(EXT, opened(13, opener=1), at=101.0)
    assert ids(ev.opened_since(EXT, 100.0, opener=1)) == [11, 13]
    assert ids(ev.opened_since(EXT, 100.0, opener=2)) == [12]
    assert ids(ev.opened_since(EXT, 100.0, opener=None)) == [11, 12, 13]
    assert ids(ev.opened_since(EXT, 101.5, opener=None)) == []


def test_opened_tabs_of_one_extension_are_not_another_s() -> None:
    """A tab another extension connection announced is never reported for this one."""
    ev = ActionEvents()
    ev.tab_opened(OTHER, opened(20, opener=1), at=100.0)
    assert ev.opened_since(EXT, 0.0, opener=None) == []
    assert ev.new_tabs(EXT, 0.0, acted_on=1, popups=1) == []


def test_the_announcement_keeps_opener_and_url() -> None:
    """What the bridge can say about a tab that is already gone: id, opener, URL."""
    ev = ActionEvents()
    ev.tab_opened(EXT, opened(11, opener=1, url="http://127.0.0.1/a.html"), at=5.0)
    [tab] = ev.opened_since(EXT, 5.0, opener=1)
    assert (tab.tab_id, tab.opener, tab.url, tab.at) == (11, 1, "http://127.0.0.1/a.html", 5.0)


def test_new_tabs_are_the_acted_on_tab_s_or_with_popups_anyone_s() -> None:
    """Without popups only the acted-on tab's tabs count; when the driver saw a popup and
    the acted-on tab announced none, a tab another tab 'opened' is it (Chromium names the
    active tab as the opener of a background tab's popup)."""
    ev = ActionEvents()
    ev.tab_opened(EXT, opened(30, opener=7), at=10.0)  # opener: the active tab 7
    assert ev.new_tabs(EXT, 10.0, acted_on=5, popups=0) == []
    assert ids(ev.new_tabs(EXT, 10.0, acted_on=5, popups=1)) == [30]
    ev.tab_opened(EXT, opened(31, opener=5), at=10.1)
    assert ids(ev.new_tabs(EXT, 10.0, acted_on=5, popups=1)) == [31]
    assert ids(ev.new_tabs(EXT, 10.0, acted_on=5, popups=0)) == [31]


def test_new_tabs_of_an_unknown_tab_need_the_driver_s_popups() -> None:
    """An action whose tab is unknown claims no tab unless the driver saw a popup."""
    ev = ActionEvents()
    ev.tab_opened(EXT, opened(40, opener=1), at=1.0)
    assert ev.new_tabs(EXT, 0.0, acted_on=None, popups=0) == []
    assert ids(ev.new_tabs(EXT, 0.0, acted_on=None, popups=1)) == [40]


def test_opened_tabs_memory_is_bounded_per_extension_and_in_extensions() -> None:
    """Each extension keeps its last OPENED_KEEP announcements, and only the last
    EXTENSIONS_KEEP extensions heard from are remembered."""
    ev = ActionEvents()
    for tab in range(events.OPENED_KEEP + 5):
        ev.tab_opened(EXT, opened(tab, opener=1), at=float(tab))
    assert ids(ev.opened_since(EXT, 0.0, None)) == list(range(5, events.OPENED_KEEP + 5))
    for n in range(events.EXTENSIONS_KEEP):
        ev.tab_opened(f"x{n}", opened(1, opener=1), at=0.0)
    assert ev.opened_since(EXT, 0.0, None) == []  # EXT was the least recently heard from
    assert ids(ev.opened_since("x0", 0.0, None)) == [1]


# -- which actions may open a tab --------------------------------------------------------------


@pytest.mark.parametrize(("action", "waits"), [
    (ClickAction(), True), (PressAction(key="Enter"), True), (PressAction(key="Control+Enter"), True),
    (PressAction(key="Space"), True), (PressAction(key="a"), False), (PressAction(key="Control++"), False),
    (TypeAction(text="abc", submit=True), True), (TypeAction(text="a\nb"), True),
    (TypeAction(text="abc"), False), (FillAction(value="x\n"), False), (HoverAction(), False),
])
def test_which_actions_may_open_a_tab(action: Any, waits: bool) -> None:
    """Clicks, keys that activate a link or button and typing that presses Enter may open
    a tab; other keys and text, fills and hovers do not."""
    assert may_open_tab(action) is waits


def test_a_late_tab_is_the_acted_on_tab_s_after_its_last_input_and_reported_once() -> None:
    """late_tabs: tabs the tab opened since its last input started, not reported by the
    action's result, each once; nothing for a tab no input ran on."""
    ev = ActionEvents()
    ev.tab_opened(EXT, opened(50, opener=1), at=1.0)  # before the input: not its tab
    ev.input_ran(EXT, 1, started=2.0, reported=[])
    ev.tab_opened(EXT, opened(51, opener=1), at=2.5)
    ev.tab_opened(EXT, opened(52, opener=9), at=2.6)  # another tab's
    assert ev.late_tabs(EXT, 9) == []
    assert ids(ev.late_tabs(EXT, 1)) == [51]
    assert ev.late_tabs(EXT, 1) == []
    ev.input_ran(EXT, 1, started=3.0, reported=[53])
    ev.tab_opened(EXT, opened(53, opener=1), at=3.1)  # the result already named it
    assert ev.late_tabs(EXT, 1) == []
    assert ev.late_tabs(OTHER, 1) == []


def test_a_tab_opened_between_two_inputs_is_still_reported_late() -> None:
    """A window.open a second after a click, then another click before any snapshot:
    the next late_tabs still reports it (the window starts at the first input)."""
    ev = ActionEvents()
    ev.input_ran(EXT, 1, started=2.0, reported=[])
    ev.tab_opened(EXT, opened(61, opener=1), at=3.0)
    ev.input_ran(EXT, 1, started=4.0, reported=[])
    assert ids(ev.late_tabs(EXT, 1)) == [61]
    assert ev.late_tabs(EXT, 1) == []


def test_a_second_push_that_adds_navigates_keeps_the_other_flags() -> None:
    """A submit button's form submission comes after the first push: the repeat with
    navigates is kept; fileInput and navigates add up, each once; the verdict stands."""
    ev = ActionEvents()
    ev.expect_receipt(EXT, "r1")
    assert ev.receipt_pushed(EXT, receipt("r1"))
    nav = receipt("r1", delivered=False).model_copy(update={"navigates": True})
    assert ev.receipt_pushed(EXT, nav) is True
    assert ev.receipt_pushed(EXT, nav) is False
    both = nav.model_copy(update={"fileInput": True})
    assert ev.receipt_pushed(EXT, both) is True
    got = ev.receipt(EXT, "r1")
    assert got is not None and (got.delivered, got.navigates, got.fileInput) == (True, True, True)
