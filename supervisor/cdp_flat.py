"""Flat-mode CDP for one client, on a browser-level CDP session that speaks nested mode.

Chromium's pipe belongs to Playwright (``--remote-debugging-pipe``); the CDP door
(supervisor/cdp_proxy.py) rides a browser-level session Playwright gives
(``browser.new_browser_cdp_session()``), which takes whole commands and emits named
events only. On it, target sessions are *nested* (measured on Chromium 156):
``Target.attachToTarget {flatten: false}`` gives a ``sessionId``, commands go in
``Target.sendMessageToTarget {sessionId, message}`` and everything the target says
comes back in ``Target.receivedMessageFromTarget {sessionId, message}``; a page
session's own children (out-of-process iframes, workers) arrive the same way one level
down, inside the parent's messages. Clients (Playwright's ``connect_over_cdp``,
Puppeteer) speak *flat* mode: a ``sessionId`` field on each message. :class:`FlatClient`
translates one client's messages both ways, with no I/O of its own: it is given
``send_root`` (a command on the browser session) and ``emit`` (a message to the client).

What it changes on the way, and why:

- ``flatten: true`` in ``Target.setAutoAttach`` / ``Target.attachToTarget`` /
  ``Target.autoAttachRelated`` becomes ``false``: nested sessions are the only kind this
  transport can carry. The child → parent map routes each later command.
- Browser-level ``Target.setAutoAttach`` is emulated: Chromium refuses it in nested mode
  ("Only flatten protocol is supported with browser level auto-attach", measured), so
  the client's filter is applied to ``Target.getTargets`` and then to each
  ``Target.targetCreated`` (discovery on), each match attached with
  ``attachToTarget``. No target is paused for the client (``waitingForDebugger:
  false``): a new page may have run a little before the client sees it.
- ``Browser.close`` (on any session) ends this client's connection only
  (:attr:`FlatClient.closing`); it is never sent: the browser is the runtime's.
- The few commands that would take the shared browser down or open it beyond the door
  are refused on every session, and download behaviour stays the runtime's: the table
  and the reasons are supervisor/cdp_policy.py's.
- What the client created it owns: the pages of its ``Target.createTarget`` and the
  contexts of its ``Target.createBrowserContext`` are closed and disposed when it
  leaves (:meth:`FlatClient.close`); what it merely attached to stays.

Every client command with an ``id`` is answered exactly once: its result, the target's
error, or a CDP error made here (malformed JSON, unknown session, a refused method).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from .cdp_policy import (
    answered_not_applied,
    extension_refusal,
    is_extension_target,
    names_target,
    refusal,
)

log = logging.getLogger("trustbridge.cdp")

RootSend = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""A command on the browser-level session: its result, or :class:`CdpError` raised."""
Emit = Callable[[dict[str, Any]], None]
"""Queue one message (a response or an event) to the client, in order."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
SERVER_ERROR = -32000
SESSION_NOT_FOUND = -32001
"""CDP's own codes (Chromium's DevTools protocol dispatcher)."""
ROOT_EVENTS = ("Target.attachedToTarget", "Target.detachedFromTarget",
               "Target.receivedMessageFromTarget", "Target.targetCreated",
               "Target.targetDestroyed", "Target.targetInfoChanged", "Target.targetCrashed")
"""Browser-session events the proxy listens to (the transport emits named events only);
every target's own events arrive inside ``Target.receivedMessageFromTarget``."""
DISCOVERY_EVENTS = frozenset({"Target.targetCreated", "Target.targetDestroyed",
                              "Target.targetInfoChanged"})
"""Forwarded only when the client itself asked for ``Target.setDiscoverTargets``."""
DEFAULT_FILTER = ({"type": "browser", "exclude": True}, {"type": "tab", "exclude": True},
                  {"type": "browser_ui", "exclude": True}, {})
"""Browser-level auto-attach's filter when the client gives none (Chromium's default,
plus its ``browser_ui`` targets, which are no page of the runtime)."""
FLATTENED = frozenset({"Target.setAutoAttach", "Target.attachToTarget",
                       "Target.autoAttachRelated"})


