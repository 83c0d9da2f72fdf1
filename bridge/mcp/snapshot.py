"""browser_snapshot: the page as the model sees it, with refs to act on; of the whole tab or
of one element's subtree (``target``, Playwright MCP's name, or ``ref``), to a ``depth``."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ..protocol import errors as E
from ..protocol.models import Ref, SnapshotParams
from .response import Response
from .session import Connection
from .tool import Tool, ToolArgs, derive, with_next_step

RefAlias = Annotated[str, Field(pattern=r"^(f\d+)?e\d+$")]
"""A ref taken under a second name (``ref`` beside ``target``): the pattern alone, so the
schema the model reads stays short; bounds are checked by the protocol model."""

SnapshotArgs = derive(
    "SnapshotArgs", "Snapshot of the current tab (outline, visible text or changes).",
    take={SnapshotParams: ["depth"]},
    describe={"depth": "Limit the depth of the snapshot tree (0: the root's line only)."},
    mode=(Literal["snapshot", "read", "diff"], Field(
        default="snapshot",
        description="snapshot (with refs), read (visible text) or diff (changes since your "
        "last snapshot).")),
    target=(Ref | None, Field(default=None,
                              description="Ref of an element: snapshot only its subtree.")),
    ref=(RefAlias | None, Field(default=None, description="Same as target.")),
    cursor=(str | None, Field(
        default=None, min_length=1, max_length=64,
        description="From a truncated snapshot's last line: the next part.")),
    filename=(str | None, Field(
        default=None, min_length=1, max_length=255,
        description="Save the snapshot to this file (relative to the output directory) "
        "instead of returning it in the response.")),
    order=["target", "filename", "depth"],
)


def target_of(args: ToolArgs) -> str | None:
    """The element the tool call names, as ``target`` (Playwright MCP's newer name) or
    ``ref``.

    Raises:
        BadRequest: both are given and they differ.
    """
    target, ref = getattr(args, "target", None), getattr(args, "ref", None)
    if target and ref and target != ref:
        raise E.BadRequest(f"target {target!r} and ref {ref!r} name different elements; "
                           "give one of them.", {"fields": ["target", "ref"]})
    return target or ref


async def _snapshot(conn: Connection, args: ToolArgs, response: Response) -> None:
    mode = getattr(args, "mode", "snapshot")
    cursor = getattr(args, "cursor", None)
    root = target_of(args)
    depth = getattr(args, "depth", None)
    if cursor is None and mode == "diff" and root is not None:
        raise E.BadRequest("A diff covers the whole tab; leave out target.",
                           {"fields": ["mode", "target"]})
    if depth is not None and mode != "snapshot":
        raise E.BadRequest("depth limits the outline (mode snapshot) only.",
                           {"fields": ["mode", "depth"]})
    tab = await conn.tab()
    try:
        # A cursor carries its own mode, root and depth (models.py SnapshotParams).
        result = await tab.snapshot_result(mode=mode, cursor=cursor,
                                           ref=None if cursor else root,
                                           depth=None if cursor else depth)
    except (E.BadRequest, E.BrowserDocumentChanged) as err:
        if cursor is None:
            raise
        raise with_next_step(err, "Call browser_snapshot without a cursor for a fresh "
                             "snapshot (a cursor is used once, lives 10 minutes and ends "
                             "with its page).") from err
    filename = getattr(args, "filename", None)
    if filename:  # Playwright MCP's: the file holds the snapshot, the answer names it
        from .devtools import save_file

        path = save_file(conn, filename, result.get("snapshot", ""))
        response.set_snapshot(result, saved_to=str(path))
        return
    response.set_snapshot(result)


TOOLS = [
    Tool(
        name="browser_snapshot",
        title="Page snapshot",
        description=(
            "Capture an accessibility snapshot of the current page: one line per element, "
            "e.g. `- button \"Save\" [ref=e7]`, across all frames (refs like f1e3 are in "
            "iframes). Act with the refs of the latest snapshot. Better than a screenshot."
        ),
        args=SnapshotArgs,
        run=_snapshot,
        read_only=True,
    ),
]
