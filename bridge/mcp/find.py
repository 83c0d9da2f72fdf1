"""browser_find: locate elements by role, accessible name, text or a regular expression
without capturing the whole snapshot (``page.find``, issue 14 item 5).

Playwright MCP's browser_find takes ``text`` (case-insensitive substring) or ``regex`` (a
pattern, ``/…/flags`` for flags), one of them, and searches its snapshot text; this one
takes the same two, plus ``role``, ``name``, ``target`` (search inside that element) and
``limit``. The refs it gives are snapshot refs: every tool takes them.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field

from ..protocol import errors as E
from ..protocol.models import FindParams, Ref
from .response import Response
from .session import Connection
from .snapshot import target_of
from .tool import Tool, derive

MAX_LIMIT: int = next(m.le for m in FindParams.model_fields["limit"].metadata
                      if getattr(m, "le", None) is not None)
"""The most matches one page.find returns (FindParams.limit's bound)."""

FindArgs = derive(
    "FindArgs", "What to look for: a role, a name, a text or a regular expression.",
    take={FindParams: ["role", "name", "text", "limit"]},
    describe={
        "role": "ARIA role, e.g. button.",
        "name": "Accessible name: case-insensitive substring.",
        "text": "Shown text or name: case-insensitive substring. Not with regex.",
        "limit": "Most matches (default 20).",
    },
    regex=(str | None, Field(
        default=None, min_length=1, max_length=1000,
        description="Regex of the shown text; slashes for flags, e.g. \"/row \\d+/i\".")),
    target=(Ref | None, Field(default=None, description="Search only inside this element.")),
    maxResults=(int | None, Field(
        default=None, ge=1, description="Most matches returned (Playwright MCP's name for "
        f"limit; at most {MAX_LIMIT}).")),
    filename=(str | None, Field(
        default=None, min_length=1, max_length=255,
        description="Save the matches to this file (relative to the output directory) "
        "instead of returning them in the response.")),
    order=["role", "name", "text", "regex", "target"],
)

_JS_SPECIAL = re.compile(r"[\\^$.*+?()[\]{}|/-]")


def js_literal(text: str) -> str:
    """``text`` as a case-insensitive JavaScript regex that matches it literally
    (``/…/i``), for a ``name`` sent along with a ``regex``."""
    return "/" + _JS_SPECIAL.sub(lambda m: "\\" + m.group(0), text) + "/i"


def find_params(args: Any) -> dict[str, Any]:
    """The ``page.find`` criteria (FindParams fields) of a browser_find call.

    With ``regex`` the pattern is sent as ``text`` with ``regex: true`` (FindParams applies
    the flag to name and text alike), and a ``name`` alongside is sent as a literal.

    Raises:
        BadRequest: nothing to look for, or both ``text`` and ``regex``.
    """
    if args.text and args.regex:
        raise E.BadRequest("Give text or regex, not both.", {"fields": ["text", "regex"]})
    if not (args.role or args.name or args.text or args.regex):
        raise E.BadRequest("Say what to find: role, name, text or regex.",
                           {"fields": ["role", "name", "text", "regex"]})
    if args.regex:
        name = js_literal(args.name) if args.name else None
        return {"role": args.role, "name": name, "text": args.regex, "regex": True}
    return {"role": args.role, "name": args.name, "text": args.text, "regex": False}


def _limit(args: Any) -> int:
    """``limit``, or ``maxResults`` (Playwright MCP 0.0.86) capped at :data:`MAX_LIMIT`.

    Raises:
        BadRequest: both given, with different values.
    """
    if args.maxResults is None:
        return args.limit
    if "limit" in args.model_fields_set and args.limit != args.maxResults:
        raise E.BadRequest("Give limit or maxResults, not both.",
                           {"fields": ["limit", "maxResults"]})
    return min(args.maxResults, MAX_LIMIT)


def _criteria(args: Any) -> str:
    said = [f"{key} {value!r}" for key in ("role", "name", "text", "regex")
            if (value := getattr(args, key))]
    return ", ".join(said)


async def _find(conn: Connection, args: Any, response: Response) -> None:
    criteria = find_params(args)
    within = target_of(args)
    tab = await conn.tab()
    result = await tab.find(**criteria, within=within, limit=_limit(args))
    matches = result.get("matches") or []
    where = f" inside {within}" if within else ""
    if not matches:
        response.add_result(f"No element matches {_criteria(args)}{where} on "
                            f"{result.get('url', '')}." + (
                                " The search was cut short: " + result["text"].lstrip("# ")
                                if result.get("truncated") and result.get("text") else ""))
        return
    refs = [m["ref"] or "(text)" for m in matches]
    count = f"{len(matches)} match" + ("es" if len(matches) != 1 else "")
    head = (f"{count} for {_criteria(args)}{where} on {result.get('url', '')}: "
            f"{', '.join(refs)}. Each is shown under its ancestors; act with its ref.")
    lines = [head, "```yaml", result.get("text", ""), "```"]
    if result.get("truncated"):
        more = "maxResults" if args.maxResults is not None else "limit"
        lines.append("Not every match is listed (see the # line): narrow the search with "
                     f"role, name or target, or raise {more}.")
    if args.filename:  # Playwright MCP's: the file holds the matches, the answer names it
        from .devtools import save_file

        path = save_file(conn, args.filename, "\n".join(lines[2:3] + lines[4:]) + "\n")
        response.add_result(f"{head.split('. Each is shown')[0]}. Saved them to {path}.")
        return
    response.add_result("\n".join(lines))


TOOLS = [
    Tool(
        name="browser_find",
        title="Find in page",
        description=(
            "Find elements by role, name, text or regex (all frames) without the whole "
            "snapshot: the matching lines with refs, under their ancestors' lines."
        ),
        args=FindArgs,
        run=_find,
        read_only=True,
    ),
]
