"""A checkbox or radio painted over by its label (supervisor/labels.py): the input keeps its
ref, role, name and checked state in the snapshot, and a check or click on it that the input
cannot take itself clicks its shown label with trusted input, then reads the state back.

Real headless browsers against pages/pointer/checks.html, which records every change event
(the input, its state, ``isTrusted``) and every click. Its patterns: a 0×0 transparent
input in a wrapping label (Element UI), a visually-hidden input (``clip: rect(0 0 0 0)``,
1×1 px) with a ``<label for>`` styled as a button (Bootstrap), a segmented radio group of
0×0 inputs, visually-hidden radios with ``for`` labels, a native box under a styled span
inside its label, a custom element whose open shadow root holds a hidden input in a
wrapping label, an input with no label, and one whose page refuses every change. Before
the label route, each of the first six timed out ("The target stayed invisible") or was
refused ELEMENT_OBSCURED.
"""

from __future__ import annotations

from typing import Any

import pytest

from trustbridge.bridge.protocol import errors as E

from .conftest import Origins, Stack, ref_of
from .test_mcp_tabs import call, mcp_on, page_state


async def _changes(stack: Stack) -> list[dict[str, Any]]:
    return await stack.page.evaluate("window.changes")


async def _checked(stack: Stack, css: str) -> bool:
    return await stack.page.evaluate(f"document.querySelector({css!r}).checked")


async def _open(stack: Stack, origins: Origins) -> str:
    await stack.tab.goto(f"{origins.main}/pointer/checks.html")
    return await stack.snapshot()


async def test_the_snapshot_gives_hidden_inputs_refs_names_and_state(
        stack: Stack, origins: Origins) -> None:
    """Each hidden input is in the snapshot with its role, its label's name, a ref, and its
    checked state (the checked radios say so)."""
    snap = await _open(stack, origins)
    for role, name in [("checkbox", "Remember me"), ("checkbox", "Newsletter"),
                       ("radio", "Small"), ("radio", "Large"), ("radio", "Pro"),
                       ("checkbox", "Skinned box"), ("switch", "Wi-Fi")]:
        ref_of(snap, role, name)
    assert '- radio "Medium" [checked]' in snap and '- radio "Free" [checked]' in snap, snap


async def test_check_clicks_the_label_of_each_painted_pattern(
        stack: Stack, origins: Origins) -> None:
    """Tab.check on each pattern: the page saw one trusted change to checked on that input
    (the label's click activated it), the result says the label was clicked and why, and a
    second check changes nothing and clicks nothing."""
    snap = await _open(stack, origins)
    cases = [("checkbox", "Remember me", "remember", "zero-size"),
             ("checkbox", "Newsletter", "news", "covered"),
             ("radio", "Large", "size-l", "zero-size"),
             ("radio", "Pro", "plan-pro", "covered"),
             ("checkbox", "Skinned box", "skinned", "covered"),
             ("switch", "Wi-Fi", "wifi", "zero-size")]
    for role, name, input_id, why in cases:
        before = len(await _changes(stack))
        result = await stack.tab.check(ref_of(snap, role, name))
        assert result["changed"] is True and result["checked"] is True, result
        assert result["viaLabel"] == {"label": name, "why": why}, result
        assert result["inputPath"] == "trusted", result
        new = (await _changes(stack))[before:]
        assert [(c["id"], c["checked"], c["isTrusted"]) for c in new] == [
            (input_id, True, True)], (name, new)
    assert not await _checked(stack, "#size-m") and not await _checked(stack, "#plan-free")
    clicks = len(await stack.page.evaluate("window.clicks"))
    again = await stack.tab.check(ref_of(snap, "checkbox", "Remember me"))
    assert again["changed"] is False and "viaLabel" not in again, again
    assert len(await stack.page.evaluate("window.clicks")) == clicks


