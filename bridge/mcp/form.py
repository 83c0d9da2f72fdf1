"""Forms and files: browser_fill_form (many fields, one ``page.batch`` request) and
browser_file_upload: with no target it answers the file chooser the last click opened
(Playwright MCP's click → chooser → ``browser_file_upload {paths}``; the driver holds the
chooser, supervisor/watch.py), or cancels it when ``paths`` is left out (Playwright MCP's
behaviour); with a target, the file input or the control that opens one.

Field values are never echoed back for text fields: they may be secrets the page masks.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from ..files import check_upload
from ..protocol import errors as E
from ..protocol.models import (
    Action,
    BatchItem,
    BatchParams,
    CheckAction,
    FillAction,
    Ref,
    SelectAction,
    UploadAction,
)
from .batch import run_batch
from .devtools import upload_roots
from .input import TargetArgs, target
from .response import Response
from .session import Connection
from .tool import ElementArgs, Tool, ToolArgs, derive

FieldType = Literal["textbox", "checkbox", "radio", "combobox", "slider"]

FormField = derive(
    "FormField", "One field of a form.", base=ElementArgs,
    name=(str, Field(max_length=300, description="Human-readable field name.")),
    type=(FieldType, Field(description="Type of the field.")),
    target=(Ref, Field(description="Exact field ref from the page snapshot (alias: ref).")),
    take={FillAction: ["value"]},
    describe={"value": "Text for a textbox; true or false for a checkbox or radio; the "
              "option's label for a combobox; a number on its steps for a slider."},
    order=["name", "type", "target"],
)
MAX_FIELDS = next(m.max_length for m in BatchParams.model_fields["actions"].metadata
                  if hasattr(m, "max_length"))
"""As many fields as one batch takes actions."""
UPLOAD_MAX = next(m.max_length for m in UploadAction.model_fields["files"].metadata
                  if hasattr(m, "max_length"))
"""As many paths as one upload action takes."""


class FillFormArgs(ToolArgs):
    """The fields to fill."""

    fields: list[FormField] = Field(  # type: ignore[valid-type]
        min_length=1, max_length=MAX_FIELDS, description="Fields to fill in.")


UploadArgs = derive(
    "UploadArgs", "Which files, and for which chooser or control.", base=TargetArgs,
    paths=(list[Annotated[str, Field(min_length=1, max_length=4096)]] | None, Field(
        default=None, max_length=UPLOAD_MAX,
        description="Absolute paths on the browser's machine; omit to cancel the chooser.")),
    target=(Ref | None, Field(default=None, description="Omit for the chooser a click "
                              "opened; or a file input, or a control opening one.")),
    order=["paths"],
)


def _action(index: int, field: Any) -> Action:
    """The protocol action that sets ``field``; BadRequest before anything is sent."""
    if field.type in ("textbox", "slider"):
        # A native range input takes its value as trusted keys (Home/End/arrows by step),
        # verified after (supervisor/actions.py); a value off its steps is BAD_REQUEST.
        return FillAction(value=field.value)
    if field.type in ("checkbox", "radio"):
        if field.value not in ("true", "false"):
            raise E.BadRequest(f"Field {index} ({field.name}) is a {field.type}: its value "
                               f"must be true or false. Nothing was filled.",
                               {"field": index})
        return CheckAction(checked=field.value == "true")
    return SelectAction(values=[field.value])  # combobox


def _summary(field: Any, result: dict[str, Any]) -> str:
    where = f"{field.name} ({field.type} {field.target}"
    if field.type in ("checkbox", "radio"):
        state = "checked" if field.value == "true" else "unchecked"
        return where + (f": {state})" if result.get("changed", True) else f": already {state})")
    if field.type == "combobox":
        return where + f": {result.get('selected', [field.value])!r})"
    return where + ")"


async def _fill_form(conn: Connection, args: Any, response: Response) -> None:
    items = [BatchItem(ref=f.target, action=_action(i, f)) for i, f in enumerate(args.fields)]
    labels = [f"{f.type} {f.name} ({f.target})" for f in args.fields]
    tab = await conn.tab(page_state=True)
    results = await run_batch(tab, items, labels)
    parts = ", ".join(_summary(f, r) for f, r in zip(args.fields, results))
    response.add_action(f"Filled {len(results)} fields: {parts}", results,
                        [f"field {i} ({lab})" for i, lab in enumerate(labels)])
    response.include_page_state(tab)


async def _upload(conn: Connection, args: Any, response: Response) -> None:
    if args.paths:  # only from the allowed roots, before anything is sent
        check_upload(args.paths, upload_roots(conn))
    tab = await conn.tab(page_state=True)
    if args.target is None:  # the chooser the last click opened (BAD_REQUEST when none)
        result = await tab.act(UploadAction(files=args.paths or []), None)
        line = (f"Gave {len(args.paths)} file(s) to the open file chooser" if args.paths
                else "Cancelled the open file chooser (no paths): no file was given")
        response.add_action(line, [result])
        response.include_page_state(tab)
        return
    if not args.paths:
        raise E.BadRequest("paths is required with a target: the files to give it (leave "
                           "out target too to cancel an open file chooser). Nothing was "
                           "sent.", {"fields": ["paths"]})
    result = await tab.upload(args.target, args.paths)
    via = {"input": "its file input", "file-chooser": "the file chooser it opened"}.get(
        str(result.get("via")), "it")
    response.add_action(
        f"Gave {len(args.paths)} file(s) to {target(args.element, args.target)} through {via}",
        [result])
    response.include_page_state(tab)


TOOLS = [
    Tool(
        name="browser_fill_form",
        title="Fill form",
        description="Fill several form fields in one call with real input: type into "
        "textboxes (replacing their content), set checkboxes and radios, choose options.",
        args=FillFormArgs,
        run=_fill_form,
    ),
    Tool(
        name="browser_file_upload",
        title="Upload files",
        description="Upload files to the file chooser a click opened (its modal state), or "
        "through a file input or the button opening a chooser (target). No paths: cancel "
        "the chooser.",
        args=UploadArgs,
        run=_upload,
    ),
]
