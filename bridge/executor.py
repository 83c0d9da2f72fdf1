"""Executes a routed client request: the peer calls each route needs (docs/design.md §2
rules 1-7, §10 "The executor's routes").

The server hands every client request to :meth:`Executor.dispatch`, which validates it,
refuses a URL it may not load (bridge/urls.py: ``file:`` unless allowed, ``data:``), asks
:class:`~bridge.routing.RoutingPolicy` (no I/O) where it goes, waits for the request's
turn on its tab when the method is ``serialized`` (:class:`~bridge.tabqueue.TabQueue`,
§2.1), and hands it to one handler per route (a ``match`` in :meth:`Executor._run`):

- ``Local``: answered here (``devices.list``);
- ``ToExtension``: one call to the extension; input on a device that never had a driver
  says ``inputPath: "synthetic"`` (rule 5); a load a JavaScript dialog blocks answers
  early with the dialog (§2.1);
- ``TrustedInput`` (rule 3): ``page.resolveTarget`` on the extension (a drag resolves its
  drop target too), then ``driver.act`` on the driver; a driver gone meanwhile is
  TRUSTED_INPUT_UNAVAILABLE (rule 4), an answer that never comes is
  BROWSER_OPERATION_UNCERTAIN (rule 7, raised by the peer's ``call``);
- ``ToDriver``: the extension names the tab's frame and the driver's own method
  (``METHODS[m].driver_method``) captures or evaluates; ``page.dialog`` (``under_dialog``:
  the page is blocked) goes to the driver alone;
- ``page.batch`` (§2.2): its actions in order, each routed again (the driver may leave or
  a dialog open between two), stopping at the first failure (``completedActions``,
  ``interruptedAction``); nothing is replayed (rule 7).

After an input action, what the extension pushed meanwhile (§10 "each room once": the
click's receipt, §2.3, and ``tab.opened`` events) becomes the result's ``delivered`` and
``newTabs`` through :class:`~bridge.after_input.AfterInput` (the short waits) and
:class:`~bridge.events.ActionEvents` (which receipt and tabs are the action's, no I/O).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

from .after_input import AfterInput, PeerCall
from .events import may_open_tab
from .protocol import errors as E
from .protocol.methods import METHODS, REPORTS_LATE_TABS, SERIALIZED_METHODS, WAITS_FOR_LOAD
from .protocol.models import ActParams, BatchParams, ClickAction, DragAction
from .protocol.validate import validate_params, validate_result
from .routing import Local, RoutingPolicy, ToDriver, ToExtension, TrustedInput
from .tabqueue import TabQueue
from .urls import check_navigation_url

DRIVER_MARGIN_S = 5.0
"""Extra seconds the bridge waits for a peer beyond the action's own ``timeoutMs``."""
RESOLVE_TIMEOUT_S = 10.0
"""How long the bridge waits for ``page.resolveTarget`` and ``driver.dialog``, s."""
DRIVER_CALL_TIMEOUT_S = 60.0
"""How long the bridge waits for ``driver.screenshot`` / ``driver.evaluate``, s."""
KEY_ALLOWANCE_S = 0.025
"""Extra seconds the bridge waits per typed character: ``timeoutMs`` bounds finding and
focusing the target, not typing a long text key by key (the driver types without a
deadline once it started, so a long text is never cut in the middle)."""
DEFAULT_TIMEOUT_MS = 30_000
"""The timeout of an extension call whose params have no ``timeoutMs``, ms."""
BATCH_ITEM_METHOD = "page.act"
"""Each action of a ``page.batch`` is routed and run as this method."""


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
        self.queue = TabQueue()
        # self.peer is looked up at each call: scripts/benchlib wraps it after construction
        self.after = AfterInput(lambda peer_id: self.peer(peer_id))
        self._dialog_waiters: dict[str, set[asyncio.Event]] = {}

    # -- events from peers ------------------------------------------------------------

    def tab_opened(self, extension: str, params: dict[str, Any]) -> None:
        """The extension's ``tab.opened`` event (a malformed one is dropped)."""
        self.after.tab_opened(extension, params)

    def receipt_pushed(self, extension: str, params: dict[str, Any]) -> None:
        """The extension's ``page.receipt`` event: a click in progress reached its target.
        Receipts nobody waits for (late, unknown, from another peer) are dropped."""
        self.after.receipt_pushed(extension, params)

    def dialog_opened(self, device: str) -> None:
        """Wake loads of ``device`` waiting for a page that a dialog now blocks."""
        for ev in self._dialog_waiters.pop(device, set()):
            ev.set()

    # -- requests ---------------------------------------------------------------------

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
        if url := getattr(parsed, "url", None):
            check_navigation_url(url, self.allow_file_urls)
        route = self.policy.route(method, getattr(parsed, "device", None))
        start = on_start or (lambda: None)
        if isinstance(route, Local) or method not in SERIALIZED_METHODS:
            start()
            result = await self._run(method, parsed, route)
        else:
            async with self.queue.turn(route.device, getattr(parsed, "tabId", None)):
                start()
                result = await self._run(method, parsed, route)
        if not isinstance(route, Local):
            self.queue.learn(method, route.device, getattr(parsed, "tabId", None), result)
        return result

    async def _run(self, method: str, parsed: Any, route: Any) -> dict[str, Any]:
        match route, parsed:
            case Local(), _:
                return {"devices": [d.model_dump() for d in self.policy.devices()]}
            case ToExtension() | TrustedInput(), BatchParams():
                return await self._batch(parsed, route)
            case ToExtension(), _:
                return await self._to_extension(method, parsed, route)
            case TrustedInput(), ActParams():
                return await self._trusted_input(route, parsed)
            case ToDriver(), _:
                return await self._to_driver(method, parsed, route)
        raise E.InternalError(f"No handler for {method} on {type(route).__name__}.")

    async def _to_extension(self, method: str, parsed: Any, route: ToExtension) -> dict[str, Any]:
        """One call to the extension (rule 5 for input on a device without a driver)."""
        started = time.monotonic()
        forward = parsed.model_dump(exclude={"device"}, exclude_none=True)
        timeout_s = getattr(parsed, "timeoutMs", DEFAULT_TIMEOUT_MS) / 1000 + DRIVER_MARGIN_S
        call = self.peer(route.extension).call(method, forward, timeout_s)
        if method in WAITS_FOR_LOAD:
            result = await self._unless_dialog(route.device, call)
        else:
            result = await call
        if route.synthetic:
            result["inputPath"] = "synthetic"
            late = time.monotonic() if may_open_tab(parsed.action) else None
            result.update(await self.after.new_tabs(route.extension, result.get("tabId"),
                                                    started, 0, late))
        elif method in REPORTS_LATE_TABS:
            with contextlib.suppress(E.TrustbridgeError):  # the page's answer stands
                result.update(await self.after.late_tabs(route.extension, result.get("tabId")))
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
        if driver_id is None:  # the driver left while the ref was being resolved (rule 4)
            raise E.TrustedInputUnavailable(
                f"The input driver of device {device!r} went offline; nothing was sent.",
                {"device": device},
            )
        return driver_id

    async def _trusted_input(self, route: TrustedInput, params: ActParams) -> dict[str, Any]:
        """Rule 3: resolve the ref (and a drag's drop target) on the extension, then act."""
        started = time.monotonic()
        is_click = isinstance(params.action, ClickAction) and params.ref is not None
        target = await self._resolve(route.extension, params.tabId, params.ref,
                                     receipt=is_click,
                                     allowCoordinates=is_click and params.allowCoordinates)
        act: dict[str, Any] = {"frameToken": target["frameToken"], "css": target.get("css"),
                               "action": params.action.model_dump(),
                               "timeoutMs": params.timeoutMs}
        if target.get("point"):
            act["point"] = target["point"]
        if params.allowScript:
            act["allowScript"] = True
        if isinstance(params.action, DragAction):
            drop = await self._resolve(route.extension, target.get("tabId"), params.action.to)
            act.update(toFrameToken=drop["frameToken"], toCss=drop.get("css"))
        receipt_id = target.get("receiptId")
        if receipt_id:
            self.after.events.expect_receipt(route.extension, receipt_id)
        try:
            driver = self.peer(self._driver_now(route.device))
            result = validate_result(
                "driver.act", await driver.call("driver.act", act, driver_timeout_s(params)))
            answered = time.monotonic()
            out: dict[str, Any] = {k: v for k, v in target.items()
                                   if k not in ("frameToken", "css", "receiptId", "point")}
            out.update(result)
            # The driver names the path itself only for the opt-in script route
            # (allowScript); otherwise the route taken decides it.
            path = result.get("inputPath") or (
                "trusted-coordinates" if target.get("point") else "trusted")
            out.update(inputPath=path, device=route.device, ref=params.ref)
            if receipt_id and not result.get("dialog"):
                out.update(await self.after.delivery(route.extension, out.get("tabId"),
                                                params.ref, receipt_id))
        finally:
            if receipt_id:
                self.after.events.forget_receipt(route.extension, receipt_id)
        popups = len(result.get("popups") or [])
        late = may_open_tab(params.action) and not result.get("dialog")
        out.update(await self.after.new_tabs(route.extension, out.get("tabId"), started, popups,
                                             answered if late else None))
        return out

    async def _to_driver(self, method: str, parsed: Any, route: ToDriver) -> dict[str, Any]:
        """A method only the driver serves, as its own method (``driver_method``)."""
        driver_method = METHODS[method].driver_method
        assert driver_method is not None, method
        fields = parsed.model_dump(exclude={"device", "tabId", "ref"}, exclude_none=True)
        if METHODS[method].under_dialog:
            # It answers a dialog that blocks the page: the extension cannot resolve a
            # frame in a blocked page, and the driver does not need one.
            result = await self.peer(route.driver).call(driver_method, fields, RESOLVE_TIMEOUT_S)
            return {**result, "device": route.device}
        target = await self._resolve(route.extension, parsed.tabId, getattr(parsed, "ref", None))
        fields.update(frameToken=target["frameToken"], css=target.get("css"))
        result = await self.peer(route.driver).call(driver_method, fields, DRIVER_CALL_TIMEOUT_S)
        return {**result, "tabId": target.get("tabId"), "device": route.device}

    async def _batch(self, params: BatchParams, route: ToExtension | TrustedInput) -> dict[str, Any]:
        """Run actions in order; stop at the first failure. Never replays anything."""
        completed: list[dict[str, Any]] = []
        for index, item in enumerate(params.actions):
            act = ActParams(device=params.device, tabId=params.tabId, ref=item.ref,
                            action=item.action, timeoutMs=item.timeoutMs)
            try:
                # Routed again: the driver may have gone (rule 4) or a dialog opened
                # between two actions.
                current = self.policy.route(BATCH_ITEM_METHOD, route.device)
                result = await self._run(BATCH_ITEM_METHOD, act, current)
            except E.TrustbridgeError as err:
                return {
                    "completedActions": completed,
                    "interruptedAction": {"index": index,
                                          "error": err.to_payload().model_dump(mode="json")},
                    "device": route.device,
                }
            completed.append({"index": index, **result})
        return {"completedActions": completed, "interruptedAction": None, "device": route.device}


def driver_timeout_s(params: ActParams) -> float:
    """How long the bridge waits for ``driver.act``, s: the action's ``timeoutMs``, the
    margin, and KEY_ALLOWANCE_S per character of typed or filled text. Past it the answer
    is BROWSER_OPERATION_UNCERTAIN (the input may have reached the page; docs/design.md §2
    rule 7)."""
    text = getattr(params.action, "text", None) or getattr(params.action, "value", None)
    typed = len(text) if isinstance(text, str) else 0
    return params.timeoutMs / 1000 + DRIVER_MARGIN_S + typed * KEY_ALLOWANCE_S