class CdpError(Exception):
    """A CDP error answer: ``code`` and ``message`` as the protocol's ``error`` object."""

    def __init__(self, message: str, code: int = SERVER_ERROR) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class _Pending:
    """A message this client's command put on a target session, keyed by (session, id).

    ``client_id`` / ``client_session``: the command to answer (and the session it was
    sent on: None, the root, for a detach the proxy moved to the parent). ``inner``: for a wrapper
    (``Target.sendMessageToTarget`` carrying the command one level down), the key of the
    command it carries, dropped if the wrapper fails (the command never got there)."""

    client_id: int
    client_session: str | None
    inner: tuple[str, int] | None = None
    waiter: asyncio.Future[dict[str, Any]] | None = None  # the proxy's own question


def matches(filter_: list[dict[str, Any]] | tuple[dict[str, Any], ...], kind: str) -> bool:
    """Whether auto-attach takes a target of type ``kind``: the first filter entry whose
    ``type`` is absent or equal decides (``exclude`` true: no), none: no (CDP's
    ``Target.TargetFilter`` rule)."""
    for entry in filter_:
        if entry.get("type") in (None, kind):
            return not entry.get("exclude", False)
    return False


def cdp_error_message(exc: BaseException) -> str:
    """Playwright's ``CDPSession.send: Protocol error (M): text`` → ``text``."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    marker = "): "
    return text.split(marker, 1)[1] if text.startswith("CDPSession") and marker in text \
        else text


class FlatClient:
    """One flat-mode client over one nested-mode browser session (no I/O of its own).

    Args:
        send_root: a command on this client's browser-level session.
        emit: queue a message to the client.

    Attributes:
        parents: every session this client may address → its parent session (None: the
            browser session's own).
        own_targets: the targets this client created (``Target.createTarget``), not
            closed yet; closed when it leaves.
        own_contexts: the browser contexts it created (``Target.createBrowserContext``),
            not disposed yet; disposed when it leaves (their pages close with them).
        closing: the client sent ``Browser.close``: end its connection, nothing else.
    """

    def __init__(self, send_root: RootSend, emit: Emit) -> None:
        self._send_root = send_root
        self._emit = emit
        self.parents: dict[str, str | None] = {}
        self._targets: dict[str, str] = {}  # root-level session → its target id
        self._pending: dict[tuple[str, int], _Pending] = {}
        self._next_id = 0
        self._auto: list[dict[str, Any]] | tuple[dict[str, Any], ...] | None = None
        self._discover = False  # the client asked for target discovery itself
        self._attaching: dict[str, asyncio.Future[None]] = {}  # target id → attach running
        self._tasks: set[asyncio.Task[Any]] = set()
        self._creating: set[asyncio.Future[dict[str, Any]]] = set()
        self.own_targets: set[str] = set()
        self.own_contexts: set[str] = set()
        self.closing = False

    # -- client → browser -----------------------------------------------------------

    async def command(self, raw: str | bytes) -> None:
        """Handle one client message; answers it (or queues the answer to come)."""
        try:
            msg = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            self._emit({"id": 0, "error": {"code": PARSE_ERROR,
                                           "message": "Message must be valid JSON"}})
            return
        if not isinstance(msg, dict) or not isinstance(msg.get("id"), int) \
                or isinstance(msg.get("id"), bool):
            self._emit({"id": 0, "error": {"code": INVALID_REQUEST,
                                           "message": "Message must have integer 'id'"}})
            return
        cid: int = msg["id"]
        session = msg.get("sessionId")
        method, params = msg.get("method"), msg.get("params", {})
        if not isinstance(method, str) or not isinstance(params, dict) \
                or (session is not None and not isinstance(session, str)):
            self._answer_error(cid, session if isinstance(session, str) else None,
                               CdpError("Message must have string 'method' and object "
                                        "'params'", INVALID_REQUEST))
            return
        if method in FLATTENED and params.get("flatten"):
            params = {**params, "flatten": False}
        if method == "Browser.close":
            self.closing = True
            self._answer(_Pending(cid, session), {"result": {}})
            return
        refused = refusal(method, params)
        if refused is None and (target := names_target(method, params)) is not None \
                and await self._is_extension_target(target):
            refused = extension_refusal(method)
        if refused is not None:
            self._answer_error(cid, session, CdpError(refused))
            return
        if answered_not_applied(method, params, self.own_contexts):
            self._answer(_Pending(cid, session), {"result": {}})
            return
        try:
            if session is None:
                self._emit({"id": cid, "result": await self._root(method, params)})
            else:
                await self._to_session(cid, session, method, params)
        except CdpError as err:
            self._answer_error(cid, session, err)

    async def _root(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "Target.setAutoAttach":
            return await self._set_auto_attach(params)
        if method == "Target.createTarget":
            return await self._create_target(params)
        if method == "Target.createBrowserContext":
            return await self._create(method, params, "browserContextId", self.own_contexts)
        if method in ("Target.closeTarget", "Target.disposeBrowserContext"):
            result = await self._send_root(method, params)
            self.own_targets.discard(params.get("targetId"))  # closed: no longer to close
            self.own_contexts.discard(params.get("browserContextId"))
            return result
        detach = params.get("sessionId")
        if method == "Target.detachFromTarget" and isinstance(detach, str) \
                and self.parents.get(detach) is not None:
            # Flat mode detaches any session at the root; a nested child is its
            # parent's to detach (Playwright's CRSession.detach sends it to the root).
            return await self._ask(self.parents[detach], method, params)
        if method == "Target.setDiscoverTargets":
            self._discover = bool(params.get("discover"))
            if not self._discover and self._auto is not None:
                return {}  # auto-attach still needs targetCreated
        return await self._send_root(method, params)

    async def _is_extension_target(self, target: str) -> bool:
        """Whether ``target`` is the extension's (cdp_policy.is_extension_target); an
        unknown target is not (the browser answers the command's own error)."""
        try:
            info = await self._send_root("Target.getTargetInfo", {"targetId": target})
        except CdpError:
            return False
        return is_extension_target(info.get("targetInfo") or {})

    async def _set_auto_attach(self, params: dict[str, Any]) -> dict[str, Any]:
        if not params.get("autoAttach"):
            self._auto = None
            if not self._discover:
                await self._send_root("Target.setDiscoverTargets", {"discover": False})
            return {}
        filter_ = params.get("filter")
        self._auto = filter_ if isinstance(filter_, list) and filter_ else DEFAULT_FILTER
        await self._send_root("Target.setDiscoverTargets", {"discover": True})
        targets = await self._send_root("Target.getTargets", {})
        for info in targets.get("targetInfos", []):
            await self._auto_attach(info)  # before the answer, as Chromium does
        return {}

    async def _auto_attach(self, info: dict[str, Any]) -> None:
        target = info.get("targetId")
        if self._auto is None or not isinstance(target, str) \
                or not matches(self._auto, str(info.get("type"))) \
                or is_extension_target(info):  # never the extension's (cdp_policy)
            return
        await self._attach_once(target)

    async def _attach_once(self, target: str) -> None:
        """Attach to ``target`` unless this client has (or is getting) a session with it;
        returns once its ``Target.attachedToTarget`` went to the client."""
        if target in self._targets.values():
            return
        running = self._attaching.get(target)
        if running is None:
            running = self._attaching[target] = asyncio.ensure_future(self._attach(target))
            running.add_done_callback(lambda _t: self._attaching.pop(target, None))
        await asyncio.shield(running)

    async def _attach(self, target: str) -> None:
        try:
            # Chromium sends Target.attachedToTarget before this answer: that event is
            # the client's (root_event records and forwards it).
            await self._send_root("Target.attachToTarget", {"targetId": target,
                                                            "flatten": False})
        except CdpError as err:  # gone meanwhile, or not attachable: nothing to announce
            log.debug("auto-attach to %s failed: %s", target, err.message)

    async def _create_target(self, params: dict[str, Any]) -> dict[str, Any]:
        """``Target.createTarget`` under auto-attach: the new target is announced before
        the answer, as Chromium's own auto-attach does (Playwright's ``newPage`` looks the
        page up when the answer comes)."""
        result = await self._create("Target.createTarget", params, "targetId",
                                    self.own_targets)
        if self._auto is not None and isinstance(result.get("targetId"), str) \
                and matches(self._auto, "page"):
            await self._attach_once(result["targetId"])
        return result

    async def _create(self, method: str, params: dict[str, Any], key: str,
                      into: set[str]) -> dict[str, Any]:
        """A command that creates something this client owns (``result[key]``, recorded
        in ``into``): recorded when the browser answers, even when the client left in
        the meantime (:meth:`close` waits for it), so nothing it made is left behind."""
        running = asyncio.ensure_future(self._send_root(method, params))
        self._creating.add(running)

        def record(task: asyncio.Future[dict[str, Any]]) -> None:
            self._creating.discard(task)
            if not task.cancelled() and task.exception() is None \
                    and isinstance(task.result().get(key), str):
                into.add(task.result()[key])

        running.add_done_callback(record)  # before shield's: recorded before the answer
        return await asyncio.shield(running)

    async def _ask(self, session: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """A root command the proxy sends on ``session`` instead: its result.

        Raises:
            CdpError: the session's answer was an error (or it went away first).
        """
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        await self._to_session(0, session, method, params, None, waiter)
        msg = await waiter
        if "error" in msg:
            raise CdpError(str(msg["error"].get("message", "error")),
                           int(msg["error"].get("code", SERVER_ERROR)))
        return msg.get("result", {})

    async def _to_session(self, cid: int, session: str, method: str,
                          params: dict[str, Any], answer_on: str | None = "",
                          waiter: asyncio.Future[dict[str, Any]] | None = None) -> None:
        if session not in self.parents:
            raise CdpError("Session with given id not found.", SESSION_NOT_FOUND)
        key = (session, self._id())
        self._pending[key] = _Pending(cid, session if answer_on == "" else answer_on,
                                      waiter=waiter)
        message: dict[str, Any] = {"id": key[1], "method": method, "params": params}
        inner, current = key, session
        parent = self.parents[current]
        while parent is not None:  # wrap once per level above the target's session
            wrap = (parent, self._id())
            self._pending[wrap] = _Pending(cid, session, inner)  # answers nobody itself
            message = {"id": wrap[1], "method": "Target.sendMessageToTarget",
                       "params": {"sessionId": current, "message": json.dumps(message)}}
            inner, current, parent = wrap, parent, self.parents.get(parent)
        try:
            await self._send_root("Target.sendMessageToTarget",
                                  {"sessionId": current, "message": json.dumps(message)})
        except CdpError:
            alive = self._alive(inner)  # else a detach answered the command already
            self._drop(inner)
            if alive:
                raise

    def _alive(self, key: tuple[str, int] | None) -> bool:
        """Whether every message of a chain (wrapper → … → command) still waits."""
        while key is not None:
            pending = self._pending.get(key)
            if pending is None:
                return False
            key = pending.inner
        return True

    def _drop(self, key: tuple[str, int] | None) -> None:
        while key is not None:
            pending = self._pending.pop(key, None)
            key = pending.inner if pending else None

    def _id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _answer_error(self, cid: int, session: str | None, err: CdpError) -> None:
        self._answer(_Pending(cid, session), {"error": {"code": err.code,
                                                       "message": err.message}})

    def _answer(self, command: _Pending, body: dict[str, Any]) -> None:
        """Answer the client command ``command`` (``body``: ``result`` or ``error``)."""
        if command.waiter is not None:
            if not command.waiter.done():
                command.waiter.set_result(body)
            return
        out = {"id": command.client_id, **body}
        if command.client_session is not None:
            out["sessionId"] = command.client_session
        self._emit(out)

    def _innermost(self, key: tuple[str, int] | None) -> _Pending | None:
        pending = None
        while key is not None and (found := self._pending.get(key)) is not None:
            pending, key = found, found.inner
        return pending

    # -- browser → client -----------------------------------------------------------

    def root_event(self, method: str, params: dict[str, Any]) -> None:
        """An event of the browser-level session (one of :data:`ROOT_EVENTS`)."""
        if method == "Target.receivedMessageFromTarget":
            self._from_session(params.get("sessionId"), params.get("message"))
            return
        if method == "Target.attachedToTarget":
            self._attached(params, None)
        elif method == "Target.detachedFromTarget":
            self._forget(params.get("sessionId"))
        elif method == "Target.targetCreated" and self._auto is not None:
            self._spawn(self._auto_attach(params.get("targetInfo") or {}))
        if method in DISCOVERY_EVENTS and not self._discover:
            return
        self._emit({"method": method, "params": params})

    def _attached(self, params: dict[str, Any], parent: str | None) -> None:
        child = params.get("sessionId")
        if isinstance(child, str):
            self.parents[child] = parent
            if parent is None:
                target = (params.get("targetInfo") or {}).get("targetId")
                if isinstance(target, str):
                    self._targets[child] = target

    def _forget(self, session: Any) -> None:
        gone = {session}
        while True:  # the session and every session under it
            more = {s for s, p in self.parents.items() if p in gone and s not in gone}
            if not more:
                break
            gone |= more
        for s in gone:
            self.parents.pop(s, None)
            self._targets.pop(s, None)
        # A wrapper on a gone session carries a command to a session under it, gone too:
        # each command is answered once, by its own (innermost) entry.
        for key in [k for k in self._pending if k[0] in gone]:
            pending = self._pending.pop(key)
            if pending.inner is None:
                self._answer(pending, {"error": {
                    "code": SERVER_ERROR,
                    "message": "Target closed: the session was detached before it answered."}})

    def _from_session(self, session: Any, raw: Any) -> None:
        if not isinstance(session, str) or not isinstance(raw, str):
            return
        try:
            msg = json.loads(raw)
        except ValueError:
            log.debug("a target sent a message that is not JSON")
            return
        if not isinstance(msg, dict):
            return
        if "id" in msg:
            pending = self._pending.pop((session, msg["id"]), None) \
                if isinstance(msg["id"], int) else None
            if pending is None:
                return  # not this client's (or already answered)
            if pending.inner is None:
                self._answer(pending, {"error": msg["error"]} if "error" in msg
                             else {"result": msg.get("result", {})})
            elif "error" in msg and self._alive(pending.inner):
                # The carried command never reached its session.
                command = self._innermost(pending.inner)
                self._drop(pending.inner)
                if command is not None:
                    self._answer(command, {"error": msg["error"]})
            return
        method, params = msg.get("method"), msg.get("params") or {}
        if method == "Target.receivedMessageFromTarget":
            child = params.get("sessionId")
            if isinstance(child, str) and child not in self.parents:
                self.parents[child] = session
            self._from_session(child, params.get("message"))
            return
        if method == "Target.attachedToTarget":
            self._attached(params, session)
        elif method == "Target.detachedFromTarget":
            self._forget(params.get("sessionId"))
        self._emit({"method": method, "params": params, "sessionId": session})

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        """The client left (closed, sent ``Browser.close``, crashed or was killed):
        close the pages and dispose the contexts it created, then detach every session
        it opened on the browser session, so nothing of it stays in the runtime's
        browser but what it changed in pages it did not create.

        Bounded by the caller (supervisor/cdp_proxy.py): a creation still running is
        awaited first, so what it makes is closed too.
        """
        self._auto = None
        for task in [*self._tasks, *self._attaching.values()]:
            task.cancel()
        if self._creating:
            await asyncio.wait(list(self._creating))
        for method, key, owned in (("Target.closeTarget", "targetId", self.own_targets),
                                   ("Target.disposeBrowserContext", "browserContextId",
                                    self.own_contexts)):
            for made in list(owned):
                try:
                    await self._send_root(method, {key: made})
                except CdpError as err:  # already gone (closed by someone else)
                    log.debug("%s %s on leaving: %s", method, made, err.message)
                owned.discard(made)
        for session in [s for s, p in self.parents.items() if p is None]:
            try:
                await self._send_root("Target.detachFromTarget", {"sessionId": session})
            except CdpError:
                pass  # already gone with its target
        self.parents.clear()
        self._pending.clear()
