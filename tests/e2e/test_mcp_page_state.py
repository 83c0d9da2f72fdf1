"""The page state an MCP input tool answers with is the page after the action (issue 18:
it comes back with the action, ``snapshotAfter``): what the page's own handlers changed,
synchronously or in a microtask, is in it; a typed secret the page echoes is masked; a
click that loads another document shows that document, once loaded. Real headless browser, the MCP server in-process
on the stack's bridge (tests/e2e/pages/page_state)."""

from __future__ import annotations

from .conftest import Origins, Stack, ref_of, wait_until
from .test_mcp_tabs import call, mcp_on, page_state

SECRET = "correct-horse-42"


async def _open(stack: Stack, mcp: object, origins: Origins) -> str:
    text = await call(mcp, "browser_navigate", url=f"{origins.main}/page_state/form.html")
    await wait_until(lambda: any(p.url.endswith("/page_state/form.html")
                                 for p in stack.supervisor.context.pages))
    return page_state(text)


async def test_a_click_s_page_state_shows_what_its_handlers_changed(
        stack: Stack, origins: Origins) -> None:
    """A handler that writes the status at once, then one that writes it in a microtask:
    each click's page state has the new text, and the page counted one click each."""
    async with mcp_on(stack) as mcp:
        state = await _open(stack, mcp, origins)
        clicked = await call(mcp, "browser_click", element="Count",
                             ref=ref_of(state, "button", "Count"))
        assert "with trusted input" in clicked
        assert "Clicked 1" in page_state(clicked), clicked
        saved = await call(mcp, "browser_click", element="Save",
                           ref=ref_of(page_state(clicked), "button", "Save"))
        assert "Saved in a microtask" in page_state(saved), saved
    page = next(p for p in stack.supervisor.context.pages if "page_state" in p.url)
    assert await page.evaluate("window.clicks") == 1


async def test_typing_and_selecting_show_the_page_s_echo(stack: Stack, origins: Origins) -> None:
    """browser_type and browser_select_option: the page's input and change handlers'
    lines are in the page state, with the field's new value."""
    async with mcp_on(stack) as mcp:
        state = await _open(stack, mcp, origins)
        typed = await call(mcp, "browser_type", element="Search", text="invoice",
                           ref=ref_of(state, "textbox", "Search"))
        assert "Echo: invoice" in page_state(typed), typed
        chosen = await call(mcp, "browser_select_option", element="Owner", values=["Bob"],
                            ref=ref_of(page_state(typed), "combobox", "Owner"))
        assert "Owner is Bob" in page_state(chosen), chosen


async def test_a_secret_the_page_echoes_is_masked_in_the_page_state(
        stack: Stack, origins: Origins) -> None:
    """A password typed with browser_type: the page writes it into a paragraph; the page
    state right after never shows it."""
    async with mcp_on(stack) as mcp:
        state = await _open(stack, mcp, origins)
        typed = await call(mcp, "browser_type", element="Password", text=SECRET,
                           ref=ref_of(state, "textbox", "Password"))
        assert SECRET not in typed, typed
        assert "You typed ••••••" in page_state(typed), typed
    page = next(p for p in stack.supervisor.context.pages if "page_state" in p.url)
    assert await page.evaluate("document.getElementById('pw').value") == SECRET


async def test_a_click_that_loads_another_document_shows_that_document(
        stack: Stack, origins: Origins) -> None:
    """A link to next.html: the page state after the click is the next page's, taken once
    it loaded (not the old document, nor a page half loaded)."""
    async with mcp_on(stack) as mcp:
        state = await _open(stack, mcp, origins)
        clicked = await call(mcp, "browser_click", element="Next page",
                             ref=ref_of(state, "link", "Next page"))
        shown = page_state(clicked)
        assert "The next page" in shown and "Page state after an action" not in shown, clicked

