"""supervisor/actions.py ``click``: a position outside the target's box is refused at once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import ClickAction
from trustbridge.supervisor.actions import Target, click


pytestmark = pytest.mark.usefixtures("no_label_route")


class _Locator:
    """Records bounding_box and click calls; the box is 100 x 20 CSS px."""

    def __init__(self, box: dict[str, float] | None) -> None:
        self.box = box
        self.calls: list[str] = []
        self.clicked: dict[str, Any] | None = None

    async def bounding_box(self, timeout: float | None = None):
        self.calls.append("bounding_box")
        return self.box

    async def click(self, **options: Any) -> None:
        self.calls.append("click")
        self.clicked = options


def _target(locator: _Locator) -> Target:
    return Target(locator=locator, frame=None, selector="#b",  # type: ignore[arg-type]
                  trusted_insert_text=True)


BOX = {"x": 10.0, "y": 30.0, "width": 100.0, "height": 20.0}


@pytest.mark.parametrize("at", [(5000, 5), (5, 21), (100.5, 0)])
def test_a_position_outside_the_box_is_bad_request_and_nothing_is_clicked(at) -> None:
    """One bounding_box call, then BAD_REQUEST with the box size; no click."""
    loc = _Locator(BOX)
    action = ClickAction(position={"x": at[0], "y": at[1]})
    with pytest.raises(E.BadRequest) as info:
        asyncio.run(click(_target(loc), action, 10_000))
    assert loc.calls == ["bounding_box"]
    assert info.value.details["box"] == {"width": 100.0, "height": 20.0}
    assert "100 x 20 CSS px" in info.value.message


def test_a_position_inside_the_box_clicks_there() -> None:
    """A point inside (edges included) is clicked at that offset."""
    loc = _Locator(BOX)
    asyncio.run(click(_target(loc), ClickAction(position={"x": 100, "y": 0}), 10_000))
    assert loc.calls == ["bounding_box", "click"]
    assert loc.clicked["position"] == {"x": 100, "y": 0}


def test_without_a_position_no_box_is_read() -> None:
    """The centre click costs no bounding_box call."""
    loc = _Locator(BOX)
    asyncio.run(click(_target(loc), ClickAction(), 10_000))
    assert loc.calls == ["click"]
