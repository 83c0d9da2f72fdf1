"""Regression pages for multi-step flows, through the Python SDK: an HTML5 drop zone
that needs dragover, three ways a page takes a file, native dialogs (confirm, beforeunload,
an alert in the next page's head), and a page too large for one snapshot.

Pages: tests/e2e/pages/regress/. Each test checks what the page recorded.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from trustbridge.bridge.sdk import ActResult, Tab
from trustbridge.supervisor.browser_limits import driver_capabilities

from ..cases.runner import find_target, parse_snapshot
from .conftest import Origins, Stack, ref_of

pytestmark = pytest.mark.browser


async def _open(stack: Stack, origins: Origins, page: str) -> tuple[Tab, str]:
    tab = Tab(stack.client, stack.device, None)
    await tab.goto(f"{origins.main}/regress/{page}")
    return tab, await tab.snapshot()


async def _text(stack: Stack, selector: str) -> str | None:
    return await stack.page.locator(selector).text_content()


def _named(snap: str, name: str) -> str:
    """The ref of the one element named ``name``, whatever role the engine gives it."""
    found = [n.ref for n in parse_snapshot(snap) if n.name == name and n.ref]
    assert len(found) == 1, f"expected one {name!r} in:\n{snap}"
    return found[0]


async def test_drop_zone_that_needs_dragover_takes_the_ticket(
        stack: Stack, origins: Origins) -> None:
    """The lane only accepts a drop after a cancelled dragover in the same drag: the drag
    delivers dragover and a trusted drop, and the ticket moves lanes."""
    if not driver_capabilities(stack.browser)["html5DragDrop"]:  # docs/browsers.md
        pytest.skip(f"{stack.browser} cannot end an HTML5 drag in a drop (docs/browsers.md); "
                    "the refusal is pinned by "
                    "test_browsers.py::test_html5_drag_is_dropped_or_refused")
    tab, snap = await _open(stack, origins, "lanes.html")
    await tab.drag(_named(snap, "Ticket 7"), ref_of(snap, "region", "Shipped lane"))
    assert await _text(stack, "#result") == "shipped t-7"
    assert await stack.page.locator("#shipped-list #t-7").count() == 1
    assert await stack.page.locator("#backlog-list #t-7").count() == 0
    assert int(await _text(stack, "#overs") or 0) >= 1
    assert await _text(stack, "#drop-trusted") == "true"


async def test_file_input_button_made_input_and_chooser_only_zone(
        stack: Stack, origins: Origins, tmp_path: Path) -> None:
    """A visible file input, a button whose click creates a hidden input and clicks it,
    and a zone that ignores files not coming through the chooser it opened: each gets
    its file once (one change event) with its real size."""
    files = {"receipt.txt": b"total 12.50 EUR\n", "invoice.pdf": b"%PDF-1.4\n%%EOF\n" * 3,
             "photo.png": b"\x89PNG\r\n\x1a\n" + bytes(40)}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    tab, snap = await _open(stack, origins, "uploads.html")
    for target, name in [(_named(snap, "Receipt"), "receipt.txt"),
                         (ref_of(snap, "button", "Attach invoice"), "invoice.pdf"),
                         (ref_of(snap, "button", "Add photos (click to browse)"), "photo.png")]:
        await tab.upload(target, [str(tmp_path / name)])
    for key, name in [("receipt", "receipt.txt"), ("invoice", "invoice.pdf"),
                      ("photos", "photo.png")]:
        assert await _text(stack, f"#got-{key}") == f"{name}:{len(files[name])}", key
        assert await _text(stack, f"#n-{key}") == "1", key


async def _next_dialog(stack: Stack, result: ActResult | None = None) -> dict[str, Any]:
    """The dialog an action reported, else the one the device reports within 5 s."""
    if result is not None and result.get("dialog"):
        return result["dialog"]
    for _ in range(100):
        devices = (await stack.client.call("devices.list"))["devices"]
        if dialog := next((d["dialog"] for d in devices if d.get("dialog")), None):
            return dialog
        await asyncio.sleep(0.05)
    raise AssertionError("no dialog opened")


async def test_confirm_beforeunload_and_an_alert_in_the_next_pages_head(
        stack: Stack, origins: Origins) -> None:
    """A click that opens confirm() returns with it (accepted, then dismissed); leaving the
    page raises beforeunload; the next page's head alert is reported, also to a navigate
    within seconds; the page continues after each answer."""
    tab, snap = await _open(stack, origins, "drafts.html")
    discard = ref_of(snap, "button", "Discard draft")
    for accept in (True, False):
        dialog = await _next_dialog(stack, await asyncio.wait_for(tab.click(discard), 10))
        assert (dialog["type"], dialog["message"]) == ("confirm", "Discard draft 7?")
        await tab.handle_dialog(accept)
    await stack.page.wait_for_function(
        "document.getElementById('outcome').textContent === 'discarded then kept'")
    leave = await asyncio.wait_for(tab.click(ref_of(snap, "link", "Open summary")), 10)
    assert (await _next_dialog(stack, leave))["type"] == "beforeunload"
    await tab.handle_dialog(True)
    alert = await _next_dialog(stack)
    assert (alert["type"], alert["message"]) == ("alert", "Summary is being prepared")
    await tab.handle_dialog(True)
    await stack.page.wait_for_selector("#loads")
    assert await _text(stack, "#carried") == "discarded then kept"
    started = time.monotonic()
    nav: Any = await tab.goto(f"{origins.main}/regress/summary.html", timeout_ms=20_000)
    assert time.monotonic() - started < 5
    again = await _next_dialog(stack, nav)
    assert (again["type"], again["message"]) == ("alert", "Summary is being prepared")
    await tab.handle_dialog(True)
    await stack.page.wait_for_selector("#loads")
    assert await _text(stack, "h1") == "Summary"
    assert await _text(stack, "#loads") == "2"


BUDGET_CHARS = 30_000
ROWS = 6_000  # about 20 snapshot pages, a few seconds on 2 cores


async def test_page_too_big_for_one_snapshot_pages_by_cursor_to_the_last_row(
        stack: Stack, origins: Origins) -> None:
    """A 6,000-row table in 200 nested wrappers beside a 1 MB text node: the budgeted
    snapshot comes in pages within the budget, the cursor reaches the end, and the ref of
    the last row's "Open" (the 6,000th of that name) clicks that row within the default
    10 s action timeout (its locator is an :nth-of-type path over the whole table)."""
    tab = Tab(stack.client, stack.device, None)
    await tab.goto(f"{origins.main}/regress/ledger.html?rows={ROWS}", timeout_ms=60_000)
    await tab.wait(text="built", timeout_ms=60_000)
    parts, cursor, slowest = [], None, 0.0
    while True:
        started = time.monotonic()
        page = await tab.snapshot_result(max_chars=BUDGET_CHARS, cursor=cursor)
        slowest = max(slowest, time.monotonic() - started)
        assert len(page["snapshot"]) <= BUDGET_CHARS + 500
        parts.append("\n".join(ln for ln in page["snapshot"].splitlines()
                               if not ln.startswith("# truncated")))
        cursor = page.get("cursor")
        if not cursor:
            break
    assert len(parts) > 3 and slowest < 30
    nodes = parse_snapshot("\n".join(parts))
    last = find_target(nodes, {"role": "button", "name": "Open", "nth": ROWS - 1,
                               "within": {"role": "table", "name": "Accounts"}})
    assert len([n for n in nodes if n.role == "button" and n.name == "Open"]) == ROWS
    assert last.ref is not None
    await tab.click(last.ref)
    assert await _text(stack, "#action") == f"open {ROWS - 1} true"
