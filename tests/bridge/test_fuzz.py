"""Property-based fuzz of the bridge (hypothesis) over real loopback WebSockets.

Valid protocol messages are generated from the JSON Schema of the pydantic models (so a
new method or field is fuzzed without touching this file), then mutated: fields dropped,
fields added, values of the wrong type, huge strings, deep nesting, unknown methods and
message types, truncated or spliced JSON, random text, random bytes and binary frames.
Three phases share one :class:`~bridge.server.BridgeServer` running in a child process:
frames from an authenticated client, frames from an extension and a driver, and first
frames (hellos) of new connections. After every example a probe request must be
answered on the same connection, every frame the bridge sent must be a well-formed
``Response`` (ok with a result, or an error with a known code), and a well-behaved client
acting on a fake extension + fake driver keeps getting trusted clicks done meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import itertools
import json
import os
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pydantic
import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.methods import CLIENT_METHODS, METHOD_PARAMS
from trustbridge.bridge.protocol.models import (
    MESSAGE_ADAPTER,
    PROTOCOL_VERSION,
    Event,
    Hello,
    Request,
    Response,
    Welcome,
)

from .fakes import FakeDriver, FakeExtension

pytestmark = [
    pytest.mark.slow,  # the fuzz tier (README "Tests")
    pytest.mark.timeout(150),  # ~35 s alone; generous for a loaded 2-core machine
    # websockets' keep-alive pings (every 20 s, on the fakes' and the well-behaved
    # client's sockets in the background thread) draw from the global `random` module;
    # hypothesis sees the global state change during a draw in the test's thread and
    # blames the strategy (formatting its large repr while at it). Nothing in the
    # strategies uses `random`.
    pytest.mark.filterwarnings(
        "ignore:Do not use the `random` module inside strategies"
        ":hypothesis.errors.HypothesisDeprecationWarning"),
    pytest.mark.filterwarnings(
        "ignore:Generating overly large repr:hypothesis.errors.HypothesisWarning"),
]

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "fuzz-token-0123456789abcdef"
DEVICE = "dev1"
"""Served by a fake extension and a fake driver; the well-behaved client acts on it."""
PEER_DEVICE = "fuzzdev"
"""Device of the raw extension and driver sockets of the peer phase."""
MAX_MESSAGE_BYTES = 1 << 20
"""The fuzzed bridge's frame limit, bytes; every fuzzed frame stays under it (oversize
frames close the connection with 1009, pinned in test_server.py)."""
HUGE_CHARS = (100_001, 150_000)
"""Length range of huge strings, characters: over every model's max_length, and under
MAX_MESSAGE_BYTES even as \\uXXXX escapes (6 bytes a character)."""
STEP_S = 10.0
"""Upper bound, seconds, on any single wait."""

FRAMES = 8
"""Frames per example of the client and peer phases; a probe request follows each."""
CLIENT_EXAMPLES = 450
PEER_EXAMPLES = 125
HELLO_EXAMPLES = 400
"""One frame each: the first frame of a new connection."""
assert (CLIENT_EXAMPLES + PEER_EXAMPLES) * FRAMES + HELLO_EXAMPLES >= 5_000  # the floor

FUZZ = settings(
    deadline=None,
    database=None,  # examples are cheap to regenerate; nothing written into the tree
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much, HealthCheck.large_base_example],
)

T = TypeVar("T")


# -- valid messages, generated from the models' JSON Schema -----------------------------------

JSON_LEAF = (st.none() | st.booleans() | st.integers() | st.text(max_size=20)
             | st.floats(allow_nan=False, allow_infinity=False))
JSON = st.recursive(
    JSON_LEAF,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def from_schema(node: dict[str, Any], defs: dict[str, Any],
                overrides: dict[str, st.SearchStrategy[Any]], name: str | None = None
                ) -> st.SearchStrategy[Any]:
    """A strategy for JSON values that fit ``node`` (the subset pydantic emits: $ref,
    const, enum, anyOf/oneOf, object, string with length and pattern, integer and number
    with bounds, boolean, null, array). ``overrides`` replaces properties by name."""
    if name in overrides:
        return overrides[name]
    if "$ref" in node:
        return from_schema(defs[node["$ref"].rsplit("/", 1)[1]], defs, overrides, name)
    if "const" in node:
        return st.just(node["const"])
    if "enum" in node:
        return st.sampled_from(node["enum"])
    for key in ("oneOf", "anyOf"):
        if key in node:
            return st.one_of([from_schema(sub, defs, overrides, name) for sub in node[key]])
    kind = node.get("type")
    if kind == "object":
        props = node.get("properties", {})
        if not props:
            extra = node.get("additionalProperties", True)
            if extra is False:
                return st.just({})
            values = JSON if extra in (True, {}) else from_schema(extra, defs, overrides)
            return st.dictionaries(st.text(max_size=8), values, max_size=3)
        required = set(node.get("required", ()))
        draw = {k: from_schema(v, defs, overrides, k) for k, v in props.items()}
        return st.fixed_dictionaries({k: s for k, s in draw.items() if k in required},
                                     optional={k: s for k, s in draw.items() if k not in required})
    if kind == "string":
        lo, hi = node.get("minLength", 0), node.get("maxLength", 40)
        if "pattern" in node:
            return st.from_regex(node["pattern"], fullmatch=True).filter(lambda s: lo <= len(s) <= hi)
        return st.text(min_size=lo, max_size=max(lo, min(hi, 40)))
    if kind == "integer":
        return st.integers(node.get("minimum"), node.get("maximum"))
    if kind == "number":
        return st.floats(node.get("minimum"), node.get("maximum"),
                         allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(from_schema(node["items"], defs, overrides),
                        min_size=node.get("minItems", 0), max_size=min(node.get("maxItems", 3), 3))
    return JSON


def model_values(model: type[pydantic.BaseModel],
                 overrides: dict[str, st.SearchStrategy[Any]] | None = None
                 ) -> st.SearchStrategy[dict[str, Any]]:
    """JSON objects the model accepts (checked with the model itself)."""
    schema = model.model_json_schema()

    def valid(value: dict[str, Any]) -> bool:
        try:
            model.model_validate_json(json.dumps(value))
        except pydantic.ValidationError:
            return False
        return True

    return from_schema(schema, schema.get("$defs", {}), overrides or {}).filter(valid)


REQUEST_ID = st.integers(0, 2**40) | st.text(min_size=1, max_size=64)
CLIENT_OVERRIDES = {
    # Mostly the device and tabs that exist, so valid requests travel to the fake peers.
    "device": st.just(DEVICE) | st.from_regex(r"[a-z0-9]{1,12}", fullmatch=True),
    "tabId": st.sampled_from([1, 2, 3]) | st.integers(),
}


def _request(method: str) -> st.SearchStrategy[dict[str, Any]]:
    params = model_values(METHOD_PARAMS[method], CLIENT_OVERRIDES)
    return st.fixed_dictionaries({"type": st.just("request"), "id": REQUEST_ID,
                                  "method": st.just(method), "params": params})


_CLIENT_REQUESTS = st.one_of([_request(m) for m in sorted(CLIENT_METHODS | {"request.cancel"})])
_ENVELOPES = st.one_of([model_values(m) for m in (Hello, Welcome, Request, Response, Event)])
_PEER_ANSWERS = st.fixed_dictionaries({
    "type": st.just("response"), "id": REQUEST_ID,
    "ok": st.booleans(),
}, optional={"result": st.dictionaries(st.text(max_size=8), JSON, max_size=3),
             "error": model_values(E.ErrorPayload)})
_PEER_EVENTS = st.fixed_dictionaries({
    "type": st.just("event"),
    "event": st.sampled_from(["dialog.opened", "dialog.closed"]) | st.text(max_size=64),
    "params": st.dictionaries(st.text(max_size=8), JSON, max_size=3),
})
VALID = {
    # What a client might send: mostly requests of every client method.
    "client": st.one_of(_CLIENT_REQUESTS, _CLIENT_REQUESTS, _CLIENT_REQUESTS, _ENVELOPES),
    # What an extension or driver might send: answers, events, anything else.
    "peer": st.one_of(_PEER_ANSWERS, _PEER_EVENTS, _ENVELOPES),
    # Good hellos of every role, never for DEVICE (a new extension or driver for it
    # would replace the well-behaved client's fake peers).
    "hello": model_values(Hello, {
        "token": st.just(TOKEN),
        "protocolVersion": st.just(PROTOCOL_VERSION),
        "device": st.from_regex(r"[a-z0-9]{1,12}", fullmatch=True).filter(lambda d: d != DEVICE),
    }),
}
SEED_POOL = 400
"""Valid messages generated per kind before fuzzing; drawing them from the schema costs
hypothesis about 10 ms each on two cores, so frames mutate copies drawn from the pool."""


@functools.cache
def seed_pool(kind: str) -> tuple[dict[str, Any], ...]:
    """SEED_POOL valid messages of ``kind`` (a key of VALID), generated by hypothesis."""
    found: list[dict[str, Any]] = []

    @settings(FUZZ, max_examples=SEED_POOL, phases=[Phase.generate])
    @given(VALID[kind])
    def collect(msg: dict[str, Any]) -> None:
        found.append(msg)

    collect()
    return tuple(found)


def seeds(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    """A fresh copy of a valid message of ``kind`` (builds the pool on first use: call it
    outside any running @given)."""
    return st.sampled_from(seed_pool(kind)).map(copy.deepcopy)


# -- mutations ----------------------------------------------------------------------------------

Path_ = tuple[str | int, ...]
NEST_MARK = "\x00nest\x00"
MUTATIONS = ("valid", "drop", "extra", "retype", "huge", "nest", "method", "type",
             "token", "version", "truncate", "splice", "not_object", "garbage", "binary")


def _paths(value: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    """Every path below ``value`` (keys of objects, indices of arrays), depth first."""
    items: Any = value.items() if isinstance(value, dict) else (
        enumerate(value) if isinstance(value, list) else ())
    for key, child in items:
        yield (*prefix, key)
        yield from _paths(child, (*prefix, key))


def _parent(msg: Any, path: Path_) -> Any:
    for key in path[:-1]:
        msg = msg[key]
    return msg


class Frame:
    """One fuzzed frame (text or binary) and the mutation that made it; its repr is cut
    short so a failing example stays readable (frames reach 0.9 MB)."""

    def __init__(self, data: str | bytes, op: str) -> None:
        self.data = data
        self.op = op

    def __repr__(self) -> str:
        shown = repr(self.data[:300]) + (f"... ({len(self.data)} long)" if len(self.data) > 300 else "")
        return f"Frame({self.op}: {shown})"


@st.composite
def mutated(draw: st.DrawFn, seeds: st.SearchStrategy[dict[str, Any]]) -> Frame:
    """One frame: a seed message, valid or mutated in one way."""
    op = draw(st.sampled_from(MUTATIONS))
    return Frame(_mutate(draw, draw(seeds), op), op)


def _mutate(draw: st.DrawFn, msg: dict[str, Any], op: str) -> str | bytes:
    paths = list(_paths(msg))
    ascii_only = draw(st.booleans())

    def text_of(m: Any) -> str:
        return json.dumps(m, ensure_ascii=ascii_only)

    if op == "drop" and paths:
        path = draw(st.sampled_from(paths))
        del _parent(msg, path)[path[-1]]
    elif op == "extra":
        objects = [()] + [p for p in paths if isinstance(_parent(msg, (*p, 0)), dict)]
        target = _parent(msg, (*draw(st.sampled_from(objects)), 0))
        target[draw(st.text(max_size=12))] = draw(JSON)
    elif op in ("retype", "huge", "nest") and paths:
        path = draw(st.sampled_from(paths))
        parent, old = _parent(msg, path), _parent(msg, path)[path[-1]]
        if op == "retype":
            parent[path[-1]] = draw(JSON.filter(lambda v: type(v) is not type(old)))
        elif op == "huge":
            parent[path[-1]] = draw(st.sampled_from("x\u00e9\u4e2d")) * draw(st.integers(*HUGE_CHARS))
        else:
            parent[path[-1]] = NEST_MARK
            depth = draw(st.integers(1, 20_000))
            opening, closing = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
            inner = draw(st.sampled_from(["1", "null", '"x"', "[]"]))
            return json.dumps(msg).replace(json.dumps(NEST_MARK), opening * depth + inner + closing * depth)
    elif op == "method":
        msg["method"] = draw(st.sampled_from(sorted(set(METHOD_PARAMS) - CLIENT_METHODS))
                             | st.text(max_size=80))
    elif op == "type":
        msg["type"] = draw(st.sampled_from(["hello", "welcome", "request", "response", "event"])
                           | st.text(max_size=12) | JSON)
    elif op == "token":
        msg["token"] = draw(st.sampled_from([TOKEN[:-1], TOKEN + "0", TOKEN.upper(), ""])
                            | st.text(max_size=300))
    elif op == "version":
        msg["protocolVersion"] = draw(st.integers() | st.sampled_from([str(PROTOCOL_VERSION),
                                                                       float(PROTOCOL_VERSION)]))
    elif op in ("truncate", "splice"):
        text = text_of(msg)
        at = draw(st.integers(0, len(text) - 1))
        if op == "truncate":
            return text[:at]
        return text[:at] + draw(st.text(min_size=1, max_size=12)) + text[at:]
    elif op == "not_object":
        return json.dumps(draw(JSON.filter(lambda v: not isinstance(v, dict))))
    elif op == "garbage":
        return draw(st.text(max_size=200) | st.sampled_from(["", "NaN", "1e99999", "{}" * 50]))
    elif op == "binary":
        return draw(st.binary(max_size=200) | st.just(text_of(msg).encode()))
    return text_of(msg)


# -- the bridge under test, in a background thread ---------------------------------------------


_CHILD = """
import asyncio, os, sys
from trustbridge.bridge.server import BridgeServer

