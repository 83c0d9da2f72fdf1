"""The keyboard plan of the driver's ``select`` verb (supervisor/actions.py), from a
select's inner HTML: which options a user can pick, and the fewest keys to reach one."""

from __future__ import annotations

from supervisor.actions import select_keys, select_plan

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
