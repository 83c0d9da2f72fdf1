"""supervisor/values.py: range keys, value comparison and its causes, and the errors
that never echo a text value."""

from __future__ import annotations

import json

import pytest

from trustbridge.bridge.protocol import errors as E
from trustbridge.supervisor.values import cut, not_set, range_keys, value_cause


def test_range_keys_take_the_fewest_presses() -> None:
    """Arrows from the current value when that is nearest, Home or End otherwise."""
    assert range_keys("25", "10", "0", "50", "5") == ["ArrowUp"] * 3
    assert range_keys("35", "10", "0", "50", "5") == ["End"] + ["ArrowDown"] * 3
    assert range_keys("5", "45", "0", "50", "5") == ["Home", "ArrowUp"]
    assert range_keys("45", "5", "0", "50", "5") == ["End", "ArrowDown"]
    assert range_keys("10", "10", "0", "50", "5") == []


def test_range_keys_use_html_defaults_and_the_last_step_below_max() -> None:
    """No attributes: 0..100 step 1; max 10 step 3 ends at 9, so End reaches 9 and
    End, ArrowDown reaches 6."""
    assert range_keys("73", "50", None, None, None) == ["ArrowUp"] * 23
    assert range_keys("9", "0", "0", "10", "3") == ["End"]
    assert range_keys("6", "9", "0", "10", "3") == ["ArrowDown"]


@pytest.mark.parametrize("value", ["7", "55", "-5", "high"])
def test_range_values_off_the_grid_are_refused(value: str) -> None:
    """Off a step, outside min..max, or not a number: BAD_REQUEST before any key."""
    with pytest.raises(E.BadRequest):
        range_keys(value, "10", "0", "50", "5")


def test_step_any_has_no_trusted_route() -> None:
    """step="any": keys cannot reach an exact value; the next step names allowScript."""
    with pytest.raises(E.TrustedInputUnavailable) as info:
        range_keys("3.3", "0", "0", "10", "any")
    assert "allowScript" in info.value.advice


@pytest.mark.parametrize(("expected", "actual", "before", "kind", "cause"), [
    ("abc", "abc", "", None, None),
    ("a\nb", "ab", "", "text", None),            # an <input> drops newlines
    ("a\r\nb", "a\nb", "", None, None),          # a <textarea> normalises them
    (" x@y.z ", "x@y.z", "", "email", None),     # email strips surrounding spaces
    ("1e3", "1000", "", "number", None),
    ("abcdefgh", "abcd", "", None, "truncated"),
    ("new", "keep", "keep", None, "unchanged"),
    ("5551234", "(555) 1234", "", "tel", "rewritten"),
])
def test_value_cause(expected: str, actual: str, before: str, kind: str | None,
                     cause: str | None) -> None:
    """What counts as the value taken, and the named cause when it is not."""
    assert value_cause(expected, actual, before, kind) == cause


def test_not_set_gives_lengths_for_text() -> None:
    """A text field's values are never in the error, only their lengths."""
    err = not_set("hunter2", "hun", "truncated", secret=True)
    assert "hunter" not in json.dumps(err.to_payload().model_dump())
    assert err.expected == {"length": 7} and err.actual == {"length": 3}


def test_cut_counts_and_never_shows_text() -> None:
    """Typing cut after 3 of 9 is UNCERTAIN with sent/total; before any key, the
    document changed and nothing was typed."""
    err = cut(3, 9)
    assert isinstance(err, E.BrowserOperationUncertain)
    assert err.details == {"sent": 3, "total": 9}
    assert isinstance(cut(0, 9), E.BrowserDocumentChanged)


@pytest.mark.parametrize(("typed", "actual", "before", "ok"), [
    ("5551234567", "+1 (555) 123-4567", "", True),   # a phone mask's literals and prefix
    ("4111111111111111", "4111 1111 1111 1111", "", True),
    ("hello", "HELLO", "", False),                    # a changed character is a rewrite
    ("123456", "1234", "", False),                    # a maxlength dropped some
    ("low", "hello world", "hello world", False),      # the field kept what it had
    ("", "(", "", False),
])
def test_formatted(typed: str, actual: str, before: str, ok: bool) -> None:
    """A field formatted by its page keeps every typed character in order (issue 30 corpus)."""
    from trustbridge.supervisor.values import formatted
    assert formatted(typed, actual, before) is ok
