"""supervisor/humanize.py's pure parts: the aim stays strictly inside the visible box and is
integral; the path has the asked number of integer moves and ends at the aim; the draws'
medians are in the issue's ranges (issue 35 item 2); the embedded launch passes
--humanize on."""

from __future__ import annotations

import random

import pytest

from trustbridge.bridge.embedded import Embedded
from trustbridge.supervisor import humanize as H

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("seed", range(200))
def test_aim_is_an_integer_strictly_inside_the_box(seed: int) -> None:
    rng = random.Random(seed)
    box = {"x": rng.uniform(-50, 900), "y": rng.uniform(-50, 600),
           "width": rng.uniform(1.2, 300), "height": rng.uniform(1.2, 120)}
    x, y = H.aim(box, rng)
    assert isinstance(x, int) and isinstance(y, int)
    assert box["x"] < x < box["x"] + box["width"] and box["y"] < y < box["y"] + box["height"]


def test_aim_refuses_a_box_without_area() -> None:
    with pytest.raises(ValueError):
        H.aim({"x": 0, "y": 0, "width": 0, "height": 10})


def test_visible_box_is_cut_to_the_viewport() -> None:
    assert H.visible_box({"x": -10, "y": 700, "width": 50, "height": 40},
                         {"width": 1280, "height": 720}) == {
        "x": 0.0, "y": 700.0, "width": 40.0, "height": 20.0}


@pytest.mark.parametrize("start,end", [((0, 0), (361, 241)), ((360, 240), (361, 241)),
                                       ((361, 241), (361, 241)), ((900, 10), (20, 700))])
def test_path_moves_end_at_the_aim_on_integers_with_no_repeat(start, end) -> None:
    points = H.path(start, end, 9, random.Random(1))
    assert len(points) == 9 and points[-1] == end
    assert all(isinstance(c, int) for p in points for c in p)
    assert all(a != b for a, b in zip(points, points[1:]))


def test_draw_medians_are_in_the_issue_s_ranges() -> None:
    rng = random.Random(7)
    assert 40 <= H.median([H.draw(H.PRESS_MS, rng) for _ in range(999)]) <= 160
    assert 50 <= H.median([H.draw(H.KEY_HOLD_MS, rng) for _ in range(999)]) <= 150
    assert H.median([H.draw(H.KEY_GAP_MS, rng) for _ in range(999)]) >= 80
    assert H.MOVES[0] >= 5


def test_embedded_passes_humanize_to_the_supervisor(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))  # its token file goes there
    assert "--humanize" in Embedded(port=0, humanize=True).supervisor_args()
    assert "--humanize" not in Embedded(port=0).supervisor_args()
