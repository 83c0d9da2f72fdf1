"""PointerPath: the click options a driver's pointer setting gives Playwright, and the
mouse calls the verified-point fast path makes with it (supervisor/actions.py fast_pointer)."""

from __future__ import annotations

import pytest

from trustbridge.bridge.protocol.models import ClickAction, HoverAction, Point
from trustbridge.supervisor.actions import PointerPath, Target, fast_pointer


pytestmark = pytest.mark.usefixtures("no_label_route")


def test_default_is_a_bare_click() -> None:
    """No environment: one move, no hold, so Playwright's click gets no extra option."""
    assert PointerPath.from_env({}).click_options() == {}


def test_environment_sets_steps_and_a_hold_range() -> None:
    """TRUSTBRIDGE_CLICK_STEPS=4 and HOLD_MS=30-90 give steps 4 and a delay in range."""
    path = PointerPath.from_env({"TRUSTBRIDGE_CLICK_STEPS": "4",
                                 "TRUSTBRIDGE_CLICK_HOLD_MS": "30-90"})
    options = path.click_options()
    assert options["steps"] == 4 and 30 <= options["delay"] <= 90
    assert PointerPath.from_env({"TRUSTBRIDGE_CLICK_HOLD_MS": "40"}).click_options() == \
        {"delay": 40.0}


@pytest.mark.parametrize("env", [{"TRUSTBRIDGE_CLICK_STEPS": "0"},
                                 {"TRUSTBRIDGE_CLICK_HOLD_MS": "90-30"},
                                 {"TRUSTBRIDGE_CLICK_HOLD_MS": "soon"}])
def test_bad_settings_are_refused(env: dict[str, str]) -> None:
    """Zero steps, an inverted range or a word are refused, not ignored."""
    with pytest.raises(ValueError):
        PointerPath.from_env(env)


class _Recorder:
    """A fake page (mouse, keyboard, viewport) recording the calls fast_pointer makes."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.viewport_size = {"width": 1280, "height": 800}
        self.mouse = self
        self.keyboard = _Keys(self.calls)

    async def move(self, x: float, y: float, steps: int | None = None) -> None:
        self.calls.append(("move", x, y, steps))

    async def click(self, x: float, y: float, **kw: object) -> None:
        self.calls.append(("click", x, y, kw))

    async def down(self, **kw: object) -> None:
        self.calls.append(("down", kw))

    async def up(self, **kw: object) -> None:
        self.calls.append(("up", kw))


class _Keys:
    def __init__(self, calls: list[tuple]) -> None:
        self.calls = calls

    async def down(self, key: str) -> None:
        self.calls.append(("key down", key))

    async def up(self, key: str) -> None:
        self.calls.append(("key up", key))


class _Frame:
    def __init__(self, page: _Recorder, parent: object = None) -> None:
        self.page, self.parent_frame = page, parent


class _Locator:
    def __init__(self, calls: list[tuple]) -> None:
        self.calls = calls

    async def click(self, **kw: object) -> None:
        self.calls.append(("locator.click", kw))

    async def hover(self, **kw: object) -> None:
        self.calls.append(("locator.hover", kw))


def _target(pointer: PointerPath, parent: object = None) -> tuple[Target, _Recorder]:
    page = _Recorder()
    return Target(locator=_Locator(page.calls), frame=_Frame(page, parent),  # type: ignore[arg-type]
                  selector="x", trusted_insert_text=True, pointer=pointer), page


async def test_fast_click_is_one_mouse_click_by_default() -> None:
    """A bare pointer path: one mouse.click at the point (move, press, release), with the
    modifiers held around it and released after."""
    t, page = _target(PointerPath())
    res = await fast_pointer(t, ClickAction(modifiers=["Shift"]), Point(x=10, y=20), 5000)
    assert res == {"fastPath": True}
    assert page.calls == [("key down", "Shift"),
                          ("click", 10, 20, {"button": "left", "click_count": 1, "delay": None}),
                          ("key up", "Shift")]


async def test_fast_click_keeps_the_pointer_path_steps_and_hold() -> None:
    """TRUSTBRIDGE_CLICK_STEPS / HOLD_MS still apply on the fast path: the move goes in
    that many steps, and each press is held before its release (double click: two)."""
    t, page = _target(PointerPath(steps=4, hold_ms=(5.0, 5.0)))
    await fast_pointer(t, ClickAction(clickCount=2), Point(x=3, y=4), 5000)
    assert page.calls == [("move", 3, 4, 4),
                          ("down", {"button": "left", "click_count": 1}),
                          ("up", {"button": "left", "click_count": 1}),
                          ("down", {"button": "left", "click_count": 2}),
                          ("up", {"button": "left", "click_count": 2})]


async def test_fast_hover_moves_in_the_pointer_path_steps() -> None:
    """A hover is one move to the point in the configured steps."""
    t, page = _target(PointerPath(steps=3))
    assert await fast_pointer(t, HoverAction(), Point(x=1, y=2), 5000) == {"fastPath": True}
    assert page.calls == [("move", 1, 2, 3)]


async def test_nested_frame_or_point_outside_the_page_takes_the_full_path() -> None:
    """A target two frames down, or a point outside the top-level viewport: Playwright's
    locator click or hover runs instead, and the result says why."""
    grandparent = _Frame(_Recorder())
    t, page = _target(PointerPath(), parent=_Frame(page=_Recorder(), parent=grandparent))
    res = await fast_pointer(t, ClickAction(), Point(x=1, y=2), 5000)
    assert res == {"fastPath": False, "fastRefused": "nested-frame"}
    assert [c[0] for c in page.calls] == ["locator.click"]
    t, page = _target(PointerPath())
    res = await fast_pointer(t, HoverAction(), Point(x=5000, y=2), 5000)
    assert res == {"fastPath": False, "fastRefused": "outside-top-viewport"}
    assert [c[0] for c in page.calls] == ["locator.hover"]
