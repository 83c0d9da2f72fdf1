"""Fixtures shared by the supervisor's unit tests (fake Playwright objects, no browser)."""

from __future__ import annotations

import pytest

from trustbridge.supervisor import labels


@pytest.fixture
def no_label_route(monkeypatch: pytest.MonkeyPatch) -> None:
    """The label route's isolated read (supervisor/labels.py ``plan``) answers None, as the
    page's engine does for a target that is no hidden checkbox or radio input: fakes that
    record a click's Playwright calls are no such inputs."""
    async def plan(t, timeout_ms):
        return None
    monkeypatch.setattr(labels, "plan", plan)
