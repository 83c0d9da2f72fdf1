"""A click whose receipt says a file input was clicked (``fileInput``: the page's button
called ``input.click()``) and whose driver answer names no file chooser: the bridge asks
the driver (``driver.fileChooser``) and merges the chooser it saw (bridge/executor.py,
bridge/after_input.py ``file_chooser``). Real BridgeServer over loopback WebSockets, with
the fake peers of tests/bridge/test_executor.py."""

# The fixtures come from test_executor.py; naming them as arguments "redefines" them.
# ruff: noqa: F811

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from trustbridge.bridge import after_input
from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.protocol import errors as E

from .fakes import wait_until
from .test_executor import (  # noqa: F401 (fixtures)
    HeldDriver,
    HeldExtension,
    bounded,
    click,
    client,
    drv,
    ext,
    no_late_wait,
    server,
)

pytestmark = [pytest.mark.timeout(30), pytest.mark.usefixtures("no_late_wait")]

FIRST = {"tabId": 1, "receiptId": "r1", "delivered": True, "events": ["click", "pointerdown"]}
AGAIN = {**FIRST, "fileInput": True}


async def act(client: BridgeClient, ext: HeldExtension, drv: HeldDriver,
              *pushes: dict[str, Any]) -> dict[str, Any]:
    """One click; ``pushes`` are sent while its driver.act is held (as the page's
    listeners push them during the click)."""
    drv.release.clear()
    before = drv.methods().count("driver.act")
    task = asyncio.create_task(client.call("page.act", click()))
    await bounded(wait_until(lambda: drv.methods().count("driver.act") > before))
    for pushed in pushes:
        await ext.send_event("page.receipt", pushed)
    await asyncio.sleep(0.05)  # the bridge has read the events before the answer
    drv.release.set()
    return await bounded(task)


async def test_a_second_push_with_file_input_makes_the_bridge_ask_the_driver(
    client: BridgeClient, ext: HeldExtension, drv: HeldDriver
) -> None:
    """First push, then the repeat with fileInput; the driver's answer has no chooser: the
    bridge asks driver.fileChooser for the target's page (bounded 2000 ms) and reports the
    chooser it returns; fileInput itself never reaches the client."""
    drv.results["driver.fileChooser"] = {"fileChooser": {"multiple": True}}
    result = await act(client, ext, drv, FIRST, AGAIN)
    assert result["fileChooser"] == {"multiple": True}
    assert result["delivered"] is True and "fileInput" not in result
    sent = await drv.wait_for_request("driver.fileChooser")
    assert sent.params == {"frameToken": "tok", "timeoutMs": after_input.FILE_CHOOSER_WAIT_MS}
    assert "page.receipt" not in ext.methods()


async def test_no_chooser_from_the_driver_means_none_is_claimed(
    client: BridgeClient, ext: HeldExtension, drv: HeldDriver
) -> None:
    """driver.fileChooser answers {} (none came within its bound) or fails: the click's
    result names no chooser, and the click still succeeds."""
    drv.results["driver.fileChooser"] = {}
    result = await act(client, ext, drv, AGAIN)
    assert "fileChooser" not in result and result["delivered"] is True
    drv.errors["driver.fileChooser"] = E.FrameTokenUnknown("gone")
    result = await act(client, ext, drv, AGAIN)
    assert "fileChooser" not in result and result["done"] is True
    assert drv.methods().count("driver.fileChooser") == 2


async def test_without_the_sign_or_with_a_chooser_already_the_driver_is_not_asked(
    client: BridgeClient, ext: HeldExtension, drv: HeldDriver
) -> None:
    """No fileInput: no driver.fileChooser (no click pays for a sign it did not give). A
    driver answer that names this click's chooser already: not asked either; one that
    names only an earlier action's ``late`` chooser: asked, and this click's replaces it."""
    drv.results["driver.fileChooser"] = {"fileChooser": {"multiple": False}}
    result = await act(client, ext, drv, FIRST)
    assert "fileChooser" not in result
    assert "driver.fileChooser" not in drv.methods()
    drv.results["driver.act"] = {**drv.results["driver.act"], "fileChooser": {"multiple": True}}
    result = await act(client, ext, drv, AGAIN)
    assert result["fileChooser"] == {"multiple": True}
    assert "driver.fileChooser" not in drv.methods()
    drv.results["driver.act"] = {**drv.results["driver.act"],
                                 "fileChooser": {"multiple": True, "late": True}}
    result = await act(client, ext, drv, AGAIN)
    assert result["fileChooser"] == {"multiple": False}
    assert drv.methods().count("driver.fileChooser") == 1


