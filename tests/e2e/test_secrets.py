"""Secrets stay out of every page state (issue 13 item 7): fields named or labelled as card
numbers, API keys, passwords (in several languages), SSNs and secret editable regions show
a fixed mask after trusted typing, in every snapshot mode and in every frame, and so does
the page's own echo of what was typed; ordinary fields keep showing their value.

Page: tests/e2e/pages/secrets.html (+ secrets_frame.html from the other origin).
"""

from __future__ import annotations

import asyncio
import re
from urllib.parse import quote

import pytest

from .conftest import Origins, Stack, ref_of

pytestmark = pytest.mark.browser

MASK = "••••••"
# name of the textbox line → (CSS selector on the page, value typed); each field's secret
# signal is described in secrets.html.
SECRETS = {
    "Number on the front": ("#ccnum", "4111111111111111"),  # name=ccnum
    "API key": ("#k1", "sk_live_ZX81spectrum"),  # its label
    "Passwort": ("#f2", "Geheim Wort/42"),  # German label
    "Tax identifier": ("#f3", "078-05-1120"),  # placeholder "Social Security Number"
    "Recovery secret": ("#note", "correct horse battery"),  # contenteditable, aria-label
}
PLAIN = {
    "Name": ("#name", "Grace Hopper"),
    "Pinned items": ("#pinned", "Lovelace notes"),
}
FRAME_SECRET = ("Kartennummer", "#fcard", "5500005555555559")
FRAME_PLAIN = ("Frame name", "#fname", "Ada Byron")


async def _snap(stack: Stack, **params: object) -> dict:
    return await stack.client.call("page.snapshot", params)


async def _open(stack: Stack, origins: Origins) -> str:
    await stack.client.call("page.navigate",
                            {"url": f"{origins.main}/secrets.html?other={origins.other_port}"})
    for _ in range(200):
        snap = (await _snap(stack))["snapshot"]
        if '"Kartennummer"' in snap:
            return snap
        await asyncio.sleep(0.05)
    raise AssertionError("the billing frame never appeared:\n" + snap)


def _line(snapshot: str, role: str, name: str) -> str:
    found = [ln for ln in snapshot.splitlines() if re.match(rf'\s*- {role} "{re.escape(name)}"', ln)]
    assert len(found) == 1, f"expected one {role} {name!r} in:\n{snapshot}"
    return found[0]


async def test_secret_fields_and_their_echo_are_masked_in_every_mode_and_frame(
        stack: Stack, origins: Origins) -> None:
    """After trusted typing into a name=ccnum field, fields labelled "API key", "Passwort",
    "Social Security Number", a secret editable region and a card field in a cross-origin
    frame, no snapshot (outline, read, diff, subtree, paged) holds a typed secret, while the
    Name and "Pinned items" values and the fields' labels are shown."""
    snap = await _open(stack, origins)
    await _snap(stack, mode="diff")  # the baseline the diff below is taken against
    typed = {**SECRETS, **PLAIN}
    for name, (_sel, value) in typed.items():
        result = await stack.act(ref_of(snap, "textbox", name), kind="type", text=value)
        assert result["inputPath"] == "trusted", result
    for name, _sel, value in (FRAME_SECRET, FRAME_PLAIN):
        result = await stack.act(ref_of(snap, "textbox", name), kind="type", text=value)
        assert result["inputPath"] == "trusted", result
    # The page really has every value, and echoes them in its own text.
    page = stack.page
    for name, (sel, value) in typed.items():
        got = await page.locator(sel).evaluate("el => el.value ?? el.textContent")
        assert got == value, (name, got)
    assert SECRETS["API key"][1] in await page.locator("#echo").text_content()
    encoded = quote(SECRETS["Passwort"][1], safe="~()*!.'")  # as encodeURIComponent
    assert encoded != SECRETS["Passwort"][1]
    assert encoded in await page.locator("#share").get_attribute("href")
    frame = next(f for f in page.frames if "secrets_frame.html" in f.url)
    assert await frame.locator(FRAME_SECRET[1]).input_value() == FRAME_SECRET[2]
    assert FRAME_SECRET[2] in await frame.locator("#fecho").text_content()

    diff = (await _snap(stack, mode="diff"))["snapshot"]  # first: any snapshot moves the baseline
    full = (await _snap(stack))["snapshot"]
    outputs = {
        "outline": full,
        "read": (await _snap(stack, mode="read"))["snapshot"],
        "diff": diff,
        "subtree": (await _snap(stack, ref=ref_of(snap, "form", "Payment")))["snapshot"],
    }
    paged = await _snap(stack, maxChars=1000)
    pages = [paged["snapshot"]]
    while paged["cursor"]:
        paged = await _snap(stack, cursor=paged["cursor"], maxChars=1000)
        pages.append(paged["snapshot"])
    outputs["paged"] = "\n".join(pages)

    for mode, text in outputs.items():
        for value in [v for _s, v in SECRETS.values()] + [FRAME_SECRET[2], encoded]:
            assert value not in text, f"{value!r} printed in {mode} snapshot:\n{text}"
    # Secret fields keep their label and show the mask; plain fields show their value.
    for name in ["Number on the front", "API key", "Passwort", "Tax identifier"]:
        assert _line(full, "textbox", name).endswith(": " + MASK)
    assert _line(full, "textbox", FRAME_SECRET[0]).endswith(": " + MASK)
    assert _line(full, "textbox", "Recovery secret").endswith(": " + MASK)
    assert _line(full, "textbox", "Name").endswith(": Grace Hopper")
    assert _line(full, "textbox", "Pinned items").endswith(": Lovelace notes")
    assert _line(full, "textbox", FRAME_PLAIN[0]).endswith(": " + FRAME_PLAIN[2])
    assert _line(full, "heading", "Pinned tokenizer docs")
    assert "Grace Hopper" in outputs["read"] and "Lovelace notes" in outputs["read"]
    assert "Ada Byron" in outputs["read"]
    assert "Grace Hopper" in outputs["diff"]
