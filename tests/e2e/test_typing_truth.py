"""Typing follows the page and says what happened: multi-box codes whose page moves the
focus box to box are typed as a person types them and read back where the keys went; a
date-like field typed key by key gets the intended value or an error, never a wrong value
reported done; a page script that moves the focus away mid-fill stops the typing before
another field is damaged; a page that listens only to key events sees a fill; a focusable
element that is not a text field gets the keys instead of a refusal.

Pages: tests/e2e/pages/typing/*.html. Each test checks what the page recorded.
"""

from __future__ import annotations

import pytest

from trustbridge.bridge.protocol import errors as E

from .conftest import Origins, Stack, ref_of
from .test_mcp_tabs import call, mcp_on, page_state

pytestmark = pytest.mark.browser

DRAFT = "Dear team, the launch moves to Friday."


async def _open(stack: Stack, origins: Origins, page: str) -> str:
    await stack.client.call("page.navigate", {"url": f"{origins.main}/typing/{page}"})
    return await stack.snapshot()


async def _values(stack: Stack, css: str) -> list[str]:
    return await stack.page.eval_on_selector_all(css, "els => els.map(e => e.value)")


# -- multi-box codes -------------------------------------------------------------------


async def test_typing_a_code_follows_the_focus_box_to_box(stack: Stack, origins: Origins) -> None:
    """type into the first box of a six-box code whose page moves the focus after each
    digit: every digit lands in its box (trusted), the page accepts the code, and the
    answer is done, naming the boxes the keys went into, not "holds 1 of 6 characters"."""
    snap = await _open(stack, origins, "otp.html")
    result = await stack.tab.type(ref_of(snap, "textbox", "Digit 1"), "482913")
    assert result["done"] is True
    assert await _values(stack, "[aria-label^=Digit]") == list("482913")
    assert await stack.page.text_content("#status") == "accepted"
    log = await stack.page.evaluate("window.__log")
    assert [e["box"] for e in log] == list(range(6)) and all(e["trusted"] for e in log)
    assert result["focusFollowed"]["fields"] == 6
    assert "Digit 6" in result["focusFollowed"]["names"]


async def test_filling_a_code_types_it_box_to_box(stack: Stack, origins: Origins) -> None:
    """fill (browser_type without slowly) of a value longer than the box's maxlength is
    typed key by key, following the page's focus: the code is accepted and the fill done;
    a page that spreads one edit over its boxes itself is read back over those boxes."""
    snap = await _open(stack, origins, "otp.html")
    result = await stack.tab.fill(ref_of(snap, "textbox", "Digit 1"), "482913")
    assert result["done"] is True
    assert await stack.page.text_content("#status") == "accepted"
    assert all(e["trusted"] for e in await stack.page.evaluate("window.__log"))
    result = await stack.tab.fill(ref_of(snap, "textbox", "Spread 1"), "7351")
    assert result["done"] is True
    assert await _values(stack, ".spread") == list("7351")
    assert await stack.page.text_content("#spread-status") == "accepted"


# -- focus thief -----------------------------------------------------------------------


@pytest.mark.parametrize("field", ["Email", "City", "Notes"])
async def test_a_focus_thief_gets_no_key_and_the_error_names_it(
        stack: Stack, origins: Origins, field: str) -> None:
    """The page moves the focus to a draft textarea after the first character (Email), a
    task after the focus (City), or in its focus handler (Notes), every time: fill and type
    stop before the draft gets a key; the draft keeps a person's text; the error says where
    the focus went."""
    snap = await _open(stack, origins, "thief.html")
    ref = ref_of(snap, "textbox", field)
    for verb in (stack.tab.fill, stack.tab.type):
        with pytest.raises(E.ElementValueNotSet) as info:
            await verb(ref, "ada@example.com")
        assert await stack.page.input_value("#draft") == DRAFT
        assert info.value.cause == "focusMoved", info.value
        assert info.value.details["focusedName"] == "Draft"
        assert "Draft" in info.value.message
        log = await stack.page.evaluate("window.__log")
        assert [e for e in log if e["field"] == "draft"] == []
        await stack.page.evaluate("document.activeElement.blur()")


async def test_a_focus_thief_that_acts_once_is_answered_by_focusing_again(
        stack: Stack, origins: Origins) -> None:
    """The page moves the focus to the draft in the handler of the first keydown (Zip,
    once): that key is cancelled before it changes anything, the target is focused again
    (as a person clicks back into it) and takes the text; the draft never gets a key; the
    result says so (valueCheck "refocused")."""
    snap = await _open(stack, origins, "thief.html")
    result = await stack.tab.type(ref_of(snap, "textbox", "Zip"), "ada@example.com")
    assert result["done"] is True and result["valueCheck"].startswith("refocused"), result
    assert await stack.page.input_value("#zip") == "ada@example.com"
    assert await stack.page.input_value("#draft") == DRAFT
    log = await stack.page.evaluate("window.__log")
    assert [e for e in log if e["field"] == "draft"] == []