async def main() -> None:
    server = BridgeServer(os.environ["FUZZ_TOKEN"], port=0, max_message_bytes=int(sys.argv[1]))
    await server.start()
    print(server.port, flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until EOF
    await server.stop()

asyncio.run(main())
"""


class LiveBridge:
    """A BridgeServer in a child process (so it has a core and an interpreter of its own
    while hypothesis generates here), a fake extension and a fake driver for DEVICE, and a
    well-behaved client clicking through them over and over; the fakes and the client run
    in an event loop in a background thread, the fuzzing sockets (websockets' sync client)
    in the test's thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self.good_calls = 0
        self.good_failures: list[str] = []
        self._stop = asyncio.Event()
        self._good_task: asyncio.Task[None] | None = None
        self._ext = FakeExtension("", TOKEN, DEVICE)
        self._drv = FakeDriver("", TOKEN, DEVICE)
        self._client: BridgeClient | None = None

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(STEP_S * 3)

    def __enter__(self) -> LiveBridge:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(MAX_MESSAGE_BYTES)], cwd=ROOT, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**os.environ, "FUZZ_TOKEN": TOKEN})
        try:
            assert self.proc.stdout is not None
            self.url = f"ws://127.0.0.1:{int(self.proc.stdout.readline())}"
            self.thread.start()
            self.run(self._start())
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self.thread.is_alive():
                self.run(self._stop_all())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            if self.thread.is_alive():
                self.thread.join(STEP_S)
            self.loop.close()
            assert self.proc is not None and self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(STEP_S)
            finally:
                if self.proc.poll() is None:
                    self.proc.kill()
                    self.proc.wait()
                assert self.proc.stdout is not None
                self.proc.stdout.close()

    def alive(self) -> bool:
        """The bridge process is still running."""
        return self.proc is not None and self.proc.poll() is None

    async def _start(self) -> None:
        for fake in (self._ext, self._drv):
            fake.url = self.url
            await fake.connect()
        self._client = await BridgeClient.connect(self.url, TOKEN)
        self._good_task = asyncio.create_task(self._good_client())

    async def _good_client(self) -> None:
        assert self._client is not None
        while not self._stop.is_set():
            try:
                result = await asyncio.wait_for(self._client.call("page.act", {
                    "device": DEVICE, "tabId": 7, "ref": "e7", "action": {"kind": "click"}}), STEP_S)
                if (result.get("inputPath"), result.get("done")) != ("trusted", True):
                    self.good_failures.append(repr(result))
            except Exception as exc:  # noqa: BLE001 - recorded, asserted by the test
                self.good_failures.append(repr(exc))
            self.good_calls += 1
            await asyncio.sleep(0.005)  # leave the two cores to the fuzzing

    async def _stop_all(self) -> None:
        self._stop.set()
        if self._good_task is not None:
            await self._good_task
        if self._client is not None:
            await self._client.close()
        for fake in (self._ext, self._drv):
            await fake.close()

    def good_state(self) -> tuple[int, list[str]]:
        """(calls so far, failures so far) of the well-behaved client."""
        return self.good_calls, list(self.good_failures)

    def fakes_malformed(self) -> list[str | bytes]:
        """Frames the bridge sent the fake peers that fail the models (must stay empty)."""
        return [*self._ext.malformed, *self._drv.malformed]

    @contextlib.contextmanager
    def open(self, hello: dict[str, Any] | None = None) -> Iterator[ClientConnection]:
        """A sync socket; with ``hello``, authenticated with it (welcome checked)."""
        with connect(self.url, proxy=None, open_timeout=STEP_S, max_size=None,
                     compression=None) as ws:  # deflating 0.9 MB frames would dominate
            if hello is not None:
                ws.send(json.dumps(hello))
                assert isinstance(MESSAGE_ADAPTER.validate_json(ws.recv(timeout=STEP_S)), Welcome)
            yield ws


