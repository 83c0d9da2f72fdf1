"""The snapshot agrees with Chromium's accessibility tree where the page world hides it
(issue 30 items 2 and 8).

A custom element whose role and name come from ElementInternals (``attachInternals()``:
``internals.role = "switch"``, ``internals.ariaLabel``) shows nothing of them to page-world
code or to the extension's content script, so the walker prints it as ``generic``. It
marks such elements (extension/src/page/walker.js ``axCandidate``: a custom element with no
``role`` attribute that is a tab stop or clickable) and the snapshot result lists their
refs by frame token (``axCandidates``, extension/src/background/snapshot.js). The bridge
then asks the device's driver once per frame (``driver.axFacts``; supervisor/frames.py
``ax_facts``: CDP ``Accessibility.getPartialAXTree`` on each element, found through the
content script's own world) and rewrites those lines with the role, name and states
Chromium computed. Pages with no candidate cost nothing more; page script sees nothing.

Where the driver cannot read the tree (Firefox, Camoufox, a device with no driver, a read
that failed) the lines stay as the walker printed them: ``generic``, with a ref that acts.
The diff mode compares the walker's lines (the background computes it before this step).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from .protocol import errors as E
from .protocol.models import AX_FACTS_MAX

log = logging.getLogger("trustbridge.bridge.ax")

AX_TIMEOUT_S = 5.0
"""Bound on one frame's ``driver.axFacts``, s; past it the lines stay as printed."""

Call = Callable[[str, dict[str, Any], float], Awaitable[dict[str, Any]]]
"""The driver peer's ``call(method, params, timeout_s)``."""


def rewrite(text: str, facts: dict[str, dict[str, Any]]) -> str:
    """``text`` (snapshot outline) with each ``- role ["name"] ... [ref=R]`` line whose
    printed ref ``R`` has a fact rewritten as ``- role "name" [states] ... [ref=R]`` from
    the fact; the line's own states and what follows the ref (``: value``) are kept.
    Lines whose ref has no fact are left alone."""
    if not facts:
        return text
    out = []
    for line in text.split("\n"):
        m = _LINE.match(line)
        fact = facts.get(m.group("ref")) if m else None
        if m is None or fact is None:
            out.append(line)
            continue
        head = f"{m.group('indent')}- {fact['role']}"
        if fact.get("name"):
            head += " " + json.dumps(fact["name"], ensure_ascii=False)
        have = set(re.findall(r" \[([^\]]+)\]", m.group("states")))
        head += "".join(f" [{s}]" for s in fact.get("states", []) if s not in have)
        out.append(head + m.group("states") + m.group("rest"))
    return "\n".join(out)


_LINE = re.compile(
    r'^(?P<indent>\s*)- (?P<role>[a-z]+)(?: "(?:[^"\\]|\\.)*")?'
    r'(?P<states>(?: \[(?!ref=)[^\]]*\])*)(?P<rest> \[ref=(?P<ref>[^\]\s]+)\].*)$')


async def apply(result: dict[str, Any], call: Call | None) -> None:
    """Rewrite ``result["snapshot"]`` (a ``page.snapshot`` result) in place from the
    driver's facts of its ``axCandidates`` ({frameToken: [[printedRef, localRef], ...]}),
    which is removed from the result whatever happens. ``call``: the driver's, or None
    (no driver: nothing to ask). A frame whose read fails or times out keeps its lines;
    the failure is logged, never raised: the snapshot the extension made stands."""
    candidates = result.pop("axCandidates", None)
    if not candidates or call is None or not isinstance(result.get("snapshot"), str):
        return
    if result.get("mode") not in (None, "snapshot"):
        return  # read mode prints no roles; diff lines were compared before
    facts: dict[str, dict[str, Any]] = {}

    async def frame(token: str, pairs: list[Any]) -> None:
        local = {str(p[1]): str(p[0]) for p in pairs
                 if isinstance(p, list) and len(p) == 2}
        if not local:
            return
        refs = list(local)[:AX_FACTS_MAX]
        try:
            got = await call("driver.axFacts", {"frameToken": token, "refs": refs}, AX_TIMEOUT_S)
        except (E.TrustbridgeError, asyncio.TimeoutError) as err:
            log.info("accessibility facts of frame %s not read: %s", token[:8], err)
            return
        for ref, fact in (got.get("facts") or {}).items():
            if ref in local and isinstance(fact, dict) and fact.get("role"):
                facts[local[ref]] = fact

    try:
        await asyncio.gather(*(frame(str(t), p) for t, p in candidates.items()
                               if isinstance(p, list)))
    except Exception:  # noqa: BLE001  (the extension's snapshot stands; logged)
        log.exception("accessibility facts not applied")
    result["snapshot"] = rewrite(result["snapshot"], facts)
