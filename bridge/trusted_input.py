"""Rule 3 of docs/design.md §2, trusted input: resolve the ref on the extension, hand the
action to the driver, then check what it led to (bridge/executor.py routes here).

One ``page.act`` on a device with a driver runs as :meth:`TrustedInputRoute._trusted_input`:

- ``page.resolveTarget`` on the extension turns the ref into ``{frameToken, css}`` (and a
  verified click point for the fast path, issue 18; a drag resolves its drop target too)
  and, for a click, arms its delivery receipt (§2.3);
- ``driver.act`` runs it with trusted input; when the request asked for its page state it
  carries ``notifyDispatched``
  (:class:`~bridge.dispatch_signals.EarlySnapshot`: a provisional snapshot taken while the
  driver still checks, kept only when the answer shows it stands);
- the receipt becomes ``delivered``; its ``fileInput``, ``download`` and ``navigates``
  signs make the bridge ask the driver for a chooser, a download or a form's navigation
  announced after the answer
  (bridge/after_input.py); the tabs the action opened become ``newTabs``.

A mixin of :class:`~bridge.executor.Executor`: it uses the executor's peers, policy and
helpers (``peer``, ``after``, ``signals``, ``_resolve``, ``_driver_now``,
``_take_snapshot``).
"""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING, Any

from .after_input import awaited_download, awaited_navigation, file_chooser
from .dispatch_signals import EarlySnapshot
from .events import may_open_tab
from .protocol import errors as E
from .protocol.models import (
    ActParams,
    CheckAction,
    ClickAction,
    DragAction,
    Event,
    HoverAction,
    MouseAction,
)
from .routing import TrustedInput

if TYPE_CHECKING:
    from .executor import Executor

PASSED_TO_DRIVER = ("point", "fastPoint", "selectOption")
"""Fields of the extension's ``page.resolveTarget`` answer the driver gets as they are."""