@pytest.fixture(scope="module")
def live() -> Iterator[LiveBridge]:
    with LiveBridge() as bridge:
        yield bridge


# -- checks -------------------------------------------------------------------------------------


def well_formed(raw: str | bytes) -> Response:
    """The frame is a Response per the models: ok with a result dict and no error, or not
    ok with an error whose code is one of ErrorCode and a message."""
    assert isinstance(raw, str), "the bridge sent a binary frame"
    msg = MESSAGE_ADAPTER.validate_json(raw)
    assert isinstance(msg, Response), f"expected a response, got {msg.type}"
    if msg.ok:
        assert isinstance(msg.result, dict) and msg.error is None
    else:
        assert msg.result is None and msg.error is not None
        assert msg.error.code in E.ErrorCode and msg.error.message
    return msg


def _bridge_request(raw: str | bytes) -> bool:
    """The frame is a well-formed request the bridge sent to this (extension) peer."""
    if not isinstance(raw, str):
        return False
    try:
        return isinstance(MESSAGE_ADAPTER.validate_json(raw), Request)
    except pydantic.ValidationError:
        return False


def _key(rid: Any) -> tuple[str, Any]:
    return (type(rid).__name__, rid)


def _readable_request(frame: str | bytes) -> Request | None:
    if isinstance(frame, bytes):
        return None
    try:
        msg = MESSAGE_ADAPTER.validate_json(frame)
    except pydantic.ValidationError:
        return None
    return msg if isinstance(msg, Request) else None


