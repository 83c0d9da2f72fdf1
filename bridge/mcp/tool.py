"""What an MCP tool is here: a name, words for the model, an argument model, a handler.

Each capability file (``snapshot.py``, ``navigate.py``, ``input.py``, ``form.py``,
``batch.py``, ``dialogs.py``, ``screenshot.py``, ``evaluate.py``, ``tabs.py``, ``wait.py``)
defines its tools as :class:`Tool` values in a ``TOOLS`` list, in the manner of the
Playwright MCP server. Argument models are built from the protocol's pydantic
models with :func:`derive`, so a field's type, bounds, default and description are the
protocol's own; the JSON Schema the model reads is generated from them.

A handler fills the call's :class:`~.response.Response` (Playwright MCP's shape); the
tool then lets the Response ask for what its sections need and renders it.

Failures never escape as exceptions: a :class:`~bridge.protocol.errors.TrustbridgeError`
(or bad arguments) becomes a tool result with ``isError`` whose text gives the wire code,
the bridge's message and the next step in terms of these tools.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mcp_types as types
import pydantic
from pydantic import BaseModel, ConfigDict, model_validator

from ..protocol import errors as E
from .response import Content, Response

if TYPE_CHECKING:
    from .session import Connection

log = logging.getLogger("trustbridge.mcp")

Handler = Callable[["Connection", Any, Response], Awaitable[None]]
"""``async (connection, args, response)``: acts, and fills ``response``."""


ALIASES: dict[str, str] = {"ref": "target", "startRef": "startTarget", "endRef": "endTarget"}
"""Older argument name → the name Playwright MCP 0.0.83 uses for an element reference.

The schema lists only the new name; a call with the old one is taken as the same
argument (clients written for older Playwright MCP versions send ``ref``)."""


class ToolArgs(BaseModel):
    """Base of every tool's arguments: unknown arguments are refused, and types are strict
    (no coercion: "yes" is no boolean), as Playwright MCP's zod schemas."""

    model_config = ConfigDict(extra="forbid", strict=True)


class ElementArgs(ToolArgs):
    """Base of the arguments of a tool that acts on elements: ``ref``, ``startRef`` and
    ``endRef`` are taken as ``target``, ``startTarget`` and ``endTarget`` where the model
    has only the latter (see :data:`ALIASES`)."""

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, data: Any) -> Any:
        """Move an old element-reference name onto the new one.

        Raises:
            ValueError: both names are given with different values (reported as an
                invalid-arguments BAD_REQUEST).
        """
        if not isinstance(data, dict):
            return data
        for old, new in ALIASES.items():
            if old not in data or old in cls.model_fields or new not in cls.model_fields:
                continue
            data = dict(data)
            value = data.pop(old)
            if new in data and data[new] is not None and value is not None \
                    and data[new] != value:
                raise ValueError(f"{new} {data[new]!r} and {old} {value!r} name different "
                                 f"elements; give {new} only")
            if data.get(new) is None:
                data[new] = value
        return data


def derive(name: str, doc: str, /, *, base: type[ToolArgs] = ToolArgs,
           take: dict[type[BaseModel], Sequence[str]] | None = None,
           describe: dict[str, str] | None = None, rename: dict[str, str] | None = None,
           order: Sequence[str] = (), **own: Any) -> type[ToolArgs]:
    """Build a tool's argument model from protocol model fields.

    Args:
        name: class name of the model.
        doc: its docstring.
        base: model to extend (e.g. one that already has ``element`` and ``ref``).
        take: protocol model → names of its fields to copy as they are (type, bounds,
            default and description).
        describe: field name → description for the model, where the protocol's own
            description is missing or speaks of the wire rather than the tool.
        rename: protocol field name → the tool's name for it (Playwright MCP's argument
            names, e.g. ``files`` → ``paths``); ``describe`` keys use the protocol name.
        order: tool field names to put first, in this order (the schema's property order
            is the order the model reads them); the rest follow, taken fields first.
        **own: extra fields in ``pydantic.create_model`` form, ``(type, Field(...))``.

    Raises:
        KeyError: a named field does not exist in the protocol model.
    """
    fields: dict[str, Any] = {}
    for model, names in (take or {}).items():
        for field_name in names:
            info = copy.copy(model.model_fields[field_name])
            if describe and field_name in describe:
                info.description = describe[field_name]
            fields[(rename or {}).get(field_name, field_name)] = (info.annotation, info)
    fields.update(own)
    fields = {**{n: fields[n] for n in order}, **fields}
    return pydantic.create_model(name, __base__=base, __doc__=doc, **fields)


BOUNDS = frozenset({"title", "minLength", "maxLength", "minimum", "maximum",
                    "exclusiveMinimum", "exclusiveMaximum", "pattern", "minItems",
                    "maxItems"})
"""Keywords :func:`clean_schema` leaves out of the schema the model reads."""


def clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Shrink a pydantic JSON Schema for the model's context without changing its meaning.

    Drops ``title`` keywords (the property names say it) and the numeric and length
    bounds (:data:`BOUNDS`: the argument models still enforce them, so a value out of
    bounds is a BAD_REQUEST naming the field and the bound; Playwright MCP's schemas carry
    almost none), and turns an optional ``anyOf: [X, null]`` with default null into ``X``
    (the field is simply not required). A property that is itself called like a keyword
    (``title``) stays.
    """

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(n) for n in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in BOUNDS:
                continue
            if key in ("properties", "$defs"):
                out[key] = {k: walk(v) for k, v in value.items()}
            else:
                out[key] = walk(value)
        any_of = out.get("anyOf")
        if isinstance(any_of, list) and len(any_of) == 2 and {"type": "null"} in any_of \
                and "default" in out and out["default"] is None:
            (kept,) = [s for s in any_of if s != {"type": "null"}]
            del out["anyOf"], out["default"]
            out = {**kept, **out}
        return out

    return walk(schema)


NEXT_STEP: dict[str, str] = {
    "REF_NOT_FOUND": "Call browser_snapshot and use a ref from that new snapshot.",
    "BROWSER_DOCUMENT_CHANGED": "The page changed; call browser_snapshot for fresh refs.",
    "FRAME_TOKEN_UNKNOWN": "Call browser_snapshot and retry with a fresh ref.",
    "ELEMENT_TARGET_DETACHED": "The element left the page; call browser_snapshot.",
    "ELEMENT_TARGET_AMBIGUOUS": "Call browser_snapshot and pick the exact element's new ref.",
    "LOCATOR_NOT_UNIQUE": "Call browser_snapshot and retry with a fresh ref.",
    "ELEMENT_OBSCURED": "Close or scroll away what covers it (see browser_snapshot), then retry.",
    "ELEMENT_TARGET_DISABLED": "Wait until it is enabled (browser_wait_for) or choose another.",
    "ELEMENT_NOT_EDITABLE": "Choose an editable element (a textbox) from browser_snapshot.",
    "CLOSED_SHADOW_ROOT": "Use another control for the task; browser_click alone can still "
    "reach it, with allowCoordinates: true (a hit-tested point).",
    "TRUSTED_INPUT_UNAVAILABLE": "Nothing was sent. If the message names something this "
    "browser or control cannot take as real input, follow it (another control, another "
    "browser, or allowScript where it is offered); otherwise the input driver is offline: "
    "tell the user to check `trustbridge doctor` and do not retry until it is back.",
    "BROWSER_OPERATION_UNCERTAIN": "It may or may not have happened; it was not repeated. "
    "Call browser_snapshot to check before doing anything again.",
    "BROWSER_TAB_CLOSED": "Call browser_tabs to list the open tabs and select one.",
    "DEVICE_NOT_CONNECTED": "No browser is reachable: tell the user to run `trustbridge up` "
    "(or `trustbridge doctor` to see what is wrong).",
    "DIALOG_OPEN": "Answer the dialog with browser_handle_dialog (accept true or false) first.",
    "TIMEOUT": "Call browser_snapshot to see the page; retry or wait longer if it is loading.",
    "RESULT_TOO_LARGE": "Ask for less: return a slice, a count or the fields you need, or "
                        "filter the listing.",
    "PAGE_UNRESPONSIVE": "The page's script is stuck: close the tab (browser_tabs action "
                         "close), which always works; a reload (browser_navigate) works in "
                         "Firefox, not in Chromium. Other tabs work.",
    "BAD_REQUEST": "Check the arguments against the tool's input schema.",
    "UNAUTHORIZED": "The bridge refused this server's token; tell the user to restart it.",
    "PROTOCOL_MISMATCH": "The bridge is another version; tell the user to update trustbridge.",
}
DEFAULT_NEXT_STEP = "Call browser_snapshot to see the page's current state."


def with_next_step(err: E.TrustbridgeError, step: str) -> E.TrustbridgeError:
    """``err`` with a next step of its own, shown instead of the one for its code."""
    err.next_step = step  # type: ignore[attr-defined]
    return err


def session_step(err: E.TrustbridgeError) -> str | None:
    """The next step of a session error (issue 16) in terms of these tools, from its
    facts (the bridge's own step names wire methods); None for other errors."""
    code = err.code.value
    recovering = err.details.get("recovering")
    if code in ("DEVICE_NOT_CONNECTED", "TRUSTED_INPUT_UNAVAILABLE") \
            and isinstance(recovering, dict):
        # A recovery runs by itself (issue 32 item 2): no person is needed.
        return (f"Nothing was sent. Wait about {recovering.get('expectedWaitS')} s, then "
                f"retry: the browser's {recovering.get('part')} is being brought back "
                "without anyone's help; tabs and refs from before may be gone (take a "
                "new snapshot).")
    if code == "TAB_CLAIMED" and err.details.get("person"):
        return ("This is a person's tab: use it only if the user asked you to, by claiming "
                "it (browser_tabs action claim with its index); otherwise work in a tab of "
                "your own (browser_tabs action new).")
    if code == "TAB_CLAIMED":
        owner = err.details.get("owner")
        return (f"Session {owner!r} holds this tab. Work in a tab of your own (browser_tabs "
                "action new, or select one of yours from browser_tabs list); if you need "
                "this one, ask the user to have that session release it.")
    if code == "TAB_BUSY":
        return "Wait until your calls on the tab have answered, then retry."
    if code == "HANDED_TO_PERSON":
        # Not the default "call browser_snapshot": a snapshot of the tab is refused too.
        hand = err.details.get("handoverId")
        return ("A person is working in this tab; nothing can be done in it until they hand "
                "it back. Wait with browser_request_human"
                + (f" handoverId {hand!r}" if hand else "")
                + " (it returns when they do), or work in another tab meanwhile "
                "(browser_tabs action new); then take a new snapshot.")
    if code == "SESSION_STOPPED":
        return ("Stop and tell the user: this MCP server's browser session was stopped "
                f"(by {err.details.get('by') or 'someone'}) and every tool call is refused "
                "from now on. Restart the MCP server to work in the browser again.")
    return None


def error_result(tool: str, err: E.TrustbridgeError,
                 done: Sequence[str] = ()) -> types.CallToolResult:
    """A tool error for ``err``: under Playwright MCP's ``### Error`` heading, the code,
    message, safe details and the next step; ``done``: what the call did before it
    failed (e.g. the window it opened), as a ``### Result`` section after it."""
    lines = ["### Error", f"Error {err.code.value} in {tool}: {err.message}"]
    if err.details:
        lines.append("Details: " + json.dumps(err.details, default=str, separators=(",", ":")))
    step = session_step(err) or getattr(err, "next_step", None) \
        or NEXT_STEP.get(err.code.value, DEFAULT_NEXT_STEP)
    lines.append("Next step: " + step)
    if done:
        lines += ["", "### Result", *done]
    return types.CallToolResult(
        content=[types.TextContent(type="text", text="\n".join(lines))], is_error=True)


def _argument_error(tool: str, exc: pydantic.ValidationError) -> types.CallToolResult:
    problems = []
    for item in exc.errors()[:5]:
        where = ".".join(str(p) for p in item["loc"]) or "(arguments)"
        problems.append(f"{where}: {item['msg']}")
    err = E.BadRequest(f"Invalid arguments: {'; '.join(problems)}.",
                       {"fields": [".".join(str(p) for p in i["loc"]) for i in exc.errors()[:5]]})
    return error_result(tool, err)


@dataclass(frozen=True)
class Tool:
    """One MCP tool.

    Attributes:
        name: tool name (``browser_*``, Playwright MCP conventions).
        title: short human title.
        description: what the model reads: when to use it and what it returns.
        args: argument model; its JSON Schema is the tool's ``inputSchema``.
        run: ``async (connection, args, response)``: acts and fills ``response``;
            raises TrustbridgeError.
        read_only: the tool does not change the page.
        cap: the ``--caps`` capability that lists it (``vision``, ``pdf``; Playwright
            MCP's names; ``code``: browser_exec); None: always listed.
    """

    name: str
    title: str
    description: str
    args: type[ToolArgs]
    run: Handler
    read_only: bool = False
    cap: str | None = None

    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of :attr:`args`, cleaned for the model (see :func:`clean_schema`)."""
        schema = clean_schema(self.args.model_json_schema())
        schema.pop("description", None)  # the tool description already says it
        schema.setdefault("properties", {})
        return schema

    def describe(self) -> types.Tool:
        """The tool as ``tools/list`` shows it."""
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=self.input_schema(),
            annotations=types.ToolAnnotations(read_only_hint=self.read_only),
        )

    async def call(self, conn: Connection,
                   arguments: dict[str, Any] | None) -> types.CallToolResult:
        """Validate ``arguments``, run the handler on a new :class:`Response`, let it
        fetch what its sections need, and render it; or wrap the error."""
        try:
            args = self.args.model_validate(arguments or {})
        except pydantic.ValidationError as exc:
            return _argument_error(self.name, exc)
        response = Response(conn)
        try:
            try:
                await self.run(conn, args, response)
            except E.TabClaimed as err:
                # The session's first tab is another session's or a person's: nothing was
                # sent; the call runs again in a window of the session's own (session.py).
                if self.name == "browser_tabs" or not conn.may_open_own_tab(err):
                    raise
                await conn.open_own_tab(err)
                response = Response(conn)
                await self.run(conn, args, response)
            await response.finish()
        except E.TrustbridgeError as err:
            conn.session_ended(err)
            return error_result(self.name, err, conn.take_notes())
        except Exception as exc:  # a bug must not end the MCP session
            log.exception("tool %s failed", self.name)
            return error_result(self.name, E.InternalError(
                f"The MCP server failed: {type(exc).__name__}: {exc}"))
        response.prepend(conn.take_notes())
        content: list[Content] = response.render()
        return types.CallToolResult(content=content)
