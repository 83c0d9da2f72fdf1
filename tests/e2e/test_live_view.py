"""A person takes over a tab and hands it back through the live view (issue 37;
bridge/handover.py, bridge/live_view.py, supervisor/live.py).

The agent works through the MCP server (in-process, on the stack's bridge) or the SDK; a
second, plain Playwright browser plays the person: it opens the live-view link, sees the
tab's frames, types with its own keyboard into the live view and presses Done. The target
page records whether each event it saw was trusted (tests/e2e/pages/human)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import pytest
from mcp import Client
from playwright.async_api import Browser as PwBrowser
from playwright.async_api import async_playwright
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.mcp.options import McpOptions
from trustbridge.bridge.mcp.server import build_server
from trustbridge.bridge.mcp.session import Connection
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.sdk import Tab
from trustbridge.supervisor.launcher import find_chromium

from .conftest import Origins, Stack, page_eval, ref_of, wait_until

CODE = "481516"


@pytest.fixture(scope="module")
async def person() -> AsyncIterator[PwBrowser]:
    """The person's own browser: plain headless Chromium, no extension, no bridge."""
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(headless=True, executable_path=find_chromium())
        try:
            yield browser
        finally:
            await browser.close()


@asynccontextmanager
async def mcp_on(stack: Stack, logs: list[Any] | None = None) -> AsyncIterator[Client]:
    """An MCP client on a server on the stack's bridge; ``logs`` collects the server's
    logging notifications (``notifications/message`` params)."""
    conn = Connection(url=stack.server.url, token=stack.server.token, embedded=False,
                      options=McpOptions())

    async def on_log(params: Any) -> None:
        if logs is not None:
            logs.append(params)

    try:
        async with Client(build_server(conn), read_timeout_seconds=120,
                          logging_callback=on_log, log_level="info") as client:
            yield client
    finally:
        await conn.close()


async def call(client: Client, tool: str, **args: Any) -> tuple[str, bool]:
    result = await client.call_tool(tool, args)
    return "\n".join(c.text for c in result.content if c.type == "text"), result.is_error


def live_ws(url: str) -> str:
    return url.replace("http://", "ws://", 1) + "/ws"


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


async def link_of(stack: Stack, timeout_s: float = 30) -> tuple[str, str]:
    """(handover id, live URL) of the one hand-off on the stack's bridge, once made."""
    book = stack.server.executor.handovers
    await wait_until(lambda: len(book.by_id) == 1, timeout_s)
    hand = next(iter(book.by_id.values()))
    return hand.id, f"{stack.server.executor.base_url()}/live/{hand.secret}"


async def until(page: Any, expression: str, timeout_s: float = 20) -> None:
    """Poll ``expression`` in ``page`` until true (the live view's CSP forbids the eval
    that Playwright's wait_for_function needs)."""
    async def loop() -> None:
        while not await page.evaluate(expression):
            await asyncio.sleep(0.05)

    await asyncio.wait_for(loop(), timeout_s)


async def person_opens(person: PwBrowser, url: str) -> Any:
    """The person's page on the live view, once a frame is rendered."""
    page = await person.new_page(viewport={"width": 1400, "height": 1000})
    await page.goto(url)
    await until(page, "window.__live && window.__live.frames > 0 && "
                      "document.getElementById('screen').naturalWidth > 0")
    return page


async def person_clicks_on(live: Any, stack: Stack, target_css: str) -> None:
    """The person clicks, in the live view's picture, where ``target_css`` is on the tab."""
    box = await stack.page.locator(target_css).bounding_box()
    assert box is not None
    size = await live.evaluate("({w: innerWidth, h: innerHeight})")
    shown = await live.locator("#screen").bounding_box()
    view = await stack.page.evaluate("({w: innerWidth, h: innerHeight})")
    assert shown is not None and size
    x = shown["x"] + (box["x"] + box["width"] / 2) / view["w"] * shown["width"]
    y = shown["y"] + (box["y"] + box["height"] / 2) / view["h"] * shown["height"]
    await live.mouse.click(x, y)


