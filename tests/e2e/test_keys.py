"""Keys the driver presses for a verb are keys Playwright has (supervisor/keys.py
``LAYOUT_KEYS``): a select whose wanted option's label starts with a character the US
layout has no key for (``Éclair``) is reached by arrows, Home or End, never by typing that
character (Playwright refuses it as an unknown key, which reached the agent as a
BAD_REQUEST about the key name). Page: tests/e2e/pages/keys/keys.html."""

from __future__ import annotations

import pytest

from .conftest import Origins, Stack, ref_of

pytestmark = pytest.mark.browser


async def test_an_option_with_an_accented_label_is_selected(stack: Stack, origins: Origins) -> None:
    """Apple -> Éclair (Apple, Banana, Éclair, Date): no single layout key reaches it.
    Chromium commits once through its popup; Firefox commits each of its two keys."""
    await stack.client.call("page.navigate", {"url": f"{origins.main}/keys/keys.html"})
    pastry = ref_of(await stack.snapshot(), "combobox", "Pastry")
    await stack.page.evaluate("window.__log = []")
    res = await stack.act(pastry, kind="select", values=["Éclair"])
    assert res["selected"] == ["eclair"]
    log = await stack.page.evaluate("window.__log")
    changes = [e for e in log if e["type"] == "change"]
    assert res["changeEvents"] == len(changes) and changes[-1]["value"] == "eclair"
    assert all(e["trusted"] for e in log)
    assert [e["key"] for e in log if e["type"] == "keydown" and len(e["key"]) == 1] == []
    if stack.browser == "chromium":
        assert len(changes) == 1
    assert await stack.page.locator("#pastry").input_value() == "eclair"
