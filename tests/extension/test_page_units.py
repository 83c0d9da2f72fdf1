"""Unit tests of the extension's DOM-free modules (ref registry, snapshot diff), run in
Node's own test runner: tests/extension/page_units.test.mjs."""

from __future__ import annotations

from .node_units import run_node_units


def test_page_units_in_node() -> None:
    """The ref registry (16 observations, 30 min TTL, one rebind, ambiguity), the
    snapshot diff and the secret-field matcher behave as documented; every Node test passes."""
    run_node_units("page_units.test.mjs", 16)
