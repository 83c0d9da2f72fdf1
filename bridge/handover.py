"""A tab handed to a person and handed back (issue 37; docs/mcp.md "browser_request_human",
docs/security.md "Live view").

An agent asks ``human.request {tabId?, reason, timeoutMs}``: the tab is handed to a person.
The answer comes at once with a live-view link (bridge/live_view.py serves it) that the
agent relays to the person; ``human.wait {handoverId}`` then waits until the hand-off ends:

- ``handedBack``: the person pressed "Done — hand back" in the live view;
- ``cancelled``: the person pressed "Cancel";
- ``closed``: the person's live view disconnected before either (closing its tab);
- ``timedOut``: ``timeoutMs`` passed (the link expires then, opened or not);
- ``stopped``: the requesting session ended (a person's Stop button, ``session.stop``,
  its client's disconnect, its lease);
- ``tabClosed``: the tab is gone (closed, its browser restarted), seen by the wait,
  which looks every TAB_CHECK_S;
- ``withdrawn``: the agent took the tab back (``human.end``; the SDK and the MCP tool
  send it when their wait is cancelled).

While the hand-off lasts, every agent request on that tab, whichever session sends it, is
refused with HANDED_TO_PERSON before anything is sent (:meth:`HandoverBook.refuse`); only
``tabs.list``, ``tabs.new`` and ``tabs.select`` (which touch no page) go through. The
answer of ``human.wait`` says what changed: the tab's URL and title before and after, how
many documents its main frame loaded, and how many clicks, keys and wheel turns the person
sent — never which keys (the person may have typed a password or a 2FA code).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .protocol import errors as E
from .sessions import Session

log = logging.getLogger("trustbridge.handover")

ENDED_STATES = ("handedBack", "cancelled", "closed", "timedOut", "stopped", "withdrawn",
                "tabClosed")
PASSES_WHILE_HANDED = frozenset({"tabs.list", "tabs.new", "tabs.select", "devices.list",
                                 "human.wait", "human.end"})
"""Methods that touch no page: allowed on a handed tab (every other one is refused)."""
TABS_TIMEOUT_S = 10.0
TAB_CHECK_S = 2.0
"""How often a waiting ``human.wait`` checks that the handed tab still exists, s."""
KEEP_ENDED = 256
"""Ended hand-offs whose links still answer "over" (410) rather than "unknown" (404)."""


@dataclass(eq=False)
class Handover:
    """One hand-off of one tab to a person. Times: ``expires_at`` monotonic s,
    ``expires_ms`` ms since the epoch."""

    id: str
    secret: str
    """The live-view link's path part: 256 random bits (secrets.token_urlsafe(32))."""
    device: str
    tab: int
    reason: str
    session: Session | None
    expires_at: float
    expires_ms: float
    before: dict[str, Any]
    state: str = "pending"
    """pending (link not opened) → open (a live view holds it) → one of ENDED_STATES."""
    opener: object | None = None
    counts: dict[str, int] = field(default_factory=lambda: {"clicks": 0, "keys": 0,
                                                             "wheels": 0})
    typed: list[str] = field(default_factory=lambda: [""])
    """The runs of characters the person typed (in memory only, never logged or
    answered): masked in the agent's later snapshots like a secret it typed itself."""
    stream: dict[str, Any] = field(default_factory=dict)
    """What the driver's ``driver.liveStop`` said (frames, navigations)."""
    done: asyncio.Event = field(default_factory=asyncio.Event)
    timer: asyncio.TimerHandle | None = None
    on_end: list[Callable[[Handover], None]] = field(default_factory=list)

    @property
    def active(self) -> bool:
        return self.state in ("pending", "open")

    def key(self, key: str) -> None:
        """Follow what the person types: a character extends the current run, Backspace
        shortens it, any other named key (Enter, Tab, an arrow) starts a new run (so does
        a click: :meth:`break_run`)."""
        if len(key) == 1:
            self.typed[-1] += key
        elif key == "Backspace":
            self.typed[-1] = self.typed[-1][:-1]
        elif key not in ("Shift", "Control", "Alt", "Meta", "CapsLock", "AltGraph"):
            self.break_run()

    def break_run(self) -> None:
        """The person's typing moved elsewhere (a named key, a click into another
        field): what comes next is another run, so each field's value is masked on its
        own (one run holding both would match no text on the page)."""
        if self.typed[-1]:
            self.typed.append("")


