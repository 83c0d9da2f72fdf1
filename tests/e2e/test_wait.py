"""page.wait {text}: answered from each frame's MutationObserver (extension/src/page/wait.js),
across frames, counting rendered text only."""

from __future__ import annotations

import asyncio

import pytest

from trustbridge.bridge.protocol import errors as E

from .conftest import Origins, Stack

pytestmark = pytest.mark.browser


async def test_wait_sees_text_added_after_it_started(stack: Stack, origins: Origins) -> None:
    """Text a timer adds 400 ms after load is found, and only once the page has it."""
    await stack.client.call("page.navigate", {"url": f"{origins.main}/wait.html?later=400"})
    res = await stack.client.call("page.wait", {"text": "Result ready", "timeoutMs": 10_000})
    assert res["found"] is True
    assert await stack.page.evaluate("document.getElementById('late').textContent") == "Result ready"


async def test_hidden_text_counts_only_once_revealed(stack: Stack, origins: Origins) -> None:
    """Text in a display:none element is not rendered text; removing the class that hides
    it (an attribute mutation) ends the wait."""
    await stack.client.call("page.navigate", {"url": f"{origins.main}/wait.html"})
    waiting = asyncio.ensure_future(
        stack.client.call("page.wait", {"text": "Hidden words", "timeoutMs": 10_000}))
    await asyncio.sleep(0.5)
    assert not waiting.done(), "the hidden text was reported as shown"
    await stack.page.evaluate("window.reveal()")
    res = await asyncio.wait_for(waiting, 10)
    assert res["found"] is True


async def test_wait_finds_text_in_a_cross_origin_frame(stack: Stack, origins: Origins) -> None:
    await stack.client.call(
        "page.navigate", {"url": f"{origins.main}/wait.html?other={origins.other_port}"})
    res = await stack.client.call("page.wait", {"text": "Frame text arrived", "timeoutMs": 10_000})
    assert res["found"] is True


async def test_text_that_never_shows_times_out(stack: Stack, origins: Origins) -> None:
    await stack.client.call("page.navigate", {"url": f"{origins.main}/wait.html"})
    with pytest.raises(E.Timeout) as info:
        await stack.client.call("page.wait", {"text": "Never there", "timeoutMs": 600})
    assert info.value.details.get("timeoutMs") == 600


@pytest.mark.parametrize("mode", ["open", "closed"])
async def test_wait_sees_text_inside_shadow_roots(stack: Stack, origins: Origins, mode: str) -> None:
    """innerText leaves shadow trees out; the wait reads them too, closed ones included."""
    await stack.client.call("page.navigate", {"url": f"{origins.main}/wait.html"})
    # Playwright may still hold the previous document's context when the extension has
    # seen the load (Firefox): wait_for_function outlives that switch, evaluate does not.
    await stack.page.wait_for_function("typeof window.shadowText === 'function'")
    await stack.page.evaluate(f"window.shadowText('{mode}', 'Shadow words {mode}')")
    res = await stack.client.call("page.wait", {"text": f"Shadow words {mode}", "timeoutMs": 10_000})
    assert res["found"] is True
