"""The keyboard plan of the driver's ``select`` verb (supervisor/actions.py), from a
select's inner HTML: which options a user can pick, the fewest keys to reach one, and
(Firefox, where every key on the closed select commits) the fewest commits."""

from __future__ import annotations

from trustbridge.supervisor.actions import select_commit_keys, select_keys, select_plan

OWNER = ('<option value="">Any</option><option value="ada">Ada</option>'
         '<option value="bob">Bob</option><option value="cy" disabled>Cy</option>'
         '<option value="dee">Dee</option>')


def test_plan_counts_only_enabled_options_and_matches_value_then_label() -> None:
    assert select_plan(OWNER, ["dee"], "", False) == ([3], 0, 4)
    assert select_plan(OWNER, ["Ada"], "dee", False) == ([1], 3, 4)
    assert select_plan(OWNER, ["cy"], "", False) == ([-1], 0, 4)  # disabled
    assert select_plan(OWNER, ["zed"], "", False) == ([-1], 0, 4)


def test_plan_value_and_label_default_to_collapsed_text() -> None:
    html = ("<option>  Ann\n  Lee </option><option label='Short'>Long name</option>"
            "<option>Tom &amp; Jerry")  # unclosed last option, entity
    assert select_plan(html, ["Ann Lee", "Short", "Long name", "Tom & Jerry"], "Ann Lee",
                       False) == ([0, 1, 1, 2], 0, 3)


def test_plan_skips_disabled_optgroups_for_a_single_select_only() -> None:
    html = ('<optgroup label="A" disabled><option>a1</option><option>a2</option></optgroup>'
            '<optgroup label="B"><option>b1</option></optgroup><option>c</option>')
    assert select_plan(html, ["b1", "c"], "b1", False) == ([0, 1], 0, 2)
    assert select_plan(html, ["b1"], None, True) == ([2], -1, 4)


def test_keys_take_the_shortest_route() -> None:
    assert select_keys(0, 3, 4) == ["End"]
    assert select_keys(3, 1, 4) == ["ArrowUp", "ArrowUp"]
    assert select_keys(0, 2, 4) == ["ArrowDown", "ArrowDown"]
    assert select_keys(-1, 1, 9) == ["Home", "ArrowDown"]
    assert select_keys(2, 2, 4) == []
    assert select_keys(8, 0, 9) == ["Home"]


JUMP = ["choose", "One", "Two", "Three"]
SNACK = ["Apple", "Avocado", "Banana", "Cherry"]  # enabled options after a placeholder


def test_commit_keys_take_one_key_when_one_reaches_the_target() -> None:
    assert select_commit_keys(JUMP, 0, 2) == ["t"]  # first "t" after "choose": Two
    assert select_commit_keys(JUMP, 0, 1) == ["ArrowDown"]
    assert select_commit_keys(JUMP, 0, 3) == ["End"]
    assert select_commit_keys(JUMP, 3, 0) == ["Home"]
    assert select_commit_keys(JUMP, 1, 1) == []
    assert select_commit_keys(["x", "  lemon ", "Lime", "y"], 3, 1) == ["l"]  # trimmed, any case


def test_commit_keys_type_ahead_starts_after_the_current_option_and_wraps() -> None:
    assert select_commit_keys(["Two", "x", "Three", "Tea"], 2, 0) == ["Home"]
    assert select_commit_keys(["a", "Tea", "x", "Two", "Three"], 4, 1) == ["t"]  # wraps
    assert select_commit_keys(SNACK, -1, 2) == ["b"]  # none selected: from the first


def test_commit_keys_fall_back_to_the_fewest_commits() -> None:
    assert len(select_commit_keys(SNACK, -1, 1)) == 2  # "a" or Home, then ArrowDown
    assert select_commit_keys(["a1", "a2", "a3", "b", "c", "d", "e"], 6, 2) == ["b", "ArrowUp"]
    labels = ["a", "b1", "+", "+", "b2", "+", "+", "+"]
    assert select_commit_keys(labels, 0, 4)[-1] == "b"  # the second "b" after b1
    assert len(select_commit_keys(labels, 0, 4)) == 2
    # "x" then "b" would search "xb", matching nothing: two characters in a row are never
    # planned, so three commits (no "+" key: Playwright joins chords with it)
    labels = ["b1", "b0", "x", "+", "b2", "+", "+", "+"]
    assert len(select_commit_keys(labels, 7, 4)) == 3


def test_commit_keys_skip_labels_without_a_key() -> None:
    assert select_commit_keys(["a", "+plus", "b", "c"], 0, 1) == ["ArrowDown"]
    assert select_commit_keys(["a", "b", "", "c", "d"], 0, 2) == ["ArrowDown", "ArrowDown"]


def test_option_at_maps_an_options_index_to_its_place_among_enabled_ones() -> None:
    from trustbridge.supervisor.select import option_at

    html = ('<option>a</option><optgroup label="G" disabled><option>g1</option></optgroup>'
            '<option disabled>d</option><option value="z">Zed</option>')
    assert option_at(html, 0)[1] == 0
    assert option_at(html, 1)[1] == -1  # disabled by its optgroup
    assert option_at(html, 2)[1] == -1  # disabled itself
    option, place = option_at(html, 3)
    assert (option.value, option.label, place) == ("z", "Zed", 1)
    assert option_at(html, 4) == (None, -1)
