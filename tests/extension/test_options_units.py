"""Unit tests of the options page's rules (extension/src/options/), run in Node's own test
runner: tests/extension/options_units.test.mjs."""

from __future__ import annotations

from .node_units import run_node_units


def test_options_units_in_node() -> None:
    """The pairing code goes over ws:// to loopback only (wss:// anywhere); a stored
    pairing is used only when complete, with its credential as the hello token."""
    run_node_units("options_units.test.mjs", 2)
