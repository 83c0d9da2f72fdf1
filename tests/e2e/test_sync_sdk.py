"""The sync SDK (bridge/sync_sdk.py) end to end: ``SyncBrowser.launch()`` starts the real
embedded stack (bridge + supervisor child + headless Chromium with the extension and the
input driver) from a plain synchronous test, with no event loop in the calling thread.

Checks what the page itself recorded (``event.isTrusted``, the field's value), not only
what the SDK answered.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from trustbridge.bridge import config
from trustbridge.bridge.sync_sdk import THREAD_NAME, SyncBrowser

from .conftest import Origins, ref_of

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]


def test_sync_sdk_types_and_clicks_with_trusted_input_in_chromium(
        origins: Origins, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the sync SDK a click reaches the page with isTrusted true and typed keys
    are trusted; leaving the `with` block stops the browser and the SDK's loop thread."""
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))  # own token and endpoint files
    with SyncBrowser.launch() as browser:
        tab = browser.tab()
        tab.goto(f"{origins.main}/mcp.html")
        snap = tab.snapshot()
        typed = tab.type(ref_of(snap, "textbox", "Note"), "hello")
        clicked = tab.click(ref_of(snap, "button", "Record"))
        tab.wait_for_text("isTrusted=")
        recorded = tab.evaluate("document.getElementById('status').textContent")

    assert (typed["inputPath"], clicked["inputPath"]) == ("trusted", "trusted")
    assert clicked.get("delivered") is True
    assert recorded == "click isTrusted=true; note=hello; trusted keys 5/5"
    assert [t for t in threading.enumerate() if t.name == THREAD_NAME] == []
    assert config.read_endpoint() is None  # the embedded bridge stopped and said so


def test_sync_sdk_type_keeps_the_content_and_fill_replaces_it_in_one_edit(
        origins: Origins, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the page counted: two type calls add up key by key (nothing cleared, one
    trusted keydown per character); fill then replaces the value with the two keydowns
    of select-all and the last character's (Chromium inserts the rest as one edit)."""
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    with SyncBrowser.launch() as browser:
        tab = browser.tab()
        tab.goto(f"{origins.main}/mcp.html")
        snap = tab.snapshot()
        note, record = ref_of(snap, "textbox", "Note"), ref_of(snap, "button", "Record")
        tab.type(note, "hel")
        tab.type(note, "lo")
        tab.click(record)
        typed = tab.evaluate("document.getElementById('status').textContent")
        tab.fill(note, "bye")
        tab.click(record)
        filled = tab.evaluate("document.getElementById('status').textContent")

    assert typed == "click isTrusted=true; note=hello; trusted keys 5/5"
    assert filled == "click isTrusted=true; note=bye; trusted keys 8/8"
