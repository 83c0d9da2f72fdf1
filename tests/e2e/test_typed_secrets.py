"""Values the agent typed into a sensitive field are masked wherever they reappear in page
text (issue 13, item 7, the bridge's part: bridge/secrets.py). Page:
tests/e2e/pages/typed_echo.html."""

from __future__ import annotations

import pytest

from .conftest import Origins, Stack, ref_of

pytestmark = pytest.mark.browser

SECRET = "7391-Quux-Zed"
NICK = "Blue Falcon"


async def test_a_value_typed_into_a_password_field_is_masked_where_the_page_echoes_it(
        stack: Stack, origins: Origins) -> None:
    """Type into a password field and a plain one, save (the page echoes both into a div
    and its title and clears the fields): the snapshot shows the nickname and never the
    code; the page really holds the code (it was delivered)."""
    await stack.client.call("page.navigate", {"url": f"{origins.main}/typed_echo.html"})
    snap = await stack.snapshot()
    await stack.tab.type(ref_of(snap, "textbox", "Security code"), SECRET)
    await stack.tab.type(ref_of(snap, "textbox", "Nickname"), NICK)
    typed = await stack.snapshot()  # what an agent sees after typing (MCP: every action)
    assert SECRET not in typed
    await stack.tab.click(ref_of(typed, "button", "Save"))
    assert SECRET in await stack.page.text_content("#echo")  # the page did get it
    result = await stack.client.call("page.snapshot", {})
    assert SECRET not in result["snapshot"] and SECRET not in result["title"]
    assert f"Saved code •••••• for {NICK}" in result["snapshot"]
    read = await stack.client.call("page.snapshot", {"mode": "read"})
    assert SECRET not in read["snapshot"] and NICK in read["snapshot"]


async def test_a_secret_typed_and_submitted_without_a_snapshot_between_is_still_masked(
        stack: Stack, origins: Origins) -> None:
    """The SDK types the code and clicks Save with no snapshot in between: the extension's
    page.resolveTarget said the field is sensitive, so the echo is masked all the same."""
    await stack.client.call("page.navigate", {"url": f"{origins.main}/typed_echo.html"})
    snap = await stack.snapshot()
    await stack.tab.type(ref_of(snap, "textbox", "Security code"), SECRET)
    await stack.tab.type(ref_of(snap, "textbox", "Nickname"), NICK)
    await stack.tab.click(ref_of(snap, "button", "Save"))
    assert SECRET in await stack.page.text_content("#echo")  # the page did get it
    result = await stack.client.call("page.snapshot", {})
    assert SECRET not in result["snapshot"] and SECRET not in result["title"]
    assert NICK in result["snapshot"]
