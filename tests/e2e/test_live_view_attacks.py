"""Attacks on the live view and the hand-off (issue 37): what the person typed must not
reach the agent in any answer, and the person's input must reach the page as sent.

The person is played by a raw WebSocket on the live view (as tests/e2e/test_live_view.py
does); the target page records what it saw."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from websockets.asyncio.client import connect

from trustbridge.bridge.sdk import Tab

from .conftest import Origins, Stack, wait_until
from .test_live_view import live_ws, origin_of


def keys(text: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for key in text:
        events += [{"type": "keydown", "key": key}, {"type": "keyup", "key": key}]
    return events


async def click_events(stack: Stack, css: str) -> list[dict[str, Any]]:
    box = await stack.page.locator(css).bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    return [{"type": "down", "x": x, "y": y}, {"type": "up", "x": x, "y": y}]


async def test_a_code_the_person_submits_in_a_get_form_is_not_in_the_wait_answer(
        stack: Stack, origins: Origins) -> None:
    """The person types a 2FA code into a plain GET form and presses Enter: the next
    page's URL carries ``?c=<code>``. The agent's answer (``after.url``) must not show the
    code, as its snapshots do not."""
    tab = Tab(stack.client, stack.device, None)
    await tab.goto(f"{origins.main}/human/2fa_get.html")
    asked = await tab.hand_to_human("Enter the 2FA code", timeout=60)
    code = "730519"
    url = asked["liveUrl"]
    async with connect(live_ws(url), origin=origin_of(url)) as ws:
        events = await click_events(stack, "#code") + keys(code) + [
            {"type": "keydown", "key": "Enter"}, {"type": "keyup", "key": "Enter"}]
        await ws.send(json.dumps({"type": "input", "events": events}))
        await wait_until(lambda: "account.html" in stack.page.url, 20)
        assert f"c={code}" in stack.page.url  # what the page did with it
        await ws.send(json.dumps({"type": "done"}))
        result = await tab.wait_for_human(asked["handoverId"])
    assert result["state"] == "handedBack", result
    assert "account.html" in result["after"]["url"], result
    assert code not in json.dumps(result), result


async def test_characters_off_the_us_layout_reach_the_page(
        stack: Stack, origins: Origins) -> None:
    """The person types characters a US keyboard has no key for (an accented name, a
    password with ``€``): each reaches the field as typed, none is dropped silently."""
    tab = Tab(stack.client, stack.device, None)
    await tab.goto(f"{origins.main}/human/login.html")
    asked = await tab.hand_to_human("Type your name", timeout=60)
    typed = "Zoë €5 ü"
    url = asked["liveUrl"]
    async with connect(live_ws(url), origin=origin_of(url)) as ws:
        events = await click_events(stack, "#user") + keys(typed)
        await ws.send(json.dumps({"type": "input", "events": events}))
        await ws.send(json.dumps({"type": "done"}))
        result = await tab.wait_for_human(asked["handoverId"])
        errors = []
        while (msg := json.loads(await ws.recv()))["type"] != "ended":
            if msg["type"] == "error":
                errors.append(msg)
    assert result["state"] == "handedBack", result
    value = await stack.page.evaluate("document.getElementById('user').value")
    assert value == typed, (value, errors)


async def test_a_key_the_browser_does_not_know_is_said_not_dropped(
        stack: Stack, origins: Origins) -> None:
    """A key name no browser knows (``Unidentified``, what a dead key or an IME may
    report): the person's page is told it was not sent; the keys around it arrive."""
    tab = Tab(stack.client, stack.device, None)
    await tab.goto(f"{origins.main}/human/login.html")
    asked = await tab.hand_to_human("Type your name", timeout=60)
    url = asked["liveUrl"]
    async with connect(live_ws(url), origin=origin_of(url)) as ws:
        events = await click_events(stack, "#user") + keys("ab") + [
            {"type": "keydown", "key": "Unidentified"}] + keys("cd")
        await ws.send(json.dumps({"type": "input", "events": events}))
        while (msg := json.loads(await ws.recv()))["type"] != "error":
            pass
        assert "not sent" in msg["message"], msg
        await ws.send(json.dumps({"type": "done"}))
        result = await tab.wait_for_human(asked["handoverId"])
    assert result["state"] == "handedBack", result
    assert await stack.page.evaluate("document.getElementById('user').value") == "abcd"