class HandoverBook:
    """Every hand-off of one bridge.

    Args:
        clock: monotonic seconds (tests pass a fake).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.by_id: dict[str, Handover] = {}
        self.by_secret: dict[str, Handover] = {}
        self.on_change: Callable[[str], None] = lambda _device: None
        """Called with the device when one of its hand-offs starts or ends (the server
        tells the extension, whose badge shows a handed tab)."""

    def create(self, device: str, tab: int, reason: str, session: Session | None,
               timeout_ms: int, before: dict[str, Any]) -> Handover:
        """Hand ``tab`` to a person now, until ``timeout_ms`` ms from now at the latest."""
        hand = Handover(id=secrets.token_hex(8), secret=secrets.token_urlsafe(32),
                        device=device, tab=tab, reason=reason, session=session,
                        expires_at=self.clock() + timeout_ms / 1000,
                        expires_ms=time.time() * 1000 + timeout_ms, before=before)
        self.by_id[hand.id] = hand
        self.by_secret[hand.secret] = hand
        self.on_change(device)
        with contextlib.suppress(RuntimeError):  # no loop: a unit test ends it by hand
            hand.timer = asyncio.get_running_loop().call_later(
                timeout_ms / 1000, self.end, hand, "timedOut")
        return hand

    def handed(self, device: str, tab: int | None) -> Handover | None:
        """The active hand-off of ``(device, tab)``, if any."""
        if tab is None:
            return None
        return next((h for h in self.by_id.values()
                     if h.active and h.device == device and h.tab == tab), None)

    def refuse(self, method: str, device: str, tab: int | None) -> None:
        """Refuse an agent request on a handed tab.

        Raises:
            HandedToPerson: ``tab`` of ``device`` is handed to a person and ``method``
                touches its page (nothing was sent).
        """
        if method in PASSES_WHILE_HANDED:
            return
        hand = self.handed(device, tab)
        if hand is not None:
            raise E.HandedToPerson(
                f"Tab {tab} is handed to a person ({hand.reason[:100]!r}) until they hand it "
                f"back or the hand-off times out; nothing of this {method} was sent.",
                tabId=tab, handoverId=hand.id)

    def end(self, hand: Handover, state: str) -> bool:
        """End ``hand`` as ``state`` (one of ENDED_STATES); False if it had ended."""
        if not hand.active:
            return False
        hand.state = state
        if hand.timer is not None:
            hand.timer.cancel()
        hand.done.set()
        self.on_change(hand.device)
        for then in hand.on_end:
            try:
                then(hand)
            except Exception:  # noqa: BLE001 - one listener's bug must not keep it open
                log.exception("hand-off %s: an end listener failed", hand.id)
        log.info("hand-off %s of tab %s ended: %s", hand.id, hand.tab, state)
        return True

    def reasons(self, device: str) -> dict[int, str]:
        """Tab → reason of every active hand-off of ``device``."""
        return {h.tab: h.reason for h in self.by_id.values() if h.active and h.device == device}

    def session_ended(self, session: Session) -> None:
        """The requesting session ended (Stop, disconnect, lease): its hand-offs end as
        ``stopped`` and their live views stop taking input."""
        for hand in list(self.by_id.values()):
            if hand.session is session:
                self.end(hand, "stopped")

    def forget(self, hand: Handover) -> None:
        """Drop an ended hand-off once its wait answered; its link keeps answering 410
        (over) for the last KEEP_ENDED links, then 404 (unknown)."""
        self.by_id.pop(hand.id, None)
        ended = [s for s, h in self.by_secret.items() if not h.active and h.id not in self.by_id]
        for secret in ended[:max(0, len(ended) - KEEP_ENDED)]:
            del self.by_secret[secret]


class HumanService:
    """``human.request`` and ``human.wait`` for the executor.

    Args:
        book: the bridge's hand-offs.
        policy: the routing policy (device, extension, driver).
        active_tab: device → the tab last seen active (TabQueue.active_tab).
        peer: peer id → live peer (``call(method, params, timeout_s)``).
        base_url: the bridge's own ``http://host:port`` (the live-view link's start).
        mask: ``(device, text)`` → ``text`` with the device's typed secrets masked
            (TypedSecrets.mask): the URLs and titles ``human.wait`` answers go through it,
            since a page may carry what the person typed in its next URL (a GET form's
            ``?code=…``) or title.
    """

    def __init__(self, book: HandoverBook, policy: Any,
                 active_tab: Callable[[str], int | None],
                 peer: Callable[[str], Any], base_url: Callable[[], str],
                 mask: Callable[[str, str], str] = lambda _device, text: text) -> None:
        self.book = book
        self.mask = mask
        self.policy = policy
        self.active_tab = active_tab
        self.peer = peer
        self.base_url = base_url

    async def page_of(self, device: str, tab: int | None) -> dict[str, Any] | None:
        """``{tabId, url, title}`` of ``tab`` (None: the active one) from the extension's
        tab list (the tabs API: no page is read); None when the tab is gone."""
        ext = self.policy.extensions.get(device)
        if ext is None:
            raise E.DeviceNotConnected(f"Device {device!r} has no extension connected.",
                                       device=device)
        rows = (await self.peer(ext).call("tabs.list", {}, TABS_TIMEOUT_S)).get("tabs") or []
        for row in rows:
            if (tab is None and row.get("active")) or row.get("tabId") == tab:
                return {"tabId": row.get("tabId"), "url": row.get("url"),
                        "title": row.get("title")}
        return None

    async def request(self, parsed: Any, session: Session | None) -> dict[str, Any]:
        """``human.request``: see the module docstring.

        Raises:
            TrustedInputUnavailable: the device has no input driver (the live view sends
                the person's input as trusted input only).
            HandedToPerson: the tab is already handed to a person.
            BrowserTabClosed: the tab does not exist.
        """
        device = self.policy.pick_device(parsed.device)
        if self.policy.drivers.get(device) is None:
            raise E.TrustedInputUnavailable(
                f"Device {device!r} has no input driver: the live view sends the person's "
                "input as trusted input only, so it cannot be handed over; nothing was "
                "handed.", device=device)
        tab = parsed.tabId if parsed.tabId is not None else self.active_tab(device)
        page = await self.page_of(device, tab)
        if page is None:
            raise E.BrowserTabClosed(f"Tab {tab} does not exist; nothing was handed.",
                                     tabId=tab)
        tab = page["tabId"]
        self.book.refuse("human.request", device, tab)
        hand = self.book.create(device, tab, parsed.reason, session, parsed.timeoutMs,
                                {"url": page["url"], "title": page["title"]})
        return {"handoverId": hand.id, "liveUrl": f"{self.base_url()}/live/{hand.secret}",
                "expiresAt": hand.expires_ms, "tabId": tab, "reason": hand.reason,
                "device": device}

    def _mine(self, handover: str, session: Session | None) -> Any:
        hand = self.book.by_id.get(handover)
        if hand is None or (session is not None and hand.session is not None
                            and hand.session is not session):
            raise E.BadRequest(f"No hand-off {handover!r} of this session is waiting "
                               "(unknown, another session's, or already answered).",
                               next_step="Call human.request first; use the handoverId it "
                               "answered.")
        return hand

    async def end(self, parsed: Any, session: Session | None) -> dict[str, Any]:
        """``human.end``: the agent takes the tab back (``withdrawn``).

        Raises:
            BadRequest: no such hand-off of this session.
        """
        hand = self._mine(parsed.handoverId, session)
        ended = self.book.end(hand, "withdrawn")
        return {"handoverId": hand.id, "ended": ended, "state": hand.state,
                "device": hand.device}

    async def wait(self, parsed: Any, session: Session | None) -> dict[str, Any]:
        """``human.wait``: until the hand-off ends; what changed (module docstring).

        Raises:
            BadRequest: no such hand-off for this session (another session's, or one
                whose end was already answered).
        """
        hand = self._mine(parsed.handoverId, session)
        while not hand.done.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(hand.done.wait(), TAB_CHECK_S)
            if not hand.done.is_set():
                with contextlib.suppress(E.TrustbridgeError):  # the extension is away
                    if await self.page_of(hand.device, hand.tab) is None:
                        self.book.end(hand, "tabClosed")
        # Let the live view's stop (driver.liveStop's counts) land first, briefly.
        for _ in range(40):
            if hand.stream or hand.opener is None:
                break
            await asyncio.sleep(0.05)
        after: dict[str, Any] | None = None
        with contextlib.suppress(E.TrustbridgeError):
            page = await self.page_of(hand.device, hand.tab)
            if page is not None:
                after = {"url": page["url"], "title": page["title"]}
        self.book.forget(hand)
        # What the person typed was remembered as a typed secret when the hand-off ended
        # (LiveView._remember_typed): a URL or title that repeats it shows the mask.
        before, after = (None if page is None else {
            key: self.mask(hand.device, value) if isinstance(value, str) else value
            for key, value in page.items()} for page in (hand.before, after))
        return {"handoverId": hand.id, "state": hand.state, "tabId": hand.tab,
                "device": hand.device, "before": before, "after": after,
                "personInput": dict(hand.counts),
                "navigations": int(hand.stream.get("navigations", 0)),
                "opened": hand.opener is not None}
