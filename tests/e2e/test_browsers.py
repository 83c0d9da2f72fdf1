"""End to end, per browser: what doctor reports, Firefox's idle-background suspension, and
Camoufox's own launch options (humanize, uBlock) in a real Camoufox when it is installed.

The shared trusted-input suite (test_trusted_input.py) already runs in every browser;
this file pins what differs between them (docs/browsers.md).
"""

from __future__ import annotations

import asyncio
import secrets
import socket
import time

import pytest

from trustbridge.bridge.cli import _human
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.server import BridgeServer
from trustbridge.supervisor.browser_limits import driver_capabilities
from trustbridge.supervisor.runner import Supervisor

from .conftest import Origins, Stack, camoufox_missing, ref_of, wait_until

pytestmark = pytest.mark.browser

# runtime.getBrowserInfo() name in Gecko; Camoufox may report either name.
BROWSER_LABEL = {"chromium": ("Chromium ",), "firefox": ("Firefox ",),
                 "camoufox": ("Camoufox ", "Firefox ")}


async def test_doctor_shows_each_browsers_capabilities(stack: Stack, origins: Origins) -> None:
    """devices.list (what doctor prints) reports the engine's name and the capabilities of
    the extension and driver hellos, and closedShadowVisible matches what the snapshot
    really shows: the closed root's button, marked."""
    result = await stack.client.call("devices.list", {})
    (info,) = [d for d in result["devices"] if d["device"] == stack.device]
    assert info["capabilities"] == {**driver_capabilities(stack.browser),
                                    "closedShadowVisible": True, "syntheticInput": True,
                                    "requiresTrustedInput": True,
                                    # Sessions (docs/sessions.md): our headless launch is
                                    # no person's browser.
                                    "headed": False, "attended": False,
                                    # The CDP door on a person's browser: off until the
                                    # person allows it (docs/cdp.md).
                                    "cdpAllowed": False,
                                    # Its supervisor restarts a browser whose extension
                                    # stays away (issue 32 item 2; headless only).
                                    "watchesExtension": True}
    assert info["browser"].startswith(BROWSER_LABEL[stack.browser])
    line = _human("doctor", {"devices": [info]})
    assert "input trusted" in line
    caps = driver_capabilities(stack.browser)
    assert "closedShadowVisible=yes" in line
    assert f"coordinateRoute={'yes' if caps['coordinateRoute'] else 'no'}" in line
    await stack.client.call("page.navigate", {"url": f"{origins.main}/index.html"})
    snap = (await stack.client.call("page.snapshot", {}))["snapshot"]
    closed = [ln for ln in snap.splitlines() if '"Closed button"' in ln]
    assert len(closed) == 1 and "[closed-shadow]" in closed[0]


async def test_every_listed_tab_is_driven_and_one_is_active(stack: Stack) -> None:
    """Right after start, tabs.list shows only tabs the driver knows (one per Playwright
    page) and exactly one active tab: Firefox's undriven start-up window is closed."""
    tabs = (await stack.client.call("tabs.list", {}))["tabs"]
    assert len(tabs) == len(stack.supervisor.context.pages) == 1
    assert [t["active"] for t in tabs] == [True]
    new = await stack.client.call("tabs.new", {"url": "about:blank"})
    tabs = (await stack.client.call("tabs.list", {}))["tabs"]
    await wait_until(lambda: len(stack.supervisor.context.pages) == 2, 5)  # page event lag
    assert len(tabs) == 2
    assert [t["tabId"] for t in tabs if t["active"]] == [new["tabId"]]


@pytest.mark.firefox
async def test_firefox_keepalive_holds_the_background_past_its_idle_timeout() -> None:
    """Firefox suspends an idle MV3 background after extensions.background.idle.timeout.
    With that timeout cut to 2 s: a background without keep-alive loses its bridge
    connection (control), one with the keep-alive API call every 0.5 s keeps the same
    connection for 3x the timeout and still answers. Production: 30 s vs 20 s."""
    idle = {"extensions.background.idle.timeout": 2000}

    async def connection_survives(keep_alive_ms: int) -> bool:
        token = secrets.token_hex(16)
        async with BridgeServer(token, port=0) as server:
            async with Supervisor(server.url, token, "idle", browser="firefox",
                                  trusted_input=False, firefox_prefs=idle,
                                  keep_alive_ms=keep_alive_ms):
                await wait_until(lambda: "idle" in server.policy.extensions)
                peer = server.policy.extensions["idle"]
                deadline = time.monotonic() + 6.0
                while time.monotonic() < deadline:
                    if server.policy.extensions.get("idle") != peer:
                        return False
                    await asyncio.sleep(0.05)
                async with await BridgeClient.connect(server.url, token) as client:
                    tabs = await client.call("tabs.list", {})
                return server.policy.extensions.get("idle") == peer and bool(tabs["tabs"])

    assert await connection_survives(60_000) is False  # control: suspension is real
    assert await connection_survives(500) is True