async def test_a_key_and_a_button_the_person_left_held_do_not_stick_to_the_agents_input(
        stack: Stack, origins: Origins) -> None:
    """The person's live view sends Shift down and a mouse button down and hands back
    without releasing them (a page closed mid-press, a crafted socket): the agent's next
    typing must type what it asked, not shifted text (Firefox typed "ABC" for "abc"). The
    driver releases the keys and buttons the person held when the hand-off ends."""
    tab = Tab(stack.client, stack.device, None)
    await tab.goto(f"{origins.main}/human/login.html")
    asked = await tab.hand_to_human("Type your name", timeout=60)
    url = asked["liveUrl"]
    box = await stack.page.locator("h1").bounding_box()
    assert box is not None
    async with connect(live_ws(url), origin=origin_of(url)) as ws:
        await ws.send(json.dumps({"type": "input", "events": [
            {"type": "keydown", "key": "Shift"},
            {"type": "down", "x": box["x"] + 2, "y": box["y"] + 2}]}))
        await ws.send(json.dumps({"type": "done"}))
        result = await tab.wait_for_human(asked["handoverId"])
    assert result["state"] == "handedBack", result
    snap = await tab.snapshot()
    user = next(line for line in snap.splitlines() if 'textbox "User"' in line)
    ref = user.split("[ref=", 1)[1].split("]", 1)[0]
    await tab.type(ref, "abc")
    assert await stack.page.evaluate("document.getElementById('user').value") == "abc"


async def test_a_new_blank_tab_can_be_handed_and_shows_its_screen(
        stack: Stack, origins: Origins) -> None:
    """A tab the agent just opened (about:blank, where the extension runs no script) is
    handed to a person: the live view shows its screen and takes input, as every page
    tool now works on a blank tab (was: "No screen: The tab shows about:blank", and every
    event "has no live view running")."""
    from trustbridge.bridge.sdk import Browser

    browser = Browser(stack.client, stack.device)
    new = await browser.new_tab()
    asked = await new.hand_to_human("Look at the new tab", timeout=60)
    url = asked["liveUrl"]
    async with connect(live_ws(url), origin=origin_of(url)) as ws:
        kinds = []
        while (msg := json.loads(await asyncio.wait_for(ws.recv(), 20)))["type"] != "frame":
            kinds.append(msg)
            assert msg["type"] == "hello", kinds
        await ws.send(json.dumps({"type": "input", "events": [
            {"type": "down", "x": 5, "y": 5}, {"type": "up", "x": 5, "y": 5}]}))
        await ws.send(json.dumps({"type": "done"}))
        while (msg := json.loads(await asyncio.wait_for(ws.recv(), 20)))["type"] != "ended":
            assert msg["type"] == "frame", msg
        result = await new.wait_for_human(asked["handoverId"])
    assert result["state"] == "handedBack" and result["personInput"]["clicks"] == 1, result
    await browser.close_tab(result["tabId"])


async def test_a_huge_message_on_the_live_view_socket_closes_it_and_the_bridge_goes_on(
        stack: Stack, origins: Origins) -> None:
    """A 1 MiB message on the live view's socket (the page sends a few hundred bytes):
    the socket is closed as too big (1009) instead of the bridge parsing megabytes per
    message up to its 32 MiB peer limit; the hand-off ends (``closed``) and the agent
    acts again."""
    from websockets.exceptions import ConnectionClosed

    tab = Tab(stack.client, stack.device, None)
    await tab.goto(f"{origins.main}/human/login.html")
    asked = await tab.hand_to_human("Type your name", timeout=60)
    url = asked["liveUrl"]
    async with connect(live_ws(url), origin=origin_of(url), max_size=None) as ws:
        assert json.loads(await ws.recv())["type"] == "hello"
        await ws.send(json.dumps({"type": "input", "pad": "x" * (1024 * 1024)}))
        try:
            while True:
                msg = json.loads(await asyncio.wait_for(ws.recv(), 20))
                assert msg["type"] in ("frame", "error"), msg
                assert msg["type"] != "error", msg  # parsed: "Unknown message" before
        except ConnectionClosed as closed:
            assert closed.rcvd is not None and closed.rcvd.code == 1009, closed
    result = await tab.wait_for_human(asked["handoverId"])
    assert result["state"] == "closed", result
    assert "Sign in" in await tab.snapshot()


async def test_an_odd_timeout_is_a_clear_error_in_seconds(
        stack: Stack, origins: Origins, tmp_path: Any, monkeypatch: Any,
        capsys: Any) -> None:
    """``trustbridge human REASON --timeout nan`` (or ``inf``) ended in a ValueError /
    OverflowError out of the SDK, and ``--timeout 0.5`` answered "timeoutMs ... >= 1000",
    a unit the user never gave. Each is now BAD_REQUEST naming ``timeout`` in seconds,
    nothing is handed, and the agent acts on the tab after."""
    if stack.browser != "chromium":
        pytest.skip("the CLI's and SDK's checks do not depend on the browser")
    import os

    from trustbridge.bridge import cli
    from trustbridge.bridge.protocol import errors as E

    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    token_file = tmp_path / "bridge-token"
    token_file.write_text(stack.server.token)
    os.chmod(token_file, 0o600)
    tab = Tab(stack.client, stack.device, None)
    await tab.goto(f"{origins.main}/human/account.html")
    for odd in (float("nan"), float("inf"), 0.5, -5, 4000):
        with pytest.raises(E.BadRequest, match="seconds from 1 to 3600"):
            await tab.hand_to_human("Check", timeout=odd)
    assert not stack.server.executor.handovers.by_id
    await stack.release()  # the tab is free for the CLI's session
    for odd in ("nan", "inf", "0.5"):
        args = cli.build_parser().parse_args(
            ["human", "Check", "--timeout", odd, "--bridge", stack.server.url,
             "--token-file", str(token_file)])
        assert await asyncio.wait_for(cli._cmd_client(args), 20) != cli.EXIT_OK
        err = capsys.readouterr().err
        assert "BAD_REQUEST" in err and "seconds from 1 to 3600" in err, err
    assert not stack.server.executor.handovers.by_id
    assert "account" in (await Tab(stack.client, stack.device, None).snapshot()).lower()


