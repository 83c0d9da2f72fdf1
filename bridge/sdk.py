"""Python SDK: an async, Playwright-like face over the bridge protocol.

Example::

    from trustbridge.bridge.sdk import Browser

    async with await Browser.connect() as browser:     # the running bridge (`trustbridge up`)
        tab = await browser.tab()
        await tab.goto("http://127.0.0.1:8000/")
        print(await tab.snapshot())          # "- button \"Save\" [ref=e7]" ...
        await tab.click("e7")                # trusted input where the device promises it

    async with await Browser.launch() as browser:      # or start bridge + headless Chromium here
        ...

Every method raises the protocol's exceptions (``bridge.protocol.errors``, one hierarchy
under ``TrustbridgeError``, each carrying its wire ``code``), e.g. ``RefNotFound``,
``TrustedInputUnavailable``, ``ClosedShadowRoot``, ``BrowserTabClosed``.

Sessions (docs/sessions.md): each Browser's requests belong to one session, named by
``Browser.connect(session="label")`` or implicit; it owns the tabs it opens or first acts
on, and another session's request there raises ``TabClaimed`` (re-exported here with
``TabBusy`` and ``SessionStopped``) before anything reaches the page::

    async with await Browser.connect(session="agent-a") as browser:
        tab = await browser.new_tab("http://127.0.0.1:8000/", window=True)  # agent-a's
        await tab.click("e7")
        await browser.handoff(tab, to="agent-b")       # TabBusy while work is in flight

Input verbs build the protocol's action models (``bridge.protocol.models``: ``ClickAction``,
``TypeAction``, ``FillAction``, ...) and :meth:`Tab.act` / :meth:`Tab.batch` validate what
they send with the bridge's own validation (``bridge.protocol.validate``), so a bad action
is a ``BadRequest`` before anything reaches the bridge. One meaning per verb name on every
surface: ``type`` types key by key, ``fill`` replaces the value in one edit.

Results are the bridge's result objects, typed as ``TypedDict``\\ s in
:mod:`bridge.sdk_results` (re-exported here): a field not listed may be present (the
protocol grows), a listed field marked ``NotRequired`` may not.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Self, TypeVar, cast

import pydantic

from .client import BridgeClient
from .protocol import errors as E
from .protocol.errors import SessionStopped, TabBusy, TabClaimed
from .protocol.models import (
    Action,
    BatchItem,
    CheckAction,
    ClickAction,
    DeviceInfo,
    DragAction,
    FillAction,
    FocusAction,
    HoverAction,
    Modifier,
    MouseAction,
    PressAction,
    ScrollAction,
    SelectAction,
    TypeAction,
    UploadAction,
)
from .protocol.validate import error_locs, summarise, validate_params
from .sdk_results import (
    ActResult,
    InputPath,
    MouseButton,
    NavigateResult,
    SessionInfo,
    SessionOpenResult,
    SessionStopResult,
    SessionTabsResult,
    SnapshotResult,
    TabInfo,
    TabRef,
    TabsResult,
    WaitResult,
)
from .sdk_sessions import BrowserSessions

if TYPE_CHECKING:
    from .embedded import Embedded

__all__ = [
    "ActResult", "ActionLike", "BatchItemLike", "Browser", "InputPath", "MouseButton",
    "NavigateResult", "SessionInfo", "SessionOpenResult", "SessionStopResult",
    "SessionStopped", "SessionTabsResult", "SnapshotResult", "Tab", "TabBusy", "TabClaimed",
    "TabInfo", "TabRef", "TabsResult", "WaitResult", "build_action", "wire_params",
]

ActionLike = Action | dict[str, Any]
"""What :meth:`Tab.act` takes: an action model of ``bridge.protocol.models`` (e.g.
``ClickAction()``), or the same as a dict (``{"kind": "click"}``), validated into the model."""
BatchItemLike = BatchItem | dict[str, Any]
"""One item of :meth:`Tab.batch`: ``BatchItem(ref=..., action=FillAction(value=...))`` or
``{"ref": ..., "action": {...}, "timeoutMs": ...}``."""

_M = TypeVar("_M", bound=pydantic.BaseModel)


def build_action(model: type[_M], **fields: Any) -> _M:
    """The action ``model(**fields)``, a bad field raised as the protocol's error.

    Raises:
        BadRequest: a field out of the model's bounds (e.g. ``clickCount`` 5); ``details``
            ``{"errors": [field, ...]}``. Nothing was sent.
    """
    try:
        return model(**fields)
    except pydantic.ValidationError as exc:
        kind = model.model_fields["kind"].default
        raise E.BadRequest(f"Invalid {kind} action: {summarise(exc)}. Nothing was sent.",
                           {"errors": error_locs(exc)}) from exc


def wire_params(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` validated as the bridge validates them, as JSON for the wire.

    Args:
        method: a client method (``page.act``, ``page.batch``).
        params: its params; actions may be models or dicts.

    Raises:
        BadRequest: the bridge would refuse them (its own message, plus that nothing was
            sent); ``details`` as the bridge's (``{"errors": [loc, ...]}``).
    """
    try:
        parsed = validate_params(method, params)
    except E.BadRequest as err:
        raise E.BadRequest(f"{err.message.rstrip('.')}. Nothing was sent.",
                           err.details) from err
    return cast(dict[str, Any], parsed.model_dump(mode="json", exclude_none=True))