async def test_the_read_receipt_carries_the_sign_too(
    client: BridgeClient, ext: HeldExtension, drv: HeldDriver
) -> None:
    """No push came (the bridge reads page.receipt): its fileInput counts the same."""
    ext.results["page.receipt"] = {"delivered": True, "events": ["click"], "fileInput": True}
    drv.results["driver.fileChooser"] = {"fileChooser": {"multiple": False}}
    result = await act(client, ext, drv)
    assert result["fileChooser"] == {"multiple": False} and "fileInput" not in result
    assert "page.receipt" in ext.methods()


DOWNLOADED = {"suggestedFilename": "report.txt", "path": "/tmp/x/report.txt", "bytes": 19}


async def test_a_download_sign_makes_the_bridge_ask_the_driver_for_it(
    client: BridgeClient, ext: HeldExtension, drv: HeldDriver
) -> None:
    """The receipt says download (the page's handler clicked a download link) and the
    driver's answer names none: the bridge asks driver.download for the target's page
    (bounded 2000 ms) and reports what it saw; no sign, or a download already in the
    answer, asks nothing; the sign itself never reaches the client."""
    drv.results["driver.download"] = {"downloads": [DOWNLOADED]}
    result = await act(client, ext, drv, {**FIRST, "download": True})
    assert result["downloads"] == [DOWNLOADED] and "download" not in result
    sent = await drv.wait_for_request("driver.download")
    assert sent.params == {"frameToken": "tok", "timeoutMs": after_input.DOWNLOAD_WAIT_MS}
    await act(client, ext, drv, FIRST)
    drv.results["driver.act"] = {"done": True, "action": "click",
                                 "postActionDocumentChanged": False, "downloads": [DOWNLOADED]}
    again = await act(client, ext, drv, {**FIRST, "download": True})
    assert again["downloads"] == [DOWNLOADED]
    assert drv.methods().count("driver.download") == 1
    drv.results["driver.act"] = {"done": True, "action": "click",
                                 "postActionDocumentChanged": False}
    drv.results["driver.download"] = {}
    none = await act(client, ext, drv, {**FIRST, "download": True})
    assert "downloads" not in none and none["delivered"] is True


async def test_a_submission_sign_makes_the_bridge_ask_the_driver_for_the_navigation(
    client: BridgeClient, ext: HeldExtension, drv: HeldDriver
) -> None:
    """The receipt says navigates (a form is being submitted; its push may be the second)
    and the driver's answer says no document change: the bridge asks driver.navigation
    for the answer's own late watch (bounded 2000 ms) and the result says what the driver
    saw. An answer that already says the document changed, one with no watch, or no sign,
    asks nothing; neither the sign nor the watch id reaches the client."""
    no_change = {"done": True, "action": "click", "postActionDocumentChanged": False}
    drv.results["driver.act"] = {**no_change, "lateNavigation": "n7"}
    drv.results["driver.navigation"] = {"postActionDocumentChanged": True}
    result = await act(client, ext, drv, FIRST, {**FIRST, "navigates": True})
    assert result["postActionDocumentChanged"] is True
    assert "navigates" not in result and "lateNavigation" not in result
    sent = await drv.wait_for_request("driver.navigation")
    assert sent.params == {"watch": "n7", "timeoutMs": after_input.NAVIGATION_WAIT_MS}
    drv.results["driver.navigation"] = {"postActionDocumentChanged": False}
    none = await act(client, ext, drv, {**FIRST, "navigates": True})
    assert none["postActionDocumentChanged"] is False  # nothing came: none is claimed
    assert drv.methods().count("driver.navigation") == 2
    plain = await act(client, ext, drv, FIRST)
    assert "lateNavigation" not in plain
    drv.results["driver.act"] = no_change  # no watch (not a click): nothing to ask
    await act(client, ext, drv, {**FIRST, "navigates": True})
    drv.results["driver.act"] = {"done": True, "action": "click",
                                 "postActionDocumentChanged": True}
    seen = await act(client, ext, drv, {**FIRST, "navigates": True})
    assert seen["postActionDocumentChanged"] is True
    assert drv.methods().count("driver.navigation") == 2
