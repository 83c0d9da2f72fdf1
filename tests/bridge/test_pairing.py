"""Pairing a person's own browser (bridge/pairing.py): one-time codes, device credentials,
and the two hooks in the bridge's hello (the exchange, and a paired extension's hello)."""

from __future__ import annotations

import json
import secrets
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from trustbridge.bridge import pairing as P
from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import PROTOCOL_VERSION, Hello
from trustbridge.bridge.routing import RoutingPolicy
from trustbridge.bridge.server import BridgeServer

from .fakes import FakeDriver, FakeExtension, wait_until

ORIGIN = "chrome-extension://fakeextensionidfakeextensionid"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _hello(role: str, device: str | None, token: str) -> Hello:
    return Hello(role=role, device=device, protocolVersion=PROTOCOL_VERSION, token=token)


# -- the records and codes, no sockets --------------------------------------------------


def test_a_code_pairs_once_and_the_credential_admits_that_device_extension_only(
        tmp_path: Path) -> None:
    pairing = P.Pairing(tmp_path / P.FILE)
    made = pairing.create("laptop")
    assert made["device"] == "laptop" and made["expiresInMs"] == 300_000
    code = made["code"]
    assert len(P.normalise_code(code)) == P.CODE_LENGTH
    assert set(P.normalise_code(code)) <= set(P.CODE_ALPHABET)
    device, credential = pairing.redeem(code.lower().replace("-", " "))  # as typed
    assert device == "laptop"
    with pytest.raises(E.Unauthorized) as refused:
        pairing.redeem(code)  # single use
    assert refused.value.details["reason"] == "pairingCodeRefused"
    assert pairing.admits(_hello("extension", "laptop", credential), master=False)
    assert not pairing.admits(_hello("extension", "other", credential), master=False)
    assert not pairing.admits(_hello("client", None, credential), master=False)
    assert not pairing.admits(_hello("driver", "laptop", credential), master=False)
    assert not pairing.admits(_hello("extension", "laptop", "x" * 64), master=False)
    # Only its digest is stored, in a 0600 file that a restarted bridge reads.
    stored = (tmp_path / P.FILE).read_text()
    assert credential not in stored
    assert stat.S_IMODE((tmp_path / P.FILE).stat().st_mode) == 0o600
    again = P.Pairing(tmp_path / P.FILE)
    assert again.admits(_hello("extension", "laptop", credential), master=False)


def test_an_expired_code_is_refused_and_nothing_is_stored(tmp_path: Path) -> None:
    clock = Clock()
    pairing = P.Pairing(tmp_path / P.FILE, clock=clock)
    code = pairing.create("laptop")["code"]
    clock.now += P.CODE_TTL_S + 0.001
    with pytest.raises(E.Unauthorized):
        pairing.redeem(code)
    assert not (tmp_path / P.FILE).exists()
    assert pairing.records() == {}


def test_wrong_codes_void_every_outstanding_code(tmp_path: Path) -> None:
    pairing = P.Pairing(tmp_path / P.FILE)
    code = pairing.create("laptop")["code"]
    wrong = "2" * P.CODE_LENGTH if P.normalise_code(code) != "2" * P.CODE_LENGTH else "3" * 8
    for _ in range(P.MAX_FAILURES):
        with pytest.raises(E.Unauthorized):
            pairing.redeem(wrong)
    with pytest.raises(E.Unauthorized):
        pairing.redeem(code)  # the right one, too late: a guesser had MAX_FAILURES tries
    assert pairing.records() == {}


def test_pairing_a_name_again_replaces_its_credential(tmp_path: Path) -> None:
    pairing = P.Pairing(tmp_path / P.FILE)
    _, first = pairing.redeem(pairing.create("laptop")["code"])
    _, second = pairing.redeem(pairing.create("laptop")["code"])
    assert not pairing.admits(_hello("extension", "laptop", first), master=False)
    assert pairing.admits(_hello("extension", "laptop", second), master=False)


def test_default_names_and_a_supervised_device_name_is_refused(tmp_path: Path) -> None:
    pairing = P.Pairing(tmp_path / P.FILE)
    assert pairing.create(None, online={"browser-1"})["device"] == "browser-2"
    assert pairing.create(None, online={"browser-1"})["device"] == "browser-3"  # code pending
    with pytest.raises(E.BadRequest):
        pairing.create("chromium", online={"chromium"})


def test_a_driver_hello_records_the_promise_a_paired_extension_then_carries(
        tmp_path: Path) -> None:
    pairing = P.Pairing(tmp_path / P.FILE)
    _, credential = pairing.redeem(pairing.create("laptop")["code"])
    hello = _hello("extension", "laptop", credential)
    assert pairing.admits(hello, master=False)
    assert "requiresTrustedInput" not in hello.capabilities
    assert pairing.admits(_hello("driver", "laptop", "master"), master=True)
    later = P.Pairing(tmp_path / P.FILE)  # a restarted bridge
    hello = _hello("extension", "laptop", credential)
    assert later.admits(hello, master=False)
    assert hello.capabilities["requiresTrustedInput"] is True