# -- key listeners ---------------------------------------------------------------------


async def test_fill_reaches_a_page_that_listens_to_keys_only(
        stack: Stack, origins: Origins) -> None:
    """A filter that runs on keyup only: after fill the list shows what was filled, the
    page saw a trusted keyup with the whole value in the field."""
    snap = await _open(stack, origins, "keyup.html")
    ref = ref_of(snap, "textbox", "Filter fruit")
    await stack.tab.fill(ref, "berry")
    assert await stack.page.text_content("#shown") == "1 shown"
    keyups = await stack.page.evaluate("window.__keyups")
    assert keyups and all(k["trusted"] for k in keyups)
    assert keyups[-1]["value"] == "berry"
    await stack.tab.fill(ref, "an")
    assert await stack.page.text_content("#shown") == "1 shown"
    assert await stack.page.input_value("#q") == "an"


# -- focusable elements that are not text fields -----------------------------------------


async def test_keys_go_to_a_focusable_surface_that_is_not_a_field(
        stack: Stack, origins: Origins) -> None:
    """type into a canvas (role=application, tabindex=0) and a read-only terminal surface
    sends the keys there (trusted) and says there is no value to read back, instead of
    ELEMENT_NOT_EDITABLE; fill still refuses (it promises a value)."""
    snap = await _open(stack, origins, "canvas.html")
    result = await stack.tab.type(ref_of(snap, "application", "Game"), "wasd")
    assert result["done"] is True and result["keysOnly"] is True
    keys = await stack.page.evaluate("window.__keys.game")
    assert [k["key"] for k in keys] == list("wasd") and all(k["trusted"] for k in keys)
    result = await stack.tab.type(ref_of(snap, "textbox", "Terminal"), "ls -l\n")
    assert result["keysOnly"] is True
    keys = await stack.page.evaluate("window.__keys.term")
    assert [k["key"] for k in keys] == [*"ls -l", "Enter"]
    assert await stack.page.text_content("#term") == "ls -l"
    with pytest.raises(E.ElementNotEditable):
        await stack.tab.fill(ref_of(snap, "application", "Game"), "x")
    assert len(await stack.page.evaluate("window.__keys.game")) == 4


# -- date-like fields typed key by key -----------------------------------------------------


async def test_typing_a_date_sets_that_date_or_fails(stack: Stack, origins: Origins) -> None:
    """type (key by key) of YYYY-MM-DD into <input type=date> sets that date (the keys of
    each segment, trusted), never 40315-02-02 reported done; a time is typed and checked;
    a month / datetime-local is set where keys can set it and refused where not."""
    snap = await _open(stack, origins, "dates.html")
    result = await stack.tab.type(ref_of(snap, "textbox", "Start date"), "2024-03-15")
    assert result["done"] is True
    assert await stack.page.input_value("#date") == "2024-03-15"
    result = await stack.tab.type(ref_of(snap, "textbox", "Start time"), "13:45")
    assert await stack.page.input_value("#time") == "13:45"
    changes = await stack.page.evaluate("window.__changes")
    assert changes and all(c["trusted"] for c in changes)
    for label, css, value in (("Start month", "#month", "2024-05"),
                              ("Meeting", "#local", "2024-05-06T13:45")):
        refs = [line.split("[ref=")[1].split("]")[0] for line in snap.splitlines()
                if f'"{label}"' in line and "[ref=" in line]
        try:
            await stack.tab.type(refs[0], value)
        except E.TrustedInputUnavailable:
            assert await stack.page.input_value(css) == ""
        else:
            assert await stack.page.input_value(css) == value


# -- what browser_type says ------------------------------------------------------------------


async def test_browser_type_says_where_the_keys_went(stack: Stack, origins: Origins) -> None:
    """Through the MCP tool: slowly into a six-box code is done with a note naming the
    boxes; slowly into a canvas says the keys were sent and there is no value to read."""
    async with mcp_on(stack) as mcp:
        state = page_state(await call(mcp, "browser_navigate",
                                      url=f"{origins.main}/typing/otp.html"))
        typed = await call(mcp, "browser_type", element="Digit 1", text="482913",
                           slowly=True, ref=ref_of(state, "textbox", "Digit 1"))
        assert "with trusted input" in typed and "went into 6 fields" in typed, typed
        state = page_state(await call(mcp, "browser_navigate",
                                      url=f"{origins.main}/typing/canvas.html"))
        sent = await call(mcp, "browser_type", element="Game", text="wasd", slowly=True,
                          ref=ref_of(state, "application", "Game"))
        assert "Sent the keys of 4 characters" in sent and "no value to read back" in sent
    page = next(p for p in stack.supervisor.context.pages if p.url.endswith("canvas.html"))
    keys = await page.evaluate("window.__keys.game")
    assert [k["key"] for k in keys] == list("wasd") and all(k["trusted"] for k in keys)
