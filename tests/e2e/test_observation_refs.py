"""Refs on everything the snapshot prints (issue 14 items 1-4, 6, 7), end to end.

Pages: tests/e2e/pages/obs14/*.html. Every test acts through a ref of the new lines and
checks what the page recorded (``event.isTrusted``, its own order, value and counters).
"""

from __future__ import annotations

import asyncio
import re

import pytest

from trustbridge.bridge.protocol import errors as E

from .conftest import Origins, Stack, ref_of

pytestmark = pytest.mark.browser

REF = r"\[ref=((?:f\d+)?e\d+)\]"


async def _open(stack: Stack, origins: Origins, page: str) -> str:
    await stack.client.call("page.navigate", {"url": f"{origins.main}/obs14/{page}"})
    return await stack.snapshot()


def _ref(snapshot: str, pattern: str) -> str:
    """The ref of the one line matching ``pattern`` (a regex of the line after ``- ``)."""
    found = [m.group(1) for ln in snapshot.splitlines()
             if re.match(rf"\s*- {pattern}", ln) and (m := re.search(REF, ln))]
    assert len(found) == 1, f"expected one line {pattern!r}, found {found} in:\n{snapshot}"
    return found[0]


async def _events(stack: Stack) -> list[dict]:
    return await stack.page.evaluate("window.__events")


async def test_every_element_line_has_a_ref_and_text_lines_do_not(stack: Stack,
                                                                  origins: Origins) -> None:
    """Headings, list items, rows, cells, column headers, paragraphs carry refs; `- text:`
    lines carry none; a row named by its cells prints no name."""
    snap = await _open(stack, origins, "controls.html")
    for ln in snap.splitlines():
        body = ln.strip()
        if body.startswith("- text:") or body.startswith("#"):
            assert "[ref=" not in body, ln
        else:
            assert re.search(REF, body), f"no ref on {ln!r} in:\n{snap}"
    ref_of(snap, "heading", "Controls")
    ref_of(snap, "columnheader", "Score")
    ref_of(snap, "cell", "Ada")
    rows = [ln.strip() for ln in snap.splitlines() if ln.strip().startswith("- row")]
    assert rows and all(re.fullmatch(rf"- row {REF}", r) for r in rows), rows


async def test_sortable_list_of_plain_items_reordered_by_a_trusted_drag(
        stack: Stack, origins: Origins) -> None:
    """Plain <li>s whose listeners sit on their <ul> get refs; a drag between two of them
    is trusted input the list's own handlers act on."""
    snap = await _open(stack, origins, "sortable.html")
    alpha = _ref(snap, r"listitem \[ref=\w+\]: Alpha$")
    charlie = _ref(snap, r"listitem \[ref=\w+\]: Charlie$")
    result = await stack.act(alpha, kind="drag", to=charlie)
    assert result["inputPath"] == "trusted"
    assert await stack.page.evaluate("window.__order()") == ["Bravo", "Charlie", "Alpha", "Delta"]
    events = [e for e in await _events(stack) if e["type"] in ("mousedown", "mouseup")]
    assert [(e["type"], e["item"]) for e in events] == [("mousedown", "Alpha"), ("mouseup", "Charlie")]
    assert all(e["trusted"] for e in events)


async def test_autocomplete_suggestion_picked_from_plain_items(stack: Stack,
                                                               origins: Origins) -> None:
    """Suggestions rendered as plain <li>s after typing are listed with refs; a click on
    one is the trusted click the menu's delegated listener takes."""
    snap = await _open(stack, origins, "sortable.html")
    await stack.act(ref_of(snap, "textbox", "City"), kind="type", text="At")
    snap = await stack.snapshot()
    result = await stack.act(_ref(snap, r"listitem \[ref=\w+\]: Athens$"), kind="click")
    assert result["inputPath"] == "trusted"
    picks = [e for e in await _events(stack) if e["type"] == "pick"]
    assert picks == [{"type": "pick", "trusted": True, "item": "Athens"}]
    assert await stack.page.input_value("#city") == "Athens"


