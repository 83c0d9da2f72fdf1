"""Frame tokens (design.md §3): hand each frame's document a token, map token → Playwright Frame.

The driver and the extension must agree on which frame is which: the extension reports
the token of the frame that owns a ref, the driver turns it back into the ``Frame`` here.
The supervisor makes a fresh random token when a page appears, a frame attaches, a frame
navigates to a new document, and on ``domcontentloaded``, and hands it to the extension's
content script of that document by one of two routes (issue 35 item 1):

- **cdp** (Chromium): nothing touches the DOM. A CDP session of the frame's target (the
  page's, or an out-of-process iframe's own) runs ``Runtime.enable``; its
  ``Runtime.executionContextCreated`` events name every world with its ``frameId``. The
  Playwright ``Frame``'s CDP frame id is learnt once by setting a nonce in Playwright's
  utility world (``evaluate_isolated``) and reading it back in each
  ``__playwright_utility_world_*`` context; the token then goes to the content script by
  ``Runtime.evaluate`` in the extension's isolated world of that frame (origin
  ``chrome-extension://``), which calls the function the content script keeps on its own
  global (:data:`ACCEPT_FUNCTION`; extension/src/content/main.js). Page script cannot see
  either world. Playwright's own session already runs ``Runtime.enable`` on every target,
  so this adds no protocol trace (docs/security.md row 1).
- **transient** (Firefox ESR over WebDriver BiDi, Camoufox over Juggler): Playwright gives
  Python no raw BiDi session, and its evaluations reach the page's realm and its own
  sandbox, never a WebExtension content script's sandbox; the DOM is the only thing the
  two share. The token is written as ``data-mcjug="tb:<token>"`` on ``<html>`` and
  removed again **in the same synchronous script** (from Playwright's utility sandbox);
  the content script reads it from its MutationObserver's records (``oldValue``). No page
  script can run while the attribute exists, so ``getAttribute``, CSS selectors and timers
  never see it; a page MutationObserver with ``attributeOldValue`` does see the two
  records (docs/security.md row 1, measured there). A value the page itself had on that
  attribute is put back.

A re-stamp of a document that holds the registry's token keeps it (same-document
navigation, a repeated event). A re-stamped frame's old token is dropped; a closed page's
tokens are all forgotten. A crashed page's tokens (or, after the browser died, every
token) are remembered as crashed, so a ref taken before the crash fails BROWSER_CRASHED
(issue 13 item 3) rather than FRAME_TOKEN_UNKNOWN.

Stamping, navigation and an action request are not one transaction: this gives detection
(an unknown token is an error, never a guess), not a proof that no race exists.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections import OrderedDict
from typing import Any, Literal

from playwright.async_api import BrowserContext, CDPSession, Error as PlaywrightError, Frame, Page

from trustbridge.bridge.protocol.errors import (
    BrowserCrashed,
    ElementTargetAmbiguous,
    FrameTokenUnknown,
    TrustbridgeError,
)
from trustbridge.bridge.protocol.models import FRAME_TOKEN_ATTRIBUTE

from .isolated_eval import evaluate_isolated

log = logging.getLogger("trustbridge.frames")

ATTRIBUTE = FRAME_TOKEN_ATTRIBUTE
"""The transient route's attribute (set and removed in one script)."""
ACCEPT_FUNCTION = "__trustbridgeAcceptToken"
"""The content script's own global (its isolated world / sandbox, never the page's):
``(old, fresh) => token in force`` (extension/src/content/main.js)."""
AX_ELEMENTS_FUNCTION = "__trustbridgeAxElements"
"""The content script's own global (its isolated world): ``(localRefs) => (Element|null)[]``
(extension/src/content/main.js, page/snapshot.js ``axElements``)."""
AX_ROLES = {"textField": "textbox", "searchBox": "searchbox", "checkBox": "checkbox",
            "radioButton": "radio", "comboBoxSelect": "combobox", "popUpButton": "combobox",
            "comboBoxMenuButton": "combobox", "menuItem": "menuitem",
            "menuItemCheckBox": "menuitemcheckbox", "menuItemRadio": "menuitemradio",
            "spinButton": "spinbutton", "listBoxOption": "option", "toggleButton": "button",
            "textFieldWithComboBox": "combobox", "treeItem": "treeitem", "listBox": "listbox",
            "menuListOption": "option", "staticText": "text"}
