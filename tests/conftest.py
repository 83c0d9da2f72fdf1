"""Test tiers (README): ``unit``, ``loopback``, ``browser`` (a browser test that runs in
Firefox ESR or Camoufox is also ``cross_browser``) and ``slow``. ``browser`` and ``slow``
are marked in the modules; tests/e2e is ``browser``; a test of a :data:`LOOPBACK` module
that is not ``browser`` is ``loopback``; every other test is ``unit``."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).parent
E2E = TESTS / "e2e"
LOOPBACK = frozenset({
    "bridge/test_cli.py",
    "bridge/test_cli_attach.py",
    "bridge/test_cli_bind.py",
    "bridge/test_cli_code.py",
    "bridge/test_cli_doctor.py",
    "bridge/test_cli_sessions.py",
    "bridge/test_client.py",
    "bridge/test_client_sessions.py",
    "bridge/test_code_runtime.py",
    "bridge/test_executor.py",
    "bridge/test_executor_file_chooser.py",
    "bridge/test_executor_timeouts.py",
    "bridge/test_fuzz.py",
    "bridge/test_mcp.py",
    "bridge/test_mcp_code.py",
    "bridge/test_mcp_devtools.py",
    "bridge/test_mcp_evaluate.py",
    "bridge/test_mcp_find.py",
    "bridge/test_mcp_http.py",
    "bridge/test_mcp_options.py",
    "bridge/test_mcp_response.py",
    "bridge/test_mcp_session.py",
    "bridge/test_mcp_sessions.py",
    "bridge/test_mcp_stdio.py",
    "bridge/test_mcp_stdio_transport.py",
    "bridge/test_mcp_tools.py",
    "bridge/test_mcp_vision.py",
    "bridge/test_ordering_cancel.py",
    "bridge/test_pairing.py",
    "bridge/test_peer.py",
    "bridge/test_protocol_schema.py",
    "bridge/test_sdk.py",
    "bridge/test_sdk_sessions.py",
    "bridge/test_server.py",
    "bridge/test_snapshot_after.py",
    "bridge/test_sync_sdk.py",
    "bridge/test_token.py",
    "cases/test_shared_cases.py",
    "extension/test_build.py",
    "extension/test_options_units.py",
    "extension/test_owners_units.py",
    "extension/test_page_units.py",
    "extension/test_ports_units.py",
    "extension/test_receipt_units.py",
    "extension/test_snapshot_begin_units.py",
    "extension/test_snapshot_provisional_units.py",
    "scripts/test_mcp_conformance.py",
    "supervisor/test_browser_limits.py",
    "supervisor/test_cdp_proxy.py",
    "supervisor/test_chromium_launch.py",
    "supervisor/test_discovery.py",
    "supervisor/test_extension_copy.py",
    "supervisor/test_keys_layout.py",
})
"""Modules (under tests/) some of whose tests start a bridge, a loopback server or a
subprocess (node, the CLI): found by recording every socket bind/connect and process
start per test. A new module that does so belongs here."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if E2E in item.path.parents and item.get_closest_marker("browser") is None:
            item.add_marker(pytest.mark.browser)
        if item.get_closest_marker("firefox") or item.get_closest_marker("camoufox"):
            item.add_marker(pytest.mark.cross_browser)
        if item.get_closest_marker("slow") is not None:
            continue
        if item.get_closest_marker("browser") is not None:
            continue
        if item.path.relative_to(TESTS).as_posix() in LOOPBACK:
            item.add_marker(pytest.mark.loopback)
        else:
            item.add_marker(pytest.mark.unit)