async def test_select_option_clicked_through_its_ref_makes_one_change(
        stack: Stack, origins: Origins) -> None:
    """A collapsed select lists its options; a click on an option's ref selects it with
    trusted input: one change event, the value read back in the result."""
    snap = await _open(stack, origins, "controls.html")
    combo = ref_of(snap, "combobox", "Fruit")
    lines = snap.splitlines()
    at = next(i for i, ln in enumerate(lines) if f"[ref={combo}]" in ln)
    options = [re.sub(rf" {REF}", "", ln.strip()) for ln in lines[at + 1:at + 6]]
    assert options == ['- option "Apple"', '- option "Banana" [selected]', '- option "Cherry"',
                       '- option "Damson" [disabled]', '- option "Elderberry"']
    result = await stack.act(ref_of(snap, "option", "Elderberry"), kind="click")
    assert result["selected"] == ["elder"] and result["option"]["label"] == "Elderberry"
    assert result["inputPath"] == "trusted"
    changes = [e for e in await _events(stack) if e["type"] == "change"]
    assert changes == [{"type": "change", "trusted": True, "value": "elder"}]
    assert await stack.page.input_value("#fruit") == "elder"
    snap = await stack.snapshot()
    assert "[selected]" in next(ln for ln in snap.splitlines() if '- option "Elderberry"' in ln)


async def test_secret_select_lists_options_without_saying_which_is_selected(
        stack: Stack, origins: Origins) -> None:
    """A card-expiry select prints its value masked and no option as [selected]."""
    snap = await _open(stack, origins, "controls.html")
    lines = snap.splitlines()
    combo = next(i for i, ln in enumerate(lines) if '- combobox "Expiry month"' in ln)
    assert lines[combo].endswith(": ••••••")
    options = lines[combo + 1:combo + 4]
    assert [re.sub(rf" {REF}", "", o.strip()) for o in options] == [
        '- option "01"', '- option "02"', '- option "03"']


async def test_disabled_option_is_refused_and_nothing_changes(stack: Stack,
                                                              origins: Origins) -> None:
    """A click on a disabled option's ref is ELEMENT_TARGET_DISABLED; the page sees no
    change."""
    snap = await _open(stack, origins, "controls.html")
    with pytest.raises(E.ElementTargetDisabled):
        await stack.act(ref_of(snap, "option", "Damson"), kind="click")
    assert [e for e in await _events(stack) if e["type"] == "change"] == []
    assert await stack.page.input_value("#fruit") == "banana"


async def test_contenteditable_hosts_are_textboxes_and_take_typed_text(
        stack: Stack, origins: Origins) -> None:
    """A contenteditable span is a textbox named by aria-label with its text as value; a
    block host named by data-placeholder is multiline; typing into the span is trusted."""
    snap = await _open(stack, origins, "controls.html")
    note = [ln for ln in snap.splitlines() if '- textbox "Note"' in ln]
    assert len(note) == 1 and note[0].endswith(": hello") and "[multiline]" not in note[0]
    assert "[multiline]" in next(ln for ln in snap.splitlines() if '"Write a comment"' in ln)
    assert next(ln for ln in snap.splitlines() if '- textbox "Rich"' in ln).endswith(
        ": First bold Second")
    assert "- text: bold" not in snap  # a host's content is its value, not lines below it
    await stack.act(ref_of(snap, "textbox", "Note"), kind="type", text=" world")
    # focus puts the caret at the start of the host's text
    text = (await stack.page.text_content("#note")).replace("\xa0", " ")
    assert text == " worldhello", text
    inputs = [e for e in await _events(stack) if e["type"] == "input" and e["id"] == "note"]
    assert len(inputs) == len(" world") and all(e["trusted"] for e in inputs)
    await stack.act(ref_of(snap, "textbox", "Write a comment"), kind="fill", value="Nice")
    assert await stack.page.text_content("#comment") == "Nice"
    snap = await stack.snapshot()
    assert next(ln for ln in snap.splitlines() if '"Write a comment"' in ln).endswith(": Nice")


async def test_right_click_on_a_table_cell(stack: Stack, origins: Origins) -> None:
    """A cell's ref takes a trusted right-click: the table's contextmenu listener sees it
    on that cell."""
    snap = await _open(stack, origins, "controls.html")
    await stack.act(ref_of(snap, "cell", "Bob"), kind="click", button="right")
    menus = [e for e in await _events(stack) if e["type"] == "contextmenu"]
    assert menus == [{"type": "contextmenu", "trusted": True, "button": 2, "cell": "Bob"}]


async def test_visibility_follows_rendering(stack: Stack, origins: Origins) -> None:
    """visibility:visible inside visibility:hidden is shown; inert and
    content-visibility:hidden content is not; display:contents content is, and clicks."""
    snap = await _open(stack, origins, "visibility.html")
    for gone in ("Hidden parent button", "Inert button", "Skipped contents button"):
        assert gone not in snap
    ref_of(snap, "button", "Visible inside hidden")
    await stack.act(ref_of(snap, "button", "Inside display contents"), kind="click")
    clicks = [e for e in await _events(stack) if e["type"] == "click"]
    assert [(c["button"], c["trusted"]) for c in clicks] == [("Inside display contents", True)]