class Tab:
    """One browser tab of one device.

    Args:
        client: the bridge connection, shared with the Browser that made this tab.
        device: device id, or None for the only device connected.
        tab_id: tab id, or None for the session's current tab at each call (the one it
            last opened, selected or claimed; else the tab active in the browser).
    """

    _after: dict[str, Any] | None = None
    """``snapshotAfter`` for this tab's actions, batches and waits (bridge/protocol/models.py
    ``SnapshotAfter``): set by a subclass that wants the page state in the same request
    (the MCP server's ConnectionTab); the result then carries ``snapshotAfter``."""

    def __init__(self, client: BridgeClient, device: str | None, tab_id: int | None) -> None:
        self._client = client
        self.device = device
        self.tab_id = tab_id

    def __repr__(self) -> str:
        return f"Tab(device={self.device!r}, tab_id={self.tab_id!r})"

    def _params(self, **extra: Any) -> dict[str, Any]:
        return {"device": self.device, "tabId": self.tab_id, **extra}

    async def goto(self, url: str, timeout_ms: int = 30_000) -> NavigateResult:
        """Load ``url`` and wait for its load event.

        Args:
            url: absolute URL.
            timeout_ms: load timeout, ms.

        Raises:
            Timeout: not loaded within ``timeout_ms``.
            BadRequest: the navigation failed (e.g. connection refused).
            BrowserTabClosed: the tab is gone.
        """
        result = await self._client.call(
            "page.navigate", self._params(url=url, timeoutMs=timeout_ms)
        )
        return cast(NavigateResult, result)

    async def snapshot_result(self, *, mode: Literal["snapshot", "read", "diff"] = "snapshot",
                              max_chars: int | None = None, ref: str | None = None,
                              cursor: str | None = None,
                              session: str | None = None, depth: int | None = None,
                              time_budget_ms: int | None = None) -> SnapshotResult:
        """Return the snapshot with its URL, title and counts.

        Args:
            mode: ``snapshot`` (outline with refs), ``read`` (visible text) or ``diff``
                (changes since this tab's previous complete snapshot in ``session``).
            max_chars: budget in characters (default 50,000); a longer result is cut at a
                line and carries ``cursor``.
            ref: snapshot only this element's subtree.
            cursor: the ``cursor`` of a truncated result: returns its next page.
            session: diff baseline key (default: one shared per tab).
            depth: outline only: leave out nodes nested deeper than this below the root.
            time_budget_ms: stop walking after this many ms; the rest is behind ``cursor``.

        Raises:
            BrowserTabClosed: the tab is gone.
            DeviceNotConnected: no extension for the device.
            BadRequest: unknown or expired cursor; diff with a ref.
            RefNotFound / BrowserDocumentChanged: ``ref`` or ``cursor`` is from a page
                that is gone.
        """
        params = self._params(mode=mode, maxChars=max_chars, ref=ref, cursor=cursor,
                              session=session, depth=depth, timeBudgetMs=time_budget_ms)
        return cast(SnapshotResult, await self._client.call("page.snapshot", params))

    async def snapshot(self, **options: Any) -> str:
        """Return the accessibility-style outline with refs (``- button "Save" [ref=e7]``).

        Args:
            options: as :meth:`snapshot_result` (``mode``, ``max_chars``, ``ref``, ...).

        Raises:
            Same as :meth:`snapshot_result`.
        """
        return (await self.snapshot_result(**options))["snapshot"]

    async def act(self, action: ActionLike, ref: str | None = None,
                  timeout_ms: int = 10_000, *, allow_coordinates: bool = False,
                  allow_script: bool = False) -> ActResult:
        """Perform one input action on ``ref`` (``page.act``).

        Args:
            action: an action model of ``bridge.protocol.models`` (``ClickAction()``,
                ``FillAction(value="x")``, ...) or the same as a dict (``{"kind": "click"}``).
            ref: target from the latest snapshot of this tab (``e7``, ``f1e3``); None only
                for a press in the focused element.
            timeout_ms: action timeout, ms.
            allow_coordinates: a click on an element in a closed shadow root goes to its
                hit-tested centre (``inputPath: "trusted-coordinates"``) instead of
                failing with ClosedShadowRoot.
            allow_script: a control no trusted input can set (``<input type=color>``) is
                set by script (``inputPath: "script"``) instead of failing with
                TrustedInputUnavailable.

        Returns:
            The result; ``inputPath`` is ``"trusted"``, ``"trusted-coordinates"`` or
            ``"synthetic"``.

        Raises:
            BadRequest: the action (or ref, timeout) does not fit the protocol; raised
                here, before anything is sent.
            TrustedInputUnavailable: the device requires trusted input and its driver is
                offline; nothing was sent.
            RefNotFound / BrowserDocumentChanged / FrameTokenUnknown: take a new snapshot.
            ElementObscured / ElementTargetDisabled / ElementNotEditable: the target
                cannot take this input now.
            ClosedShadowRoot: the target is in a closed shadow root.
            BrowserOperationUncertain: the connection broke mid-action; never replayed.
        """
        params = wire_params("page.act", self._params(
            ref=ref, action=action, timeoutMs=timeout_ms, allowCoordinates=allow_coordinates,
            allowScript=allow_script, snapshotAfter=self._after))
        return cast(ActResult, await self._client.call("page.act", params))

    async def click(self, ref: str, *, button: MouseButton = "left", click_count: int = 1,
                    modifiers: list[Modifier] | None = None,
                    timeout_ms: int = 10_000, humanize: bool | None = None) -> ActResult:
        """Click the centre of ``ref``'s element (``click_count`` 2: double click).
        ``humanize``: True/False overrides the driver's ``--humanize`` for this click (an
        eased pointer path to a jittered integer point inside the visible box, the button
        held 60–130 ms; supervisor/humanize.py); None: the driver's setting.

        Raises:
            Same as :meth:`act`.
        """
        action = build_action(ClickAction, button=button, clickCount=click_count,
                              modifiers=modifiers or [], humanize=humanize)
        return await self.act(action, ref, timeout_ms)

    async def dblclick(self, ref: str, *, button: MouseButton = "left",
                       modifiers: list[Modifier] | None = None,
                       timeout_ms: int = 10_000) -> ActResult:
        """Double-click ``ref``'s element. Raises the same as :meth:`act`."""
        return await self.click(ref, button=button, click_count=2, modifiers=modifiers,
                                timeout_ms=timeout_ms)

    async def hover(self, ref: str, timeout_ms: int = 10_000) -> ActResult:
        """Move the pointer over ``ref``'s element. Raises the same as :meth:`act`."""
        return await self.act(HoverAction(), ref, timeout_ms)

    async def type(self, ref: str, text: str, *, submit: bool = False,
                   timeout_ms: int = 10_000, allow_script: bool = False,
                   humanize: bool | None = None) -> ActResult:
        """Focus ``ref`` and type ``text`` key by key (trusted key events per character,
        see :class:`bridge.protocol.models.TypeAction`); it does not clear the field (use
        :meth:`fill` to replace the value). ``submit`` presses Enter after.
        ``allow_script``: as in :meth:`fill` (a colour input).

        Raises:
            BrowserOperationUncertain: the document changed before the last key
                (``details.sent`` of ``details.total`` characters were sent).
            ElementValueNotSet: the field kept its value (``cause: "unchanged"``), or
                the page moved the focus to another element and typing stopped
                (``cause: "focusMoved"``, ``details.focusedName``).
            Same as :meth:`act` otherwise.

        The result has ``keysOnly: True`` when the target is a focusable element that is
        not a text field (the keys went there; no value to read back), and
        ``focusFollowed`` when the page moved the focus box to box (a one-time code).
        ``humanize``: True/False overrides the driver's ``--humanize`` for this call (keys
        held 65–125 ms, 100–200 ms apart; an empty field focused by a humanized click);
        None: the driver's setting.
        """
        return await self.act(build_action(TypeAction, text=text, submit=submit,
                                           humanize=humanize), ref,
                              timeout_ms, allow_script=allow_script)

    async def press(self, key: str, ref: str | None = None,
                    timeout_ms: int = 10_000) -> ActResult:
        """Press ``key`` (``Enter``, ``Control+A``) in the focused element or in ``ref``.

        Raises:
            Same as :meth:`act`.
        """
        return await self.act(build_action(PressAction, key=key), ref, timeout_ms)

    async def wait(self, *, ms: int | None = None, text: str | None = None,
                   text_gone: str | None = None, timeout_ms: int = 10_000) -> WaitResult:
        """Wait ``ms`` milliseconds, then until ``text_gone`` is shown in no frame of the
        page, then until ``text`` shows in one (each given step, in that order).

        Args:
            ms: fixed wait, ms.
            text: text to wait for (woken by the page's DOM changes, and polled).
            text_gone: text to wait for the disappearance of (Playwright MCP's textGone).
            timeout_ms: how long the whole call may take with a text, ms (the fixed wait
                counts); with ``ms`` alone it is raised to cover ``ms``.

        Returns:
            ``{tabId, waitedMs, found?: True, gone?: True}``.

        Raises:
            Timeout: the text did not show, or ``text_gone`` was still shown, within
                ``timeout_ms``.
            BadRequest: none of ``ms``, ``text``, ``text_gone`` given.
        """
        if ms is not None and text is None and text_gone is None:
            timeout_ms = min(max(timeout_ms, ms + 1_000), 300_000)
        result = await self._client.call(
            "page.wait", self._params(ms=ms, text=text, textGone=text_gone,
                                      timeoutMs=timeout_ms, snapshotAfter=self._after)
        )
        return cast(WaitResult, result)

    async def wait_for_text_gone(self, text: str, timeout_ms: int = 10_000) -> WaitResult:
        """Wait until ``text`` is shown in no frame of the page. Raises as :meth:`wait`."""
        return await self.wait(text_gone=text, timeout_ms=timeout_ms)

    async def wait_for_text(self, text: str, timeout_ms: int = 10_000) -> WaitResult:
        """Wait until ``text`` shows on the page. Raises the same as :meth:`wait`."""
        return await self.wait(text=text, timeout_ms=timeout_ms)

    async def find(self, *, role: str | None = None, name: str | None = None,
                   text: str | None = None, regex: bool = False, within: str | None = None,
                   limit: int = 20, timeout_ms: int = 3_000) -> dict[str, Any]:
        """Find elements without a full snapshot: every frame, open and closed shadow
        roots (``page.find``, issue 14 item 5).

        Args:
            role: ARIA role, e.g. ``button``.
            name: accessible name: case-insensitive substring (a regex with ``regex``).
            text: text shown in or on the element: case-insensitive substring (a regex
                with ``regex``); alone it also finds plain text lines (``ref`` None).
            regex: ``name`` and ``text`` are JavaScript regexes (``/…/flags`` for flags).
            within: search only inside this ref's element (and frames inside it).
            limit: most matches returned (1–500).
            timeout_ms: time the search may take, ms; past it the result is truncated.

        Returns:
            ``{matches: [{ref, line, ancestry}], text, truncated, url, title, tabId}``:
            ``ref`` is a snapshot ref (``e7``, ``f1e3``) that :meth:`act` takes; ``text``
            the matches as an indented outline under their ancestors; ``truncated``: the
            limit or the time budget cut the search (``text`` ends with a ``#`` line).

        Raises:
            BadRequest: no criterion, or a regex that does not compile.
            RefNotFound / BrowserDocumentChanged: ``within`` is unknown or from a page
                that is gone.
            BrowserTabClosed: the tab is gone.
        """
        params = self._params(role=role, name=name, text=text, regex=regex, within=within,
                              limit=limit, timeoutMs=timeout_ms)
        return cast(dict[str, Any], await self._client.call("page.find", params))

    # -- more verbs (each raises the same as :meth:`act`) --------------------------------

    async def click_at(self, ref: str, x: float, y: float, timeout_ms: int = 10_000) -> ActResult:
        """Click at (x, y) CSS px from the top-left corner of ``ref``'s border box."""
        action = build_action(ClickAction, position={"x": x, "y": y})
        return await self.act(action, ref, timeout_ms)

    async def mouse(self, op: Literal["move", "click", "down", "up", "wheel", "drag"],
                    x: float | None = None, y: float | None = None, *,
                    to_x: float | None = None,
                    to_y: float | None = None, button: MouseButton = "left",
                    click_count: int = 1, delta_x: float = 0, delta_y: float = 0,
                    modifiers: list[Modifier] | None = None,
                    timeout_ms: int = 10_000) -> ActResult:
        """Real mouse input at a point of the viewport, with no ref (``MouseAction``).

        Args:
            op: ``move``, ``click``, ``down``, ``up``, ``wheel`` or ``drag`` (press at
                (x, y), move to (to_x, to_y), release). Each first moves the pointer to
                (x, y).
            x, y: CSS px from the top-left corner of the top-level viewport (a viewport
                screenshot's pixels divided by its scale). ``down``, ``up`` and ``wheel``
                may leave either out: it is then where the pointer is, the last point any
                pointer action sent it to on this tab (a click, hover, check, drag or
                scroll on a ref included; (0, 0) before any), kept by the driver; the
                result's ``at`` says where the input went.
            to_x, to_y: a drag's end point, same space.
            delta_x, delta_y: a wheel's scroll amounts, CSS px.

        Returns:
            The result; ``hit`` names the element at (x, y) (``{ref, role, name, line}``,
            hit-tested through frames and shadow roots; null fields: nothing but the page
            there) and its ref works for :meth:`act`; a click carries ``delivered``.

        Raises:
            BadRequest: a point outside the viewport, or no point given and the driver
                does not know where the pointer is (the element the last ref action
                pointed at left before its box was read); nothing was sent.
            BadRequest: ``move``, ``click`` or ``drag`` without x and y.
            TrustedInputUnavailable: no input driver (synthetic input is never sent for
                a point), or a browser that would deliver it as something else (the
                driver's refusal: a multiple click or a native drag on Firefox,
                supervisor/browser_limits.py); nothing was sent.
            Same as :meth:`act` otherwise.
        """
        action = build_action(MouseAction, op=op, x=x, y=y, toX=to_x, toY=to_y,
                              button=button, clickCount=click_count, deltaX=delta_x,
                              deltaY=delta_y, modifiers=modifiers or [])
        return await self.act(action, None, timeout_ms)

    async def fill(self, ref: str, value: str, timeout_ms: int = 10_000, *,
                   allow_script: bool = False) -> ActResult:
        """Replace the field's value with ``value``: select all, then the value over it as
        one edit, its last character as a key (Firefox types it key by key;
        :class:`bridge.protocol.models.FillAction` lists the events each browser sends).
        Use :meth:`type` for a key event per character. A range input is set with keys;
        the value is read back and checked (over the boxes of a multi-box input the page
        moved the focus through: ``focusFollowed``).

        Args:
            allow_script: a control no trusted input can set (``<input type=color>``) is
                set by script; the result says ``inputPath: "script"``.

        Raises:
            ElementValueNotSet: the field holds another value afterwards (``cause``).
            TrustedInputUnavailable: a colour input without ``allow_script``.
            Same as :meth:`act` otherwise.
        """
        return await self.act(build_action(FillAction, value=value), ref, timeout_ms,
                              allow_script=allow_script)

    async def select(self, ref: str, values: list[str], timeout_ms: int = 10_000) -> ActResult:
        """Choose options of a native ``<select>`` by value (or label)."""
        return await self.act(build_action(SelectAction, values=values), ref, timeout_ms)

    async def check(self, ref: str, timeout_ms: int = 10_000) -> ActResult:
        """Make a checkbox, radio or switch checked (nothing happens if it already is)."""
        return await self.act(CheckAction(checked=True), ref, timeout_ms)

    async def uncheck(self, ref: str, timeout_ms: int = 10_000) -> ActResult:
        """Make a checkbox or switch unchecked (nothing happens if it already is)."""
        return await self.act(CheckAction(checked=False), ref, timeout_ms)

    async def drag(self, ref: str, to: str, timeout_ms: int = 10_000) -> ActResult:
        """Drag ``ref`` onto ``to`` with a real pointer path."""
        return await self.act(build_action(DragAction, to=to), ref, timeout_ms)

    async def scroll(self, ref: str, dx: float = 0, dy: float = 0,
                     timeout_ms: int = 10_000) -> ActResult:
        """Wheel over the scroll container ``ref`` by (dx, dy) CSS px."""
        return await self.act(build_action(ScrollAction, dx=dx, dy=dy), ref, timeout_ms)

    async def upload(self, ref: str, files: list[str], timeout_ms: int = 10_000) -> ActResult:
        """Give ``files`` (paths on the browser's machine) to a file input or chooser."""
        return await self.act(build_action(UploadAction, files=files), ref, timeout_ms)

    async def focus(self, ref: str, timeout_ms: int = 10_000) -> ActResult:
        """Move keyboard focus to ``ref``."""
        return await self.act(FocusAction(), ref, timeout_ms)

    async def batch(self, actions: Sequence[BatchItemLike]) -> dict[str, Any]:
        """Run the items in order in one request (``page.batch``); stops at the first failure.

        Args:
            actions: ``BatchItem(ref="e7", action=FillAction(value="x"))`` or the same as
                dicts (``{"ref": "e7", "action": {"kind": "fill", "value": "x"}}``).

        Returns:
            ``{"completedActions": [...], "interruptedAction": {index, error} | None}``.

        Raises:
            BadRequest: an item does not fit the protocol; raised here, nothing is sent.
        """
        params = wire_params("page.batch", self._params(actions=list(actions),
                                                        snapshotAfter=self._after))
        return await self._client.call("page.batch", params)

    async def handle_dialog(self, accept: bool, prompt_text: str | None = None) -> dict[str, Any]:
        """Accept or dismiss the open JavaScript dialog (``prompt_text`` for a prompt).

        Raises:
            BadRequest: no dialog is open.
        """
        return await self._client.call(
            "page.dialog", self._params(accept=accept, promptText=prompt_text))

    async def screenshot(self, ref: str | None = None, *, full_page: bool = False,
                         type: Literal["png", "jpeg"] = "png") -> dict[str, Any]:
        """Screenshot: ``{png (base64 of the image: a JPEG with type jpeg), type, width,
        height (image px), scale (image px per CSS px), clip {x, y, width, height} (CSS px
        of the page)}``."""
        return await self._client.call(
            "page.screenshot", self._params(ref=ref, fullPage=full_page, type=type))

    # -- page tools of the driver (supervisor/page_logs.py) ------------------------------

    async def console(self, level: Literal["error", "warning", "info", "debug"] = "info", *,
                      all: bool = False, clear: bool = False) -> dict[str, Any]:
        """The tab's console messages and uncaught page errors of ``level`` or worse,
        since its last navigation (``all``: since it opened), oldest first:
        ``{messages: [{type, text, url?, line?, stack?, pageError?, at (ms since the
        epoch)}], total, errors, warnings}``. ``clear`` forgets them afterwards.

        Raises:
            DeviceNotConnected: the device has no input driver (every page tool of the
                driver: console, network, resize, pdf).
            DialogOpen: a JavaScript dialog blocks the tab.
        """
        return await self._client.call(
            "page.console", self._params(level=level, all=all, clear=clear))

    async def network(self, *, include_static: bool = False, request_id: int | None = None,
                      body: bool = False, clear: bool = False,
                      all: bool = False) -> dict[str, Any]:
        """The tab's requests since its last navigation (``all``: since it opened, every
        navigation's; at most 1,000 kept), ``{requests: [{id, method, url,
        resourceType, status?, statusText?, failure?, at}], hiddenStatic}`` (successful
        images, scripts, stylesheets, fonts and documents are left out unless
        ``include_static``); with ``request_id``: ``{request: {..., requestHeaders,
        responseHeaders?, postData?, durationMs?}}``, and its text ``responseBody`` with
        ``body``.

        Raises:
            BadRequest: ``request_id`` is not a kept request of the tab.
        """
        return await self._client.call("page.network", self._params(
            includeStatic=include_static, requestId=request_id, body=body, clear=clear,
            all=all))

    async def resize(self, width: int, height: int) -> dict[str, Any]:
        """Set the viewport to ``width`` x ``height`` CSS px; ``{width, height}`` as the
        page reports them after.

        Raises:
            BadRequest: a size out of 100..10,000.
            BrowserOperationUncertain: the page reports another size.
        """
        return await self._client.call("page.resize",
                                       self._params(width=width, height=height))

    async def emulate_media(self, *, color_scheme: str | None = None,
                            reduced_motion: str | None = None,
                            forced_colors: str | None = None, contrast: str | None = None,
                            media: str | None = None) -> dict[str, Any]:
        """Emulate CSS media features for the page (Playwright's ``page.emulate_media``);
        one left out (None) keeps its emulation, ``"no-override"`` ends it. Values:
        ``color_scheme`` light / dark / no-preference, ``reduced_motion`` reduce /
        no-preference, ``forced_colors`` active / none, ``contrast`` more /
        no-preference, ``media`` screen / print.

        Returns:
            What the page's ``matchMedia`` answers afterwards: ``{colorScheme,
            reducedMotion, forcedColors, contrast, media}``.

        Raises:
            BadRequest: a value out of those, or the browser cannot emulate it (it
                refused, or the page still does not match: Firefox over WebDriver BiDi).
        """
        return await self._client.call("page.emulateMedia", self._params(**{
            k: v for k, v in {"colorScheme": color_scheme, "reducedMotion": reduced_motion,
                              "forcedColors": forced_colors, "contrast": contrast,
                              "media": media}.items() if v is not None}))

    async def pdf(self) -> bytes:
        """The page printed to PDF (Chromium headless only).

        Raises:
            BadRequest: this browser cannot print to PDF.
        """
        import base64

        result = await self._client.call("page.pdf", self._params())
        return base64.b64decode(result["pdf"])

    async def start_tracing(self) -> dict[str, Any]:
        """Start a Playwright trace (DOM snapshots and screenshots) of this tab's browser
        context: ``{tracing: True}``.

        Raises:
            BadRequest: a trace is already being recorded in this browser.
            DeviceNotConnected: the device has no input driver.
        """
        return await self._client.call("page.tracing", self._params(action="start"))

    async def stop_tracing(self) -> dict[str, Any]:
        """Stop the trace and save it: ``{tracing: False, path, bytes}``, ``path`` the
        absolute path of ``trace-<UTC time>.zip`` on the driver's machine (its output
        folder), which ``playwright show-trace`` opens.

        Raises:
            BadRequest: no trace is being recorded in this browser.
        """
        return await self._client.call("page.tracing", self._params(action="stop"))

    async def evaluate(self, expression: str, ref: str | None = None, *,
                       world: Literal["isolated", "main"] = "main") -> Any:
        """Run ``expression`` in the page (the ref's frame, with the element as argument)
        and return its JSON value. Explicit only: no other verb uses it.

        Args:
            expression: a JavaScript function or expression; a promise is awaited.
            ref: element passed to the function; it runs in that element's frame.
            world: ``"main"`` (default, as Playwright's ``page.evaluate``): the page's own
                world, where its globals and framework state are visible; ``"isolated"``:
                the page's DOM without its JavaScript, so page script can neither see the
                call nor forge its result.

        Raises:
            BadRequest: the script threw or returned something not JSON-serialisable.
        """
        result = await self._client.call(
            "page.evaluate", self._params(ref=ref, expression=expression, world=world))
        return result.get("value")

    # -- a person takes over (issue 37, bridge/handover.py) --------------------------

    async def hand_to_human(self, reason: str, timeout: float = 300) -> dict[str, Any]:
        """Hand this tab to a person now and return at once: ``{handoverId, liveUrl,
        expiresAt (ms since the epoch), tabId, reason, device}``. Give ``liveUrl`` to the
        person (never open it yourself: it works once). Until the hand-off ends, every
        agent request on the tab is refused with HANDED_TO_PERSON. :meth:`wait_for_human`
        waits for its end.

        Args:
            reason: what the person should do (shown in the live view), 1-500 chars.
            timeout: how long the person has, s (1-3600); the link expires then.

        Raises:
            TrustedInputUnavailable: the device has no input driver.
            HandedToPerson: the tab is already handed to a person.
            TabClaimed: another session owns the tab.
            BadRequest: ``timeout`` is not a number of seconds from 1 to 3600 (said in
                seconds, as given; NaN and infinity included).
        """
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) \
                or not 1 <= timeout <= 3600:  # NaN fails the comparison too
            raise E.BadRequest(f"timeout must be a number of seconds from 1 to 3600, not "
                               f"{timeout!r}; nothing was handed.", {"timeout": repr(timeout)})
        return await self._client.call("human.request", self._params(
            reason=reason, timeoutMs=round(timeout * 1000)))

    async def wait_for_human(self, handover_id: str) -> dict[str, Any]:
        """Wait until the hand-off ends: ``{handoverId, state (handedBack | cancelled |
        closed | timedOut | stopped), tabId, before {url, title}, after {url, title} |
        None (tab gone), personInput {clicks, keys, wheels} (counts, never which keys),
        navigations (documents the main frame loaded), opened (the link was opened)}``.

        Raises:
            BadRequest: no such hand-off of this session is waiting.
        """
        return await self._client.call("human.wait", {"device": self.device,
                                                      "handoverId": handover_id})

    async def take_back_from_human(self, handover_id: str) -> dict[str, Any]:
        """End the hand-off now (``withdrawn``): the tab takes this session's requests
        again and the live view no more input: ``{handoverId, ended, state}`` (``ended``
        false: it had ended already, ``state`` says how)."""
        return await self._client.call("human.end", {"device": self.device,
                                                     "handoverId": handover_id})

    async def request_human(self, reason: str, timeout: float = 300,
                            on_link: Callable[[dict[str, Any]], Any] | None = None
                            ) -> dict[str, Any]:
        """Hand this tab to a person and wait until they hand it back (or cancel, or
        ``timeout`` s pass): :meth:`hand_to_human`, then ``on_link(request)`` with its
        answer (default: the link is printed to stderr for the person), then
        :meth:`wait_for_human`. Returns the wait's answer with ``liveUrl`` added. Cancelled
        while waiting, it takes the tab back first (:meth:`take_back_from_human`)."""
        asked = await self.hand_to_human(reason, timeout)
        if on_link is None:
            print(f"trustbridge: a person is needed ({reason}): open {asked['liveUrl']}",
                  file=sys.stderr, flush=True)
        else:
            shown = on_link(asked)
            if inspect.isawaitable(shown):
                await shown
        try:
            result = await self.wait_for_human(asked["handoverId"])
        except asyncio.CancelledError:
            # Whoever cancelled this no longer waits: the tab comes back to the session.
            with contextlib.suppress(E.TrustbridgeError):
                await asyncio.shield(self.take_back_from_human(asked["handoverId"]))
            raise
        return {**result, "liveUrl": asked["liveUrl"]}

    async def back(self, timeout_ms: int = 30_000) -> dict[str, Any]:
        """History back; waits for the load or returns ``transitionPending: true``."""
        return await self._client.call(
            "page.history", self._params(direction="back", timeoutMs=timeout_ms))

    async def forward(self, timeout_ms: int = 30_000) -> dict[str, Any]:
        """History forward; like :meth:`back`."""
        return await self._client.call(
            "page.history", self._params(direction="forward", timeoutMs=timeout_ms))

    async def reload(self, timeout_ms: int = 30_000) -> dict[str, Any]:
        """Reload; waits for the load."""
        return await self._client.call(
            "page.history", self._params(direction="reload", timeoutMs=timeout_ms))