@pytest.mark.camoufox
@pytest.mark.parametrize("humanize", [None, 1.0], ids=["plain", "humanize"])
async def test_camoufox_click_is_trusted_with_and_without_humanize(
    origins: Origins, humanize: float | None
) -> None:
    """In a real Camoufox, with the extension loaded as an addon and uBlock excluded, a
    click on a ref reaches the page trusted, with humanized cursor movement or without."""
    if missing := camoufox_missing():
        pytest.skip(missing)
    token = secrets.token_hex(16)
    async with BridgeServer(token, port=0) as server:
        async with Supervisor(server.url, token, "camou", browser="camoufox",
                              humanize=humanize) as sup:
            await wait_until(lambda: "camou" in server.policy.extensions
                             and "camou" in server.policy.drivers)
            async with await BridgeClient.connect(server.url, token) as client:
                await client.call("page.navigate", {"url": f"{origins.main}/index.html"})
                snap = (await client.call("page.snapshot", {}))["snapshot"]
                result = await client.call("page.act", {
                    "ref": ref_of(snap, "button", "Main button"), "action": {"kind": "click"}})
                assert result["inputPath"] == "trusted"
                events = await sup.context.pages[0].evaluate("window.__events")
                clicks = [e for e in events if e["type"] == "click"]
                assert clicks and all(e["trusted"] and e["target"] == "main-btn" for e in clicks)


# -- verbs a browser cannot deliver as asked are refused, never degraded ---------------------


async def _open_differences(stack: Stack, origins: Origins) -> str:
    await stack.client.call("page.navigate", {"url": f"{origins.main}/browsers.html"})
    return await stack.snapshot()


async def _page_events(stack: Stack) -> list[dict]:
    return await stack.page.evaluate("window.__events")


async def test_double_click_is_delivered_or_refused(stack: Stack, origins: Origins) -> None:
    """clickCount 2: Chromium delivers two trusted clicks (detail 1, 2) and a dblclick;
    Firefox refuses with TRUSTED_INPUT_UNAVAILABLE (it would send two single clicks) and
    the page sees nothing."""
    snap = await _open_differences(stack, origins)
    ref = ref_of(snap, "button", "Double me")
    if driver_capabilities(stack.browser)["multiClick"]:
        await stack.act(ref, kind="click", clickCount=2)
        seq = [(e["type"], e["trusted"], e["detail"]) for e in await _page_events(stack)
               if e["type"] in ("click", "dblclick")]
        assert seq == [("click", True, 1), ("click", True, 2), ("dblclick", True, 2)]
    else:
        with pytest.raises(E.TrustedInputUnavailable) as info:
            await stack.act(ref, kind="click", clickCount=2)
        assert info.value.details["capability"] == "multiClick"
        await asyncio.sleep(0.2)
        assert await _page_events(stack) == []
        await stack.act(ref, kind="click")  # a single click is still trusted
        clicks = [e for e in await _page_events(stack) if e["type"] == "click"]
        assert [(c["trusted"], c["detail"]) for c in clicks] == [(True, 1)]


async def test_text_beyond_the_us_layout_is_typed_trusted_or_refused(
    stack: Stack, origins: Origins
) -> None:
    """Typing "né✓": Chromium's input events for every character are trusted; Firefox
    refuses the whole text (é and ✓ would be inserted by script) and types nothing, and
    plain ASCII still types there with trusted keys."""
    snap = await _open_differences(stack, origins)
    ref = ref_of(snap, "textbox", "Word")
    if driver_capabilities(stack.browser)["unicodeText"]:
        await stack.act(ref, kind="type", text="né✓")
        inputs = [e for e in await _page_events(stack) if e["type"] == "input"]
        assert [e["data"] for e in inputs] == ["n", "é", "✓"]
        assert all(e["trusted"] for e in inputs)
        assert await stack.page.input_value("#word") == "né✓"
    else:
        with pytest.raises(E.TrustedInputUnavailable) as info:
            await stack.act(ref, kind="type", text="né✓")
        assert info.value.details == {"browser": info.value.details["browser"],
                                      "capability": "unicodeText", "characters": 2}
        assert "né" not in info.value.message  # the text itself is never echoed
        assert await _page_events(stack) == []
        assert await stack.page.input_value("#word") == ""
        await stack.act(ref, kind="type", text="ne")
        keys = [e for e in await _page_events(stack) if e["type"] == "keydown"]
        assert [(k["data"], k["trusted"]) for k in keys] == [(None, True), (None, True)]
        assert await stack.page.input_value("#word") == "ne"


