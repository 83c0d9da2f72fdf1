"""Frame tokens after a crash (supervisor/frames.py): a token of a crashed page or of a
dead browser names the crash (BROWSER_CRASHED), a token never stamped stays unknown."""

from __future__ import annotations

import pytest

from trustbridge.bridge.protocol import errors as E
from trustbridge.supervisor import frames as F
from trustbridge.supervisor.frames import FrameRegistry


class _Page:
    def __init__(self) -> None:
        self.handlers: dict[str, list] = {}
        self.frames: list = []

    def on(self, event: str, handler) -> None:
        self.handlers.setdefault(event, []).append(handler)


class _Frame:
    def __init__(self, page: _Page) -> None:
        self.page = page

    def is_detached(self) -> bool:
        return False


def _registry_with(page: _Page, token: str) -> tuple[FrameRegistry, _Frame]:
    reg = FrameRegistry()
    frame = _Frame(page)
    reg._by_token[token] = frame  # what stamp() records for a stamped document
    reg._by_frame[frame] = token
    return reg, frame


def test_a_crashed_pages_token_fails_browser_crashed_renderer() -> None:
    """After the page's crash event, its token answers BROWSER_CRASHED what=renderer."""
    page = _Page()
    reg, frame = _registry_with(page, "t1")
    assert reg.frame_for("t1") is frame
    reg.page_crashed(page)
    with pytest.raises(E.BrowserCrashed) as caught:
        reg.frame_for("t1")
    assert caught.value.details["what"] == "renderer"
    assert len(reg) == 0


def test_the_crash_handler_is_what_the_page_crash_event_calls() -> None:
    """watch_page wires the page's "crash" event to page_crashed, not to forget_page."""
    page = _Page()
    FrameRegistry().watch_page(page)  # type: ignore[arg-type]
    assert [h.__name__ for h in page.handlers["crash"]] == ["page_crashed"]


def test_a_dead_browsers_tokens_fail_browser_crashed_browser() -> None:
    """browser_gone: every token answers BROWSER_CRASHED what=browser; others stay unknown."""
    reg, _ = _registry_with(_Page(), "t1")
    reg.browser_gone()
    with pytest.raises(E.BrowserCrashed) as caught:
        reg.frame_for("t1")
    assert caught.value.details["what"] == "browser"
    with pytest.raises(E.FrameTokenUnknown):
        reg.frame_for("never-stamped")


def test_crashed_tokens_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the newest CRASHED_KEPT crashed tokens are remembered."""
    monkeypatch.setattr(F, "CRASHED_KEPT", 2)
    reg = FrameRegistry()
    reg._mark_crashed(["a", "b", "c"], "renderer")
    assert list(reg._crashed) == ["b", "c"]


def test_the_route_is_cdp_or_transient() -> None:
    """issue 35 item 1: Chromium hands tokens over CDP, the others set-and-remove; any other
    route is refused at construction."""
    assert FrameRegistry("cdp").route == "cdp" and FrameRegistry().route == "transient"
    with pytest.raises(ValueError):
        FrameRegistry("attribute")  # type: ignore[arg-type]