_probe_ids = itertools.count()


def exchange(ws: ClientConnection, frames: list[Frame], probe_method: str,
             on_answer: Callable[[Response], None] = lambda _r: None) -> None:
    """Send ``frames`` then a probe request; read until the probe and every request among
    ``frames`` that the models accept have been answered, checking each frame read."""
    expected: Counter[tuple[str, Any]] = Counter()
    for frame in frames:
        ws.send(frame.data)
        if (req := _readable_request(frame.data)) is not None:
            expected[_key(req.id)] += 1
    probe = f"probe-{next(_probe_ids)}"
    ws.send(Request(id=probe, method=probe_method).model_dump_json())
    expected[_key(probe)] += 1
    probe_answered = False
    while not probe_answered or +expected:
        raw = ws.recv(timeout=STEP_S)
        if _bridge_request(raw):  # the bridge asking this peer (e.g. tabs.list after a
            continue              # fuzzed dialog.opened): not an answer; left unanswered
        answer = well_formed(raw)
        if answer.id is None:  # only for a frame that was not a readable request
            assert answer.error is not None and answer.error.code is E.ErrorCode.BAD_REQUEST
        # Bad input is answered as such; INTERNAL_ERROR would mean the bridge tripped.
        assert answer.error is None or answer.error.code is not E.ErrorCode.INTERNAL_ERROR, \
            answer.error.message
        on_answer(answer)
        key = _key(answer.id)
        probe_answered |= key == _key(probe)
        if expected[key] > 0:
            expected[key] -= 1


