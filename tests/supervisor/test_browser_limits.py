"""The refusals of supervisor/browser_limits.py, without a browser: a verb a browser
would deliver as something else fails with TRUSTED_INPUT_UNAVAILABLE before dispatch."""

from __future__ import annotations

import pytest

from bridge.protocol import errors as E
from bridge.protocol.models import (
    ClickAction,
    DragAction,
    FillAction,
    HoverAction,
    PressAction,
    TypeAction,
)
from supervisor.browser_limits import (
    KEYED_CHARACTERS,
    driver_capabilities,
    refuse_undeliverable,
)

FIREFOX = driver_capabilities("firefox")
CHROMIUM = driver_capabilities("chromium")


class _Source:
    """Stands in for the drag source's ElementHandle: answers the native-drag probe."""

    def __init__(self, native: bool) -> None:
        self.native = native
        self.asked = 0

    async def evaluate(self, _js: str) -> bool:
        self.asked += 1
        return self.native


@pytest.mark.parametrize("count", [2, 3])
async def test_firefox_refuses_multi_clicks(count: int) -> None:
    """clickCount 2 or 3 on Firefox: refused with the capability and count in details."""
    with pytest.raises(E.TrustedInputUnavailable) as info:
        await refuse_undeliverable(FIREFOX, "firefox 153", ClickAction(clickCount=count), None)
    assert info.value.details == {"browser": "firefox 153", "capability": "multiClick",
                                  "clickCount": count}
    assert "docs/browsers.md" in info.value.message


async def test_single_clicks_and_other_verbs_pass_on_firefox() -> None:
    """A single click, hover, press and ASCII typing are not refused."""
    for action in (ClickAction(), HoverAction(), PressAction(key="Enter"),
                   TypeAction(text="Hello, world! 123 ~{}\n"), FillAction(value="")):
        await refuse_undeliverable(FIREFOX, "firefox", action, None)


@pytest.mark.parametrize("text,count", [("né", 1), ("✓✓", 2), ("日本", 2), ("a\tb", 1),
                                        ("😀", 1), ("\u00a0", 1)])
async def test_firefox_refuses_text_beyond_the_us_layout(text: str, count: int) -> None:
    """type and fill with characters Playwright would insert by script are refused; the
    details count them and never carry the text."""
    for action in (TypeAction(text=text), FillAction(value=text)):
        with pytest.raises(E.TrustedInputUnavailable) as info:
            await refuse_undeliverable(FIREFOX, "firefox", action, None)
        assert info.value.details == {"browser": "firefox", "capability": "unicodeText",
                                      "characters": count}
        assert text not in info.value.message


async def test_firefox_refuses_native_drags_only() -> None:
    """A drag whose source starts an HTML5 drag session is refused; a pointer-only drag
    is let through. The page is probed once per drag."""
    native, pointer = _Source(True), _Source(False)
    with pytest.raises(E.TrustedInputUnavailable) as info:
        await refuse_undeliverable(FIREFOX, "firefox", DragAction(to="e2"), native)  # type: ignore[arg-type]
    assert info.value.details["capability"] == "html5DragDrop"
    await refuse_undeliverable(FIREFOX, "firefox", DragAction(to="e2"), pointer)  # type: ignore[arg-type]
    assert (native.asked, pointer.asked) == (1, 1)


async def test_chromium_refuses_nothing_and_does_not_probe() -> None:
    """Chromium has every capability: nothing is refused and the page is not probed."""
    source = _Source(True)
    for action in (ClickAction(clickCount=3), TypeAction(text="né✓😀"), FillAction(value="日本"),
                   DragAction(to="e2")):
        await refuse_undeliverable(CHROMIUM, "chromium", action, source)  # type: ignore[arg-type]
    assert source.asked == 0


def test_keyed_characters_are_printable_ascii_and_newlines() -> None:
    """The characters typed as real keys: printable ASCII, newline and return; not Tab."""
    assert len(KEYED_CHARACTERS) == 95 + 2
    assert "\t" not in KEYED_CHARACTERS and "é" not in KEYED_CHARACTERS
