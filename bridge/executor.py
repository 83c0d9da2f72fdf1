"""Executes a routed client request: the sequence of peer calls each route needs.

The server hands every validated client request here; this module asks
:class:`~bridge.routing.RoutingPolicy` where it goes and makes the calls:

- ``ToExtension``: one call to the extension (``inputPath: "synthetic"`` on input);
- ``TrustedInput``: ``page.resolveTarget`` on the extension, then ``driver.act`` on the
  driver (a drag resolves its drop target too) — design.md §2 rule 3;
- ``ToDriver``: the extension names the tab's frame, the driver captures / answers /
  evaluates;
- ``page.batch``: the actions in order through the same routes, stopping at the first
  failure (``completedActions``, ``interruptedAction``); nothing is replayed.

Input on one tab runs one request at a time, in arrival order (a FIFO lock per
device and tab).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

import pydantic

from .protocol import errors as E
from .protocol.methods import SERIALIZED_METHODS
from .protocol.validate import validate_params, validate_result
from .protocol.models import (
    ActParams,
    BatchParams,
    ClickAction,
    DragAction,
    ReceiptEvent,
    TabOpenedEvent,
)
from .routing import Local, RoutingPolicy, ToDriver, TrustedInput
from .urls import check_navigation_url

DRIVER_MARGIN_S = 5.0
"""Extra seconds the bridge waits for a driver beyond the action's own timeout."""
RESOLVE_TIMEOUT_S = 10.0
KEY_ALLOWANCE_S = 0.025
"""Extra seconds the bridge waits per typed character: ``timeoutMs`` bounds finding and
focusing the target, not typing a long text key by key (the driver types without a
deadline once it started, so a long text is never cut in the middle)."""
OPENED_KEEP = 32
"""tab.opened events remembered per extension."""
POPUP_SETTLE_S = 0.3
"""How long to wait for the extension to see a tab the driver saw open, s."""
RECEIPT_PUSH_WAIT_S = 0.1
"""How long after the driver's answer to wait for a pushed delivery receipt before asking
the extension for it (the push is sent from the page's click listener, so it is usually
already here), s."""


class PeerCall(Protocol):
    async def call(self, method: str, params: dict[str, Any], timeout_s: float) -> dict[str, Any]: ...