class Browser(BrowserSessions):
    """A connection to the bridge, addressing one device (or the only one connected).

    Get one with :meth:`connect` (a running bridge) or :meth:`launch` (start the embedded
    default in this process); use it as an async context manager or call :meth:`close`.
    Its requests belong to one session (:mod:`bridge.sdk_sessions`: ``sessions``,
    ``release``, ``handoff``, ``stop_session``, ``claim``).
    """

    def __init__(self, client: BridgeClient, device: str | None = None,
                 embedded: Embedded | None = None) -> None:
        self.client = client
        self.device = device
        self._embedded = embedded

    @classmethod
    async def connect(cls, url: str | None = None, token: str | None = None,
                      device: str | None = None, *, session: str | None = None,
                      lease_ms: int = 120_000,
                      on_disconnect: Literal["stop", "keep"] = "stop",
                      secret: str | None = None, operator: str | None = None,
                      ca_file: str | None = None) -> Browser:
        """Connect to a running bridge.

        Args:
            url: ``ws://127.0.0.1:PORT``; default: the endpoint file the bridge wrote.
            token: bridge token; default: the token file of the state directory.
            device: device to address; default: the only one connected.
            session: open the session labelled so (others see the label; TAB_CLAIMED
                names it) and renew its lease every ``lease_ms / 3`` while idle.
                Default: an implicit session (``client-<peer id>``), as before.
            lease_ms: with ``session``: how long it lives without a request, ms.
            on_disconnect: with ``session``: ``"stop"`` when this browser closes (the
                default), or ``"keep"`` it for ``lease_ms``, resumable with ``secret``.
            secret: with ``session``: the ``browser.session["secret"]`` of a kept
                session to resume (a secret of a session that is gone opens a new one).
            operator: the operator credential (``bridge.config.read_operator_token()``):
                this browser may stop other sessions and list them all (docs/security.md
                "Who may do what"). An agent's browser has none.
            ca_file: for a ``wss://`` URL: the PEM CA the bridge's certificate must chain
                to (default: the system's trust store; docs/deploy.md).

        Raises:
            DeviceNotConnected: no bridge listens there (or none recorded its endpoint).
            Unauthorized: wrong token or operator credential.
            ProtocolMismatch: the bridge speaks another protocol version.
            BadRequest: ``session`` is a live session's label and ``secret`` does not
                resume it; a bad label or lease. The connection is closed.
        """
        extra = {k: v for k, v in (("operator", operator), ("ca_file", ca_file)) if v is not None}
        client = await BridgeClient.connect(url, token, **extra)
        await cls._open_session(client, session, lease_ms, on_disconnect, secret)
        return cls(client, device)

    @staticmethod
    async def _open_session(client: BridgeClient, label: str | None, lease_ms: int,
                            on_disconnect: Literal["stop", "keep"],
                            secret: str | None) -> None:
        if label is None:
            return
        try:
            await client.open_session(label, lease_ms=lease_ms, on_disconnect=on_disconnect,
                                      secret=secret)
        except BaseException:
            await client.close()
            raise

    @classmethod
    async def launch(cls, *, headless: bool = True, device: str = "chromium",
                     trusted_input: bool = True, port: int = 0,
                     progress: Callable[[str], None] | None = None,
                     session: str | None = None) -> Browser:
        """Start the embedded default (bridge + supervisor + Chromium) and connect to it.

        :meth:`close` stops all of it.

        Args:
            headless: no browser window.
            device: device id of the browser.
            trusted_input: run the input driver (False: synthetic input, labelled so).
            port: bridge port on 127.0.0.1; 0 picks a free one.
            progress: called with short progress lines while the browser starts.
            session: open the session labelled so (as :meth:`connect`); default implicit.

        Raises:
            DeviceNotConnected: the browser was not ready within 60 s.
            OSError: the port is taken.
        """
        from .embedded import Embedded

        emb = Embedded(port=port, device=device, headless=headless,
                       trusted_input=trusted_input, progress=progress)
        try:
            await emb.start()
            client = await BridgeClient.connect(emb.url, emb.token)
            await cls._open_session(client, session, 120_000, "stop", None)
        except BaseException:
            await emb.stop()
            raise
        return cls(client, device, emb)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the connection; a launched browser and bridge are stopped too."""
        try:
            await self.client.close()
        finally:
            if self._embedded is not None:
                await self._embedded.stop()

    @property
    def protocol_version(self) -> int:
        """The protocol version the bridge speaks."""
        return self.client.protocol_version

    async def devices(self) -> list[DeviceInfo]:
        """Every device the bridge knows, with its extension, driver and input promise."""
        result = await self.client.call("devices.list")
        return [DeviceInfo.model_validate(d) for d in result["devices"]]

    async def cdp_endpoint(self) -> str:
        """The device's loopback CDP URL (``ws://127.0.0.1:PORT/devtools/browser/<token>``)
        for ``playwright.chromium.connect_over_cdp`` or Puppeteer, issued to this
        connection's session (docs/cdp.md). What goes through it bypasses refs, sessions and
        trusted-input routing; the URL is a credential for the whole browser, so only an
        operator browser (``Browser.connect(operator=...)``) gets it.

        Raises:
            Unauthorized: this browser did not connect with the operator credential.
            BadRequest: the device has no CDP door (Firefox, Camoufox).
            DeviceNotConnected: the device's input driver (which serves the door) is
                offline.
        """
        result = await self.client.call("cdp.endpoint", {"device": self.device})
        return str(result["url"])

    async def tabs_result(self) -> TabsResult:
        """Open tabs of the device, with the device that answered.

        Raises:
            DeviceNotConnected: no extension for the device.
            BadRequest: several devices are connected and none was named.
        """
        return cast(TabsResult, await self.client.call("tabs.list", {"device": self.device}))

    async def tabs(self) -> list[TabInfo]:
        """Open tabs of the device. Raises the same as :meth:`tabs_result`."""
        return list((await self.tabs_result())["tabs"])

    async def tab(self, tab_id: int | None = None) -> Tab:
        """A handle on tab ``tab_id``, or on the session's current tab at each call (else
        whichever tab is active).

        Raises:
            BrowserTabClosed: ``tab_id`` is not an open tab of the device.
        """
        if tab_id is not None and all(t["tabId"] != tab_id for t in await self.tabs()):
            raise E.BrowserTabClosed(
                f"Tab {tab_id} is not open. List tabs and pick another.", {"tabId": tab_id})
        return Tab(self.client, self.device, tab_id)

    async def new_tab(self, url: str | None = None, window: bool = False) -> Tab:
        """Open a tab (loading ``url`` if given, waiting for its load) and return it.

        The tab is this session's (others get TAB_CLAIMED there) and its current tab.

        Args:
            url: absolute URL; default: a blank tab.
            window: open it in a new window of its own, so it is that window's
                foreground tab (parallel sessions: the browser throttles background
                tabs; docs/sessions.md).
        """
        result = await self.client.call("tabs.new", {"device": self.device, "url": url,
                                                     "window": window})
        return Tab(self.client, self.device, int(result["tabId"]))

    async def select_tab(self, tab_id: int) -> Tab:
        """Make ``tab_id`` the active tab. Raises BrowserTabClosed if it is gone."""
        await self.client.call("tabs.select", {"device": self.device, "tabId": tab_id})
        return Tab(self.client, self.device, tab_id)

    async def close_tab(self, tab_id: int) -> dict[str, Any]:
        """Close ``tab_id``.

        Returns:
            ``{tabId, closed: True, acceptedBeforeUnload?}``: ``acceptedBeforeUnload`` (the
            prompt: ``{type, message, url}``) when the page asked to confirm leaving and
            the bridge accepted (issue 32 item 5; TRUSTBRIDGE_BEFOREUNLOAD=ask turns it off).

        Raises:
            BrowserTabClosed: the tab is gone.
        """
        return await self.client.call("tabs.close", {"device": self.device, "tabId": tab_id})
