"""Unit tests of the action badge per owned tab (extension/src/background/owners.js) and
the popup's questions (popup_api.js), run in Node's own test runner:
tests/extension/owners_units.test.mjs."""

from __future__ import annotations

from .node_units import run_node_units


def test_owners_units_in_node() -> None:
    """Badges follow the bridge's ``sessions.owners`` (set, cleared, set again after a
    navigation, every open tab swept once); the popup gets the owner of a tab, and Stop
    sends ``session.stop`` only for the tab's current owner while connected."""
    run_node_units("owners_units.test.mjs", 6)