def assert_others_unharmed(live: LiveBridge, calls_before: int) -> None:
    """The bridge process runs, the well-behaved client made at least two more clicks
    since ``calls_before`` and none failed, and the fake peers got only well-formed frames."""
    target = max(calls_before, live.good_calls) + 2
    live.run(asyncio.wait_for(_until(lambda: live.good_calls >= target), STEP_S))
    assert live.alive()
    assert live.good_state()[1] == []
    assert live.fakes_malformed() == []


async def _until(predicate: Callable[[], bool]) -> None:
    while not predicate():
        await asyncio.sleep(0.005)


# -- the fuzz -----------------------------------------------------------------------------------


def test_fuzzed_client_frames_get_well_formed_answers_and_others_keep_working(
    live: LiveBridge,
) -> None:
    """450 examples of 8 generated/mutated frames from an authenticated client: every
    answer is a well-formed Response, every valid request is answered, the probe after
    each example is answered (bridge and connection up), and a concurrent well-behaved
    client keeps getting trusted clicks done."""
    sent = 0
    calls_before = live.good_calls
    with live.open(Hello(role="client", protocolVersion=PROTOCOL_VERSION,
                         token=TOKEN).model_dump(mode="json")) as ws:

        @settings(FUZZ, max_examples=CLIENT_EXAMPLES)
        @given(st.lists(mutated(seeds("client")), min_size=FRAMES, max_size=FRAMES))
        def fuzz(frames: list[Frame]) -> None:
            nonlocal sent
            exchange(ws, frames, "devices.list")
            sent += len(frames)

        fuzz()
        exchange(ws, [], "devices.list")
    assert sent >= CLIENT_EXAMPLES * FRAMES
    assert_others_unharmed(live, calls_before)


