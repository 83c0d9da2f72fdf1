"""Wire models of the trustbridge protocol: the one definition every part uses.

Every WebSocket text frame holds one JSON object, a :data:`Message`:

- ``hello`` (peer → bridge, first frame) and ``welcome`` (bridge → peer);
- ``request`` ``{id, method, params}`` in either direction;
- ``response`` ``{id, ok, result | error}`` answering a request by ``id``.

Method parameters are validated against :data:`METHOD_PARAMS`; results of the driver
and of ``page.jugglerTarget`` against :data:`METHOD_RESULTS`. The JSON Schema the
extension relies on is generated from this module by ``scripts/gen_schema.py``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from .errors import ErrorPayload

PROTOCOL_VERSION = 1
"""Bumped on any incompatible change; a hello with another version gets PROTOCOL_MISMATCH."""

Role = Literal["extension", "driver", "client"]
RequestId = Annotated[str, Field(min_length=1, max_length=64)] | Annotated[int, Field(ge=0)]
DeviceId = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")]
Ref = Annotated[str, Field(min_length=2, max_length=32, pattern=r"^(f\d+)?e\d+$")]
Modifier = Literal["Alt", "Control", "ControlOrMeta", "Meta", "Shift"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


# --------------------------------------------------------------------------- envelopes


class Hello(_Model):
    """First frame of every connection."""

    type: Literal["hello"] = "hello"
    role: Role = Field(description="What the peer is: extension, driver or client.")
    device: DeviceId | None = Field(
        default=None,
        description="Device id (one browser). Required for extension and driver peers.",
    )
    protocolVersion: int = Field(description="The PROTOCOL_VERSION the peer speaks.")
    token: str = Field(max_length=256, description="The bridge token (see docs/security.md).")
    browser: str | None = Field(
        default=None, max_length=64, description="Browser name and version, for doctor."
    )
    capabilities: dict[str, bool] = Field(
        default_factory=dict, description="What this peer can do, e.g. trustedInput."
    )


class Welcome(_Model):
    """The bridge's answer to a good hello."""

    type: Literal["welcome"] = "welcome"
    protocolVersion: int
    peerId: str = Field(description="The bridge's name for this connection.")


class Request(_Model):
    """A call; answered by exactly one Response with the same id."""

    type: Literal["request"] = "request"
    id: RequestId
    method: str = Field(max_length=64)
    params: dict[str, Any] = Field(default_factory=dict)


class Response(_Model):
    """The answer to a Request: ``ok`` with ``result``, or not ``ok`` with ``error``."""

    type: Literal["response"] = "response"
    id: RequestId | None = Field(description="Id of the request; null if it had none.")
    ok: bool
    result: dict[str, Any] | None = None
    error: ErrorPayload | None = None


Message = Annotated[Union[Hello, Welcome, Request, Response], Field(discriminator="type")]
MESSAGE_ADAPTER: TypeAdapter[Hello | Welcome | Request | Response] = TypeAdapter(Message)


# --------------------------------------------------------------------------- actions


class ClickAction(_Model):
    """Press and release a mouse button at the centre of the target."""

    kind: Literal["click"] = "click"
    button: Literal["left", "right", "middle"] = "left"
    clickCount: int = Field(default=1, ge=1, le=3, description="2 for a double click.")
    modifiers: list[Modifier] = Field(default_factory=list, max_length=5)


class HoverAction(_Model):
    """Move the pointer over the target's centre and leave it there."""

    kind: Literal["hover"] = "hover"


class TypeAction(_Model):
    """Focus the target and type text key by key through the keyboard."""

    kind: Literal["type"] = "type"
    text: str = Field(max_length=100_000)
    submit: bool = Field(default=False, description="Press Enter after the text.")


class PressAction(_Model):
    """Press a key or chord (``Enter``, ``Control+A``) in the focused element, or the target."""

    kind: Literal["press"] = "press"
    key: str = Field(min_length=1, max_length=64)


Action = Annotated[
    Union[ClickAction, HoverAction, TypeAction, PressAction], Field(discriminator="kind")
]
INPUT_KINDS_NEEDING_REF = frozenset({"click", "hover", "type"})


# --------------------------------------------------------------------------- client methods


class DeviceParams(_Model):
    device: DeviceId | None = Field(
        default=None, description="Device to address; optional when exactly one is connected."
    )


class TabParams(DeviceParams):
    tabId: int | None = Field(default=None, description="Tab id; the active tab if omitted.")


class NavigateParams(TabParams):
    url: str = Field(min_length=1, max_length=8192, description="Absolute URL to load.")
    timeoutMs: int = Field(default=30_000, ge=1, le=300_000, description="Load timeout, ms.")


class SnapshotParams(TabParams):
    pass


class ActParams(TabParams):
    ref: Ref | None = Field(
        default=None, description="Target from the latest snapshot (e.g. e7, f1e3)."
    )
    action: Action
    timeoutMs: int = Field(default=10_000, ge=1, le=300_000, description="Action timeout, ms.")


class WaitParams(TabParams):
    ms: int | None = Field(default=None, ge=0, le=300_000, description="Fixed wait, ms.")
    text: str | None = Field(default=None, max_length=1000, description="Wait until shown.")
    timeoutMs: int = Field(default=10_000, ge=1, le=300_000)


class EmptyParams(_Model):
    pass


# --------------------------------------------------------------------------- peer methods


class JugglerTargetParams(_Model):
    """Bridge → extension: turn a ref into what the driver needs."""

    tabId: int | None = None
    ref: Ref | None = Field(default=None, description="None: the tab's top frame.")


class JugglerTarget(_Model):
    """Extension → bridge: a frame token and a CSS locator (DESIGN §4)."""

    model_config = ConfigDict(extra="allow")
    frameToken: str = Field(min_length=1, max_length=128)
    css: str | None = Field(default=None, max_length=20_000, description="None: no element.")
    tabId: int | None = None


class DriverActParams(_Model):
    """Bridge → driver: perform one action with trusted input."""

    frameToken: str = Field(min_length=1, max_length=128)
    css: str | None = Field(default=None, max_length=20_000)
    action: Action
    timeoutMs: int = Field(default=10_000, ge=1, le=300_000)


class DriverActResult(_Model):
    model_config = ConfigDict(extra="allow")
    done: bool = True


class DeviceInfo(_Model):
    device: str
    extension: bool = Field(description="An extension is connected for this device.")
    driver: bool = Field(description="A driver is online for this device now.")
    requiresTrustedInput: bool = Field(
        description="Input must go through a driver; fails if the driver is offline."
    )
    browser: str | None = None


METHOD_PARAMS: dict[str, type[_Model]] = {
    "devices.list": EmptyParams,
    "tabs.list": DeviceParams,
    "page.navigate": NavigateParams,
    "page.snapshot": SnapshotParams,
    "page.act": ActParams,
    "page.wait": WaitParams,
    "page.jugglerTarget": JugglerTargetParams,
    "driver.act": DriverActParams,
}
"""Every method's params model. Clients may call the first six."""

CLIENT_METHODS = frozenset(
    {"devices.list", "tabs.list", "page.navigate", "page.snapshot", "page.act", "page.wait"}
)

METHOD_RESULTS: dict[str, type[_Model]] = {
    "page.jugglerTarget": JugglerTarget,
    "driver.act": DriverActResult,
}
