"""page.find end to end (issue 14 item 5): find by role, name, text, regex, within a ref,
inside an iframe and inside a closed shadow root, then act on the ref it gave; the last
row of a 60,000-row table found and clicked. Also MCP browser_find and browser_snapshot
{target, depth} on a real browser.

Pages: tests/e2e/pages/find/. Every test checks what the page recorded (its click log,
``event.isTrusted``) next to what find answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import re

import pytest

from trustbridge.bridge.protocol import errors as E

from .conftest import Origins, Stack

pytestmark = pytest.mark.browser


BIG_TABLE_BUDGET_MS = 180_000
"""Budget of each step on the 60,000-row table (its load, an SDK find): building and
walking it takes seconds on an idle machine and over 30 s at a load average of 40 (seen
on the 2-core test machine); these tests check what find answers, not how fast."""


async def _open(stack: Stack, origins: Origins, page: str = "main.html",
                other: bool = False, timeout_ms: int = 30_000) -> None:
    query = f"?other={origins.other_port}" if other else ""
    await stack.client.call("page.navigate", {"url": f"{origins.main}/find/{page}{query}",
                                              "timeoutMs": timeout_ms})
    if page == "main.html":
        # The child frames' content scripts must be up before a find can reach them.
        for _ in range(200):
            found = await stack.tab.find(text="Frame action")
            if len(found["matches"]) == (2 if other else 1):
                return
            await asyncio.sleep(0.05)
        raise AssertionError("the child frame never answered")


async def _clicks(stack: Stack, frame=None) -> list[dict]:
    return await (frame or stack.page).evaluate("window.__clicks")


def _one(found: dict) -> dict:
    assert len(found["matches"]) == 1, found["text"]
    return found["matches"][0]


async def test_find_by_role_lists_buttons_in_order_with_refs(stack: Stack, origins: Origins) -> None:
    """role=button gives the visible buttons in document order, each with a ref, under its
    ancestors; the hidden duplicate is left out; a click on a found ref is trusted."""
    await _open(stack, origins)
    found = await stack.tab.find(role="button", limit=50)
    lines = [m["line"] for m in found["matches"]]
    names = [re.match(r'- button "([^"]*)"', line)[1] for line in lines]
    assert names[:3] == ["Save draft", "Publish", "Settings gear"]
    assert names.count("Open") == 4 and "Closed gem" in names and "Frame action" in names
    assert names.count("Save draft") == 1  # the display:none one is not shown
    assert all(m["ref"] for m in found["matches"]) and not found["truncated"]
    publish = next(m for m in found["matches"] if '"Publish"' in m["line"])
    assert len(publish["ancestry"]) == 1
    assert publish["ancestry"][0].startswith('- navigation "Toolbar"')
    assert '- navigation "Toolbar"' in found["text"]
    result = await stack.tab.click(publish["ref"])
    assert result["inputPath"] == "trusted"
    assert await _clicks(stack) == [{"id": "publish", "trusted": True}]


async def test_find_by_name_and_by_text_and_by_regex(stack: Stack, origins: Origins) -> None:
    """name matches an aria-label; text matches shown text (a plain text line has no
    ref); a regex with flags matches names; a limit cuts and says so."""
    await _open(stack, origins)
    gear = _one(await stack.tab.find(name="settings GEAR"))
    assert gear["line"].startswith('- button "Settings gear"') and gear["ref"]
    support = _one(await stack.tab.find(text="help desk"))
    assert support["ref"] is None and "help desk" in support["line"]
    orders = await stack.tab.find(role="button", name=r"/^open$/i", regex=True, limit=2)
    assert len(orders["matches"]) == 2 and orders["truncated"]
    assert "more matches than the limit of 2" in orders["text"]
    draft = _one(await stack.tab.find(text="save DRAFT"))
    assert draft["line"].startswith('- button "Save draft"')
    await stack.tab.click(draft["ref"])
    assert await _clicks(stack) == [{"id": "save", "trusted": True}]
    label = _one(await stack.tab.find(role="textbox", name="email"))
    assert label["line"].startswith('- textbox "Email"')
    with pytest.raises(E.BadRequest):
        await stack.tab.find(name="(", regex=True)
    with pytest.raises(E.BadRequest):
        await stack.tab.find()


async def test_find_neither_shows_nor_matches_a_secret_fields_value(
        stack: Stack, origins: Origins) -> None:
    """A password's value echoed by the page is masked in find's lines, and searching
    for it finds nothing (find cannot be used to probe a secret)."""
    await _open(stack, origins)
    for query in ({"text": "Secret!pw"}, {"text": "/Hunter2/", "regex": True},
                  {"name": "Hunter2"}):
        found = await stack.tab.find(**query)
        assert found["matches"] == [], (query, found["text"])
    echo = _one(await stack.tab.find(text="echo of"))
    assert "Secret" not in echo["line"] and "••••••" in echo["line"]
    field = _one(await stack.tab.find(role="textbox", name="password"))
    assert "Secret" not in field["line"] and "Hunter2" not in found["text"]


async def test_find_within_a_ref_searches_only_its_subtree(stack: Stack, origins: Origins) -> None:
    """within a found region's ref: only its Open buttons; clicking one hits that row."""
    await _open(stack, origins)
    archive = _one(await stack.tab.find(role="region", name="Archive"))
    inside = await stack.tab.find(role="button", name="open", within=archive["ref"])
    match = _one(inside)
    assert '- region "Archive"' in match["ancestry"][0]
    await stack.tab.click(match["ref"])
    assert await _clicks(stack) == [{"id": "o2001", "trusted": True}]
    texts = await stack.tab.find(text="order", within=archive["ref"])
    assert [m["line"] for m in texts["matches"]] == [
        next(m["line"] for m in texts["matches"] if "Order 2001" in m["line"])]
    named = await stack.tab.find(name="open", within=archive["ref"])
    assert [m["ref"] for m in named["matches"]] == [match["ref"]]
    with pytest.raises(E.RefNotFound):
        await stack.tab.find(role="button", within="e99999")


