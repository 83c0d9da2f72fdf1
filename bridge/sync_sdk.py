"""Python SDK, synchronous form: :mod:`bridge.sdk` for code that does not use asyncio.

Example::

    from trustbridge.bridge.sync_sdk import SyncBrowser

    with SyncBrowser.connect() as browser:         # the running bridge (`trustbridge up`)
        tab = browser.tab()
        tab.goto("http://127.0.0.1:8000/")
        print(tab.snapshot())                      # "- button \"Save\" [ref=e7]" ...
        tab.click("e7")                            # trusted input where the device promises it

    with SyncBrowser.launch() as browser:          # or start bridge + headless Chromium here
        ...

Every method has the name, arguments, return value and exceptions of its async twin in
:mod:`bridge.sdk` (the exceptions are the very ``bridge.protocol.errors`` classes, not
wrapped): the verbs build the same protocol action models, and ``act`` / ``batch`` take a
model or its dict and refuse a bad one with ``BadRequest`` before anything is sent. The async SDK runs on one private event loop in a daemon thread per
:class:`SyncBrowser`; each call submits the coroutine there
(:func:`asyncio.run_coroutine_threadsafe`) and blocks the calling thread until it is done,
so any thread without a running event loop may call it. Called from inside a running event
loop it raises :class:`SyncInAsyncError` instead of blocking that loop (as
``playwright.sync_api`` refuses to). :meth:`SyncBrowser.close` stops the loop and joins its
thread.

The methods are generated from the async ones by :func:`_sync` (one line each below), so a
signature or default changes in one place; a test checks that every public coroutine of
:class:`bridge.sdk.Tab` and :class:`bridge.sdk.Browser` has its sync form here.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import CancelledError as FutureCancelled
from typing import Any, Concatenate, Literal, ParamSpec, Self, TypeVar

from .protocol import errors as E
from .sdk import (
    ActionLike,
    ActResult,
    BatchItemLike,
    Browser,
    InputPath,
    MouseButton,
    NavigateResult,
    SessionInfo,
    SessionOpenResult,
    SessionStopped,
    SessionStopResult,
    SessionTabsResult,
    SnapshotResult,
    Tab,
    TabBusy,
    TabClaimed,
    TabInfo,
    TabRef,
    TabsResult,
    WaitResult,
)

__all__ = [
    "ActResult",
    "ActionLike",
    "BatchItemLike",
    "InputPath",
    "MouseButton",
    "NavigateResult",
    "SessionInfo",
    "SessionOpenResult",
    "SessionStopResult",
    "SessionStopped",
    "SessionTabsResult",
    "SnapshotResult",
    "SyncBrowser",
    "SyncInAsyncError",
    "SyncTab",
    "TabBusy",
    "TabClaimed",
    "TabInfo",
    "TabRef",
    "TabsResult",
    "WaitResult",
]

P = ParamSpec("P")
R = TypeVar("R")

THREAD_NAME = "trustbridge-sync-sdk"
"""Name of the loop thread of every :class:`SyncBrowser` (one per browser)."""


class SyncInAsyncError(RuntimeError):
    """The sync SDK was called from a thread whose asyncio event loop is running.

    Blocking there would stall that loop (and deadlock if the call needs it), so the sync
    SDK refuses, as ``playwright.sync_api`` does. Not a protocol error: nothing was sent.
    """

    def __init__(self) -> None:
        super().__init__(
            "The trustbridge sync API (trustbridge.SyncBrowser) was called inside a running asyncio "
            "event loop. Use the async API instead: `from trustbridge import Browser` and "
            "`await` its methods, or run this synchronous code in a worker thread "
            "(`await asyncio.to_thread(...)`)."
        )


def _refuse_running_loop() -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return  # no loop in this thread: blocking is fine
    raise SyncInAsyncError()


class _LoopThread:
    """One private event loop running forever in a daemon thread, until :meth:`stop`."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._main, name=THREAD_NAME, daemon=True)
        self.thread.start()

    def _main(self) -> None:
        loop = self._loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
        finally:
            # What asyncio.run does on exit: cancel what is left, then close cleanly.
            leftover = asyncio.all_tasks(loop)
            for task in leftover:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*leftover, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
            asyncio.set_event_loop(None)
            loop.close()

    @property
    def stopped(self) -> bool:
        return not self.thread.is_alive()

    def run(self, make: Callable[[], Coroutine[Any, Any, R]]) -> R:
        """Run the coroutine ``make()`` on the loop and return its result (or raise its
        exception, unchanged). Ctrl+C in the caller cancels it.

        Raises:
            SyncInAsyncError: called from a thread with a running event loop.
            DeviceNotConnected: the browser was closed.
            Cancelled: the loop stopped under the call (close() from another thread).
        """
        _refuse_running_loop()  # before make(): no coroutine is left un-awaited
        if self.stopped:
            raise E.DeviceNotConnected("The bridge connection is closed.")
        coro = make()
        try:
            future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        except RuntimeError:  # the loop closed since the check above (close() elsewhere)
            coro.close()
            raise E.DeviceNotConnected("The bridge connection is closed.") from None
        try:
            return future.result()
        except FutureCancelled:
            raise E.Cancelled("The call was cancelled.") from None
        except BaseException:
            future.cancel()  # KeyboardInterrupt in the caller: stop the coroutine too
            raise

    def stop(self) -> None:
        """Stop the loop (cancelling what still runs on it) and join its thread."""
        if not self.stopped:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self.thread.join()