async def test_carousel_button_scrolled_out_of_view_is_listed_and_clicked(
        stack: Stack, origins: Origins) -> None:
    """A button of a horizontally scrolled track, out of view, has a ref; a click on it
    scrolls it into view first and is the trusted click the page counts."""
    snap = await _open(stack, origins, "visibility.html")
    assert await stack.page.evaluate("document.getElementById('track').scrollLeft") == 0
    result = await stack.act(ref_of(snap, "button", "Slide 6"), kind="click")
    assert result["inputPath"] == "trusted"
    clicks = [e for e in await _events(stack) if e["type"] == "click"]
    assert len(clicks) == 1 and clicks[0]["button"] == "Slide 6" and clicks[0]["trusted"]
    assert clicks[0]["scrollLeft"] > 1000  # the track was scrolled to the slide


async def _open_huge(stack: Stack, origins: Origins) -> None:
    await stack.client.call("page.navigate", {"url": f"{origins.main}/obs14/huge.html"})
    for _ in range(200):
        if await stack.page.title() == "Huge table ready":
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the huge table never finished building")


async def test_time_budgeted_snapshot_of_a_huge_page_is_truncated_with_a_cursor(
        stack: Stack, origins: Origins) -> None:
    """With timeBudgetMs and no character limit in reach, a 60,000-row page comes back cut
    by time with a cursor; the cursor's page goes on where the first stopped."""
    await _open_huge(stack, origins)
    first = await stack.client.call("page.snapshot",
                                    {"maxChars": 10_000_000, "timeBudgetMs": 200})
    assert first["truncated"] and first["cursor"]
    trailer = first["snapshot"].splitlines()[-1]
    assert trailer.startswith("# truncated after the time budget of 200 ms"), trailer
    assert "Order 59999" not in first["snapshot"]
    seen = [ln for ln in first["snapshot"].splitlines() if not ln.startswith("#")]
    nxt = await stack.client.call("page.snapshot", {"cursor": first["cursor"], "maxChars": 20_000})
    more = [ln for ln in nxt["snapshot"].splitlines() if not ln.startswith("#")]
    assert more and not set(more) & set(seen)  # no line repeated (refs make lines unique)


async def test_whole_huge_page_in_one_page(stack: Stack, origins: Origins) -> None:
    """A 60,000-row page asked for in one page (240,000 lines) comes back whole: the
    baseline it becomes is built without spreading the lines into one call."""
    if stack.browser == "firefox":
        # Measured 2026-12-02 on the 2-core CI machine: Firefox walks these 8 MB in 64 s,
        # Chromium in 17 s, and page.snapshot answers within 35 s. The overflow this
        # guards is V8's argument limit; the time-budgeted test below covers Firefox.
        pytest.skip("Firefox takes ~64 s for a 240,000-line page, over page.snapshot's "
                    "35 s bound (the stack overflow guarded here is V8's)")
    await _open_huge(stack, origins)
    res = await stack.client.call("page.snapshot", {"maxChars": 10_000_000})
    assert not res["truncated"]
    assert res["snapshot"].splitlines()[-1].strip().startswith('- button "Open 59999"')


async def test_subtree_snapshot_with_depth_marks_the_cut(stack: Stack, origins: Origins) -> None:
    """depth with ref: the table's rows are listed, their cells are not, and each cut is
    marked with a `- …` line; depth 0 is the root's line and one mark."""
    snap = await _open(stack, origins, "controls.html")
    table = ref_of(snap, "table", "Scores")
    res = await stack.client.call("page.snapshot", {"ref": table, "depth": 1})
    lines = res["snapshot"].splitlines()
    assert lines[0].startswith('- table "Scores"')
    assert [ln.strip()[:5] for ln in lines[1:]] == ["- row", "- …", "- row", "- …", "- row", "- …"]
    assert all(ln.startswith("    - …") for ln in lines if "…" in ln)
    assert "cell" not in res["snapshot"]
    zero = await stack.client.call("page.snapshot", {"ref": table, "depth": 0})
    assert zero["snapshot"].splitlines()[1:] == ["  - …"]
    whole = await stack.client.call("page.snapshot", {"depth": 0})
    assert all(not ln.startswith(" ") or ln == "  - …" for ln in whole["snapshot"].splitlines())
