"""browser_find and browser_snapshot {target, depth} through the ``mcp`` client library,
in process against a real loopback bridge with a fake extension: what each call sends
as ``page.find`` / ``page.snapshot`` and how the answer reads. The real browser side is
tests/e2e/test_find.py."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from mcp import Client

from trustbridge.bridge.mcp import Session, build_server
from trustbridge.bridge.mcp.find import js_literal
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol import results as R
from trustbridge.bridge.server import BridgeServer

from .fakes import FakeExtension, FakePeer, answer_of

Tools = Callable[[], contextlib.AbstractAsyncContextManager[Client]]

FOUND = answer_of(R.FindResult(
    matches=[R.FindMatch(ref="e9", line='- button "Delete row 60000" [ref=e9]',
                         ancestry=['- table "Rows" [ref=e2]', '- row "60000" [ref=e8]'])],
    text='- table "Rows" [ref=e2]\n  - row "60000" [ref=e8]\n'
         '    - button "Delete row 60000" [ref=e9]',
    truncated=False, url="http://127.0.0.1/table.html", title="Big table", tabId=1))


@pytest.fixture
async def session(bridge: BridgeServer) -> AsyncIterator[Session]:
    s = Session(url=bridge.url, token=bridge.token, embedded=False)
    try:
        yield s
    finally:
        await s.close()


@pytest.fixture
def tools(session: Session) -> Tools:
    """``async with tools() as mcp``: an in-process MCP client of the server."""
    return lambda: Client(build_server(session))


def text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


async def test_find_sends_the_criteria_and_shows_matches_under_their_ancestors(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools) -> None:
    """role, name, target and limit reach page.find as FindParams; the result lists the
    refs and the outline, and asks for no page state."""
    async with tools() as mcp:
        ext = await peers(FakeExtension)
        ext.results["page.find"] = FOUND
        listed = {t.name: t for t in (await mcp.list_tools()).tools}
        schema = listed["browser_find"].input_schema["properties"]
        assert {"role", "name", "text", "regex", "target", "limit"} <= set(schema)
        assert listed["browser_find"].annotations.read_only_hint is True
        result = await mcp.call_tool("browser_find", {
            "role": "button", "name": "Delete row 60000", "target": "e2", "limit": 5})
        assert not result.is_error, text(result)
        params = (await ext.wait_for_request("page.find")).params
        assert params["role"] == "button" and params["name"] == "Delete row 60000"
        assert params["within"] == "e2" and params["limit"] == 5
        assert params["regex"] is False and params.get("text") is None
        shown = text(result)
        assert "1 match for role 'button', name 'Delete row 60000' inside e2" in shown
        assert ": e9." in shown
        assert '  - row "60000" [ref=e8]\n    - button "Delete row 60000" [ref=e9]' in shown
        assert "### Page state" not in shown
        assert "page.snapshot" not in ext.methods()


async def test_find_regex_and_text_follow_playwright_mcp(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools) -> None:
    """regex (a pattern string, Playwright MCP's form) goes as text with regex true and a
    name beside it as a literal; text and regex together, or nothing to find, are refused
    before anything is sent; truncated and empty answers say so."""
    async with tools() as mcp:
        ext = await peers(FakeExtension)
        ext.results["page.find"] = FOUND | {"truncated": True, "text": FOUND["text"] +
                                            "\n# more matches than the limit of 1: narrow"}
        got = await mcp.call_tool("browser_find", {"regex": "/row \\d+/i", "name": "a.b",
                                                   "target": "e2"})
        assert not got.is_error, text(got)
        params = (await ext.wait_for_request("page.find")).params
        assert params["text"] == "/row \\d+/i" and params["regex"] is True
        assert params["name"] == "/a\\.b/i" and params["within"] == "e2"
        assert "Not every match is listed" in text(got)
        ext.requests.clear()
        for bad in ({"text": "x", "regex": "y"}, {}, {"ref": "e2", "text": "x"}):
            refused = await mcp.call_tool("browser_find", bad)
            assert refused.is_error and "BAD_REQUEST" in text(refused), bad
        assert "page.find" not in ext.methods()
        ext.results["page.find"] = FOUND | {"matches": [], "text": ""}
        none = text(await mcp.call_tool("browser_find", {"text": "nowhere"}))
        assert "No element matches text 'nowhere'" in none
        ext.errors["page.find"] = E.RefNotFound("Ref e2 is not known.", {"ref": "e2"})
        stale = await mcp.call_tool("browser_find", {"text": "x", "target": "e2"})
        assert stale.is_error and "REF_NOT_FOUND" in text(stale)


async def test_find_takes_playwright_mcps_max_results_as_its_limit(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools) -> None:
    """maxResults (Playwright MCP 0.0.86) is sent as limit, capped at page.find's 500; a
    limit that says otherwise beside it is refused before anything is sent."""
    async with tools() as mcp:
        ext = await peers(FakeExtension)
        ext.results["page.find"] = FOUND
        listed = {t.name: t for t in (await mcp.list_tools()).tools}
        assert "maxResults" in listed["browser_find"].input_schema["properties"]
        for asked, sent in ((3, 3), (100_000, 500)):
            got = await mcp.call_tool("browser_find", {"text": "row", "maxResults": asked})
            assert not got.is_error, text(got)
            assert (await ext.wait_for_request("page.find")).params["limit"] == sent
            ext.requests.clear()
        both = await mcp.call_tool("browser_find", {"text": "row", "maxResults": 3, "limit": 4})
        assert both.is_error and "limit or maxResults" in text(both)
        assert "page.find" not in ext.methods()


def test_js_literal_escapes_every_regex_character() -> None:
    """A name sent beside a regex matches itself literally, case-insensitively."""
    assert js_literal("a.b*(c)/[d]") == "/a\\.b\\*\\(c\\)\\/\\[d\\]/i"


async def test_snapshot_target_ref_and_depth_reach_page_snapshot(
        peers: Callable[..., Awaitable[FakePeer]], tools: Tools) -> None:
    """browser_snapshot takes target (Playwright MCP's name) or ref for a subtree and
    depth; differing target and ref, diff with a target and depth outside the outline are
    refused; a cursor call sends neither (the cursor carries them)."""
    async with tools() as mcp:
        ext = await peers(FakeExtension)
        schema = {t.name: t for t in (await mcp.list_tools()).tools}[
            "browser_snapshot"].input_schema["properties"]
        assert {"target", "ref", "depth", "mode", "cursor"} <= set(schema)
        for args, ref in (({"target": "e4", "depth": 1}, "e4"), ({"ref": "f1e3"}, "f1e3"),
                          ({"target": "e4", "ref": "e4"}, "e4")):
            ext.requests.clear()
            shown = await mcp.call_tool("browser_snapshot", args)
            assert not shown.is_error, text(shown)
            params = (await ext.wait_for_request("page.snapshot")).params
            assert params["ref"] == ref and params.get("depth") == args.get("depth"), params
            assert "### Page state" in text(shown)
        ext.requests.clear()
        for bad in ({"target": "e4", "ref": "e5"}, {"mode": "diff", "target": "e4"},
                    {"mode": "read", "depth": 2}, {"depth": -1}):
            refused = await mcp.call_tool("browser_snapshot", bad)
            assert refused.is_error and "BAD_REQUEST" in text(refused), bad
        assert "page.snapshot" not in ext.methods()
        await mcp.call_tool("browser_snapshot", {"cursor": "c1", "target": "e4", "depth": 2})
        params = (await ext.wait_for_request("page.snapshot")).params
        assert params["cursor"] == "c1" and params.get("ref") is None
        assert params.get("depth") is None
