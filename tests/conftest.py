"""Test tiers (README "Tests"): every test is in exactly one of ``unit``, ``loopback``,
``browser`` and ``slow``; a browser test that runs in Firefox ESR or Camoufox is also
``cross_browser``. ``loopback`` and ``slow`` are set by the modules (``pytestmark``);
tests/e2e is ``browser``; the rest is ``unit``."""

from __future__ import annotations

from pathlib import Path

import pytest

E2E = Path(__file__).parent / "e2e"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if E2E in item.path.parents and item.get_closest_marker("browser") is None:
            item.add_marker(pytest.mark.browser)
        if item.get_closest_marker("firefox") or item.get_closest_marker("camoufox"):
            item.add_marker(pytest.mark.cross_browser)
        if item.get_closest_marker("slow") is not None:
            continue
        if not any(item.get_closest_marker(m) for m in ("loopback", "browser")):
            item.add_marker(pytest.mark.unit)
