"""Bug classes the differential corpus found (scripts/corpus_diff.py, docs/benchmarks/corpus.md):
pages where Playwright MCP passed and trustbridge did not. Each test is a page of our own
reproducing the class; it checks what the page saw.

- A field the page formats as it is typed (an input mask: IMask, Cleave, phone and card
  fields) took every key, but the read-back called it ELEMENT_VALUE_NOT_SET
  ("rewritten"): an error for an action that worked (corpus page lib:imask_phone).

Page: tests/e2e/pages/corpus_classes/.
"""

from __future__ import annotations

import re

import pytest

from trustbridge.bridge.protocol import errors as E

from .conftest import Origins, Stack, ref_of

pytestmark = pytest.mark.browser


async def test_a_masked_field_that_kept_every_typed_character_is_done(
        stack: Stack, origins: Origins) -> None:
    """type (key by key) and fill into fields a mask reformats: done, the result says the
    page formatted the value, the page saw trusted keys only; a maxlength that dropped
    characters is still ELEMENT_VALUE_NOT_SET ("truncated")."""
    tab = stack.tab
    await tab.goto(f"{origins.main}/corpus_classes/masked.html")
    snap = await tab.snapshot()
    result = await tab.type(ref_of(snap, "textbox", "Phone"), "5551234567")
    assert result["done"] is True
    assert result["valueCheck"].startswith("formatted"), result
    assert await stack.page.input_value("#phone") == "(555) 123-4567"
    seen = await stack.page.evaluate("() => window.seen")
    assert seen["untrusted"] == 0 and seen["keys"] >= 10, seen
    result = await tab.fill(ref_of(snap, "textbox", "Card"), "4111111111111111")
    assert result["done"] is True and result["valueCheck"].startswith("formatted"), result
    assert await stack.page.input_value("#card") == "4111 1111 1111 1111"
    with pytest.raises(E.ElementValueNotSet) as info:
        await tab.type(ref_of(snap, "textbox", "Pin"), "123456")
    assert info.value.cause == "truncated"
    assert await stack.page.input_value("#pin") == "1234"


async def test_a_field_named_only_by_its_placeholder_is_named_and_typed_into(
        stack: Stack, origins: Origins) -> None:
    """An input, a textarea and an ARIA textbox with no label but a placeholder are listed
    with the placeholder as their name (as Chromium's accessibility tree names them), so a
    client finds them by name; a field with a name of its own keeps it (corpus page
    placeholder_input)."""
    tab = stack.tab
    await tab.goto(f"{origins.main}/corpus_classes/placeholder.html")
    snap = await tab.snapshot()
    assert 'textbox "Real name"' in snap and '"Not the name"' not in snap, snap
    await tab.type(ref_of(snap, "textbox", "Email address"), "ada@example.org")
    await tab.fill(ref_of(snap, "textbox", "Your message"), "hi")
    ref_of(snap, "textbox", "Write a caption")
    assert await stack.page.input_value("#email") == "ada@example.org"
    assert await stack.page.input_value("#msg") == "hi"
    seen = await stack.page.evaluate("() => window.seen")
    assert seen["untrusted"] == 0 and seen["keys"] >= 15, seen


async def test_options_of_a_select_a_widget_replaced_are_the_widgets(
        stack: Stack, origins: Origins) -> None:
    """A native select clipped to nothing behind a widget of the page's own (tom-select,
    Choices) lists no options, so the option a client finds by name is the widget's, and
    clicking it changes what the person sees (before: the hidden select's option came first;
    a click on it changed the hidden select only). A transparent select laid over its own
    box and a plain select keep their option refs (corpus pages lib:tom_select,
    lib:choices_select)."""
    tab = stack.tab
    await tab.goto(f"{origins.main}/corpus_classes/replaced_select.html")
    snap = await tab.snapshot()
    assert "3 options of a select hidden" in snap, snap
    ref_of(snap, "option", "Large")
    ref_of(snap, "option", "Two")
    await tab.click(ref_of(snap, "combobox", "Framework"))
    snap = await tab.snapshot()
    await tab.click(ref_of(snap, "option", "Rails"))
    seen = await stack.page.evaluate("() => window.seen")
    assert seen == {"widget": "Rails", "untrusted": 0}, seen
    assert await stack.page.input_value("#fw") == "Rails"
    hidden = re.findall(r'- combobox \[ref=(e\d+)\]', snap)  # the hidden select (no name)
    assert len(hidden) == 1, snap
    await tab.select(hidden[0], ["Django"])  # still settable by its options' values
    assert await stack.page.input_value("#fw") == "Django"


async def test_an_element_labelled_by_itself_and_a_label_has_both_in_its_name(
        stack: Stack, origins: Origins) -> None:
    """aria-labelledby="label self" names the element with the label's text and its own
    content ("Assignee Wade"), as Chromium's accessibility tree and Playwright MCP name it;
    a labelledby without itself keeps the label's text only (corpus page
    lib:headless_listbox, agreement check)."""
    tab = stack.tab
    await tab.goto(f"{origins.main}/corpus_classes/self_labelled.html")
    snap = await tab.snapshot()
    ref_of(snap, "button", "Assignee")  # the second button: the label only
    await tab.click(ref_of(snap, "button", "Assignee Wade"))
    assert await stack.page.evaluate("() => window.seen") == [True]


async def test_a_page_that_moves_the_focus_once_gets_the_text_on_a_second_focus(
        stack: Stack, origins: Origins) -> None:
    """The page moves the focus to a draft the first time the target gets it: fill (and
    type) focus the target again, as a person clicks back, and the text lands there; the
    draft is untouched and the result says so (valueCheck "refocused"). A page that takes
    the focus every time still fails focusMoved, the draft untouched (corpus page
    focus_thief, where Playwright MCP's fill passed)."""
    tab = stack.tab
    await tab.goto(f"{origins.main}/corpus_classes/focus_once.html")
    snap = await tab.snapshot()
    result = await tab.fill(ref_of(snap, "textbox", "Title"), "Hello")
    assert result["done"] is True and result["valueCheck"].startswith("refocused"), result
    assert await stack.page.input_value("#t") == "Hello"
    assert await stack.page.input_value("#d") == "my unsaved draft"
    with pytest.raises(E.ElementValueNotSet) as info:
        await tab.type(ref_of(snap, "textbox", "Always"), "abc")
    assert info.value.cause == "focusMoved"
    assert await stack.page.input_value("#a") == ""
    assert await stack.page.input_value("#d") == "my unsaved draft"
    seen = await stack.page.evaluate("() => window.seen")
    assert seen["untrusted"] == 0 and seen["keys"] >= 1, seen