async def test_find_inside_iframes_and_click_it(stack: Stack, origins: Origins) -> None:
    """Matches in a same-origin and a cross-origin child frame come in document order,
    each with its frame's ref prefix under its iframe line; a click on the cross-origin
    one reaches that document as trusted input, and nothing else."""
    await _open(stack, origins, other=True)
    found = await stack.tab.find(role="button", name="Frame action")
    near, far = found["matches"]
    assert re.fullmatch(r"f\d+e\d+", near["ref"]) and re.fullmatch(r"f\d+e\d+", far["ref"])
    assert near["ref"].split("e")[0] != far["ref"].split("e")[0]
    assert any(a.startswith('- iframe "Child frame"') for a in near["ancestry"])
    assert any(a.startswith('- iframe "Other origin"') for a in far["ancestry"])
    await stack.tab.click(far["ref"])
    frames = {f.url.split("/find/")[0]: f for f in stack.page.frames if f.url.endswith("/find/child.html")}
    assert await _clicks(stack, frames[origins.other]) == [{"id": "inner", "trusted": True}]
    assert await _clicks(stack, frames[origins.main]) == []
    assert await _clicks(stack) == []


async def test_find_inside_a_closed_shadow_root_and_click_it(stack: Stack, origins: Origins) -> None:
    """A button in a closed shadow root is found (marked closed-shadow); its ref takes the
    hit-tested coordinate click (allowCoordinates) and the page sees a trusted click."""
    await _open(stack, origins)
    match = _one(await stack.tab.find(name="closed gem"))
    assert "[closed-shadow]" in match["line"]
    assert any('- group "Secret widget"' in a for a in match["ancestry"])
    with pytest.raises(E.ClosedShadowRoot):
        await stack.tab.click(match["ref"])
    result = await stack.tab.act({"kind": "click"}, match["ref"], allow_coordinates=True)
    assert result["inputPath"] == "trusted-coordinates"
    assert await _clicks(stack) == [{"id": "hidden-gem", "trusted": True}]


@pytest.mark.timeout(600)
async def test_last_row_of_a_60000_row_table_found_and_clicked(stack: Stack, origins: Origins) -> None:
    """The last row's button of a 60,000-row table is found by role and name (no full
    snapshot) and clicked; the page records row 60000, trusted."""
    await _open(stack, origins, "table.html", timeout_ms=BIG_TABLE_BUDGET_MS)
    # A generous budget: speed is measured by scripts/bench_find.py, not asserted here.
    found = await stack.tab.find(role="button", name="Delete row 60000", timeout_ms=60_000)
    match = _one(found)
    assert not found["truncated"]
    assert match["line"].startswith('- button "Delete row 60000"')
    assert any(a.startswith('- table "Rows"') for a in match["ancestry"])
    by_text = _one(await stack.tab.find(text="Item 60000", timeout_ms=60_000))
    assert "Item 60000" in by_text["line"]
    await stack.tab.click(match["ref"])
    assert await _clicks(stack) == [{"row": "60000", "trusted": True}]


