"""browser_evaluate names the world (main by default, as Playwright MCP's; isolated on request), passed to
driver.evaluate and said in the result; browser_type's allowScript reaches the driver and
a value set by script is never reported as trusted input."""

from __future__ import annotations

import contextlib
from typing import Any

from mcp import Client

from trustbridge.bridge.mcp import Session, build_server
from trustbridge.bridge.server import BridgeServer

from .fakes import FakeDriver, FakeExtension, wait_until

DEVICE = "dev1"


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


async def test_evaluate_is_main_unless_isolated_is_asked(bridge: BridgeServer) -> None:
    """No world (a Playwright MCP client never names one): driver.evaluate gets world
    "main" and the text says so; world isolated is passed on and said."""
    session = Session(url=bridge.url, token=bridge.token, embedded=False)
    try:
        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(FakeExtension(bridge.url, bridge.token, DEVICE))
            drv = await stack.enter_async_context(FakeDriver(bridge.url, bridge.token, DEVICE))
            await wait_until(lambda: DEVICE in bridge.policy.drivers
                             and DEVICE in bridge.policy.extensions)
            drv.results["driver.evaluate"] = {"value": 1, "world": "main"}
            async with Client(build_server(session)) as mcp:
                result = await mcp.call_tool("browser_evaluate", {"function": "() => 1"})
                assert not result.is_error, _text(result)
                assert "main world" in _text(result)
                sent = await drv.wait_for_request("driver.evaluate")
                assert sent.params["world"] == "main"
                drv.results["driver.evaluate"] = {"value": 2, "world": "isolated"}
                result = await mcp.call_tool("browser_evaluate",
                                             {"function": "() => 2", "world": "isolated"})
                assert "isolated world" in _text(result), _text(result)
                assert drv.requests[-1].params["world"] == "isolated"
    finally:
        await session.close()


async def test_type_with_allow_script_says_by_script_not_trusted(bridge: BridgeServer) -> None:
    """browser_type allowScript: driver.act gets allowScript; a driver answer with
    inputPath "script" reads "with SCRIPT input", never "with trusted input"; without it,
    allowScript is not sent."""
    session = Session(url=bridge.url, token=bridge.token, embedded=False)
    try:
        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(FakeExtension(bridge.url, bridge.token, DEVICE))
            drv = await stack.enter_async_context(FakeDriver(bridge.url, bridge.token, DEVICE))
            await wait_until(lambda: DEVICE in bridge.policy.drivers
                             and DEVICE in bridge.policy.extensions)
            async with Client(build_server(session)) as mcp:
                plain = await mcp.call_tool("browser_type", {"ref": "e7", "text": "#ff0000"})
                assert "with trusted input" in _text(plain), _text(plain)
                assert "allowScript" not in drv.requests[-1].params
                drv.results["driver.act"] = {"done": True, "action": "fill",
                                             "inputPath": "script"}
                result = await mcp.call_tool("browser_type", {
                    "ref": "e7", "text": "#ff0000", "allowScript": True})
                assert not result.is_error, _text(result)
                assert "with SCRIPT input (allowScript" in _text(result) and "with trusted input" not in _text(result)
                assert drv.requests[-1].params["allowScript"] is True
    finally:
        await session.close()