def _sync(
    method: Callable[Concatenate[Any, P], Coroutine[Any, Any, R]], owner: str | None = None,
) -> Callable[Concatenate[Any, P], R]:
    """The blocking form of an async SDK method, for the class body of a ``_Sync`` class.

    The result keeps the async method's parameters (for ``help()`` and, through the
    ParamSpec, for type checkers and IDEs) and its return value; it calls ``method`` on the
    wrapped async object (``self._impl``) on the loop thread. ``owner``: the class its
    docstring names, for a method inherited from a mixin (default: the defining class).
    """
    defined_in, name = method.__qualname__.rsplit(".", 1)
    owner = owner or defined_in

    def call(self: _Sync, *args: P.args, **kwargs: P.kwargs) -> R:
        return self._loop_thread.run(lambda: method(self._impl, *args, **kwargs))

    call.__name__ = name
    call.__doc__ = f"Sync form of :meth:`bridge.sdk.{owner}.{name}`."
    call.__signature__ = inspect.signature(method)  # type: ignore[attr-defined]
    call._sync_of = method  # type: ignore[attr-defined]
    return call


class _Sync:
    """Base of the sync classes: the async object they drive and the loop it lives on."""

    _impl: Any
    _loop_thread: _LoopThread

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for attr, value in vars(cls).items():
            method = getattr(value, "_sync_of", None)
            if method is not None:
                # Catch `click = _sync(Tab.hover)`: a name must wrap its own async twin.
                if method.__name__ != attr:
                    raise TypeError(f"{cls.__name__}.{attr} wraps {method.__qualname__}")
                value.__qualname__ = f"{cls.__name__}.{attr}"


class SyncTab(_Sync):
    """One browser tab of one device: sync form of :class:`bridge.sdk.Tab`.

    Get one from :meth:`SyncBrowser.tab` (or ``new_tab`` / ``select_tab``); it lives as
    long as its browser.
    """

    def __init__(self, tab: Tab, loop_thread: _LoopThread) -> None:
        self._impl = tab
        self._loop_thread = loop_thread

    def __repr__(self) -> str:
        return f"SyncTab(device={self.device!r}, tab_id={self.tab_id!r})"

    @property
    def device(self) -> str | None:
        """Device id, or None for the only device connected."""
        return self._impl.device

    @property
    def tab_id(self) -> int | None:
        """Tab id, or None for whichever tab is active at each call."""
        return self._impl.tab_id

    goto = _sync(Tab.goto)
    snapshot_result = _sync(Tab.snapshot_result)
    snapshot = _sync(Tab.snapshot)
    act = _sync(Tab.act)
    click = _sync(Tab.click)
    dblclick = _sync(Tab.dblclick)
    hover = _sync(Tab.hover)
    type = _sync(Tab.type)
    press = _sync(Tab.press)
    wait = _sync(Tab.wait)
    wait_for_text = _sync(Tab.wait_for_text)
    find = _sync(Tab.find)
    wait_for_text_gone = _sync(Tab.wait_for_text_gone)
    mouse = _sync(Tab.mouse)
    console = _sync(Tab.console)
    network = _sync(Tab.network)
    resize = _sync(Tab.resize)
    emulate_media = _sync(Tab.emulate_media)
    pdf = _sync(Tab.pdf)
    click_at = _sync(Tab.click_at)
    fill = _sync(Tab.fill)
    select = _sync(Tab.select)
    check = _sync(Tab.check)
    uncheck = _sync(Tab.uncheck)
    drag = _sync(Tab.drag)
    scroll = _sync(Tab.scroll)
    upload = _sync(Tab.upload)
    focus = _sync(Tab.focus)
    batch = _sync(Tab.batch)
    handle_dialog = _sync(Tab.handle_dialog)
    screenshot = _sync(Tab.screenshot)
    evaluate = _sync(Tab.evaluate)
    start_tracing = _sync(Tab.start_tracing)
    stop_tracing = _sync(Tab.stop_tracing)
    back = _sync(Tab.back)
    forward = _sync(Tab.forward)
    reload = _sync(Tab.reload)
    hand_to_human = _sync(Tab.hand_to_human)
    wait_for_human = _sync(Tab.wait_for_human)
    take_back_from_human = _sync(Tab.take_back_from_human)
    request_human = _sync(Tab.request_human)  # on_link runs on the SDK's loop thread