"""Chromium's internal role names (CDP ``AXNode.role.value``) → ARIA roles; the rest are
ARIA names already (Chromium's ax_enums.mojom)."""
NO_ROLE = {"generic", "none", "presentation", "GenericContainer", "Ignored", "unknown",
           "group", "text", "InlineTextBox", "LineBreak"}
"""Roles that say nothing more than the walker's ``generic``: such a fact is not used."""
CRASHED_KEPT = 1024
"""How many tokens of crashed pages are remembered (oldest dropped first)."""
Crash = Literal["renderer", "browser"]
Route = Literal["cdp", "transient"]

# Transient route, in Playwright's utility world/sandbox. The token in force is kept on
# that world's own global (per document, invisible to the page), so a repeated stamp keeps
# it; it is announced again each time, for a content script that was injected after an
# earlier stamp. Waits up to ROOT_WAIT_MS for a document without a root element (a frame
# between page script's document.open() and its write()). Returns the token, or null.
_ANNOUNCE_JS = """() => {
  const [attr, old, fresh, waitMs] = %s;
  const announce = (root) => {
    const token = old && globalThis.__tbStamped === old ? old : fresh;
    globalThis.__tbStamped = token;
    const had = root.getAttribute(attr);
    root.setAttribute(attr, 'tb:' + token);
    if (had === null) root.removeAttribute(attr); else root.setAttribute(attr, had);
    return token;
  };
  if (document.documentElement) return announce(document.documentElement);
  return new Promise((resolve) => {
    const done = (value) => { watcher.disconnect(); clearTimeout(limit); resolve(value); };
    const watcher = new MutationObserver(() => {
      if (document.documentElement) done(announce(document.documentElement));
    });
    watcher.observe(document, { childList: true });
    const limit = setTimeout(() => done(null), waitMs);
  });
}"""
ROOT_WAIT_MS = 3000
"""How long a stamp waits for a document's root element (transient route) or for the
extension's world of a frame to be created (cdp route), ms."""
STAMP_TIMEOUT_S = 5.0
BLANK_SETTLE_S = 2.0
"""How long :meth:`FrameRegistry.blank_page` waits for this browser's count of blank
pages to agree with the extension's before it refuses, s."""
"""Bound on one stamp, s (it waits at most ROOT_WAIT_MS; this only bounds a stuck page)."""
UTILITY_WORLD_PREFIX = "__playwright_utility_world_"
"""Name prefix of Playwright's utility worlds (CDP ``ExecutionContextDescription.name``)."""
EXTENSION_ORIGIN_PREFIX = "chrome-extension://"


def ax_fact(node: dict[str, Any]) -> dict[str, Any] | None:
    """``{role, name, states}`` of one CDP ``AXNode``, or None when the tree ignores it or
    gives it no role beyond generic (:data:`NO_ROLE`). States as the snapshot writes them
    (extension/src/page/aria.js ``statesOf``): checked / checked=mixed, pressed /
    pressed=mixed, expanded, selected, disabled."""
    if node.get("ignored"):
        return None
    raw = str((node.get("role") or {}).get("value") or "")
    role = AX_ROLES.get(raw, raw)
    if not role or raw in NO_ROLE or role in NO_ROLE:
        return None
    name = str((node.get("name") or {}).get("value") or "")
    props = {p.get("name"): (p.get("value") or {}).get("value")
             for p in node.get("properties") or []}
    states = []
    if props.get("disabled") is True:
        states.append("disabled")
    for key in ("checked", "pressed"):
        value = props.get(key)
        if value in (True, "true"):
            states.append(key)
        elif value == "mixed":
            states.append(f"{key}=mixed")
    if props.get("expanded") is True:
        states.append("expanded")
    if props.get("selected") is True:
        states.append("selected")
    return {"role": role, "name": name, "states": states}


