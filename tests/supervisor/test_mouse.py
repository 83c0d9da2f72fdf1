"""supervisor/mouse.py with a fake Playwright page: what reaches ``page.mouse``."""

from __future__ import annotations

from typing import Any

from trustbridge.bridge.protocol.models import MouseAction
from trustbridge.supervisor.actions import PointerPath
from trustbridge.supervisor.mouse import act


class _Mouse:
    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Any:
        async def record(*args: Any, **kwargs: Any) -> None:
            self.calls.append((name, args, kwargs))
        return record


class _Page:
    def __init__(self) -> None:
        self.viewport_size = {"width": 1280, "height": 720}
        self.mouse = _Mouse()


async def test_a_click_delay_is_passed_to_mouse_click() -> None:
    """MouseAction.delay becomes page.mouse.click's delay (ms); none: no delay sent."""
    page = _Page()
    await act(page, MouseAction(op="click", x=5, y=6, delay=300),  # type: ignore[arg-type]
              PointerPath())
    await act(page, MouseAction(op="click", x=5, y=6), PointerPath())  # type: ignore[arg-type]
    clicks = [c for c in page.mouse.calls if c[0] == "click"]
    assert clicks[0][2].get("delay") == 300
    assert "delay" not in clicks[1][2]
