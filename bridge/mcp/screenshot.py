"""browser_take_screenshot: a PNG or JPEG of the viewport, the full page or one element,
returned as MCP image content and, with ``filename``, saved in the output directory.

The driver captures it (``page.screenshot``, JPEG at quality 90 as Playwright MCP). An
image larger than a model reads well is scaled down here the way Playwright MCP does it
(Anthropic's vision guidance: long edge at most 1,568 px, at most 1.15 megapixels), and
the text says how image px map to CSS px. ``scale: "css"`` (the default, as Playwright
MCP's) brings a high-DPI capture down to one image px per CSS px; ``"device"`` keeps
device pixels. The file holds the image as captured at that scale, before any fitting.

Differences from Playwright MCP: no file is written without ``filename`` (Playwright MCP
writes ``page-{timestamp}.png`` every time); the element is named by a snapshot ref
(``target`` or ``ref``), not a selector; ``webp`` is refused (png and jpeg only).
"""

from __future__ import annotations

import base64
import copy
import io
import math
from typing import Any, Literal

import mcp_types as types
from PIL import Image
from pydantic import Field

from ..protocol import errors as E
from ..protocol.models import ScreenshotParams
from .devtools import save_file
from .response import Response
from .session import Connection
from .tool import Tool, derive

MAX_EDGE_PX = 1568
"""Longest image edge sent to the model, image px."""
MAX_PIXELS = 1.15 * 1024 * 1024
"""Most image pixels sent to the model."""

def _target_field() -> tuple[Any, Any]:
    """``target``: the protocol's ``ref`` field (its pattern and bounds) under the name
    newer Playwright MCP releases use."""
    info = copy.copy(ScreenshotParams.model_fields["ref"])
    info.description = "Element to capture: its ref from the latest snapshot; the viewport " \
        "if omitted."
    return info.annotation, info


ScreenshotArgs = derive(
    "ScreenshotArgs", "What to capture.",
    take={ScreenshotParams: ["ref", "fullPage"]},
    describe={"ref": "Same as target (older Playwright MCP name).",
              "fullPage": "When true, takes a screenshot of the full scrollable page, "
              "instead of the currently visible viewport. Cannot be used with element "
              "screenshots."},
    element=(str | None, Field(default=None, max_length=300,
                               description="Human-readable description of that element.")),
    target=_target_field(),
    type=(Literal["png", "jpeg"] | None,
          Field(default=None, description="Image format for the screenshot. If unset, "
                "inferred from the filename extension, otherwise png.")),
    filename=(str | None, Field(default=None, min_length=1, max_length=255,
                                description="File name to save the screenshot to, relative "
                                "to the output directory; not saved if not given.")),
    scale=(Literal["css", "device"], Field(default="css", description="\"css\": one image "
                                           "px per CSS px; \"device\": device pixels.")),
    order=["element", "target", "type", "filename", "fullPage"],
)


def fit(data: bytes, kind: str = "png", limit: float = 1.0) -> tuple[bytes, int, int, float]:
    """Scale an image down by ``limit`` at least, and to at most :data:`MAX_EDGE_PX` per
    edge and :data:`MAX_PIXELS`; it stays in its format (``png`` or ``jpeg``, quality 80
    as Playwright MCP re-encodes).

    Returns:
        (image, width, height, shrink): the image (unchanged when small enough), its size
        in image px and the factor applied (1.0: unchanged).
    """
    with Image.open(io.BytesIO(data)) as img:
        width, height = img.size
        shrink = min(limit, MAX_EDGE_PX / width, MAX_EDGE_PX / height,
                     math.sqrt(MAX_PIXELS / (width * height)))
        if shrink >= 1:
            return data, width, height, 1.0
        size = (max(1, int(width * shrink)), max(1, int(height * shrink)))
        out = io.BytesIO()
        small = img.convert("RGB").resize(size, Image.Resampling.LANCZOS)
        if kind == "jpeg":
            small.save(out, format="JPEG", quality=80)
        else:
            small.save(out, format="PNG", optimize=True)
    return out.getvalue(), size[0], size[1], shrink


def image_type(asked: str | None, filename: str | None) -> str:
    """``type`` as given, else from the file name's extension (.jpg/.jpeg), else png.

    Raises:
        BadRequest: the file name's extension says another image type than ``type``.
    """
    ext = filename.rsplit(".", 1)[-1].lower() if filename and "." in filename else ""
    from_name = {"jpg": "jpeg", "jpeg": "jpeg", "png": "png"}.get(ext)
    if ext == "webp" or (asked and from_name and asked != from_name):
        raise E.BadRequest(f"The file name {filename!r} does not fit type "
                           f"{asked or 'png/jpeg'}: screenshots are png or jpeg.")
    return asked or from_name or "png"


async def _screenshot(conn: Connection, args: Any, response: Response) -> None:
    if args.ref and args.target and args.ref != args.target:
        raise E.BadRequest("target and ref name different elements; give one of them.")
    ref = args.target or args.ref
    kind = image_type(args.type, args.filename)
    if args.fullPage and ref:
        raise E.BadRequest("fullPage cannot be combined with ref: capture either the whole "
                           "page or one element.")
    dialog = await conn.open_dialog()
    if dialog is not None:
        # The page's renderer is blocked, so the extension cannot name its frame: fail
        # now rather than after the bridge's 10 s resolve timeout.
        raise E.DialogOpen(
            f"{E.a_dialog(dialog.get('type'))} blocks the page; it cannot be captured until "
            "the dialog is answered.", {"dialog": {"type": dialog.get("type")}})
    tab = await conn.tab()
    shot = await tab.screenshot(ref, full_page=args.fullPage, type=kind)
    captured = base64.b64decode(shot["png"])
    device = float(shot.get("scale") or 1)
    if args.scale == "css" and device > 1:  # one image px per CSS px
        captured, *_rest = fit(captured, kind, 1 / device)
        captured_scale = 1.0
    else:
        captured_scale = device
    image, width, height, shrink = fit(captured, kind)
    scale = captured_scale * shrink
    clip = shot.get("clip") or {}
    what = (f"{args.element or 'element'} (ref {ref})" if ref
            else "the full page" if args.fullPage else "the viewport")
    line = (f"Screenshot of {what} ({kind}): {width}x{height} image px, {scale:.3g} image px "
            f"per CSS px; its top-left corner is at CSS px ({clip.get('x', 0):g}, "
            f"{clip.get('y', 0):g}) of the page. Act with refs from browser_snapshot, not on "
            "the image.")
    if (width, height) != (shot.get("width"), shot.get("height")):
        line += f" (Scaled down from {shot.get('width')}x{shot.get('height')}.)"
    if args.filename:
        line += f"\nSaved to {save_file(conn, args.filename, captured)}"
    response.add_result(line)
    response.add_image(types.ImageContent(type="image", data=base64.b64encode(image).decode(),
                                          mime_type=f"image/{kind}"))


TOOLS = [
    Tool(
        name="browser_take_screenshot",
        title="Take a screenshot",
        description="Take a screenshot (png or jpeg) of the viewport, the full page or one "
        "element. You can't perform actions based on the screenshot, use browser_snapshot "
        "for actions.",
        args=ScreenshotArgs,
        run=_screenshot,
        read_only=True,
    ),
]
