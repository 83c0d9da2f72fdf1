"""What the runtime keeps of a call's output: :class:`OutputStore`, :func:`cut`, and
:func:`clean` (every string that leaves the runtime is valid Unicode)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

MAX_KEPT_CHARS = 1_000_000
"""Characters of one call's output kept for its pages; beyond it, counted and dropped."""
KEPT_CALLS = 8
"""Calls whose output is kept for cursors (the oldest is forgotten first)."""
LATE_KEPT_CHARS = 20_000
"""Characters kept of what was printed between two calls (shown with the next result)."""


def clean(text: str) -> str:
    """``text`` as valid Unicode: a lone surrogate (``"\\ud800"``: UTF-8 cannot encode it,
    so an MCP server's JSON writer or a terminal would fail on it) becomes its backslash
    escape (``\\ud800``), as ``print`` writes it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


class OutputStore:
    """One call's printed text: the first ``limit`` characters, and how many came in all.

    Args:
        limit: characters kept.
    """

    def __init__(self, limit: int = MAX_KEPT_CHARS) -> None:
        self.limit = limit
        self.total = 0
        """Characters printed in all."""
        self._parts: list[str] = []
        self._kept = 0
        self._text: str | None = ""
        self.listener: Callable[[str], None] | None = None
        """Called with each piece as it arrives, kept or not (the CLI prints it at once);
        its exceptions are swallowed: a closed terminal must not stop the run's reader."""

    def add(self, text: str) -> None:
        """Append ``text`` (what is past ``limit`` is only counted)."""
        if self.listener is not None and text:
            with contextlib.suppress(Exception):  # see listener
                self.listener(text)
        self.total += len(text)
        room = self.limit - self._kept
        if room <= 0 or not text:
            return
        piece = text[:room]
        self._parts.append(piece)
        self._kept += len(piece)
        self._text = None

    @property
    def dropped(self) -> int:
        """Characters printed but not kept."""
        return self.total - self._kept

    @property
    def text(self) -> str:
        """The kept text."""
        if self._text is None:
            self._text = "".join(self._parts)
            self._parts = [self._text]
        return self._text


def cut(text: str, budget: int, total: int | None = None) -> str:
    """``text`` within ``budget`` characters; a cut one ends with how long it was.

    Args:
        text: what to show (may already be a cut of something ``total`` long).
        budget: characters at most (the note included, when there is room for it).
        total: the length of the whole (default ``len(text)``).
    """
    total = len(text) if total is None else total
    if total <= budget and len(text) <= budget:
        return text
    note = f"… (cut: {total} characters in all)"
    return text[:max(0, budget - len(note))] + note