class TrustedInputRoute:
    """The trusted-input route of :class:`~bridge.executor.Executor` (see the module)."""

    async def _trusted_input(self: Executor, route: TrustedInput,
                             params: ActParams) -> dict[str, Any]:
        """Rule 3: resolve the ref (and a drag's drop target) on the extension, then act.

        Raises:
            BadRequest: ``allowCoordinates`` with a ClickAction ``position`` (the coordinate
                route clicks the hit-tested centre, not the offset); nothing was sent.
        """
        started = time.monotonic()
        action = params.action
        if params.allowCoordinates and isinstance(action, ClickAction) \
                and action.position is not None:
            raise E.BadRequest(
                "position and allowCoordinates cannot be combined: the coordinate route "
                "clicks the point the extension hit-tested (the target's centre), not an "
                "offset; nothing was sent. Drop position, or drop allowCoordinates for an "
                "element outside a closed shadow root.",
                {"position": action.position.model_dump(), "allowCoordinates": True})
        is_click = isinstance(action, ClickAction) and params.ref is not None
        flags: dict[str, Any] = {
            "receipt": is_click,
            "allowCoordinates": is_click and params.allowCoordinates,
            # Issue 18: a verified point lets the driver skip Playwright's waits.
            "fastPoint": params.ref is not None and not params.allowCoordinates
            and (isinstance(action, (ClickAction, HoverAction))
                 or (isinstance(action, CheckAction) and action.checked))
            and getattr(action, "position", None) is None,
            # A hover has no receipt: its point is measured over one animation frame.
            "settle": isinstance(action, HoverAction),
        }
        if isinstance(action, MouseAction):  # no ref: hit-test the point (vision tools)
            if action.x is None or action.y is None:  # where the pointer is
                action = await self._pointer_point(route, params.tabId, action)
                params = params.model_copy(update={"action": action})
            flags.update(at={"x": action.x, "y": action.y}, receipt=action.op == "click")
        target = await self._resolve(route.extension, params.tabId, params.ref,
                                     route.driver, **flags)
        act: dict[str, Any] = {"frameToken": target["frameToken"], "css": target.get("css"),
                               "action": action.model_dump(),
                               "timeoutMs": params.timeoutMs}
        for passed in PASSED_TO_DRIVER:
            if target.get(passed) is not None:
                act[passed] = target[passed]
        if params.allowScript:
            act["allowScript"] = True
        if isinstance(params.action, DragAction):
            drop = await self._resolve(route.extension, target.get("tabId"), params.action.to)
            act.update(toFrameToken=drop["frameToken"], toCss=drop.get("css"))
        receipt_id = target.get("receiptId")
        driver_id = self._driver_now(route.device)
        early: EarlySnapshot | None = None
        if params.snapshotAfter is not None:  # started at the driver's dispatched signal
            tab, after = target.get("tabId", params.tabId), params.snapshotAfter
            early = EarlySnapshot(self.signals, driver_id, lambda provisional: (
                self._take_snapshot(route.device, tab, after, provisional)))
            act["notifyDispatched"] = early.note
        if receipt_id:
            self.after.events.expect_receipt(route.extension, receipt_id)
        try:
            driver = self.peer(driver_id)
            try:
                result = await driver.call("driver.act", act, _driver_timeout_s(params))
            except E.BrowserCrashed as err:
                # The driver knows the page, not the extension's tab id: name the tab.
                if err.tabId is not None or target.get("tabId") is None:
                    raise
                raise E.BrowserCrashed(err.message, {**err.details, "tabId": target["tabId"]},
                                       next_step=err.next_step) from err
            answered = time.monotonic()
            out: dict[str, Any] = {k: v for k, v in target.items()
                                   if k not in ("frameToken", "css", "receiptId",
                                                *PASSED_TO_DRIVER)}
            out.update(result)
            if isinstance(action, MouseAction):  # where the input went (a point filled in too)
                out.setdefault("at", {"x": action.x, "y": action.y})
            late_watch = out.pop("lateNavigation", None)  # the driver's, for driver.navigation
            # The driver names the path itself only for the opt-in script route
            # (allowScript); otherwise the route taken decides it.
            path = result.get("inputPath") or (
                "trusted-coordinates" if target.get("point") else "trusted")
            out.update(inputPath=path, device=route.device, ref=params.ref)
            if out.get("fastRefused"):  # the extension refused the point: the full path ran
                out.setdefault("fastPath", False)
            if receipt_id and not result.get("dialog"):
                hit_ref = (target.get("hit") or {}).get("ref")  # MouseAction: the hit element
                multi = isinstance(action, ClickAction) and action.clickCount > 1
                out.update(await self.after.delivery(route.extension, out.get("tabId"),
                                                     params.ref or hit_ref, receipt_id,
                                                     pushed=not multi))
                if (took := out.pop("intercepted", None)) is not None:
                    raise _intercepted(took, out)
                if out.get("viaLabel") and (out.get("changed") or "click" in (
                        out.get("deliveredEvents") or [])):
                    # The driver clicked the input's label (supervisor/labels.py): the
                    # input gets the label's activation click, never a press of its own,
                    # and the driver read its new state back. A kit whose label handler
                    # cancels that click and sets the box itself sends the input no click
                    # at all; the state read back is the proof then (``changed``).
                    out["delivered"] = True
                if multi and out.get("delivered") and "dblclick" not in out.get(
                        "deliveredEvents", []):
                    # A double click is delivered when the target got its dblclick, not
                    # only a click (the first click's effect may take the second press).
                    out["delivered"] = False
                # A file input was clicked (the page's button called input.click()): its
                # chooser may be announced after the answer; the driver waits for it.
                # (One reported ``late`` is an earlier action's; this click's replaces it.)
                shown = out.get("fileChooser")
                if out.pop("fileInput", False) and (shown is None or shown.get("late")):
                    out.update(await file_chooser(driver, target["frameToken"]))
                # The click followed a download link, or the page's handler clicked one:
                # the browser announces the download after the answer.
                if out.pop("download", False) and not any(
                        not d.get("late") for d in out.get("downloads") or []):
                    got = await awaited_download(driver, target["frameToken"])
                    out["downloads"] = [*(out.get("downloads") or []), *got.get("downloads", [])]
                    if not out["downloads"]:
                        del out["downloads"]
                # A form submission's navigation is planned a task after the click: its
                # request may come after the answer (a result that said "no document
                # change" for a login form's submit, tests/e2e/test_click_effects.py).
                if out.pop("navigates", False) and out.get("postActionDocumentChanged") is False \
                        and isinstance(late_watch, str):
                    out["postActionDocumentChanged"] = await awaited_navigation(
                        driver, late_watch)
            popups = len(result.get("popups") or [])
            late = may_open_tab(params.action) and not result.get("dialog")
            out.update(await self.after.new_tabs(route.extension, out.get("tabId"), started,
                                                 popups, answered if late else None))
            if early is not None and (snap := await early.outcome(out)) is not None:
                out["snapshotAfter"] = await self._keep_snapshot(route.extension, snap,
                                                                 early.note)
        except BaseException:
            if early is not None:
                early.cancel()
            raise
        finally:
            if receipt_id:
                self.after.forget_receipt(route.extension, receipt_id)
            if early is not None:
                early.forget()
        return out

    async def _pointer_point(self: Executor, route: TrustedInput, tab_id: int | None,
                             action: MouseAction) -> MouseAction:
        """``action`` with its missing coordinates taken from where the driver last sent
        the tab's pointer (``driver.pointer``, supervisor/mouse.py): the point of any
        earlier pointer action on that page, a ref's click or hover included (a wheel
        after browser_hover turns over the hovered element, as Playwright's does).

        Raises:
            BadRequest: the driver does not know where the pointer is; nothing was sent.
        """
        from .executor import RESOLVE_TIMEOUT_S

        top = await self._resolve(route.extension, tab_id, None,
                                  route.driver)
        driver = self.peer(self._driver_now(route.device))
        where = await driver.call("driver.pointer", {"frameToken": top["frameToken"]},
                                  RESOLVE_TIMEOUT_S)
        return action.model_copy(update={"x": where["x"] if action.x is None else action.x,
                                         "y": where["y"] if action.y is None else action.y})

    async def _keep_snapshot(self: Executor, extension: str, snap: dict[str, Any],
                             provisional: str) -> dict[str, Any]:
        """Show the provisional snapshot ``snap``: the extension makes it its session's
        diff baseline (``snapshot.keep``, sent before the answer, so any later request of
        the client comes after it) and the late tabs it did not report are added."""
        peer = self.peer(extension)
        send = getattr(peer, "send", None)
        if send is not None:
            with contextlib.suppress(Exception):  # a closed extension loses nothing shown
                await send(Event(event="snapshot.keep", params={"id": provisional}))
        with contextlib.suppress(E.TrustbridgeError):  # the page's answer stands
            snap.update(await self.after.late_tabs(extension, snap.get("tabId")))
        return snap


