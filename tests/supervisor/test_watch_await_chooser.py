"""supervisor/watch.py await_file_chooser (``driver.fileChooser``) with fake page and
chooser objects: the chooser held late for a page, waited for on an event, bounded."""

from __future__ import annotations

import asyncio

import pytest

from trustbridge.supervisor import watch

pytestmark = pytest.mark.timeout(10)


class _Chooser:
    def is_multiple(self) -> bool:
        return True


class _Page:
    """Hashable stand-in for a Playwright Page (the state is keyed by page)."""


def _page() -> tuple[_Page, watch._PageState]:
    page = _Page()
    state = watch._pages[page] = watch._PageState()  # type: ignore[index]
    return page, state


async def test_a_chooser_already_held_late_is_returned_once_and_stays_held() -> None:
    """Held late before the ask: returned at once, its late flag cleared (the next action
    does not report it again); it stays held for an upload with no ref."""
    page, state = _page()
    chooser = _Chooser()
    watch._hold_late(state, chooser)  # type: ignore[arg-type]
    assert await watch.await_file_chooser(page, 5.0) == {"fileChooser": {"multiple": True}}  # type: ignore[arg-type]
    assert state.late_chooser is False and state.chooser is chooser
    assert await watch.await_file_chooser(page, 0.01) == {}  # type: ignore[arg-type]


async def test_a_chooser_that_comes_during_the_wait_is_returned() -> None:
    """Announced 50 ms into a 5 s wait: returned then, not after the bound."""
    page, state = _page()
    loop = asyncio.get_running_loop()
    loop.call_later(0.05, watch._hold_late, state, _Chooser())
    started = loop.time()
    assert await watch.await_file_chooser(page, 5.0) == {"fileChooser": {"multiple": True}}  # type: ignore[arg-type]
    assert loop.time() - started < 4.0


async def test_none_within_the_bound_or_an_unknown_page_is_empty() -> None:
    """No chooser within the bound: {} (the result then claims none); a page the watch
    never saw: {} at once."""
    page, state = _page()
    assert await watch.await_file_chooser(page, 0.02) == {}  # type: ignore[arg-type]
    assert state.chooser is None
    assert await watch.await_file_chooser(_Page(), 5.0) == {}  # type: ignore[arg-type]
