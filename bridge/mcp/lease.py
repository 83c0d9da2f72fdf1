"""The MCP server's session on the bridge (issue 16, docs/sessions.md): :class:`SessionLease`.

One per :class:`~.session.Connection`. At each bridge connection it sends ``session.open``
first (label from the MCP client's name, or ``--session-label``; ``onDisconnect:
"stop"``), asks ``devices.list`` once for the attended devices, and renews the session
every ``heartbeatMs`` while idle. A stopped session stays stopped here: the Connection
answers its SESSION_STOPPED to every later tool call, and never opens a new session
behind the person who stopped it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import secrets
import shlex
import time
from typing import Any

from ..client import BridgeClient
from ..protocol import errors as E

log = logging.getLogger("trustbridge.mcp")

LABEL_CHARS = 40
"""Characters of the MCP client's name kept in a session label (a label is at most 64)."""
LABEL_DRAWS = 3
"""Labels of our own making tried when one is taken (4 hex digits can collide)."""
DEFAULT_HEARTBEAT_MS = 40_000
"""The heartbeat when the bridge's answer names none (a third of the 120 s lease), ms."""


def session_label(client_name: str | None) -> str:
    """A fresh session label: the MCP client's name (``clientInfo.name`` of its
    ``initialize``; ``"mcp"`` when it sent none) made fit for a label (letters, digits and
    ``_.:@-``; others become ``-``), a dash and 4 random hex digits, e.g.
    ``claude-code-3f2a``: people and other sessions see which agent holds a tab, and two
    servers of one client still get labels of their own."""
    name = re.sub(r"[^A-Za-z0-9_.:@-]+", "-", (client_name or "").strip()).strip("-")
    return f"{name[:LABEL_CHARS] or 'mcp'}-{secrets.token_hex(2)}"


class SessionLease:
    """This server's session: opened per bridge connection, renewed while idle.

    Args:
        chosen: ``--session-label`` (None: :func:`session_label` of the client's name).
        lease_ms: the lease asked for, ms (None: the bridge's default, 120 000).
    """

    def __init__(self, chosen: str | None = None, lease_ms: int | None = None) -> None:
        self.chosen = chosen
        self.lease_ms = lease_ms
        self.client_name: str | None = None
        """The MCP client's ``clientInfo.name`` (the server sets it at the first call)."""
        self.info: dict[str, Any] | None = None
        """The ``session.open`` answer of the current bridge connection (label,
        heartbeatMs, ...; never the secret); None before it is open."""
        self.stopped: E.SessionStopped | None = None
        """Set once the session was stopped: every later tool call answers it."""
        self.attended: set[str] = set()
        """Devices a person may be using (driver ``headed`` or extension ``attended``
        capability), as ``devices.list`` said at the bridge connection."""
        self.last_used = time.monotonic()
        """When a tool last reached the bridge (the heartbeat renews only after idling)."""
        self._task: asyncio.Task[None] | None = None

    @property
    def label(self) -> str | None:
        return (self.info or {}).get("label")

    async def open(self, client: BridgeClient) -> None:
        """``session.open`` as the connection's first request, the attended devices, then
        the heartbeat. A label of our own making that is taken is drawn again (at most
        LABEL_DRAWS in all); a ``--session-label`` in use is the caller's error.

        Raises:
            BadRequest: the label is in use by a live session. The connection is closed
                on any failure (it must not stay with an implicit session).
        """
        params: dict[str, Any] = {"onDisconnect": "stop"}
        if self.lease_ms is not None:
            params["leaseMs"] = self.lease_ms
        try:
            for draw in range(LABEL_DRAWS):
                params["label"] = self.chosen or session_label(self.client_name)
                try:
                    opened = await client.call("session.open", params)
                    break
                except E.BadRequest as err:
                    if self.chosen and err.details.get("label") == params["label"]:
                        # The tool's arguments are not at fault: the server's option is.
                        err.next_step = (  # type: ignore[attr-defined]
                            f"Another MCP server (or client) holds the session label "
                            f"{params['label']!r}. Tell the user to start this MCP server "
                            "with another --session-label (or none: a label of its own is "
                            "drawn), or to stop that session (`trustbridge sessions stop "
                            f"{shlex.quote(params['label'])}`).")
                        raise
                    if self.chosen or draw == LABEL_DRAWS - 1 \
                            or err.details.get("label") != params["label"]:
                        raise
        except BaseException:
            with contextlib.suppress(Exception):
                await client.close()
            raise
        self.info = {k: v for k, v in opened.items() if k != "secret"}
        with contextlib.suppress(E.TrustbridgeError):  # no device yet: none is attended
            devices = (await client.call("devices.list", {})).get("devices") or []
            self.attended = {d["device"] for d in devices
                             if (d.get("capabilities") or {}).get("headed")
                             or (d.get("capabilities") or {}).get("attended")}
        self.stop_heartbeat()
        every_s = max(1.0, int(opened.get("heartbeatMs") or DEFAULT_HEARTBEAT_MS) / 1000)
        self._task = asyncio.create_task(self._renew(client, every_s))

    async def _renew(self, client: BridgeClient, every_s: float) -> None:
        """``session.renew`` each time the session was idle for ``every_s``, until the
        connection closes or the session stops."""
        while not client.closed:
            idle = time.monotonic() - self.last_used
            if idle < every_s:
                await asyncio.sleep(every_s - idle)
                continue
            try:
                await client.call("session.renew", {})
            except E.SessionStopped as err:
                self.stopped = err
                return
            except E.TrustbridgeError as err:  # the connection went; the next call reconnects
                log.info("session.renew failed: %s", err)
                return
            self.last_used = time.monotonic()

    def stop_heartbeat(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    def ended(self, err: E.TrustbridgeError) -> None:
        """A tool call answered ``err``: a SESSION_STOPPED is kept for every later call."""
        if isinstance(err, E.SessionStopped):
            self.stopped = err