async def test_the_person_types_the_2fa_code_and_the_agent_continues(
        stack: Stack, origins: Origins, person: PwBrowser) -> None:
    """MCP: fill the login, sign in (2FA page), browser_request_human; the person opens the
    link, sees the tab, clicks the code field and types the code with their keyboard,
    submits with Enter and presses Done. The page saw trusted events only; the tool's
    answer says "handed back" with the new URL and never the code; the agent then clicks
    Continue and the page confirms it."""
    logs: list[Any] = []
    progress: list[str | None] = []

    async def on_progress(_done: float, _total: float | None, message: str | None) -> None:
        progress.append(message)

    async with mcp_on(stack, logs) as mcp:
        text, err = await call(mcp, "browser_navigate", url=f"{origins.main}/human/login.html")
        assert not err, text
        state = text.split("### Page state\n", 1)[1]
        text, err = await call(mcp, "browser_type", element="User",
                               ref=ref_of(state, "textbox", "User"), text="ada")
        assert not err, text
        text, err = await call(mcp, "browser_type", element="Password",
                               ref=ref_of(state, "textbox", "Password"), text="pw-1",
                               submit=True)
        assert not err, text
        await wait_until(lambda: stack.page.url.endswith("/human/2fa.html"))
        await stack.page.wait_for_load_state()

        asked = asyncio.ensure_future(mcp.call_tool(
            "browser_request_human", {"reason": "Enter the 2FA code", "timeout": 120},
            progress_callback=on_progress))
        # The link reaches the client while the call is pending (a logging notification).
        await wait_until(lambda: bool(logs) or asked.done(), 30)
        assert logs, asked.result()
        url = logs[0].data["liveUrl"]
        assert url == (await link_of(stack))[1]
        assert progress and url in (progress[0] or ""), progress
        live = await person_opens(person, url)
        try:
            assert "Enter the 2FA code" in await live.locator("#reason").inner_text()
            await person_clicks_on(live, stack, "#code")
            await stack.page.wait_for_function(
                "document.activeElement && document.activeElement.id === 'code'",
                timeout=10_000)
            await live.keyboard.type(CODE)
            await live.keyboard.press("Enter")
            await wait_until(lambda: stack.page.url.endswith("/human/account.html"), 20)
            await live.click("#done")
            result = await asyncio.wait_for(asked, 30)
            text = "\n".join(c.text for c in result.content if c.type == "text")
            err = result.is_error
            await until(live, "window.__live.ended === 'handedBack'")
        finally:
            await live.close()
        assert not err, text
        assert "handed back" in text.lower(), text
        assert "/human/account.html" in text and "/human/2fa.html" in text, text
        assert CODE not in text, text
        seen = await page_eval(stack.page, "window.__seen")
        assert seen["keydown"] and all(seen["keydown"]), seen
        assert len(seen["keydown"]) >= len(CODE), seen
        assert seen["click"] and all(seen["click"]), seen
        assert await page_eval(stack.page, "document.getElementById('verified').textContent") \
            == "Verified"

        snap, err = await call(mcp, "browser_snapshot")
        assert not err, snap
        text, err = await call(mcp, "browser_click", element="Continue",
                               ref=ref_of(snap, "button", "Continue"))
        assert not err, text
        assert await page_eval(stack.page, "document.getElementById('done').textContent") \
            == "Finished: trusted"


async def test_agent_input_during_the_hand_off_is_refused(
        stack: Stack, origins: Origins) -> None:
    """While the tab is handed, the agent's own input and another session's both answer
    HANDED_TO_PERSON and nothing reaches the page; after a Cancel the agent acts again."""
    tab = Tab(stack.client, stack.device, None)
    await tab.goto(f"{origins.main}/human/account.html")
    asked = await tab.hand_to_human("Look at this", timeout=60)
    snap_ref = "e1"
    with pytest.raises(E.HandedToPerson) as refused:
        await stack.client.call("page.act", {"ref": snap_ref, "action": {"kind": "click"}})
    assert refused.value.handoverId == asked["handoverId"]
    with pytest.raises(E.HandedToPerson):
        await tab.snapshot()
    async with await BridgeClient.connect(stack.server.url, stack.server.token,
                                          operator=stack.server.operator_token) as other:
        with pytest.raises(E.HandedToPerson):
            await other.call("page.navigate", {"tabId": asked["tabId"],
                                               "url": f"{origins.main}/human/login.html"})
    assert stack.page.url.endswith("/human/account.html")
    # The person cancels (a raw socket of the page's own origin plays the live view).
    url = asked["liveUrl"]
    async with connect(live_ws(url), origin=origin_of(url)) as ws:
        hello = json.loads(await ws.recv())
        assert hello["type"] == "hello" and hello["reason"] == "Look at this"
        await ws.send(json.dumps({"type": "cancel"}))
        result = await tab.wait_for_human(asked["handoverId"])
    assert result["state"] == "cancelled" and result["opened"] is True
    snap = await tab.snapshot()
    await tab.click(ref_of(snap, "button", "Continue"))
    assert await page_eval(stack.page, "document.getElementById('done').textContent") \
        == "Finished: trusted"


