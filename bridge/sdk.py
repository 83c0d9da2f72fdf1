"""Python SDK: an async, Playwright-like face over the bridge protocol.

Example::

    from bridge.sdk import Browser

    async with await Browser.connect() as browser:
        tab = await browser.tab()
        await tab.goto("http://127.0.0.1:8000/")
        print(await tab.snapshot())          # "- button \"Save\" [ref=e7]" ...
        await tab.click("e7")                # trusted input where the device promises it

Every method raises the protocol's exceptions (``bridge.protocol.errors``), e.g.
``RefNotFound``, ``TrustedInputUnavailable``, ``ClosedShadowRoot``.
"""

from __future__ import annotations

from typing import Any, Literal

from .client import BridgeClient
from .protocol.models import Modifier


class Tab:
    """One browser tab of one device. Results are the bridge's result dicts."""

    def __init__(self, client: BridgeClient, device: str | None, tab_id: int | None) -> None:
        self._client = client
        self.device = device
        self.tab_id = tab_id

    def _params(self, **extra: Any) -> dict[str, Any]:
        return {"device": self.device, "tabId": self.tab_id, **extra}

    async def goto(self, url: str, timeout_ms: int = 30_000) -> dict[str, Any]:
        """Load ``url`` and wait for its load event (at most ``timeout_ms`` ms)."""
        return await self._client.call(
            "page.navigate", self._params(url=url, timeoutMs=timeout_ms)
        )

    async def snapshot_result(self) -> dict[str, Any]:
        """Return the snapshot result: ``{"snapshot": str, "url": str, "title": str, ...}``."""
        return await self._client.call("page.snapshot", self._params())

    async def snapshot(self) -> str:
        """Return the accessibility-style outline with refs (``- button "Save" [ref=e7]``)."""
        return str((await self.snapshot_result())["snapshot"])

    async def act(self, action: dict[str, Any], ref: str | None = None,
                  timeout_ms: int = 10_000) -> dict[str, Any]:
        """Perform one input action (``{"kind": "click", ...}``) on ``ref``.

        Returns:
            The result; ``inputPath`` is ``"trusted"`` or ``"synthetic"``.
        """
        return await self._client.call(
            "page.act", self._params(ref=ref, action=action, timeoutMs=timeout_ms)
        )

    async def click(self, ref: str, *, button: Literal["left", "right", "middle"] = "left",
                    click_count: int = 1, modifiers: list[Modifier] | None = None,
                    timeout_ms: int = 10_000) -> dict[str, Any]:
        """Click the centre of ``ref``'s element."""
        action = {"kind": "click", "button": button, "clickCount": click_count,
                  "modifiers": modifiers or []}
        return await self.act(action, ref, timeout_ms)

    async def hover(self, ref: str, timeout_ms: int = 10_000) -> dict[str, Any]:
        """Move the pointer over ``ref``'s element."""
        return await self.act({"kind": "hover"}, ref, timeout_ms)

    async def type(self, ref: str, text: str, *, submit: bool = False,
                   timeout_ms: int = 10_000) -> dict[str, Any]:
        """Focus ``ref`` and type ``text`` key by key; ``submit`` presses Enter after."""
        return await self.act({"kind": "type", "text": text, "submit": submit}, ref, timeout_ms)

    async def press(self, key: str, ref: str | None = None,
                    timeout_ms: int = 10_000) -> dict[str, Any]:
        """Press ``key`` (``Enter``, ``Control+A``) in the focused element or in ``ref``."""
        return await self.act({"kind": "press", "key": key}, ref, timeout_ms)

    async def wait(self, *, ms: int | None = None, text: str | None = None,
                   timeout_ms: int = 10_000) -> dict[str, Any]:
        """Wait ``ms`` milliseconds, or until ``text`` shows on the page."""
        return await self._client.call(
            "page.wait", self._params(ms=ms, text=text, timeoutMs=timeout_ms)
        )


class Browser:
    """A connection to the bridge, addressing one device (or the only one connected)."""

    def __init__(self, client: BridgeClient, device: str | None = None) -> None:
        self.client = client
        self.device = device

    @classmethod
    async def connect(cls, url: str | None = None, token: str | None = None,
                      device: str | None = None) -> Browser:
        """Connect to the bridge (defaults: the running bridge's endpoint and token files).

        Raises:
            DeviceNotConnected: no bridge listens there.
            Unauthorized: wrong token.
        """
        return cls(await BridgeClient.connect(url, token), device)

    async def __aenter__(self) -> Browser:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self.client.close()

    async def devices(self) -> list[dict[str, Any]]:
        """Every known device: ``[{device, extension, driver, requiresTrustedInput, browser}]``."""
        return list((await self.client.call("devices.list"))["devices"])

    async def tabs(self) -> list[dict[str, Any]]:
        """Open tabs: ``[{tabId, url, title, active}]``."""
        return list((await self.client.call("tabs.list", {"device": self.device}))["tabs"])

    async def tab(self, tab_id: int | None = None) -> Tab:
        """A handle on tab ``tab_id`` (default: whichever tab is active at each call)."""
        return Tab(self.client, self.device, tab_id)