# -- through a real bridge --------------------------------------------------------------


@pytest.fixture
async def bridge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[BridgeServer]:
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path))
    server = BridgeServer(secrets.token_hex(16), port=0, policy=RoutingPolicy())
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


async def _exchange(url: str, code: str) -> tuple[dict, int | None]:
    """Send a pair request as the options page does; the answer and the close code."""
    async with connect(url, origin=ORIGIN, proxy=None) as ws:  # type: ignore[arg-type]
        await ws.send(json.dumps({"type": "pair", "code": code,
                                  "protocolVersion": PROTOCOL_VERSION}))
        answer = json.loads(await ws.recv())
        with pytest.raises(ConnectionClosed):
            await ws.recv()
        return answer, ws.close_code


async def test_pair_over_the_wire_then_hello_as_the_paired_extension(
        bridge: BridgeServer, tmp_path: Path) -> None:
    client = await BridgeClient.connect(bridge.url, bridge.token)
    try:
        made = await client.call("pairing.create", {"device": "laptop"})
        assert made["device"] == "laptop"
        answer, code = await _exchange(bridge.url, made["code"])
        assert answer["type"] == "paired" and answer["device"] == "laptop" and code == 1000
        async with FakeExtension(bridge.url, answer["credential"], "laptop"):
            await wait_until(lambda: "laptop" in bridge.policy.extensions)
            devices = (await client.call("devices.list", {}))["devices"]
            assert [d["device"] for d in devices] == ["laptop"]
            assert devices[0]["requiresTrustedInput"] is False  # no driver yet: synthetic
        # The credential is no bridge token: neither a client nor a driver with it.
        with pytest.raises(E.Unauthorized):
            await BridgeClient.connect(bridge.url, answer["credential"])
        with pytest.raises(E.Unauthorized):
            async with FakeDriver(bridge.url, answer["credential"], "laptop"):
                pass
        again, code = await _exchange(bridge.url, made["code"])  # used
        assert again["ok"] is False and again["error"]["code"] == "UNAUTHORIZED"
        assert code == 1008
    finally:
        await client.close()
    assert (tmp_path / P.FILE).exists()


async def test_a_wrong_code_is_refused_and_no_credential_is_stored(
        bridge: BridgeServer, tmp_path: Path) -> None:
    client = await BridgeClient.connect(bridge.url, bridge.token)
    try:
        made = await client.call("pairing.create", {})
    finally:
        await client.close()
    wrong = "ZZZZ-ZZZZ" if P.normalise_code(made["code"]) != "ZZZZZZZZ" else "YYYY-YYYY"
    answer, code = await _exchange(bridge.url, wrong)
    assert answer["ok"] is False and answer["error"]["code"] == "UNAUTHORIZED"
    assert code == 1008
    assert not (tmp_path / P.FILE).exists()
    assert bridge.pairing.records() == {}


async def test_pairing_create_with_bad_params_is_bad_request_and_the_connection_stays(
        bridge: BridgeServer) -> None:
    client = await BridgeClient.connect(bridge.url, bridge.token)
    try:
        with pytest.raises(E.BadRequest):
            await client.call("pairing.create", {"device": "no spaces allowed"})
        assert (await client.call("devices.list", {}))["devices"] == []
    finally:
        await client.close()


async def test_pairing_a_device_again_closes_the_old_credential_connection(
        bridge: BridgeServer) -> None:
    """The old browser must not stay connected: once the new one left, the routing would
    hand the device back to the old connection (a newer extension displaces an older one
    only while both are open)."""
    client = await BridgeClient.connect(bridge.url, bridge.token)
    try:
        answer, _ = await _exchange(bridge.url, (await client.call(
            "pairing.create", {"device": "laptop"}))["code"])
        async with FakeExtension(bridge.url, answer["credential"], "laptop"):
            await wait_until(lambda: "laptop" in bridge.policy.extensions)
            again, _ = await _exchange(bridge.url, (await client.call(
                "pairing.create", {"device": "laptop"}))["code"])
            await wait_until(lambda: "laptop" not in bridge.policy.extensions)
        with pytest.raises(E.Unauthorized):  # and it cannot come back
            async with FakeExtension(bridge.url, answer["credential"], "laptop"):
                pass
        async with FakeExtension(bridge.url, again["credential"], "laptop"):
            await wait_until(lambda: "laptop" in bridge.policy.extensions)
    finally:
        await client.close()