class _Target:
    """One CDP target session (a page, or an out-of-process iframe): its live execution
    contexts, from ``Runtime.executionContextCreated`` / ``Destroyed`` / ``Cleared``."""

    def __init__(self, session: CDPSession) -> None:
        self.session = session
        self.contexts: dict[int, dict[str, Any]] = {}
        self.created = asyncio.Event()
        self.dead = False
        session.on("Runtime.executionContextCreated", self._created)
        session.on("Runtime.executionContextDestroyed",
                   lambda e: self.contexts.pop(e.get("executionContextId"), None))
        session.on("Runtime.executionContextsCleared", lambda _e: self.contexts.clear())

    def _created(self, event: dict[str, Any]) -> None:
        ctx = event["context"]
        self.contexts[ctx["id"]] = ctx
        self.created.set()

    async def start(self) -> None:
        await self.session.send("Runtime.enable")

    def worlds(self, frame_id: str | None, *, utility: bool) -> list[int]:
        """Context ids of Playwright's utility worlds (``utility``) or of the extension's
        isolated worlds, of ``frame_id`` (None: any frame), newest first."""
        out = []
        for cid, ctx in self.contexts.items():
            aux = ctx.get("auxData") or {}
            if frame_id is not None and aux.get("frameId") != frame_id:
                continue
            if utility and str(ctx.get("name", "")).startswith(UTILITY_WORLD_PREFIX):
                out.append(cid)
            elif not utility and str(ctx.get("origin", "")).startswith(EXTENSION_ORIGIN_PREFIX):
                out.append(cid)
        return sorted(out, reverse=True)

    async def evaluate(self, context_id: int, expression: str) -> Any:
        """The JSON value of ``expression`` in ``context_id``; raises PlaywrightError."""
        got = await self.session.send("Runtime.evaluate", {
            "expression": expression, "contextId": context_id, "returnByValue": True})
        if "exceptionDetails" in got:
            raise PlaywrightError(str(got["exceptionDetails"].get("text")))
        return got.get("result", {}).get("value")