async def test_mcp_next_steps_during_a_hand_off_name_what_works(
        stack: Stack, origins: Origins) -> None:
    """A tool on the handed tab answers HANDED_TO_PERSON; its next step said "Call
    browser_snapshot to see the page's current state", which is refused the same way. It
    names the wait (browser_request_human with the handoverId) and another tab. A wait
    for an unknown handoverId named the wire method human.request, no MCP tool."""
    if stack.browser != "chromium":
        pytest.skip("the MCP server's wording does not depend on the browser")
    from .test_live_view import call, mcp_on

    async with mcp_on(stack) as mcp:
        text, err = await call(mcp, "browser_navigate", url=f"{origins.main}/human/login.html")
        assert not err, text
        text, err = await call(mcp, "browser_request_human", reason="Sign in", wait=False,
                               timeout=5)
        assert not err, text
        hand = text.split("handoverId '", 1)[1].split("'", 1)[0]
        for tool in ("browser_snapshot", "browser_click"):
            args = {"element": "User", "ref": "e2"} if tool == "browser_click" else {}
            text, err = await call(mcp, tool, **args)
            assert err and "HANDED_TO_PERSON" in text, text
            step = text.split("Next step: ", 1)[1]
            assert "browser_snapshot" not in step.split("then")[0], step
            assert "browser_request_human" in step and hand in step, step
        text, err = await call(mcp, "browser_request_human", handoverId="nope")
        assert err and "human.request" not in text, text
        assert "browser_request_human" in text.split("Next step: ", 1)[1], text
        text, err = await call(mcp, "browser_request_human", handoverId=hand)
        assert not err and "timedOut" in text, text


async def test_what_the_person_typed_in_two_fields_is_masked_in_both(
        stack: Stack, origins: Origins) -> None:
    """The person clicks one plain text field and types, then clicks another and types
    (security answers): both values are masked in the agent's next snapshot. A click did
    not end the run of typed characters, so the bridge remembered one run holding both
    values, which matched no text on the page, and both showed in clear."""
    tab = Tab(stack.client, stack.device, None)
    await tab.goto(f"{origins.main}/human/questions.html")
    asked = await tab.hand_to_human("Answer the questions", timeout=60)
    url = asked["liveUrl"]
    city, pet = "Paris1990", "Rex-the-dog"
    async with connect(live_ws(url), origin=origin_of(url)) as ws:
        events = (await click_events(stack, "#city") + keys(city)
                  + await click_events(stack, "#pet") + keys(pet))
        await ws.send(json.dumps({"type": "input", "events": events}))
        await stack.page.wait_for_function(
            f"document.getElementById('pet').value === '{pet}'", timeout=10_000)
        assert await stack.page.evaluate("document.getElementById('city').value") == city
        await ws.send(json.dumps({"type": "done"}))
        result = await tab.wait_for_human(asked["handoverId"])
    assert result["state"] == "handedBack", result
    snap = await tab.snapshot()
    assert city not in snap and pet not in snap, snap


async def test_the_agent_cannot_open_the_live_view_in_its_own_browser(
        stack: Stack, origins: Origins) -> None:
    """The agent has the link (to relay it): it opens it in a new tab of its own browser
    and clicks "Done — hand back". The live view there must not claim the hand-off: the
    answer said "Handed back: the person gave the tab back" though no person did. The
    hand-off stays pending for the real person."""
    if stack.browser != "chromium":
        pytest.skip("the bridge's check does not depend on the browser")
    import re

    from .test_live_view import call, mcp_on

    async with mcp_on(stack) as mcp:
        text, err = await call(mcp, "browser_navigate", url=f"{origins.main}/human/login.html")
        assert not err, text
        text, err = await call(mcp, "browser_request_human", reason="Sign in", wait=False,
                               timeout=10)
        assert not err, text
        link = re.search(r"(http://\S+/live/[\w-]+)", text)
        assert link, text
        hid = text.split("handoverId '", 1)[1].split("'", 1)[0]
        hand = stack.server.executor.handovers.by_id[hid]
        await call(mcp, "browser_tabs", action="new")
        await call(mcp, "browser_navigate", url=link.group(1))
        snap = await call(mcp, "browser_snapshot")
        done = re.search(r'button "Done[^\n]*\[ref=(\w+)\]', snap[0])
        if done:  # the page may still show; its button must do nothing
            await call(mcp, "browser_click", element="Done", ref=done.group(1))
        await asyncio.sleep(1)
        assert hand.opener is None and hand.state == "pending", hand.state
        text, err = await call(mcp, "browser_request_human", handoverId=hid)
        assert not err and "timedOut" in text and "never opened" in text, text