# -- MCP on a real browser ---------------------------------------------------------------


@contextlib.asynccontextmanager
async def _mcp(stack: Stack):
    """An in-process MCP client of a server on this test's bridge (no embedded browser)."""
    from mcp import Client

    from trustbridge.bridge.mcp import Connection, build_server

    await stack.release()  # the stack's client opened the page: its session owns the tab
    conn = Connection(url=stack.server.url, token=stack.server.token, embedded=False)
    try:
        async with Client(build_server(conn)) as client:
            yield client
    finally:
        await conn.close()


def _text(result) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


@pytest.mark.timeout(600)
async def test_mcp_browser_find_then_click_the_last_row(stack: Stack, origins: Origins) -> None:
    """browser_find names the last row's button of the 60,000-row table with a ref under
    its table line; browser_click on that ref is a trusted click the page records.

    browser_find walks the page under the tool's fixed time budget (FindParams.timeoutMs,
    3 s), which a loaded machine can run out of on 60,000 rows. The test asserts the
    outcome either way, not the machine's speed: the match with its ref, or an answer
    that says the search was cut short (never a bare "no match"); then the click goes to
    the row's ref (from an SDK find with a generous budget when the tool's was cut short).
    """
    await _open(stack, origins, "table.html", timeout_ms=BIG_TABLE_BUDGET_MS)
    sdk_ref = _one(await stack.tab.find(role="button", name="Delete row 60000",
                                        timeout_ms=60_000))["ref"]
    async with _mcp(stack) as mcp:
        found = await mcp.call_tool("browser_find", {"role": "button",
                                                     "regex": "/^delete row 60000$/i"})
        shown = _text(found)
        assert not found.is_error, shown
        refs = re.findall(r'- button "Delete row 60000" \[ref=(e\d+)\]', shown)
        if refs:
            assert refs == [sdk_ref], shown
            assert '- table "Rows"' in shown and "1 match for role 'button'" in shown
        else:  # the walk ran out of its budget on this machine: the answer must say so
            assert "No element matches" in shown and "cut short" in shown, shown
        clicked = await mcp.call_tool("browser_click", {"ref": sdk_ref, "element": "last row"})
        assert not clicked.is_error, _text(clicked)
        assert "with trusted input" in _text(clicked)
    assert await _clicks(stack) == [{"row": "60000", "trusted": True}]


async def test_mcp_find_in_a_frame_and_snapshot_of_a_target_to_a_depth(
        stack: Stack, origins: Origins) -> None:
    """browser_find reaches the child frame's button (an f-prefixed ref) and the click
    lands there; browser_snapshot {target} shows only that region's subtree, and with
    depth 0 only its own line and the mark of the cut."""
    await _open(stack, origins)
    async with _mcp(stack) as mcp:
        found = _text(await mcp.call_tool("browser_find", {"text": "frame action"}))
        (ref,) = re.findall(r'- button "Frame action" \[ref=(f\d+e\d+)\]', found)
        assert not (await mcp.call_tool("browser_click", {"ref": ref})).is_error
        region = _text(await mcp.call_tool("browser_find", {"role": "region",
                                                            "name": "Orders"}))
        (orders,) = re.findall(r'- region "Orders" \[ref=(e\d+)\]', region)
        sub = await mcp.call_tool("browser_snapshot", {"target": orders})
        part = _text(sub).split("- Page Snapshot:")[1]
        assert not sub.is_error and '- region "Orders"' in part
        assert "Order 1003" in part and "Order 2001" not in part and "Publish" not in part
        cut = await mcp.call_tool("browser_snapshot", {"ref": orders, "depth": 0})
        part = _text(cut).split("- Page Snapshot:")[1]
        assert not cut.is_error and '- region "Orders"' in part
        assert "Order 1001" not in part and "- …" in part, part
    child = next(f for f in stack.page.frames if f.url.endswith("/find/child.html"))
    assert await _clicks(stack, child) == [{"id": "inner", "trusted": True}]