class FrameRegistry:
    """token → Frame for every frame of a browser context.

    Args:
        route: how a token reaches the extension: ``"cdp"`` (Chromium: through the
            extension's isolated world, nothing in the DOM) or ``"transient"`` (Firefox,
            Camoufox: an attribute set and removed in one script). See the module text.
    """

    def __init__(self, route: Route = "transient") -> None:
        if route not in ("cdp", "transient"):
            raise ValueError(f"route must be 'cdp' or 'transient', not {route!r}")
        self.route: Route = route
        self._by_token: dict[str, Frame] = {}
        self._by_frame: dict[Frame, str] = {}
        self._locks: dict[Frame, asyncio.Lock] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._crashed: OrderedDict[str, Crash] = OrderedDict()
        self._contexts: list[BrowserContext] = []
        self._targets: dict[Frame, _Target] = {}
        self._cdp_ids: dict[Frame, str] = {}

    def __len__(self) -> int:
        return len(self._by_token)

    def attach(self, context: BrowserContext) -> None:
        """Watch ``context``: its current pages and every page it opens later."""
        self._contexts.append(context)
        context.on("page", self.watch_page)
        for page in context.pages:
            self.watch_page(page)

    def watch_page(self, page: Page) -> None:
        """Stamp ``page``'s frames now and whenever they attach or navigate."""
        page.on("frameattached", self._spawn_stamp)
        page.on("framenavigated", self._spawn_stamp)
        page.on("framedetached", self.forget_frame)
        page.on("domcontentloaded", lambda p: [self._spawn_stamp(f) for f in p.frames])
        page.on("close", self.forget_page)
        page.on("crash", self.page_crashed)
        for frame in page.frames:
            self._spawn_stamp(frame)

    def token_of(self, frame: Frame) -> str | None:
        """The token the registry holds for ``frame``'s current document, or None."""
        return self._by_frame.get(frame)

    def frame_for(self, token: str) -> Frame:
        """Return the Frame holding ``token``.

        Raises:
            BrowserCrashed: it was stamped in a page whose renderer crashed, or in a
                browser that died (``details.what``: ``renderer`` / ``browser``).
            FrameTokenUnknown: no live frame holds it (never stamped here, re-stamped
                since, or its page closed).
        """
        what = self._crashed.get(token)
        if what is not None:
            raise BrowserCrashed(
                "The page of this ref crashed (its renderer died)." if what == "renderer"
                else "The browser of this ref died and was started again.",
                {"what": what, "tabId": None})
        frame = self._by_token.get(token)
        if frame is None or frame.is_detached():
            raise FrameTokenUnknown(
                "The frame of this ref is not known to the input driver (it navigated, "
                "closed or was never stamped). Take a new snapshot and use its refs.",
                {"frameToken": token[:8] + "…"},
            )
        return frame

    async def stamp(self, frame: Frame) -> str | None:
        """Hand ``frame``'s document a token unless it already holds the registry's one.

        Returns:
            The token in force, or None if the frame could not be stamped (detached, no
            root element / no extension world within ROOT_WAIT_MS, or its execution
            context went away).
        """
        lock = self._locks.setdefault(frame, asyncio.Lock())
        async with lock:
            if frame.is_detached():
                return None
            old = self._by_frame.get(frame)
            fresh = secrets.token_hex(16)
            # Registered before it is handed over, so a resolve that reads it at once finds it.
            self._by_token[fresh] = frame
            try:
                if self.route == "cdp":
                    got = await asyncio.wait_for(self._hand_cdp(frame, old, fresh),
                                                 STAMP_TIMEOUT_S)
                else:
                    got = await evaluate_isolated(
                        frame, None,
                        _ANNOUNCE_JS % json.dumps([ATTRIBUTE, old, fresh, ROOT_WAIT_MS]),
                        STAMP_TIMEOUT_S)
            except (PlaywrightError, TrustbridgeError, asyncio.TimeoutError) as exc:
                self._by_token.pop(fresh, None)
                log.debug("stamp failed for %s: %s", frame.url, exc)
                return None
            if got != fresh:
                self._by_token.pop(fresh, None)
                if got is None or got != old:
                    return None
                return got
            if old is not None:
                self._by_token.pop(old, None)
            self._by_frame[frame] = fresh
            return fresh

    async def blank_page(self, index: int, count: int) -> str:
        """The token of the top frame of the page at ``index`` among the ``count`` pages
        whose top document is about:blank, oldest first (as Playwright lists a context's
        pages, in the order they were opened), stamped now if it holds none. The
        extension runs no script in a top-level about:blank, so it names such a tab by
        its place among its blank tabs instead (driver.blankPage), and no stamp can be
        handed to a script there: a frame holding no token gets one known to this
        registry alone (the extension never needs it; a later document's stamp replaces
        it).

        Raises:
            ElementTargetAmbiguous: this browser shows another number of blank pages than
                the extension counted (a tab opening or navigating meanwhile): the place
                names no page for sure, and nothing is guessed.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + BLANK_SETTLE_S
        while True:
            pages = [p for c in self._contexts for p in c.pages
                     if not p.is_closed() and p.main_frame.url in ("", "about:blank")]
            if len(pages) == count or loop.time() >= deadline:
                break
            # A tab the extension already counts reaches Playwright's page list a moment
            # later (its "page" event), and a closing one leaves it a moment later:
            # right after browser_tabs new the counts disagree for a few ms.
            await asyncio.sleep(0.05)
        if len(pages) != count or not 0 <= index < count:
            raise ElementTargetAmbiguous(
                f"The tab shows about:blank, and the driver sees {len(pages)} blank "
                f"page(s) where the extension counted {count}: it cannot tell which is "
                "this tab's, so nothing was sent.", {"candidates": len(pages)},
                next_step="Navigate this tab to a page first (browser_navigate), or "
                "close the other blank tabs, then retry.")
        top = pages[index].main_frame
        token = self._by_frame.get(top)
        if token is None:
            token = secrets.token_hex(16)
            self._by_token[token] = top
            self._by_frame[top] = token
        return token
    # -- cdp route -------------------------------------------------------------------

    async def _target_of(self, frame: Frame) -> _Target:
        """The CDP target session of ``frame``: its own (a page's main frame, an
        out-of-process iframe) or its nearest ancestor's. Raises PlaywrightError."""
        f: Frame | None = frame
        while f is not None:
            known = self._targets.get(f)
            if known is not None and not known.dead:
                return known
            try:
                owner = f.page if f is f.page.main_frame else f
                session = await f.page.context.new_cdp_session(owner)
            except PlaywrightError:
                # "This frame does not have a separate CDP session": an in-process frame.
                f = f.parent_frame
                continue
            target = _Target(session)
            await target.start()
            self._targets[f] = target
            return target
        raise PlaywrightError(f"no CDP session reaches the frame {frame.url!r}")

    async def _cdp_frame_id(self, frame: Frame, target: _Target) -> str | None:
        """``frame``'s CDP frame id (stable for the frame's life, across navigations):
        a nonce set in Playwright's utility world of ``frame`` is looked for in each
        utility world of ``target``."""
        known = self._cdp_ids.get(frame)
        if known is not None:
            return known
        nonce = secrets.token_hex(8)
        await evaluate_isolated(frame, None,
                                f"() => {{ globalThis.__tbProbe = {json.dumps(nonce)}; }}",
                                STAMP_TIMEOUT_S)
        for _ in range(20):  # the world's creation event may trail Playwright's own use
            ids = target.worlds(None, utility=True)
            values = await asyncio.gather(
                *(target.evaluate(cid, "globalThis.__tbProbe") for cid in ids),
                return_exceptions=True)
            for cid, value in zip(ids, values):
                if value == nonce and cid in target.contexts:
                    found = str(target.contexts[cid]["auxData"]["frameId"])
                    self._cdp_ids[frame] = found
                    return found
            await asyncio.sleep(0.01)
        return None

    async def _hand_cdp(self, frame: Frame, old: str | None, fresh: str) -> str | None:
        try:
            target = await self._target_of(frame)
            frame_id = await self._cdp_frame_id(frame, target)
        except PlaywrightError:
            # A session that stopped answering (an out-of-process frame that came back
            # in-process): forget it and its ids, once.
            for f, t in list(self._targets.items()):
                if f in (frame, frame.parent_frame):
                    t.dead = True
            self._cdp_ids.pop(frame, None)
            target = await self._target_of(frame)
            frame_id = await self._cdp_frame_id(frame, target)
        if frame_id is None:
            return None
        expression = (f"typeof globalThis.{ACCEPT_FUNCTION} === 'function' ? "
                      f"globalThis.{ACCEPT_FUNCTION}({json.dumps(old)}, {json.dumps(fresh)}) "
                      ": null")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + ROOT_WAIT_MS / 1000
        while True:
            for cid in target.worlds(frame_id, utility=False):
                try:
                    got = await target.evaluate(cid, expression)
                except PlaywrightError:
                    continue  # a world of a document that just went away
                if got:
                    return str(got)
            if loop.time() > deadline or frame.is_detached():
                return None
            target.created.clear()
            try:  # the content script's world is created at document_start
                await asyncio.wait_for(target.created.wait(), 0.05)
            except asyncio.TimeoutError:
                pass

    async def ax_facts(self, frame: Frame, refs: list[str]) -> dict[str, dict[str, Any]]:
        """Chromium's accessibility facts of the elements behind ``refs`` (local refs of
        ``frame``'s document), issue 30 item 8: ``{ref: {role, name, states}}``.

        Only on the cdp route (Chromium): the elements are fetched by the content script's
        own function (``__trustbridgeAxElements``, extension/src/content/main.js) in the
        extension's isolated world of the frame, then ``DOM.describeNode`` gives each one's
        backend node id and ``Accessibility.getPartialAXTree`` (``fetchRelatives: false``)
        the role, name and states Chromium computed: ElementInternals included, which no
        page-world API reads. Nothing runs in the page's world and nothing touches the DOM;
        no command is added to what Playwright already enables except those reads. A ref
        whose element is gone, or that the tree ignores or gives only a generic role, is
        left out. Any other route answers ``{}``. Cost: ~1 ms per element plus one round
        trip (measured in docs/benchmarks/corpus.md).

        Raises:
            PlaywrightError: the frame's CDP session failed.
        """
        if self.route != "cdp" or not refs:
            return {}
        target = await self._target_of(frame)
        frame_id = await self._cdp_frame_id(frame, target)
        if frame_id is None:
            return {}
        session = target.session
        group = "tbax" + secrets.token_hex(4)
        expression = (f"typeof globalThis.{AX_ELEMENTS_FUNCTION} === 'function' ? "
                      f"globalThis.{AX_ELEMENTS_FUNCTION}({json.dumps(refs)}) : null")
        for cid in target.worlds(frame_id, utility=False):
            try:
                got = await session.send("Runtime.evaluate", {
                    "expression": expression, "contextId": cid, "objectGroup": group})
            except PlaywrightError:
                continue  # a world of a document that just went away
            array = got.get("result", {})
            if "exceptionDetails" in got or array.get("subtype") != "array":
                continue
            try:
                return await self._read_ax(session, array["objectId"], refs)
            finally:
                with contextlib.suppress(PlaywrightError):
                    await session.send("Runtime.releaseObjectGroup", {"objectGroup": group})
        return {}

    @staticmethod
    async def _read_ax(session: CDPSession, array_id: str,
                       refs: list[str]) -> dict[str, dict[str, Any]]:
        """The facts of the elements in the remote array ``array_id`` (index i ↔ refs[i])."""
        props = await session.send("Runtime.getProperties", {
            "objectId": array_id, "ownProperties": True})
        by_index: dict[int, str] = {}
        for prop in props.get("result", []):
            value = prop.get("value") or {}
            if prop.get("name", "").isdigit() and value.get("subtype") == "node":
                by_index[int(prop["name"])] = value["objectId"]

        async def one(i: int, object_id: str) -> tuple[str, dict[str, Any] | None]:
            node = (await session.send("DOM.describeNode", {"objectId": object_id}))["node"]
            backend = node["backendNodeId"]
            tree = await session.send("Accessibility.getPartialAXTree", {
                "backendNodeId": backend, "fetchRelatives": False})
            for ax in tree.get("nodes", []):
                if ax.get("backendDOMNodeId") == backend:
                    return refs[i], ax_fact(ax)
            return refs[i], None

        out: dict[str, dict[str, Any]] = {}
        got = await asyncio.gather(*(one(i, oid) for i, oid in by_index.items() if i < len(refs)),
                                   return_exceptions=True)
        for item in got:
            if isinstance(item, tuple) and item[1] is not None:
                out[item[0]] = item[1]
        return out

    # -- bookkeeping ------------------------------------------------------------------

    async def restamp_all(self, context: BrowserContext) -> int:
        """Stamp every frame of every page of ``context`` again (after the driver's
        connection came back, issue 32 item 2): a frame whose document still holds its
        token keeps it (so refs taken before stay good); one that lost it, or was never
        stamped, gets a fresh one. Returns how many frames hold a token now."""
        frames = [f for page in context.pages for f in page.frames]
        got = await asyncio.gather(*(self.stamp(f) for f in frames), return_exceptions=True)
        return sum(1 for g in got if isinstance(g, str))

    def forget_frame(self, frame: Frame) -> None:
        """Drop a detached frame's token (and its CDP session, if it had its own)."""
        token = self._by_frame.pop(frame, None)
        if token is not None:
            self._by_token.pop(token, None)
        self._locks.pop(frame, None)
        self._cdp_ids.pop(frame, None)
        target = self._targets.pop(frame, None)
        if target is not None:
            target.dead = True
            self._spawn(self._detach(target))

    @staticmethod
    async def _detach(target: _Target) -> None:
        try:
            await target.session.detach()
        except PlaywrightError:
            pass  # its target is gone already

    def forget_page(self, page: Page) -> None:
        """Drop every token of a closed page."""
        for frame in [f for f in set(self._by_frame) | set(self._targets) | set(self._cdp_ids)
                      if f.page is page]:
            self.forget_frame(frame)

    def page_crashed(self, page: Page) -> None:
        """Remember ``page``'s tokens as crashed (renderer), then drop them."""
        self._mark_crashed([t for f, t in self._by_frame.items() if f.page is page], "renderer")
        self.forget_page(page)

    def browser_gone(self) -> None:
        """The browser died: remember every token as crashed (browser) and drop them all
        (the pages' own close events may come later, or never)."""
        self._mark_crashed(list(self._by_frame.values()), "browser")
        for frame in list(self._by_frame):
            self.forget_frame(frame)
        self._by_token.clear()
        self._targets.clear()
        self._cdp_ids.clear()

    def _mark_crashed(self, tokens: list[str], what: Crash) -> None:
        for token in tokens:
            self._crashed[token] = what
        while len(self._crashed) > CRASHED_KEPT:
            self._crashed.popitem(last=False)

    def _spawn_stamp(self, frame: Frame) -> None:
        self._spawn(self.stamp(frame))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def settle(self) -> None:
        """Wait for stamps in flight (used by tests and start-up)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