def _driver_timeout_s(params: ActParams) -> float:
    """:func:`bridge.executor.driver_timeout_s`, looked up at each call (it reads the
    executor module's margins, which tests shorten)."""
    from . import executor

    return executor.driver_timeout_s(params)


def _intercepted(took: dict[str, Any], out: dict[str, Any]) -> E.ElementObscured:
    """ELEMENT_OBSCURED for a fast-path press the extension's press guard stopped
    (extension/src/page/receipt.js, "Press guard"): between the point's check and the
    press, another element came on top there (a hover card the move opened, a menu, the
    target moved by script). Playwright's click refuses the same press with its
    hit-target check; without the guard ``page.mouse`` pressed the other element (a
    review's probe: a "Publish now" card opened on mouseover over "Save draft")."""
    tag = took.get("tag") or "an element"
    text = f' "{took["text"]}"' if took.get("text") else ""
    passed = took.get("afterPresses") if isinstance(took.get("afterPresses"), int) else 0
    details = {"coveredBy": took.get("tag"), "coveredByText": took.get("text", ""),
               "fastPath": True, "tabId": out.get("tabId")}
    if passed:
        # A double click whose first click opened something over the target (a review's
        # probe: the second press and the dblclick went to the overlay the click opened).
        return E.ElementObscured(
            f"The first {passed} press(es) reached the target and its click ran; then "
            f"<{tag}>{text} was on top at the point (the click's own effect, e.g. an "
            "overlay it opened), so the next press and the rest of the click were stopped "
            "before the page saw them: the multi-click did not happen as asked.",
            {**details, "pressesDelivered": passed},
            next_step="Take a new snapshot: the first click's effects are on the page. "
                      "Act on what it opened, or click the target once if that was meant.")
    why = ("the target left the page when the pointer arrived (the page re-rendered it). "
           if took.get("targetGone") else
           "after the point was checked, something came over the target or the target "
           "moved away. ")
    return E.ElementObscured(
        f"<{tag}>{text} was on top at the target's click point when the press came: {why}"
        "The press and the click were stopped before the page saw them, so nothing was "
        "clicked. The pointer did move there: hover effects (what opened over the target) "
        "may have run.",
        details,
        next_step="Take a new snapshot: act on what opened (or close it, e.g. press "
                  "Escape, or move the pointer away), then retry the target.")