async def test_the_live_view_refuses_a_second_opener_a_foreign_origin_and_late_input(
        stack: Stack, origins: Origins) -> None:
    """One opener per link (a second WebSocket gets 409, the page too); a foreign Origin
    gets 403; after Done, input on the socket is refused and never reaches the page."""
    tab = Tab(stack.client, stack.device, None)
    await tab.goto(f"{origins.main}/human/2fa.html")
    asked = await tab.hand_to_human("Type the code", timeout=60)
    url = asked["liveUrl"]
    with pytest.raises(InvalidStatus) as foreign:
        async with connect(live_ws(url), origin=origins.main):
            pass
    assert foreign.value.response.status_code == 403
    with pytest.raises(InvalidStatus) as no_origin:
        async with connect(live_ws(url)):
            pass
    assert no_origin.value.response.status_code == 403
    async with connect(live_ws(url), origin=origin_of(url)) as ws:
        assert json.loads(await ws.recv())["type"] == "hello"
        with pytest.raises(InvalidStatus) as second:
            async with connect(live_ws(url), origin=origin_of(url)):
                pass
        assert second.value.response.status_code == 409
        await ws.send(json.dumps({"type": "done"}))
        result = await tab.wait_for_human(asked["handoverId"])
        assert result["state"] == "handedBack"
        while (msg := json.loads(await ws.recv()))["type"] != "ended":
            pass
        await ws.send(json.dumps({"type": "input", "events": [
            {"type": "down", "x": 5, "y": 5}, {"type": "up", "x": 5, "y": 5},
            {"type": "keydown", "key": "7"}, {"type": "keyup", "key": "7"}]}))
        while (msg := json.loads(await ws.recv()))["type"] == "frame":
            pass
        assert msg["type"] == "refused", msg
    seen = await page_eval(stack.page, "window.__seen")
    assert seen == {"keydown": [], "click": [], "input": []}, seen
    with pytest.raises(InvalidStatus) as after:
        async with connect(live_ws(url), origin=origin_of(url)):
            pass
    assert after.value.response.status_code == 410


async def test_an_expired_link_is_refused(stack: Stack, origins: Origins,
                                          person: PwBrowser) -> None:
    """A link whose hand-off timed out: the page answers 410, the socket too; the agent's
    wait says timedOut and that nobody opened it."""
    tab = Tab(stack.client, stack.device, None)
    await tab.goto(f"{origins.main}/human/account.html")
    asked = await tab.hand_to_human("Too late", timeout=1)
    result = await tab.wait_for_human(asked["handoverId"])
    assert result["state"] == "timedOut" and result["opened"] is False
    page = await person.new_page()
    try:
        response = await page.goto(asked["liveUrl"])
        assert response is not None and response.status in (404, 410)
    finally:
        await page.close()
    url = asked["liveUrl"]
    with pytest.raises(InvalidStatus) as expired:
        async with connect(live_ws(url), origin=origin_of(url)):
            pass
    assert expired.value.response.status_code in (404, 410)


