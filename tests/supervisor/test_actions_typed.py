"""supervisor/actions.py: the value check after typing expects what Enter and Tab really
insert, and still catches a page that truncates or rewrites the text."""

from __future__ import annotations

import asyncio

import pytest

from trustbridge.bridge.protocol import errors as E
from trustbridge.supervisor import actions as A


@pytest.mark.parametrize(("before", "text", "after", "kind"), [
    ("", "ab\ncd", "abcd", "text"),        # Enter in an <input> inserts nothing
    ("", "ab\ncd", "ab\ncd", None),        # ... and a line break in a textarea
    ("x", "ab\r\ncd\n", "xab\n\ncd\n", None),
    ("", "x\ty", "x\ty", "text"),          # Chromium's keyboard.type("\t") inserts a tab
    ("", "a\nb", "a b", "email"),
])
def test_enter_and_tab_are_not_judged_as_text(before, text, after, kind) -> None:
    """Line breaks and tabs the keys did or did not insert never fail the check."""
    A._check_typed(before, after, text, kind)


@pytest.mark.parametrize(("text", "after", "cause"), [
    ("ab\ncd", "ABCD", "rewritten"),
    ("ab\ncd", "ab\nc", "truncated"),
    ("hello", "HELLO", "rewritten"),
    ("x\ty", "x", "truncated"),
])
def test_a_real_truncation_or_rewrite_still_fails(text, after, cause) -> None:
    """A field that lost or changed text characters is still ELEMENT_VALUE_NOT_SET."""
    with pytest.raises(E.ElementValueNotSet) as info:
        A._check_typed("", after, text, "text")
    assert info.value.cause == cause


class _FocusTarget:
    """A Target stand-in whose element has (or lost) the focus."""

    def __init__(self, focused: bool) -> None:
        self.focused = focused
        self.reads = 0


@pytest.mark.parametrize(("text", "focused", "typed"), [
    ("ab\tcd", False, "ab"), ("ab\tcd", True, "ab\tcd"), ("abcd", False, "abcd")])
def test_only_the_text_before_a_focus_moving_tab_is_checked(
        monkeypatch: pytest.MonkeyPatch, text, focused, typed) -> None:
    """The focus is read only for a text with a Tab; when it left, the part before is
    what went into the target."""
    target = _FocusTarget(focused)

    async def isolated(t, expression, timeout_ms):
        assert ":focus-within" in expression
        t.reads += 1
        return t.focused

    monkeypatch.setattr(A, "isolated", isolated)
    assert asyncio.run(A._typed_into_target(target, text, 1000)) == typed  # type: ignore[arg-type]
    assert target.reads == (1 if "\t" in text else 0)
