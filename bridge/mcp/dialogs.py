"""browser_handle_dialog: accept or dismiss the JavaScript dialog (alert, confirm, prompt,
beforeunload) that blocks the page.

Dialogs are never answered by themselves: an action that opens one returns at once with a
``### Modal state`` section, and every other page tool fails with DIALOG_OPEN until this
tool answers it. The answer goes through the input driver (``page.dialog``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from ..protocol import errors as E
from ..protocol.models import DialogParams
from .response import Response
from .session import Connection
from .tool import Tool, derive, with_next_step

CLOSE_WAIT_S = 2.0
"""Longest wait for the bridge to drop an answered dialog, s."""
CLOSE_POLL_S = 0.02
"""Poll interval of that wait, s."""

DialogArgs = derive(
    "DialogArgs", "How to answer the dialog.", take={DialogParams: ["accept", "promptText"]},
    describe={"accept": "true: OK (or leave the page); false: Cancel (or stay).",
              "promptText": "Text to enter in a prompt() before accepting."},
)


async def _until_closed(conn: Connection, answered: dict[str, Any]) -> None:
    """Wait (at most :data:`CLOSE_WAIT_S`) until the bridge no longer reports the answered
    dialog: it learns that from the driver's ``dialog.closed`` event, which may arrive
    just after the answer, and until then it refuses the snapshot that follows."""
    deadline = asyncio.get_running_loop().time() + CLOSE_WAIT_S
    while asyncio.get_running_loop().time() < deadline:
        still = await conn.open_dialog()
        if still is None or (still.get("type"), still.get("message")) != (
                answered.get("type"), answered.get("message")):
            return
        await asyncio.sleep(CLOSE_POLL_S)


async def _handle_dialog(conn: Connection, args: Any, response: Response) -> None:
    tab = await conn.tab()
    try:
        answered = await tab.handle_dialog(args.accept, args.promptText)
    except E.DialogOpen as err:
        if not err.details.get("refused"):
            raise
        raise with_next_step(err, "Nothing was answered and the page stays blocked: call "
                             "browser_tabs with action new, then browser_tabs with action "
                             "close for this tab.") from err
    except E.BadRequest as err:  # the driver's answer when no dialog is open
        if err.details.get("alreadyClosed"):  # the browser closed it first: nothing answered
            raise with_next_step(err, "Nothing was answered. Call browser_snapshot to see "
                                 "the page (it may show another dialog to answer).") from err
        raise with_next_step(err, "There is nothing to answer; call browser_snapshot to "
                             "see the page and go on.") from err
    await _until_closed(conn, answered)
    verb = "Accepted" if args.accept else "Dismissed"
    message = json.dumps(str(answered.get("message", ""))[:200], ensure_ascii=False)
    line = f"{verb} the {answered.get('type', 'JavaScript')} dialog {message}"
    if args.accept and args.promptText is not None:
        line += f" with {len(args.promptText)} characters of prompt text"
    response.add_action(line)
    response.include_page_state(tab)


TOOLS = [
    Tool(
        name="browser_handle_dialog",
        title="Handle a dialog",
        description="Answer the JavaScript dialog (alert, confirm, prompt) that blocks the "
        "page. Returns the snapshot after.",
        args=DialogArgs,
        run=_handle_dialog,
    ),
]
