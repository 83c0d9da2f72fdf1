"""Options of ``trustbridge mcp`` (issue 15 item 4): Playwright MCP's command line.

Each is a flag of ``trustbridge mcp`` and an environment variable (bridge/cli.py); the
:class:`~.session.Connection` keeps them and the embedded launch uses them.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class McpOptions:
    """What ``trustbridge mcp`` was started with.

    Attributes:
        caps: extra tool capabilities listed (``vision``, ``pdf``; Playwright MCP's names).
    """

    caps: frozenset[str] = field(default_factory=frozenset)