async def test_a_stop_ends_the_hand_off_and_the_live_view_takes_no_more_input(
        stack: Stack, origins: Origins) -> None:
    """Stop still stops everything: the session is stopped (here by the operator, as the
    browser's Stop button does through the extension) while its tab is handed; the wait
    answers ``stopped``, the live view is told and its input is refused."""
    tab = Tab(stack.client, stack.device, None)
    await tab.goto(f"{origins.main}/human/2fa.html")
    asked = await tab.hand_to_human("Type the code", timeout=60)
    url = asked["liveUrl"]
    label = (await stack.client.call("sessions.list", {}))["sessions"][0]["label"]
    async with connect(live_ws(url), origin=origin_of(url)) as ws:
        assert json.loads(await ws.recv())["type"] == "hello"
        waiting = asyncio.ensure_future(tab.wait_for_human(asked["handoverId"]))
        async with await BridgeClient.connect(stack.server.url, stack.server.token,
                                              operator=stack.server.operator_token) as op:
            await op.call("session.stop", {"label": label})
        result = await asyncio.wait_for(waiting, 20)
        assert result["state"] == "stopped", result
        while (msg := json.loads(await ws.recv()))["type"] != "ended":
            pass
        assert msg["state"] == "stopped"
        await ws.send(json.dumps({"type": "input", "events": [
            {"type": "keydown", "key": "7"}, {"type": "keyup", "key": "7"}]}))
        while (msg := json.loads(await ws.recv()))["type"] == "frame":
            pass
        assert msg["type"] == "refused", msg
    assert (await page_eval(stack.page, "window.__seen"))["keydown"] == []


async def test_the_extension_badge_says_a_person_is_asked_while_the_tab_is_handed(
        stack: Stack, origins: Origins) -> None:
    """Chromium (an extension page is needed to read the action's state; Firefox refuses
    to open one under automation, see test_session_popup.py): while the tab is handed, its
    toolbar badge says "YOU" and its title gives the reason; after the hand-off, the
    badge names the owning session again."""
    if stack.browser != "chromium":
        pytest.skip("reading the action badge needs an extension page, which Firefox does "
                    "not open under automation (tests/e2e/test_session_popup.py)")
    tab = Tab(stack.client, stack.device, None)
    await tab.goto(f"{origins.main}/human/account.html")
    asked = await tab.hand_to_human("Solve the CAPTCHA", timeout=60)
    workers = stack.supervisor.context.service_workers
    base = workers[0].url.rsplit("/", 1)[0] + "/"
    popup = await stack.supervisor.context.new_page()
    try:
        await popup.goto(f"{base}popup.html")

        async def state() -> list[str]:
            return await popup.evaluate(
                """async (tabId) => { const a = chrome.action;
                   return [await a.getBadgeText({tabId}), await a.getTitle({tabId})]; }""",
                asked["tabId"])

        async def until_state(check: Any) -> list[str]:
            for _ in range(200):
                now = await state()
                if check(now):
                    return now
                await asyncio.sleep(0.05)
            raise AssertionError(f"the badge stayed {now}")

        handed = await until_state(lambda s: s[0] == "YOU")
        assert handed[1].startswith("Your turn: Solve the CAPTCHA"), handed
        url = asked["liveUrl"]
        async with connect(live_ws(url), origin=origin_of(url)) as ws:
            await ws.send(json.dumps({"type": "cancel"}))
            assert (await tab.wait_for_human(asked["handoverId"]))["state"] == "cancelled"
        back = await until_state(lambda s: s[0] != "YOU")
        assert back[1].startswith("Session ") and back[1].endswith("owns this tab"), back
    finally:
        await popup.close()


async def test_frames_keep_coming_after_the_person_goes_to_another_site(
        stack: Stack, origins: Origins, person: PwBrowser) -> None:
    """A login that goes through another site (a cross-site navigation: Chromium swaps the
    tab's renderer process): the person clicks the link in the live view, and the live
    view keeps showing the tab afterwards (new frames arrive)."""
    tab = Tab(stack.client, stack.device, None)
    await tab.goto(f"{origins.main}/human/away.html?to={origins.other}")
    asked = await tab.hand_to_human("Sign in with the identity provider", timeout=60)
    live = await person_opens(person, asked["liveUrl"])
    try:
        await person_clicks_on(live, stack, "#away")
        await wait_until(lambda: stack.page.url.startswith(origins.other), 20)
        await stack.page.wait_for_load_state()
        frames = await live.evaluate("window.__live.frames")
        await stack.page.evaluate("document.body.style.background = 'rgb(200, 0, 0)'")
        await until(live, f"window.__live.frames > {frames}")
        await live.click("#done")
        result = await tab.wait_for_human(asked["handoverId"])
    finally:
        await live.close()
    assert result["state"] == "handedBack"
    assert result["after"]["url"].startswith(origins.other), result
    assert result["navigations"] >= 1 and result["personInput"]["clicks"] == 1, result


