"""How long the bridge waits for the driver: the action's timeout bounds reaching the
target, not typing a long text (bridge/executor.py ``driver_timeout_s``)."""

from __future__ import annotations

from bridge.executor import DRIVER_MARGIN_S, KEY_ALLOWANCE_S, driver_timeout_s
from bridge.protocol.models import ActParams


def _params(action: dict, timeout_ms: int = 2_000) -> ActParams:
    return ActParams.model_validate({"ref": "e1", "action": action, "timeoutMs": timeout_ms})


def test_click_waits_its_timeout_plus_the_margin() -> None:
    assert driver_timeout_s(_params({"kind": "click"})) == 2.0 + DRIVER_MARGIN_S


def test_typing_and_filling_get_time_per_character() -> None:
    """A 10,000-character text is not cut by a 2 s timeout: the bridge waits 250 s more."""
    text = "x" * 10_000
    for action in ({"kind": "type", "text": text}, {"kind": "fill", "value": text}):
        assert driver_timeout_s(_params(action)) == 2.0 + DRIVER_MARGIN_S + 10_000 * KEY_ALLOWANCE_S