async def test_uncheck_and_click_go_through_the_label_too(
        stack: Stack, origins: Origins) -> None:
    """Unchecking a hidden checkbox clicks its label and reads unchecked back; a click on a
    hidden checkbox's ref toggles it through its label; a click on a hidden radio's ref
    selects it. Unchecking a radio is refused as Playwright refuses it, with nothing sent."""
    snap = await _open(stack, origins)
    news = ref_of(snap, "checkbox", "Newsletter")
    await stack.tab.check(news)
    result = await stack.tab.uncheck(news)
    assert result["checked"] is False and result["viaLabel"]["label"] == "Newsletter", result
    assert not await _checked(stack, "#news")
    clicked = await stack.tab.click(ref_of(snap, "checkbox", "Remember me"))
    assert clicked["viaLabel"]["label"] == "Remember me" and clicked["checked"] is True
    assert clicked["delivered"] is True, clicked  # the input got the label's click
    assert await _checked(stack, "#remember")
    small = await stack.tab.click(ref_of(snap, "radio", "Small"))
    assert small["checked"] is True and small["changed"] is True, small
    assert await _checked(stack, "#size-s") and not await _checked(stack, "#size-m")
    trusted = [(c["id"], c["checked"], c["isTrusted"]) for c in await _changes(stack)]
    assert trusted == [("news", True, True), ("news", False, True),
                       ("remember", True, True), ("size-s", True, True)], trusted
    clicks = len(await stack.page.evaluate("window.clicks"))
    with pytest.raises(E.TrustbridgeError, match="(?i)radio"):
        await stack.tab.uncheck(ref_of(snap, "radio", "Small"))
    assert len(await stack.page.evaluate("window.clicks")) == clicks


async def test_a_kit_label_that_sets_the_box_itself_is_a_delivered_click(
        stack: Stack, origins: Origins) -> None:
    """A kit's label handler cancels the label's click and sets the box by script: the
    input never gets a click, but the state read back changed, so the click is delivered
    (no "did not reach its target" warning beside "now checked")."""
    snap = await _open(stack, origins)
    result = await stack.tab.click(ref_of(snap, "checkbox", "Kit toggle"))
    assert result["viaLabel"] == {"label": "Kit toggle", "why": "covered"}, result
    assert result["changed"] is True and result["checked"] is True, result
    assert result["delivered"] is True, result
    assert await _checked(stack, "#kit")
    kit_clicks = [c for c in await stack.page.evaluate("window.clicks") if c["id"] == "kit"]
    assert kit_clicks == [], kit_clicks  # the proof is the state, not a click on the input


async def test_a_refused_change_is_an_error_never_a_success(
        stack: Stack, origins: Origins) -> None:
    """The page prevents the label's click from changing its hidden checkbox: the label was
    clicked (the page saw it), the state stayed unchecked, and the result is
    ELEMENT_VALUE_NOT_SET naming the label, not a success."""
    snap = await _open(stack, origins)
    with pytest.raises(E.ElementValueNotSet, match='label "Refuser" was clicked') as err:
        await stack.tab.check(ref_of(snap, "checkbox", "Refuser"))
    assert err.value.details["viaLabel"] == {"label": "Refuser", "why": "covered"}
    assert not await _checked(stack, "#refuser")
    assert any(c["tag"] == "label" and c["isTrusted"]
               for c in await stack.page.evaluate("window.clicks"))


async def test_mcp_fill_form_and_click_set_painted_controls(
        stack: Stack, origins: Origins) -> None:
    """browser_fill_form sets a 0×0 checkbox, a for-labelled visually-hidden checkbox and a
    segmented radio; browser_click toggles the shadow-root switch. The page saw a trusted
    change for each; each result says the label was clicked, and the page state shows them
    checked."""
    await stack.release()
    async with mcp_on(stack) as mcp:
        state = page_state(await call(mcp, "browser_navigate",
                                      url=f"{origins.main}/pointer/checks.html"))
        fields = [{"name": "Remember me", "type": "checkbox", "value": "true",
                   "target": ref_of(state, "checkbox", "Remember me")},
                  {"name": "Newsletter", "type": "checkbox", "value": "true",
                   "target": ref_of(state, "checkbox", "Newsletter")},
                  {"name": "Large", "type": "radio", "value": "true",
                   "target": ref_of(state, "radio", "Large")}]
        filled = await call(mcp, "browser_fill_form", fields=fields)
        assert 'clicked its label "Remember me" instead' in filled, filled
        assert 'clicked its label "Newsletter" instead' in filled, filled
        assert 'clicked its label "Large" instead' in filled, filled
        after = page_state(filled)
        for role, name in [("checkbox", "Remember me"), ("checkbox", "Newsletter"),
                           ("radio", "Large")]:
            assert f'- {role} "{name}" [checked]' in after, after
        clicked = await call(mcp, "browser_click", element="Wi-Fi",
                             ref=ref_of(after, "switch", "Wi-Fi"))
        assert 'clicked its label "Wi-Fi" instead' in clicked, clicked
        assert "the control is now checked" in clicked, clicked
        assert "delivered: false" not in clicked, clicked  # the input got the label's click
    got = [(c["id"], c["checked"], c["isTrusted"]) for c in await _changes(stack)]
    assert got == [("remember", True, True), ("news", True, True), ("size-l", True, True),
                   ("wifi", True, True)], got
