"""browser_take_screenshot: a PNG of the viewport, the full page or one element, returned
as MCP image content.

The driver captures it (``page.screenshot``). An image larger than a model reads well is
scaled down here the way Playwright MCP does it (Anthropic's vision guidance: long edge at
most 1,568 px, at most 1.15 megapixels), and the text says how image px map to CSS px.
"""

from __future__ import annotations

import base64
import io
import math
from typing import Any

import mcp_types as types
from PIL import Image
from pydantic import Field

from ..protocol import errors as E
from ..protocol.models import ScreenshotParams
from .response import Response
from .session import Connection
from .tool import Tool, derive

MAX_EDGE_PX = 1568
"""Longest image edge sent to the model, image px."""
MAX_PIXELS = 1.15 * 1024 * 1024
"""Most image pixels sent to the model."""

ScreenshotArgs = derive(
    "ScreenshotArgs", "What to capture.",
    take={ScreenshotParams: ["ref", "fullPage"]},
    describe={"ref": "Element to capture, from the latest snapshot; the viewport if omitted."},
    element=(str | None, Field(default=None, max_length=300,
                               description="Description of that element.")),
    order=["element"],
)


def fit(png: bytes) -> tuple[bytes, int, int, float]:
    """Scale a PNG down to at most :data:`MAX_EDGE_PX` per edge and :data:`MAX_PIXELS`.

    Returns:
        (png, width, height, shrink): the image (unchanged when small enough), its size in
        image px and the factor applied (1.0: unchanged).
    """
    with Image.open(io.BytesIO(png)) as img:
        width, height = img.size
        shrink = min(MAX_EDGE_PX / width, MAX_EDGE_PX / height,
                     math.sqrt(MAX_PIXELS / (width * height)))
        if shrink >= 1:
            return png, width, height, 1.0
        size = (max(1, int(width * shrink)), max(1, int(height * shrink)))
        out = io.BytesIO()
        img.convert("RGB").resize(size, Image.Resampling.LANCZOS).save(out, format="PNG",
                                                                       optimize=True)
    return out.getvalue(), size[0], size[1], shrink


async def _screenshot(conn: Connection, args: Any, response: Response) -> None:
    if args.fullPage and args.ref:
        raise E.BadRequest("fullPage cannot be combined with ref: capture either the whole "
                           "page or one element.")
    dialog = await conn.open_dialog()
    if dialog is not None:
        # The page's renderer is blocked, so the extension cannot name its frame: fail
        # now rather than after the bridge's 10 s resolve timeout.
        raise E.DialogOpen(
            f"A {dialog.get('type')} dialog blocks the page; it cannot be captured until "
            "the dialog is answered.", {"dialog": {"type": dialog.get("type")}})
    tab = await conn.tab()
    shot = await tab.screenshot(args.ref, full_page=args.fullPage)
    png, width, height, shrink = fit(base64.b64decode(shot["png"]))
    scale = float(shot.get("scale") or 1) * shrink
    clip = shot.get("clip") or {}
    what = (f"{args.element or 'element'} (ref {args.ref})" if args.ref
            else "the full page" if args.fullPage else "the viewport")
    line = (f"Screenshot of {what}: {width}x{height} image px, {scale:.3g} image px per CSS "
            f"px; its top-left corner is at CSS px ({clip.get('x', 0):g}, {clip.get('y', 0):g}) "
            "of the page. Act with refs from browser_snapshot, not on the image.")
    if shrink < 1:
        line += f" (Scaled down from {shot.get('width')}x{shot.get('height')}.)"
    response.add_result(line)
    response.add_image(types.ImageContent(type="image", data=base64.b64encode(png).decode(),
                                          mime_type="image/png"))


TOOLS = [
    Tool(
        name="browser_take_screenshot",
        title="Take a screenshot",
        description="Take a PNG screenshot of the viewport, the full page or one element. "
        "To act, use browser_snapshot's refs, not the image.",
        args=ScreenshotArgs,
        run=_screenshot,
        read_only=True,
    ),
]