async def test_the_cli_prints_the_link_at_once_and_how_the_hand_off_ended(
        stack: Stack, origins: Origins, tmp_path: Any, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``trustbridge human REASON``: the link is on stderr while the command waits; the
    person (a raw socket of the page's origin) hands back; the command prints the state
    and the URL, and exits 0."""
    if stack.browser != "chromium":
        pytest.skip("the CLI's logic does not depend on the browser (Chromium covers it)")
    import os

    from trustbridge.bridge import cli

    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    token_file = tmp_path / "bridge-token"
    token_file.write_text(stack.server.token)
    os.chmod(token_file, 0o600)
    await Tab(stack.client, stack.device, None).goto(f"{origins.main}/human/account.html")
    await stack.release()  # the tab is free for the CLI's session
    args = cli.build_parser().parse_args(
        ["human", "Check the page", "--timeout", "60", "--bridge", stack.server.url,
         "--token-file", str(token_file)])
    running = asyncio.ensure_future(cli._cmd_client(args))
    err = ""
    for _ in range(400):
        err += capsys.readouterr().err
        if "/live/" in err or running.done():
            break
        await asyncio.sleep(0.05)
    url = err.split("open ", 1)[1].split()[0]
    async with connect(live_ws(url), origin=origin_of(url)) as ws:
        await ws.send(json.dumps({"type": "done"}))
        assert await asyncio.wait_for(running, 30) == cli.EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith("hand-off handedBack: ") and "/human/account.html" in out, out


async def test_what_the_person_typed_is_masked_in_the_agents_next_snapshot(
        stack: Stack, origins: Origins) -> None:
    """The person types into a field no page hint marks sensitive (the extension masks a
    password or one-time-code field by itself) and hands back without submitting: the page
    holds the text, and the agent's next snapshot shows it masked, never in clear."""
    tab = Tab(stack.client, stack.device, None)
    await tab.goto(f"{origins.main}/human/login.html")
    asked = await tab.hand_to_human("Type your user name", timeout=60)
    box = await stack.page.locator("#user").bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    url = asked["liveUrl"]
    code = "9731"
    async with connect(live_ws(url), origin=origin_of(url)) as ws:
        events: list[dict[str, Any]] = [{"type": "down", "x": x, "y": y},
                                        {"type": "up", "x": x, "y": y}]
        for key in code:
            events += [{"type": "keydown", "key": key}, {"type": "keyup", "key": key}]
        await ws.send(json.dumps({"type": "input", "events": events}))
        await stack.page.wait_for_function(
            f"document.getElementById('user').value === '{code}'", timeout=10_000)
        await ws.send(json.dumps({"type": "done"}))
        result = await tab.wait_for_human(asked["handoverId"])
    assert result["state"] == "handedBack" and result["personInput"]["keys"] == len(code)
    assert code not in json.dumps(result)
    snap = await tab.snapshot()
    assert code not in snap, snap
    assert "••••••" in snap, snap


async def test_a_cancelled_wait_takes_the_tab_back(stack: Stack, origins: Origins) -> None:
    """The agent stops waiting (its SDK call is cancelled): the hand-off ends as
    ``withdrawn``, the live view is told and takes no more input, and the agent's requests
    on the tab work again."""
    tab = Tab(stack.client, stack.device, None)
    await tab.goto(f"{origins.main}/human/account.html")
    links: list[dict[str, Any]] = []
    waiting = asyncio.ensure_future(tab.request_human("Look", timeout=60,
                                                      on_link=links.append))
    await wait_until(lambda: bool(links), 20)
    url = links[0]["liveUrl"]
    async with connect(live_ws(url), origin=origin_of(url)) as ws:
        assert json.loads(await ws.recv())["type"] == "hello"
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        while (msg := json.loads(await ws.recv()))["type"] != "ended":
            pass
        assert msg["state"] == "withdrawn"
    snap = await tab.snapshot()
    await tab.click(ref_of(snap, "button", "Continue"))
    assert await page_eval(stack.page, "document.getElementById('done').textContent") \
        == "Finished: trusted"


async def test_a_handed_tab_that_closes_ends_the_hand_off(stack: Stack, origins: Origins) -> None:
    """The handed tab closes (here its Playwright page; a person could close it in a
    headed browser): the wait answers ``tabClosed`` with no page after, well before the
    timeout."""
    tab = Tab(stack.client, stack.device, None)
    opened = await stack.client.call("tabs.new", {"url": f"{origins.main}/human/account.html"})
    handed = Tab(stack.client, stack.device, opened["tabId"])
    asked = await handed.hand_to_human("Look", timeout=600)
    await wait_until(lambda: any(p.url.endswith("/human/account.html")
                                 for p in stack.supervisor.context.pages))
    page = next(p for p in stack.supervisor.context.pages
                if p.url.endswith("/human/account.html"))
    await page.close()
    result = await asyncio.wait_for(tab.wait_for_human(asked["handoverId"]), 30)
    assert result["state"] == "tabClosed" and result["after"] is None, result


async def test_mcp_wait_false_answers_the_link_at_once_then_waits_by_handover_id(
        stack: Stack, origins: Origins) -> None:
    """For a client that shows no notifications: ``wait: false`` answers the link and a
    handoverId at once; meanwhile an MCP action on the tab is a HANDED_TO_PERSON tool
    error; ``handoverId`` then waits for the person's hand-back."""
    if stack.browser != "chromium":
        pytest.skip("the MCP tool's logic does not depend on the browser (Chromium covers it)")
    async with mcp_on(stack) as mcp:
        text, err = await call(mcp, "browser_navigate", url=f"{origins.main}/human/account.html")
        assert not err, text
        ref = ref_of(text.split("### Page state\n", 1)[1], "button", "Continue")
        text, err = await call(mcp, "browser_request_human", reason="Check it", wait=False)
        assert not err, text
        url = text.split("Give this link to your user now", 1)[1].split(": ", 1)[1].split()[0]
        handover = text.split("handoverId '", 1)[1].split("'", 1)[0]
        assert "/live/" in url
        clicked, err = await call(mcp, "browser_click", element="Continue", ref=ref)
        assert err and "HANDED_TO_PERSON" in clicked, clicked
        assert await page_eval(stack.page, "document.getElementById('done').textContent") == ""
        async with connect(live_ws(url), origin=origin_of(url)) as ws:
            await ws.send(json.dumps({"type": "done"}))
            text, err = await call(mcp, "browser_request_human", handoverId=handover)
        assert not err and "state: handedBack" in text, text
        text, err = await call(mcp, "browser_click", element="Continue", ref=ref)
        assert not err, text
        assert await page_eval(stack.page, "document.getElementById('done').textContent") \
            == "Finished: trusted"


async def test_a_cancelled_mcp_call_takes_the_tab_back(stack: Stack, origins: Origins) -> None:
    """The MCP client cancels browser_request_human while it waits: the server takes the
    tab back (withdrawn), so the next tool call on the tab works."""
    if stack.browser != "chromium":
        pytest.skip("the MCP tool's logic does not depend on the browser (Chromium covers it)")
    async with mcp_on(stack) as mcp:
        text, err = await call(mcp, "browser_navigate", url=f"{origins.main}/human/account.html")
        assert not err, text
        ref = ref_of(text.split("### Page state\n", 1)[1], "button", "Continue")
        asked = asyncio.ensure_future(call(mcp, "browser_request_human", reason="Look"))
        hid, _ = await link_of(stack)
        hand = stack.server.executor.handovers.by_id[hid]
        asked.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asked
        await asyncio.wait_for(hand.done.wait(), 10)
        assert hand.state == "withdrawn"
        text, err = await call(mcp, "browser_click", element="Continue", ref=ref)
        assert not err, text