class Executor:
    """Runs client requests against the peers named by ``peer(peer_id)``.

    Args:
        policy: the routing policy.
        peer: returns the live peer with that id, or raises DeviceNotConnected.
        allow_file_urls: ``page.navigate`` / ``tabs.new`` may load ``file:`` URLs
            (bridge/urls.py).
    """

    def __init__(self, policy: RoutingPolicy, peer: Callable[[str], PeerCall],
                 allow_file_urls: bool = False) -> None:
        self.policy = policy
        self.peer = peer
        self.allow_file_urls = allow_file_urls
        self._locks: dict[tuple[str, int | None], asyncio.Lock] = {}
        self._active_tab: dict[str, int] = {}  # device → tab id last seen active
        self._dialog_waiters: dict[str, set[asyncio.Event]] = {}
        # (extension peer id, receiptId) → the pushed receipt of a click in progress
        self._receipts: dict[tuple[str, str], asyncio.Future[ReceiptEvent]] = {}
        # extension peer id → recent tab.opened events: (monotonic s, event)
        self._opened: dict[str, deque[tuple[float, TabOpenedEvent]]] = {}

    def tab_opened(self, extension: str, params: dict[str, Any]) -> None:
        """The extension's ``tab.opened`` event: remembered (the last OPENED_KEEP per
        extension) so the click that opened the tab can report it."""
        try:
            event = TabOpenedEvent.model_validate(params)
        except pydantic.ValidationError:
            return
        self._opened.setdefault(extension, deque(maxlen=OPENED_KEEP)).append(
            (time.monotonic(), event))

    def _opened_since(self, extension: str, opener: int | None, since: float) -> list[int]:
        """Ids of tabs announced since ``since`` (monotonic s) with this opener (None: any)."""
        return [ev.tabId for at, ev in self._opened.get(extension, ())
                if at >= since and (opener is None or ev.openerTabId == opener)]

    def receipt_pushed(self, extension: str, params: dict[str, Any]) -> None:
        """The extension's ``page.receipt`` event: a click in progress reached its target.
        Receipts nobody waits for (late, unknown, from another peer) are dropped."""
        try:
            receipt = ReceiptEvent.model_validate(params)
        except pydantic.ValidationError:
            return
        fut = self._receipts.get((extension, receipt.receiptId))
        if fut is not None and not fut.done():
            fut.set_result(receipt)

    def dialog_opened(self, device: str) -> None:
        """Wake navigations of ``device`` waiting for a load that a dialog now blocks."""
        for ev in self._dialog_waiters.pop(device, set()):
            ev.set()

    async def dispatch(self, method: str, params: dict[str, Any],
                       on_start: Callable[[], None] | None = None) -> dict[str, Any]:
        """Validate a client request, route it and return its result.

        Args:
            method / params: the client request.
            on_start: called once the request leaves its tab's queue and starts running.

        Raises:
            TrustbridgeError: any protocol error (BadRequest for invalid params).
        """
        parsed = validate_params(method, params)
        if method in ("page.navigate", "tabs.new") and getattr(parsed, "url", None):
            check_navigation_url(parsed.url, self.allow_file_urls)
        route = self.policy.route(method, getattr(parsed, "device", None))
        if isinstance(route, Local):
            return {"devices": [d.model_dump() for d in self.policy.devices()]}
        start = on_start or (lambda: None)
        tab = getattr(parsed, "tabId", None)
        if method not in SERIALIZED_METHODS:
            start()
            result = await self._run(method, parsed, route)
        else:
            # A request without tabId acts on the active tab: queue it with the requests
            # that name that tab (as last seen), so the two never run at once.
            key = (route.device, tab if tab is not None else self._active_tab.get(route.device))
            async with self._locks.setdefault(key, asyncio.Lock()):
                start()
                result = await self._run(method, parsed, route)
        self._learn_active_tab(method, route.device, tab, result)
        return result

    def _learn_active_tab(self, method: str, device: str, asked: int | None,
                          result: dict[str, Any]) -> None:
        """Remember the device's active tab from results: the tab a request without tabId
        ran on, a selected or new tab; forget it when it closes. Only a queueing hint: a
        tab the user activates by hand is learnt at the next request without tabId."""
        tab_id = result.get("tabId")
        if not isinstance(tab_id, int):
            return
        if method == "tabs.close":
            if self._active_tab.get(device) == tab_id:
                del self._active_tab[device]
        elif method in ("tabs.select", "tabs.new") or asked is None:
            self._active_tab[device] = tab_id

    async def _run(self, method: str, parsed: Any, route: Any) -> dict[str, Any]:
        if method == "page.batch":
            return await self._batch(parsed, route)
        if isinstance(route, ToDriver):
            return await self._driver_method(method, parsed, route)
        if isinstance(route, TrustedInput):
            return await self._trusted_input(route, parsed)
        forward = parsed.model_dump(exclude={"device"}, exclude_none=True)
        timeout_s = getattr(parsed, "timeoutMs", 30_000) / 1000 + DRIVER_MARGIN_S
        call = self.peer(route.extension).call(method, forward, timeout_s)
        if method in ("page.navigate", "page.history"):
            result = await self._unless_dialog(route.device, call)
        else:
            result = await call
        if route.synthetic:
            result["inputPath"] = "synthetic"
        result["device"] = route.device
        return result

    async def _unless_dialog(self, device: str, call: Any) -> dict[str, Any]:
        """Await a load, or answer early when a JavaScript dialog blocks it (e.g. an
        ``alert()`` in the new page's head): ``{dialog, transitionPending: true}``."""
        task = asyncio.ensure_future(call)
        opened = asyncio.Event()
        self._dialog_waiters.setdefault(device, set()).add(opened)
        waiter = asyncio.ensure_future(opened.wait())
        try:
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
            self._dialog_waiters.get(device, set()).discard(opened)
        if task.done():
            return task.result()
        task.add_done_callback(lambda t: t.cancelled() or t.exception())  # finishes later
        return {"transitionPending": True, "dialog": self.policy.open_dialogs.get(device)}

    async def _resolve(self, extension: str, tab_id: int | None, ref: str | None,
                       **flags: bool) -> dict[str, Any]:
        params = {k: v for k, v in {"tabId": tab_id, "ref": ref}.items() if v is not None}
        params.update({k: v for k, v in flags.items() if v})
        raw = await self.peer(extension).call("page.resolveTarget", params, RESOLVE_TIMEOUT_S)
        return validate_result("page.resolveTarget", raw)

    def _driver_now(self, device: str) -> str:
        driver_id = self.policy.drivers.get(device)
        if driver_id is None:  # the driver left while the ref was being resolved
            raise E.TrustedInputUnavailable(
                f"The input driver of device {device!r} went offline; nothing was sent.",
                {"device": device},
            )
        return driver_id

    async def _trusted_input(self, route: TrustedInput, params: ActParams) -> dict[str, Any]:
        """Rule 3: resolve the ref (and a drag's drop target) on the extension, then act."""
        started = time.time()
        started_mono = time.monotonic()
        is_click = isinstance(params.action, ClickAction) and params.ref is not None
        target = await self._resolve(route.extension, params.tabId, params.ref,
                                     receipt=is_click,
                                     allowCoordinates=is_click and params.allowCoordinates)
        act: dict[str, Any] = {
            "frameToken": target["frameToken"],
            "css": target.get("css"),
            "action": params.action.model_dump(),
            "timeoutMs": params.timeoutMs,
        }
        if target.get("point"):
            act["point"] = target["point"]
        if isinstance(params.action, DragAction):
            drop = await self._resolve(route.extension, target.get("tabId"), params.action.to)
            act.update(toFrameToken=drop["frameToken"], toCss=drop.get("css"))
        pushed: asyncio.Future[ReceiptEvent] | None = None
        if target.get("receiptId"):
            pushed = asyncio.get_running_loop().create_future()
            self._receipts[(route.extension, target["receiptId"])] = pushed
        try:
            driver = self.peer(self._driver_now(route.device))
            raw = await driver.call("driver.act", act, driver_timeout_s(params))
            result = validate_result("driver.act", raw)
            out: dict[str, Any] = {k: v for k, v in target.items()
                                   if k not in ("frameToken", "css", "receiptId", "point")}
            out.update(result)
            out.update(inputPath="trusted-coordinates" if target.get("point") else "trusted",
                       device=route.device, ref=params.ref)
            if pushed is not None and not result.get("dialog"):
                out.update(await self._receipt(route.extension, target, params.ref, pushed))
        finally:
            if pushed is not None:
                self._receipts.pop((route.extension, target["receiptId"]), None)
        popups = len(result.get("popups") or [])
        opened = self._opened_since(route.extension, out.get("tabId"), started_mono)
        if not opened and popups:
            # The driver saw this page open a popup, but Chromium names the *active* tab as
            # the opener of a popup from a background tab: any tab opened since is it.
            opened = self._opened_since(route.extension, None, started_mono)
        if opened or popups:
            out["newTabs"] = await self._new_tabs(
                route.extension, out.get("tabId"), started, opened, popups)
        return out

    async def _receipt(self, extension: str, target: dict[str, Any], ref: str | None,
                       pushed: asyncio.Future[ReceiptEvent]) -> dict[str, Any]:
        """``{delivered, deliveredEvents}``: the receipt the extension pushed when the click
        reached the target, or, when none came within RECEIPT_PUSH_WAIT_S, the one read from
        the extension (``delivered: false``: the target never got the click). A page that
        went away meanwhile (the click navigated) leaves ``delivered`` unknown (None)."""
        try:
            got = await asyncio.wait_for(asyncio.shield(pushed), RECEIPT_PUSH_WAIT_S)
            return {"delivered": got.delivered, "deliveredEvents": got.events}
        except TimeoutError:
            pass
        try:
            receipt = await self.peer(extension).call(
                "page.receipt", {"tabId": target.get("tabId"), "ref": ref,
                                 "receiptId": target["receiptId"]}, RESOLVE_TIMEOUT_S)
        except E.TrustbridgeError:
            return {"delivered": None}
        return {
            "delivered": None if receipt.get("delivered") is None else bool(receipt["delivered"]),
            "deliveredEvents": receipt.get("events", []),
        }

    async def _new_tabs(self, extension: str, opener: int | None, since: float,
                        known: list[int], popups: int) -> list[dict[str, Any]]:
        """The tabs an action opened, as ``tabs.list`` lists them (url, title, active).

        Args:
            known: tab ids the extension announced (``tab.opened``) during the action.
            popups: how many new pages the driver saw; when no id is known, tabs opened
                since ``since`` (epoch s) by ``opener`` (or by any tab, for popups) are
                taken, polling up to POPUP_SETTLE_S for the extension to see them.
        """
        deadline = time.monotonic() + POPUP_SETTLE_S
        while True:
            tabs = (await self.peer(extension).call("tabs.list", {}, RESOLVE_TIMEOUT_S))["tabs"]
            if known:
                found = [t for t in tabs if t.get("tabId") in known]
            else:
                found = [t for t in tabs if (t.get("openerTabId") == opener or popups)
                         and (t.get("openedAt") or 0) / 1000 >= since - 0.05]
            if (found and len(found) >= min(popups, 1)) or time.monotonic() > deadline:
                return found or [{"tabId": t} for t in known]
            await asyncio.sleep(0.03)

    async def _driver_method(self, method: str, parsed: Any, route: ToDriver) -> dict[str, Any]:
        fields = parsed.model_dump(exclude={"device", "tabId", "ref"}, exclude_none=True)
        if method == "page.dialog":
            result = await self.peer(route.driver).call("driver.dialog", fields, RESOLVE_TIMEOUT_S)
            return {**result, "device": route.device}
        target = await self._resolve(route.extension, parsed.tabId, getattr(parsed, "ref", None))
        fields.update(frameToken=target["frameToken"], css=target.get("css"))
        driver_method = {"page.screenshot": "driver.screenshot", "page.evaluate": "driver.evaluate"}[method]
        result = await self.peer(route.driver).call(driver_method, fields, 60.0)
        return {**result, "tabId": target.get("tabId"), "device": route.device}

    async def _batch(self, params: BatchParams, route: Any) -> dict[str, Any]:
        """Run actions in order; stop at the first failure. Never replays anything."""
        completed: list[dict[str, Any]] = []
        for index, item in enumerate(params.actions):
            act = ActParams(device=params.device, tabId=params.tabId, ref=item.ref,
                            action=item.action, timeoutMs=item.timeoutMs)
            try:
                if isinstance(route, TrustedInput):
                    # Re-check the route: the driver may have gone between two actions.
                    current = self.policy.route("page.act", route.device)
                    assert isinstance(current, TrustedInput)
                    result = await self._trusted_input(current, act)
                else:
                    result = await self._run("page.act", act, route)
            except E.TrustbridgeError as err:
                return {
                    "completedActions": completed,
                    "interruptedAction": {"index": index, "error": err.to_payload().model_dump(mode="json")},
                    "device": route.device,
                }
            completed.append({"index": index, **result})
        return {"completedActions": completed, "interruptedAction": None, "device": route.device}


def driver_timeout_s(params: ActParams) -> float:
    """How long the bridge waits for ``driver.act``, s: the action's ``timeoutMs``, the
    margin, and KEY_ALLOWANCE_S per character of typed or filled text. Past it the answer
    is BROWSER_OPERATION_UNCERTAIN (the input may have reached the page; design.md §2 rule 7)."""
    text = getattr(params.action, "text", None) or getattr(params.action, "value", None)
    typed = len(text) if isinstance(text, str) else 0
    return params.timeoutMs / 1000 + DRIVER_MARGIN_S + typed * KEY_ALLOWANCE_S