async def test_html5_drag_is_dropped_or_refused(stack: Stack, origins: Origins) -> None:
    """Dragging a draggable element: Chromium runs dragstart then a trusted drop with the
    data; Firefox refuses (its drop would never fire) and nothing is pressed."""
    snap = await _open_differences(stack, origins)
    src, zone = ref_of(snap, "button", "Native source"), ref_of(snap, "region", "Drop zone")
    if driver_capabilities(stack.browser)["html5DragDrop"]:
        await stack.act(src, kind="drag", to=zone)
        assert await stack.page.text_content("#drop-zone") == "dropped payload"
        drops = [e for e in await _page_events(stack) if e["type"] == "drop"]
        assert [d["trusted"] for d in drops] == [True]
    else:
        with pytest.raises(E.TrustedInputUnavailable) as info:
            await stack.act(src, kind="drag", to=zone)
        assert info.value.details["capability"] == "html5DragDrop"
        await asyncio.sleep(0.2)
        assert await _page_events(stack) == []
        assert await stack.page.text_content("#drop-zone") == "Drop here"


async def test_pointer_drag_works_in_every_browser(stack: Stack, origins: Origins) -> None:
    """A drag with no HTML5 drag session (pointer events and capture) is delivered in
    every browser: trusted pointerdown on the knob, pointerup over the track."""
    snap = await _open_differences(stack, origins)
    await stack.act(ref_of(snap, "slider", "Pointer knob"), kind="drag",
                    to=ref_of(snap, "region", "Track"))
    assert await stack.page.text_content("#knob") == "on track"
    downs = [e for e in await _page_events(stack) if e["type"] == "pointerdown"]
    assert downs and all(e["trusted"] and e["target"] == "knob" for e in downs)


async def test_an_allowed_file_url_loads_in_chromium_and_is_refused_clearly_in_firefox(
        stack: Stack, tmp_path, monkeypatch) -> None:
    """With file: URLs allowed (--allow-file-urls), Chromium's extension loads one and its
    snapshot shows the file; Firefox does not let extensions open file: URLs (tabs.update
    and tabs.create answer "Illegal URL"), so page.navigate and tabs.new answer
    BAD_REQUEST with what to do instead, not INTERNAL_ERROR, and the tab still works."""
    page = tmp_path / "local.html"
    page.write_text("<!doctype html><title>Local</title><button>From a file</button>")
    monkeypatch.setattr(stack.server.executor, "allow_file_urls", True)
    url = page.as_uri()
    if stack.browser == "chromium":
        nav = await stack.client.call("page.navigate", {"url": url})
        assert nav["url"] == url
        assert '"From a file"' in await stack.snapshot()
        return
    for method, params in (("page.navigate", {"url": url}), ("tabs.new", {"url": url})):
        with pytest.raises(E.BadRequest, match="does not let extensions open file: URLs") as info:
            await stack.client.call(method, params)
        assert info.value.details == {"scheme": "file"}
        assert "http.server --bind 127.0.0.1" in info.value.to_payload().nextStep
    assert len((await stack.client.call("tabs.list", {}))["tabs"]) == 1
    await stack.client.call("page.navigate", {"url": "about:blank"})  # still answers


async def test_a_refused_connection_is_named_in_each_browser(stack: Stack) -> None:
    """A load of a closed loopback port fails with the network error's name: Chromium's
    net::ERR_CONNECTION_REFUSED, Firefox's NS_ERROR_CONNECTION_REFUSED (its extension API
    says only "Error code 2152398861")."""
    with socket.socket() as s:  # a port nobody listens on: bound, never listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        with pytest.raises(E.BadRequest, match="CONNECTION_REFUSED") as info:
            await stack.client.call("page.navigate", {"url": f"http://127.0.0.1:{port}/"})
    assert info.value.message.startswith("Navigation failed: ")
