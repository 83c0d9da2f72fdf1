"""A web page cannot reach the bridge: its WebSocket handshake is refused (design.md §8)."""

from __future__ import annotations

import pytest

from .conftest import Origins, Stack

pytestmark = pytest.mark.browser


async def test_page_websocket_to_bridge_is_refused(stack: Stack, origins: Origins) -> None:
    """A page served on loopback opens a WebSocket to the bridge and tries to navigate:
    the handshake is refused (never opened), no peer joins, and no tab changes."""
    await stack.client.call("page.navigate", {"url": f"{origins.main}/hostile.html"})
    peers_before = set(stack.server.peers)
    tabs_before = (await stack.client.call("tabs.list", {}))["tabs"]
    result = await stack.page.evaluate("url => window.__attack(url)", stack.server.url)
    assert result["opened"] is False and "message" not in result
    assert set(stack.server.peers) == peers_before
    tabs_after = (await stack.client.call("tabs.list", {}))["tabs"]
    assert [(t["tabId"], t["url"]) for t in tabs_after] == [(t["tabId"], t["url"]) for t in tabs_before]
    assert "#pwned" not in stack.page.url
