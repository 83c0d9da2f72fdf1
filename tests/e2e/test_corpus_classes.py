"""Bug classes the differential corpus found (scripts/corpus_diff.py, docs/benchmarks/corpus.md):
pages where Playwright MCP passed and trustbridge did not. Each test is a page of our own
reproducing the class; it checks what the page saw.

- A field the page formats as it is typed (an input mask: IMask, Cleave, phone and card
  fields) took every key, but the read-back called it ELEMENT_VALUE_NOT_SET
  ("rewritten"): an error for an action that worked (corpus page lib:imask_phone).

Page: tests/e2e/pages/corpus_classes/.
"""

from __future__ import annotations

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
