"""The driver's dialog record agrees with the page (supervisor/dialogs.py DialogTracker):
one dialog per page, dropped on a main-frame navigation, and an answer the browser
refuses (the dialog was already gone) is an error, never "accepted"."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import Error as PlaywrightError

from trustbridge.bridge.protocol import errors as E
from trustbridge.supervisor.dialogs import DialogTracker


class FakePage:
    def __init__(self) -> None:
        self.url = "http://a.test/"
        self.main_frame = object()
        self.closed = False

    def is_closed(self) -> bool:
        return self.closed


class FakeDialog:
    def __init__(self, page: FakePage, message: str, gone: bool = False,
                 refused: bool = False) -> None:
        self.page, self.message, self.type, self.default_value = page, message, "confirm", ""
        self.gone, self.refused = gone, refused
        self.answers: list[Any] = []

    async def accept(self, text: str | None = None) -> None:
        if self.gone:
            raise PlaywrightError("Cannot accept dialog which is already handled!")
        if self.refused:
            raise PlaywrightError("Protocol error (Page.handleJavaScriptDialog): "
                                  "Not attached to an active page")
        self.answers.append(("accept", text))

    async def dismiss(self) -> None:
        if self.refused:
            raise PlaywrightError("Protocol error (Page.handleJavaScriptDialog): "
                                  "Not attached to an active page")
        if self.gone:
            raise PlaywrightError("Cannot dismiss dialog which is already handled!")
        self.answers.append(("dismiss", None))


def tracker() -> tuple[DialogTracker, list[tuple[str, dict[str, Any]]]]:
    events: list[tuple[str, dict[str, Any]]] = []
    return DialogTracker(lambda ev, p: events.append((ev, p))), events


async def test_a_new_dialog_on_a_page_closes_the_older_one_first() -> None:
    """A second dialog on the same page reports the first closed before it opens."""
    t, events = tracker()
    page = FakePage()
    t._on_dialog(FakeDialog(page, "Delete record 0?"))  # type: ignore[arg-type]
    t._on_dialog(FakeDialog(page, "Delete record 1?"))  # type: ignore[arg-type]
    assert [(e, p.get("dialogId"), p.get("message")) for e, p in events] == [
        ("dialog.opened", 1, "Delete record 0?"), ("dialog.closed", 1, None),
        ("dialog.opened", 2, "Delete record 1?")]
    assert t.first_for(page)["message"] == "Delete record 1?"  # type: ignore[arg-type,index]


async def test_dialogs_of_other_pages_stay_open() -> None:
    """A dialog on page B does not close page A's."""
    t, _ = tracker()
    a, b = FakePage(), FakePage()
    t._on_dialog(FakeDialog(a, "A"))  # type: ignore[arg-type]
    t._on_dialog(FakeDialog(b, "B"))  # type: ignore[arg-type]
    assert [p.info["message"] for p in t.pending] == ["A", "B"]


async def test_a_main_frame_navigation_closes_the_pages_dialog() -> None:
    """A committed main-frame navigation reports the page's dialog closed; a subframe's
    does not."""
    t, events = tracker()
    page = FakePage()
    t._on_dialog(FakeDialog(page, "x"))  # type: ignore[arg-type]
    t._on_navigated(page, object())  # type: ignore[arg-type]
    assert t.pending
    t._on_navigated(page, page.main_frame)  # type: ignore[arg-type]
    assert not t.pending and events[-1] == ("dialog.closed", {"dialogId": 1})


async def test_answering_a_dialog_already_handled_is_refused() -> None:
    """Playwright says it was already handled: BadRequest with alreadyClosed, never
    accepted, and the record forgets it."""
    t, _ = tracker()
    t._on_dialog(FakeDialog(FakePage(), "Delete record 0?", gone=True))  # type: ignore[arg-type]
    with pytest.raises(E.BadRequest) as info:
        await t.answer(True)
    assert info.value.details["alreadyClosed"] is True and info.value.details["dialogId"] == 1
    assert "reached no dialog" in info.value.message
    assert not t.pending


async def test_an_answer_chromium_refuses_keeps_the_dialog_open() -> None:
    """CDP refuses the answer on a live page (a navigation is pending): DIALOG_OPEN with
    refused, and the dialog stays recorded (it still blocks the page)."""
    t, _ = tracker()
    t._on_dialog(FakeDialog(FakePage(), "Delete record 1?", refused=True))  # type: ignore[arg-type]
    with pytest.raises(E.DialogOpen) as info:
        await t.answer(True)
    assert info.value.details["refused"] is True and "nothing was answered" in info.value.message
    assert [p.id for p in t.pending] == [1]


async def test_an_answer_to_a_dialog_of_a_closed_page_is_already_closed() -> None:
    """The page closed: BadRequest with alreadyClosed."""
    t, _ = tracker()
    page = FakePage()
    t._on_dialog(FakeDialog(page, "x", refused=True))  # type: ignore[arg-type]
    page.closed = True
    with pytest.raises(E.BadRequest) as info:
        await t.answer(False)
    assert info.value.details["alreadyClosed"] is True


async def test_answering_the_open_dialog_reaches_it() -> None:
    """The open dialog gets the answer, with the prompt text."""
    t, _ = tracker()
    dialog = FakeDialog(FakePage(), "Name?")
    t._on_dialog(dialog)  # type: ignore[arg-type]
    out = await t.answer(True, "Ann")
    assert out == {"type": "confirm", "message": "Name?", "accepted": True, "dialogId": 1}
    assert dialog.answers == [("accept", "Ann")]
