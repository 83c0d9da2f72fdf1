"""PointerPath: the click options a driver's pointer setting gives Playwright."""

from __future__ import annotations

import pytest

from supervisor.actions import PointerPath


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
