"""browser_request_human: a person takes over the current tab and hands it back (issue 37;
bridge/handover.py, bridge/live_view.py; docs/mcp.md "A person's turn").

Not a Playwright MCP tool (it has no such thing). The call blocks until the person hands
back, cancels, closes the live view, or ``timeout`` seconds pass, as ``browser_wait_for``
blocks; the live-view link must reach the person while it is pending, so it is sent at
once, three ways, before the wait:

- ``notifications/message`` (MCP logging, level ``alert``, logger ``trustbridge.human``,
  ``data: {liveUrl, reason, expiresAt, message}``) tied to this request;
- ``notifications/progress`` with the link in ``message``, when the client gave the call
  a progress token;
- one line on the server's stderr (MCP clients show or log a stdio server's stderr).

The answer repeats the link (for the record; it has expired by then), says how the
hand-off ended and what changed (URL and title before and after, documents loaded, how
many clicks, keys and wheel turns the person sent) and never what the person typed. No
page state follows it: take a snapshot to see the page.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import sys
import warnings
from typing import Any

from mcp.shared.exceptions import MCPDeprecationWarning
from pydantic import Field

from ..protocol import errors as E
from .response import Response
from .session import Connection
from .tool import Tool, ToolArgs, with_next_step

log = logging.getLogger(__name__)

REQUEST_CONTEXT: contextvars.ContextVar[Any] = contextvars.ContextVar(
    "trustbridge_mcp_request_context", default=None)
"""The ``mcp`` package's context of the tool call being served (set by
bridge/mcp/server.py): its session sends the link's notifications."""

ENDINGS = {
    "handedBack": "Handed back: the person gave the tab back",
    "cancelled": "The person cancelled: nothing more will be done by them",
    "closed": "The person closed the live view without handing back",
    "timedOut": "Nobody handed the tab back in time: the hand-off timed out",
    "stopped": "The session was stopped during the hand-off",
    "withdrawn": "The tab was taken back from the person (human.end)",
    "tabClosed": "The tab was closed during the hand-off",
}


class RequestHumanArgs(ToolArgs):
    """Ask a person to act in the current tab."""

    reason: str | None = Field(default=None, min_length=1, max_length=500,
                               description="What the person should do, e.g. 'Enter the 2FA "
                               "code'; shown to them in the live view")
    timeout: float = Field(default=300, ge=1, le=3600,
                           description="Seconds the person has (default 300)")
    wait: bool = Field(default=True, description="false: answer at once with the link (give "
                       "it to your user), then call again with its handoverId to wait")
    handoverId: str | None = Field(default=None, min_length=1, max_length=64,
                                   description="Wait for this earlier request (made with "
                                   "wait false) instead of making a new one")


async def _tell(asked: dict[str, Any]) -> None:
    """Send the link where a client shows it while the call is pending (module doc)."""
    message = (f"A person is needed: {asked['reason']} — open {asked['liveUrl']} "
               "(single use; give it to the person only)")
    print(f"trustbridge: {message}", file=sys.stderr, flush=True)
    ctx = REQUEST_CONTEXT.get()
    session = getattr(ctx, "session", None)
    if session is None:
        return
    try:
        with warnings.catch_warnings():
            # Deprecated by the 2026-07-28 spec (SEP-2577), still what clients of the
            # handshake versions show; progress (below) is the modern clients' channel.
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await session.send_log_message(
                "alert", {"message": message, "liveUrl": asked["liveUrl"],
                          "reason": asked["reason"], "expiresAt": asked["expiresAt"]},
                logger="trustbridge.human",
                related_request_id=getattr(ctx, "request_id", None))
    except Exception as exc:  # noqa: BLE001 - a client that takes no logging still works
        log.debug("the link's logging notification failed: %r", exc)
    try:
        await session.report_progress(0, None, message)
    except Exception as exc:  # noqa: BLE001 - as above
        log.debug("the link's progress notification failed: %r", exc)


async def _wait(tab: Any, handover: str) -> dict[str, Any]:
    """The hand-off's end; if the client cancels the call meanwhile, nobody waits any
    more, so the tab is taken back first (``human.end``: ``withdrawn``)."""
    try:
        return await tab.wait_for_human(handover)
    except asyncio.CancelledError:
        with contextlib.suppress(E.TrustbridgeError):
            await asyncio.shield(tab.take_back_from_human(handover))
        raise


async def _request_human(conn: Connection, args: Any, response: Response) -> None:
    tab = await conn.tab()
    if args.handoverId is not None:
        try:
            result = await _wait(tab, args.handoverId)
        except E.BadRequest as err:  # its own step names the wire method human.request
            raise with_next_step(err, "Call browser_request_human with a reason (and wait "
                                 "false) first; wait with the handoverId it answers.") from err
        link = None
    else:
        if args.reason is None:
            raise E.BadRequest("Give the reason (what the person should do), or the "
                               "handoverId of an earlier request to wait for.")
        asked = await tab.hand_to_human(args.reason, args.timeout)
        if not args.wait:
            response.add_result(
                f"The tab is handed to a person. Give this link to your user now (it works "
                f"once, for {args.timeout:g} s): {asked['liveUrl']}\n"
                f"Then call browser_request_human with handoverId {asked['handoverId']!r} "
                "to wait until they hand it back; until then your requests on this tab "
                "answer HANDED_TO_PERSON.")
            return
        await _tell(asked)
        result = await _wait(tab, asked["handoverId"])
        link = asked["liveUrl"]
    before, after = result["before"], result.get("after")
    lines = [f"{ENDINGS.get(result['state'], result['state'])} (state: {result['state']})."]
    if link is not None:
        lines.append(f"Live-view link given to the person (no longer valid): {link}")
    if not result["opened"]:
        lines.append("The person never opened the link.")
    lines.append(f"URL before: {before.get('url')}")
    if after is None:
        lines.append("The tab is gone (closed during the hand-off).")
    else:
        lines.append(f"URL now: {after.get('url')}"
                     + (" (unchanged)" if after.get("url") == before.get("url") else ""))
        lines.append(f"Title now: {after.get('title')!r}"
                     + (" (unchanged)" if after.get("title") == before.get("title")
                        else f" (was {before.get('title')!r})"))
    counts = result["personInput"]
    lines.append(f"The person sent clicks: {counts.get('clicks', 0)}, keys: "
                 f"{counts.get('keys', 0)} (never shown), wheel turns: "
                 f"{counts.get('wheels', 0)}; documents the tab loaded meanwhile: "
                 f"{result['navigations']}.")
    lines.append("Take a snapshot (browser_snapshot) before acting on the page.")
    response.add_result("\n".join(lines))


TOOLS = [
    Tool(
        name="browser_request_human",
        title="Ask a person to take over",
        description=(
            "Hand the current tab to a person (a login, a 2FA code, a CAPTCHA) and wait until "
            "they hand it back, cancel, or the timeout passes. The person opens a live-view "
            "link; while the call waits, the link is sent to your user's client as a "
            "notification and on stderr. If your user cannot see those, call with wait false "
            "first: the answer is the link to relay, then call again with its handoverId to "
            "wait. Meanwhile requests on this tab answer HANDED_TO_PERSON. Returns how it "
            "ended and what changed (URL, title), never what the person typed"),
        args=RequestHumanArgs,
        run=_request_human,
    ),
]
