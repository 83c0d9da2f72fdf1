"""browser_actions: several input actions in one request (``page.batch``), and
:func:`run_batch`, which browser_type and browser_fill_form use to send theirs.

A batch runs in order and stops at the first failure; nothing is replayed. A stopped
batch is a tool error that names the action that failed and the ones that already
happened (they are not undone).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, Literal, get_args

import pydantic
from pydantic import Field, TypeAdapter

from ..protocol import errors as E
from ..protocol.models import Action, BatchItem, BatchParams
from ..sdk import Tab
from .report import warnings
from .response import Response
from .session import Connection
from .tool import ElementArgs, Tool, ToolArgs, derive

ACTION_MODELS = get_args(get_args(Action)[0])
"""The protocol's action models, in the order of the ``Action`` union."""
ACTION_ADAPTER: TypeAdapter[Any] = TypeAdapter(Action)


def _flat_step() -> type[ToolArgs]:
    """One batch step as the model writes it: ``{ref, kind, <that kind's fields>}``.

    The protocol nests the action (``{ref, action: {kind, ...}}``) and each kind is its
    own model; spelled out in JSON Schema that union costs over 1,000 tokens. Here every
    action field appears once (type, bounds and description copied from the protocol),
    optional, and the ``kind`` description says which fields each kind takes; the step is
    then validated against the protocol's own ``Action`` union (:func:`to_item`).
    """
    fields: dict[str, Any] = {}
    kinds: list[str] = []
    for model in ACTION_MODELS:
        names = [n for n in model.model_fields if n != "kind"]
        kind = model.model_fields["kind"].default
        kinds.append(f"{kind} ({', '.join(names)})" if names else kind)
        for name in names:
            if name in fields:
                continue
            info = copy.copy(model.model_fields[name])
            info.default, info.default_factory = None, None
            fields[name] = (info.annotation | None, info)
    kind_names = tuple(m.model_fields["kind"].default for m in ACTION_MODELS)
    kind_type = Literal[kind_names]  # type: ignore[valid-type]
    return derive(
        "Step", "One action.", base=ElementArgs, take={BatchItem: ["ref", "timeoutMs"]},
        rename={"ref": "target"},
        describe={"ref": "Element ref (alias: ref); none: press in the focused element."},
        kind=(kind_type, Field(description="Action, with the fields it takes: "
                               + "; ".join(kinds) + ".")),
        order=["kind", "target", *fields, "timeoutMs"],
        **fields,
    )


Step = _flat_step()
MAX_STEPS = next(m.max_length for m in BatchParams.model_fields["actions"].metadata
                 if hasattr(m, "max_length"))


class ActionsArgs(ToolArgs):
    """The actions, in order."""

    actions: list[Step] = Field(  # type: ignore[valid-type]
        min_length=1, max_length=MAX_STEPS, description="Actions to run in order.")


def to_item(index: int, step: Any) -> BatchItem:
    """A flat step as the protocol's ``BatchItem``.

    Raises:
        BadRequest: a field the step's kind does not take, or a missing one.
    """
    given = step.model_dump(exclude_none=True, exclude={"target", "timeoutMs"})
    try:
        action = ACTION_ADAPTER.validate_python(given)
    except pydantic.ValidationError as exc:
        problems = "; ".join(
            f"actions.{index}.{'.'.join(str(p) for p in e['loc'][1:]) or 'kind'}: {e['msg']}"
            for e in exc.errors()[:3])
        raise E.BadRequest(f"Invalid {step.kind} action: {problems}. Nothing was run.",
                           {"index": index}) from exc
    return BatchItem(ref=step.target or None, action=action, timeoutMs=step.timeoutMs)


async def run_batch(tab: Tab, items: Sequence[BatchItem],
                    labels: Sequence[str]) -> list[dict[str, Any]]:
    """Send ``items`` as one ``page.batch`` request.

    Args:
        tab: the tab to act in.
        items: the protocol's batch items, in order.
        labels: how to name each item in messages (same order).

    Returns:
        The result of every action (``page.act`` results), in order.

    Raises:
        TrustbridgeError: the batch stopped at an item: the error of that item (same
            class and code), its message prefixed with which item failed and followed by
            the ones that ran before it (they are not undone).
    """
    answer = await tab.batch(items)
    done = [dict(r) for r in answer.get("completedActions") or []]
    stopped = answer.get("interruptedAction")
    if not stopped:
        return done
    index = int(stopped.get("index", len(done)))
    err = E.error_from_payload(E.ErrorPayload.model_validate(stopped["error"]))

    def name(i: int) -> str:
        return labels[i] if i < len(labels) else f"action {i}"

    ran = (f"Done before it, not undone: {'; '.join(name(i) for i in range(len(done)))}."
           if done else "Nothing before it ran.")
    notes = " ".join(warnings(done, [f"action {i} ({name(i)})" for i in range(len(done))]))
    raise type(err)(f"Stopped at action {index} ({name(index)}): {err.message} {ran} {notes}"
                    .strip(), {**err.details, "index": index, "completed": len(done)},
                    next_step=err.next_step)  # the step the raiser gave, if any


async def _actions(conn: Connection, args: Any, response: Response) -> None:
    items = [to_item(i, step) for i, step in enumerate(args.actions)]
    labels = [f"{s.kind} {s.target}" if s.target else s.kind for s in args.actions]
    tab = await conn.tab(page_state=True)
    results = await run_batch(tab, items, labels)
    response.add_action(f"Ran {len(results)} actions ({', '.join(labels)})", results,
                        [f"action {i} ({lab})" for i, lab in enumerate(labels)])
    response.include_page_state(tab)


TOOLS = [
    Tool(
        name="browser_actions",
        title="Batch of actions",
        description="Run several input actions in order in one call, with the same real "
        "input as the single tools; stops at the first failure.",
        args=ActionsArgs,
        run=_actions,
    ),
]
