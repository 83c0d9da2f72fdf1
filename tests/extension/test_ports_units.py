"""Unit tests of the binding of per-frame ports to documents
(extension/src/background/ports.js) and of the content script's end of the port
(extension/src/page/frameport.js), run in Node's own test runner:
tests/extension/ports_units.test.mjs."""

from __future__ import annotations

from .node_units import run_node_units


def test_ports_units_in_node() -> None:
    """A port serves requests only while the last commit of its frame names its
    document, no navigation is in flight and the op does not change the page; a commit or
    a connect of another document, a disconnect or the tab closing fails what waits on it;
    the remembered commits are bounded; the content end reconnects lazily (never in a
    loop) and stops once the extension context is gone."""
    run_node_units("ports_units.test.mjs", 13)