class SyncBrowser(_Sync):
    """A connection to the bridge: sync form of :class:`bridge.sdk.Browser`.

    Get one with :meth:`connect` or :meth:`launch`; use it as a context manager
    (``with SyncBrowser.connect() as browser:``) or call :meth:`close`, which also stops
    its loop thread. A browser never closed keeps that (daemon) thread until the process
    exits.
    """

    def __init__(self, browser: Browser, loop_thread: _LoopThread) -> None:
        self._impl = browser
        self._loop_thread = loop_thread

    def __repr__(self) -> str:
        state = "closed" if self._loop_thread.stopped else "open"
        return f"SyncBrowser(device={self.device!r}, {state})"

    @classmethod
    def _start(cls, make: Callable[[], Coroutine[Any, Any, Browser]]) -> SyncBrowser:
        _refuse_running_loop()  # before a thread is started for nothing
        loop_thread = _LoopThread()
        try:
            return cls(loop_thread.run(make), loop_thread)
        except BaseException:
            loop_thread.stop()
            raise

    @classmethod
    def connect(cls, url: str | None = None, token: str | None = None,
                device: str | None = None, *, session: str | None = None,
                lease_ms: int = 120_000, on_disconnect: Literal["stop", "keep"] = "stop",
                secret: str | None = None, operator: str | None = None,
                ca_file: str | None = None) -> SyncBrowser:
        """Sync form of :meth:`bridge.sdk.Browser.connect`: ``session`` names this
        browser's session, whose lease the loop thread's heartbeat keeps alive;
        ``operator`` is the operator credential (docs/security.md "Who may do what");
        ``ca_file`` the PEM CA a ``wss://`` bridge's certificate must chain to.

        Raises:
            SyncInAsyncError: called inside a running event loop (use :mod:`bridge.sdk`).
            Otherwise the same as :meth:`bridge.sdk.Browser.connect`; no thread is left
            running.
        """
        return cls._start(lambda: Browser.connect(
            url, token, device, session=session, lease_ms=lease_ms,
            on_disconnect=on_disconnect, secret=secret, operator=operator, ca_file=ca_file))

    @classmethod
    def launch(cls, *, headless: bool = True, device: str = "chromium",
               trusted_input: bool = True, port: int = 0,
               progress: Callable[[str], None] | None = None,
               session: str | None = None) -> SyncBrowser:
        """Sync form of :meth:`bridge.sdk.Browser.launch`.

        ``progress`` is called on the loop thread, not the caller's: it must not call this
        SDK (that raises SyncInAsyncError).

        Raises:
            SyncInAsyncError: called inside a running event loop (use :mod:`bridge.sdk`).
            Otherwise the same as :meth:`bridge.sdk.Browser.launch`; no thread or browser
            is left running.
        """
        return cls._start(lambda: Browser.launch(
            headless=headless, device=device, trusted_input=trusted_input, port=port,
            progress=progress, session=session))

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Sync form of :meth:`bridge.sdk.Browser.close`; then stops the loop thread.

        Closing twice is a no-op. Its tabs then raise DeviceNotConnected.

        Raises:
            SyncInAsyncError: called inside a running event loop (nothing is closed).
        """
        if self._loop_thread.stopped:
            return
        _refuse_running_loop()  # before the finally below could stop the loop unclosed
        try:
            self._loop_thread.run(self._impl.close)
        finally:
            self._loop_thread.stop()

    @property
    def device(self) -> str | None:
        """Device addressed, or None for the only one connected."""
        return self._impl.device

    @property
    def protocol_version(self) -> int:
        """The protocol version the bridge speaks."""
        return self._impl.protocol_version

    @property
    def session(self) -> SessionOpenResult | None:
        """As :attr:`bridge.sdk.Browser.session`."""
        return self._impl.session

    devices = _sync(Browser.devices)
    cdp_endpoint = _sync(Browser.cdp_endpoint)
    sessions = _sync(Browser.sessions, "Browser")
    release = _sync(Browser.release, "Browser")
    handoff = _sync(Browser.handoff, "Browser")
    stop_session = _sync(Browser.stop_session, "Browser")
    claim = _sync(Browser.claim, "Browser")
    tabs = _sync(Browser.tabs)
    tabs_result = _sync(Browser.tabs_result)
    close_tab = _sync(Browser.close_tab)

    def tab(self, tab_id: int | None = None) -> SyncTab:
        """Sync form of :meth:`bridge.sdk.Browser.tab`; returns a :class:`SyncTab`."""
        return SyncTab(self._loop_thread.run(lambda: self._impl.tab(tab_id)), self._loop_thread)

    def new_tab(self, url: str | None = None, window: bool = False) -> SyncTab:
        """Sync form of :meth:`bridge.sdk.Browser.new_tab`; returns a :class:`SyncTab`."""
        return SyncTab(self._loop_thread.run(lambda: self._impl.new_tab(url, window)),
                       self._loop_thread)

    def select_tab(self, tab_id: int) -> SyncTab:
        """Sync form of :meth:`bridge.sdk.Browser.select_tab`; returns a :class:`SyncTab`."""
        return SyncTab(self._loop_thread.run(lambda: self._impl.select_tab(tab_id)),
                       self._loop_thread)