def test_fuzzed_peer_frames_get_well_formed_errors_and_others_keep_working(
    live: LiveBridge,
) -> None:
    """125 examples of 8 generated/mutated frames from an extension or a driver
    (answers to nothing, events, requests, garbage): nothing a peer sends is answered ok,
    every answer is a well-formed error, the peer stays connected, and the well-behaved
    client on another device keeps working."""
    sent = 0
    calls_before = live.good_calls

    def no_ok(answer: Response) -> None:
        assert not answer.ok, "a peer's frame was answered ok"

    hello = {"protocolVersion": PROTOCOL_VERSION, "token": TOKEN, "device": PEER_DEVICE}
    with (live.open(Hello(role="extension", **hello).model_dump(mode="json")) as ext,
          live.open(Hello(role="driver", **hello).model_dump(mode="json")) as drv):

        @settings(FUZZ, max_examples=PEER_EXAMPLES)
        @given(st.booleans(), st.lists(mutated(seeds("peer")), min_size=FRAMES, max_size=FRAMES))
        def fuzz(as_driver: bool, frames: list[Frame]) -> None:
            nonlocal sent
            exchange(drv if as_driver else ext, frames, "peer.probe", no_ok)
            sent += len(frames)

        fuzz()
        for ws in (ext, drv):
            exchange(ws, [], "peer.probe", no_ok)
    assert sent >= PEER_EXAMPLES * FRAMES
    assert_others_unharmed(live, calls_before)


def _hello_verdict(frame: str | bytes) -> E.ErrorCode | None:
    """What the bridge must answer to this first frame: an error code, or None (welcome)."""
    if isinstance(frame, bytes):
        return E.ErrorCode.BAD_REQUEST
    try:
        hello = Hello.model_validate_json(frame)
    except pydantic.ValidationError:
        return E.ErrorCode.BAD_REQUEST
    if hello.token != TOKEN:
        return E.ErrorCode.UNAUTHORIZED
    if hello.operator is not None:  # never the bridge's random operator credential
        return E.ErrorCode.UNAUTHORIZED
    if hello.protocolVersion != PROTOCOL_VERSION:
        return E.ErrorCode.PROTOCOL_MISMATCH
    if hello.role != "client" and not hello.device:
        return E.ErrorCode.BAD_REQUEST
    return None


def test_fuzzed_hellos_let_in_exactly_the_good_ones(live: LiveBridge) -> None:
    """400 generated/mutated first frames, each on a new connection: a welcome comes only
    for a hello the models accept with the right token and protocol version (and a device
    for extensions and drivers); anything else gets BAD_REQUEST, UNAUTHORIZED or
    PROTOCOL_MISMATCH — whichever applies — and a close with 1008. The well-behaved client
    keeps working throughout."""
    calls_before = live.good_calls
    sent = 0

    @settings(FUZZ, max_examples=HELLO_EXAMPLES)
    @given(mutated(seeds("hello")))
    def fuzz(fuzzed: Frame) -> None:
        nonlocal sent
        frame = fuzzed.data
        verdict = _hello_verdict(frame)
        if verdict is None:
            hello = Hello.model_validate_json(frame)
            assume(not (hello.device == DEVICE and hello.role != "client"))
        with live.open() as ws:
            ws.send(frame)
            sent += 1
            raw = ws.recv(timeout=STEP_S)
            if verdict is None:
                assert isinstance(MESSAGE_ADAPTER.validate_json(raw), Welcome)
                exchange(ws, [], "devices.list" if hello.role == "client" else "peer.probe")
                return
            answer = well_formed(raw)
            assert answer.error is not None and answer.error.code is verdict
            with pytest.raises(ConnectionClosed) as closed:
                ws.recv(timeout=STEP_S)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008

    fuzz()
    assert sent >= HELLO_EXAMPLES
    assert_others_unharmed(live, calls_before)


def test_invalid_utf8_text_frame_closes_only_that_connection(live: LiveBridge) -> None:
    """A text frame that is not UTF-8 closes its connection with 1007 (invalid data);
    another connection and the well-behaved client are unaffected."""
    calls_before = live.good_calls
    hello = Hello(role="client", protocolVersion=PROTOCOL_VERSION, token=TOKEN)
    with live.open(hello.model_dump(mode="json")) as bad, \
            live.open(hello.model_dump(mode="json")) as other:
        bad.send(b'{"type": "request", "id": 1, "method": "\xff\xfe"}', text=True)
        with pytest.raises(ConnectionClosed) as closed:
            bad.recv(timeout=STEP_S)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1007
        exchange(other, [], "devices.list")
    assert_others_unharmed(live, calls_before)
