"""Remote devices without browsers (issue 36): device credentials (bridge/device_tokens.py),
the bridge's ``wss://`` listener (bridge/server.py ``TlsListener``), the device's relay
(supervisor/remote.py) and the refusals of the command lines. Real sockets on loopback,
a CA made per test; fake extension and driver peers (tests/bridge/fakes.py)."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import ssl
import stat
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from trustbridge.bridge import cli
from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.device_tokens import DeviceTokens
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import PROTOCOL_VERSION, Hello
from trustbridge.bridge.server import BridgeServer, TlsListener
from trustbridge.supervisor.__main__ import _url_refusal
from trustbridge.supervisor.remote import Relay, client_ssl_context
from tests.tlsca import make_ca

from .fakes import FakeDriver, FakeExtension, wait_until

CLICK = {"kind": "click"}


def _hello(role: str, device: str | None, token: str) -> Hello:
    return Hello(role=role, device=device, protocolVersion=PROTOCOL_VERSION, token=token)


# -- the credentials file ----------------------------------------------------------------


def test_a_device_credential_admits_its_own_driver_and_extension_only(tmp_path: Path) -> None:
    tokens = DeviceTokens(tmp_path / "device-tokens.json")
    credential = tokens.issue("lab-1")
    assert len(credential) == 64
    assert stat.S_IMODE((tmp_path / "device-tokens.json").stat().st_mode) == 0o600
    assert credential not in (tmp_path / "device-tokens.json").read_text()  # only its hash
    assert tokens.admits(_hello("driver", "lab-1", credential))
    assert tokens.admits(_hello("extension", "lab-1", credential))
    assert not tokens.admits(_hello("client", None, credential))
    assert not tokens.admits(_hello("driver", "lab-2", credential))
    assert not tokens.admits(_hello("driver", "lab-1", secrets.token_hex(32)))
    again = tokens.issue("lab-1")  # replaces it
    assert not tokens.admits(_hello("driver", "lab-1", credential))
    assert tokens.admits(_hello("driver", "lab-1", again))
    assert tokens.revoke("lab-1") and not tokens.revoke("lab-1")
    assert not tokens.admits(_hello("driver", "lab-1", again))


def test_a_device_name_is_checked(tmp_path: Path) -> None:
    tokens = DeviceTokens(tmp_path / "device-tokens.json")
    for bad in ("", "-x", "a b", "x" * 65, "../etc"):
        with pytest.raises(ValueError, match="not a device name"):
            tokens.issue(bad)


def test_a_running_bridge_sees_a_credential_issued_after_it_read_the_file(
        tmp_path: Path) -> None:
    """The CLI writes, the bridge reads: a second reader sees the first one's changes."""
    bridge_side = DeviceTokens(tmp_path / "device-tokens.json")
    assert bridge_side.records() == {}
    credential = DeviceTokens(tmp_path / "device-tokens.json").issue("late")
    assert bridge_side.admits(_hello("driver", "late", credential))
    DeviceTokens(tmp_path / "device-tokens.json").revoke("late")
    assert not bridge_side.admits(_hello("driver", "late", credential))


# -- command lines -----------------------------------------------------------------------


def test_tls_listen_needs_both_files_and_a_port(tmp_path: Path) -> None:
    cert, key = tmp_path / "c.pem", tmp_path / "k.pem"
    cert.write_text("x")
    key.write_text("x")
    assert cli.tls_listener(None, None, None) is None
    with pytest.raises(ValueError, match="needs --tls-cert and --tls-key"):
        cli.tls_listener("0.0.0.0:17843", str(cert), None)
    with pytest.raises(ValueError, match="go with --tls-listen"):
        cli.tls_listener(None, str(cert), str(key))
    with pytest.raises(ValueError, match="ADDR:PORT"):
        cli.tls_listener("0.0.0.0", str(cert), str(key))
    with pytest.raises(ValueError, match="cannot read"):
        cli.tls_listener("0.0.0.0:1", str(tmp_path / "missing.pem"), str(key))
    assert cli.tls_listener("[::]:17843", str(cert), str(key)) == TlsListener(
        "::", 17843, str(cert), str(key))


def test_a_device_never_sends_its_credential_over_plain_ws_to_another_machine() -> None:
    assert _url_refusal("ws://192.0.2.7:17831", None) is not None
    assert _url_refusal("ws://127.0.0.1:17831", "ca.pem") is not None  # CA without TLS
    assert _url_refusal("http://192.0.2.7", None) is not None
    assert _url_refusal("ws://127.0.0.1:17831", None) is None
    assert _url_refusal("wss://192.0.2.7:17843", "ca.pem") is None
    assert cli.main(["device", "--bridge", "ws://192.0.2.7:1", "--credential-file", "x",
                     "--name", "d"]) == 2


# -- through a real bridge with a TLS listener ---------------------------------------------


@dataclass
class Tls:
    server: BridgeServer
    tokens: DeviceTokens
    ctx: ssl.SSLContext
    ca: Path

    @property
    def url(self) -> str:
        assert self.server.remote_url is not None
        return self.server.remote_url


@pytest.fixture
async def tls(tmp_path: Path) -> AsyncIterator[Tls]:
    ca, cert, key = make_ca(tmp_path / "tls", ["127.0.0.1"])
    tokens = DeviceTokens(tmp_path / "device-tokens.json")
    server = BridgeServer(secrets.token_hex(16), port=0, device_tokens=tokens,
                          tls=TlsListener("127.0.0.1", 0, str(cert), str(key)))
    await server.start()
    try:
        yield Tls(server, tokens, client_ssl_context(str(ca)), ca)
    finally:
        await server.stop()


async def test_remote_device_joins_over_tls_and_its_promise_holds_when_its_driver_goes(
        tls: Tls) -> None:
    """A device credential admits the device's driver and extension over wss://;
    devices.list names it remote with its host and a latency; once its driver is gone a
    click is TRUSTED_INPUT_UNAVAILABLE and the extension gets no page.act (never
    synthetic, design.md §2)."""
    credential = tls.tokens.issue("far")
    ext = FakeExtension(tls.url, credential, "far", ssl_context=tls.ctx)
    drv = FakeDriver(tls.url, credential, "far", ssl_context=tls.ctx)
    async with contextlib.AsyncExitStack() as stack:
        for fake in (ext, drv):
            await stack.enter_async_context(fake)
        client = await BridgeClient.connect(tls.url, tls.server.token, ca_file=str(tls.ca))
        stack.push_async_callback(client.close)
        listed: list[dict] = []

        async def pinged() -> bool:  # the first keep-alive ping goes out after 2 s
            listed[:] = (await client.call("devices.list", {}))["devices"]
            return listed[0]["latencyMs"] is not None

        for _ in range(50):
            if await pinged():
                break
            await asyncio.sleep(0.2)
        assert len(listed) == 1
        far = listed[0]
        assert far["remote"] is True and far["host"] == "127.0.0.1"
        assert far["requiresTrustedInput"] is True and far["driver"] is True
        assert isinstance(far["latencyMs"], float) and far["latencyMs"] > 0
        await client.call("page.act", {"device": "far", "ref": "e7", "action": CLICK})
        assert [r.method for r in drv.requests] == ["driver.act"]
        await drv.close()
        await wait_until(lambda: "far" not in tls.server.policy.drivers)
        with pytest.raises(E.TrustedInputUnavailable):
            await client.call("page.act", {"device": "far", "ref": "e7", "action": CLICK})
        assert "page.act" not in [r.method for r in ext.requests]


async def test_a_device_credential_is_no_client_and_no_other_device(tls: Tls) -> None:
    credential = tls.tokens.issue("far")
    with pytest.raises(E.Unauthorized):
        await BridgeClient.connect(tls.url, credential, ca_file=str(tls.ca))
    with pytest.raises(E.Unauthorized):
        await FakeDriver(tls.url, credential, "near", ssl_context=tls.ctx).connect()
    with pytest.raises(E.Unauthorized):  # the loopback listener checks the same way
        await FakeDriver(tls.server.url, credential, "near").connect()


async def test_revoking_closes_the_device_connections_and_refuses_its_hellos(tls: Tls) -> None:
    credential = tls.tokens.issue("far")
    async with FakeDriver(tls.url, credential, "far", ssl_context=tls.ctx) as drv:
        DeviceTokens(tls.tokens.path).revoke("far")  # as `trustbridge device-token revoke`
        await wait_until(lambda: drv.closed, timeout_s=10)  # the next sweep (2 s)
        assert drv._ws is not None and drv._ws.close_code == 1008
    await wait_until(lambda: "far" not in tls.server.policy.drivers)
    with pytest.raises(E.Unauthorized):
        await FakeDriver(tls.url, credential, "far", ssl_context=tls.ctx).connect()


async def test_a_bridge_certificate_from_another_ca_is_refused(tls: Tls, tmp_path: Path) -> None:
    other_ca, _cert, _key = make_ca(tmp_path / "other", ["127.0.0.1"])
    with pytest.raises(E.DeviceNotConnected, match="certificate"):
        await BridgeClient.connect(tls.url, tls.server.token, ca_file=str(other_ca))
    with pytest.raises(ssl.SSLCertVerificationError):
        await FakeDriver(tls.url, "x" * 64, "far",
                         ssl_context=client_ssl_context(str(other_ca))).connect()


async def test_the_relay_carries_the_extension_and_refuses_web_pages(tls: Tls) -> None:
    """The device's relay: the extension's loopback ws:// reaches the bridge's wss://
    listener hello and all; a web page's origin gets 403 at the relay; a refused hello
    comes back refused."""
    credential = tls.tokens.issue("far")
    relay = Relay(tls.url, tls.ctx)
    await relay.start()
    try:
        async with FakeExtension(relay.url, credential, "far"):
            await wait_until(lambda: "far" in tls.server.policy.extensions)
            peer = tls.server.peers[tls.server.policy.extensions["far"]]
            assert peer.remote is True
        with pytest.raises(InvalidStatus) as page:
            async with connect(relay.url, origin="http://evil.example", proxy=None):  # type: ignore[arg-type]
                pass
        assert page.value.response.status_code == 403
        with pytest.raises(E.Unauthorized):
            await FakeExtension(relay.url, secrets.token_hex(32), "far").connect()
    finally:
        await relay.stop()


async def test_the_relay_closes_the_extension_when_the_bridge_is_unreachable(
        tls: Tls) -> None:
    relay = Relay("wss://127.0.0.1:1", tls.ctx)  # nothing listens there
    await relay.start()
    try:
        async with connect(relay.url, origin="chrome-extension://x", proxy=None) as ws:  # type: ignore[arg-type]
            with contextlib.suppress(Exception):
                await asyncio.wait_for(ws.recv(), 10)
            assert ws.close_code == 1011
    finally:
        await relay.stop()


async def test_an_mcp_session_started_on_a_device_acts_there_among_several(
        tls: Tls) -> None:
    """``trustbridge mcp --bridge wss://… --ca-file … --bridge-device NAME``: with two
    devices connected, the session's click goes to NAME's driver (without the flag: a
    BAD_REQUEST asking to name one, and nothing reaches either device)."""
    from mcp import Client

    from trustbridge.bridge.mcp import Session, build_server

    fakes = {}
    async with contextlib.AsyncExitStack() as stack:
        for name in ("far-a", "far-b"):
            credential = tls.tokens.issue(name)
            for cls in (FakeExtension, FakeDriver):
                fakes[name, cls.role] = await stack.enter_async_context(
                    cls(tls.url, credential, name, ssl_context=tls.ctx))
        for device, expect_error in ((None, True), ("far-b", False)):
            session = Session(url=tls.url, token=tls.server.token, embedded=False,
                              ca_file=str(tls.ca), device=device)
            try:
                async with Client(build_server(session)) as mcp:
                    result = await mcp.call_tool("browser_click", {"ref": "e7"})
            finally:
                await session.close()
            said = "\n".join(c.text for c in result.content if c.type == "text")
            assert result.is_error is expect_error, said
        assert [r.method for r in fakes["far-b", "driver"].requests] == ["driver.act"]
        assert fakes["far-a", "driver"].requests == []


async def test_a_tls_listener_that_cannot_open_says_so_and_nothing_listens(
        tmp_path: Path) -> None:
    """A key that does not match the certificate is a clear BAD_REQUEST naming the
    listener, not an OSError the caller would take for a taken loopback port."""
    _ca, cert, _key = make_ca(tmp_path / "a", ["127.0.0.1"])
    _ca2, _cert2, other_key = make_ca(tmp_path / "b", ["127.0.0.1"])
    server = BridgeServer(secrets.token_hex(16), port=0,
                          tls=TlsListener("127.0.0.1", 0, str(cert), str(other_key)))
    with pytest.raises(E.BadRequest, match="wss:// listener"):
        await server.start()
    assert server._server is None
    await server.stop()


async def test_a_remote_driver_gone_silent_mid_click_is_uncertain_and_not_replayed(
        tls: Tls) -> None:
    """A cut link looks like silence, not a close: the driver got the click and then reads
    nothing more (its transport paused, so it answers no ping). The bridge drops it after
    its unanswered pings on the wss:// listener and the click answers
    BROWSER_OPERATION_UNCERTAIN as *disconnected* (not after the action's own timeout);
    the driver got it once, and a driver that comes back gets nothing again."""
    credential = tls.tokens.issue("far")
    async with contextlib.AsyncExitStack() as stack:
        ext = await stack.enter_async_context(
            FakeExtension(tls.url, credential, "far", ssl_context=tls.ctx))
        drv = await stack.enter_async_context(
            FakeDriver(tls.url, credential, "far", ssl_context=tls.ctx))
        drv.delays["driver.act"] = 60.0  # it would answer long after the action's timeout
        client = await BridgeClient.connect(tls.url, tls.server.token, ca_file=str(tls.ca))
        stack.push_async_callback(client.close)
        click = asyncio.create_task(client.call(
            "page.act", {"device": "far", "ref": "e7", "action": CLICK, "timeoutMs": 20_000}))
        await drv.wait_for_request("driver.act")
        assert drv._ws is not None
        drv._ws.transport.pause_reading()  # the cable is pulled: nothing more arrives
        with pytest.raises(E.BrowserOperationUncertain, match="disconnected during driver.act"):
            await click
        await wait_until(lambda: "far" not in tls.server.policy.drivers)
        drv._ws.transport.abort()  # its own close would wait 10 s for a handshake
        again = await stack.enter_async_context(
            FakeDriver(tls.url, credential, "far", ssl_context=tls.ctx))
        await wait_until(lambda: "far" in tls.server.policy.drivers)
        await asyncio.sleep(1)
        assert again.requests == [] and [r.method for r in drv.requests] == ["driver.act"]
        assert "page.act" not in ext.methods()


def test_doctor_says_where_each_device_is_and_its_latency() -> None:
    base = {"extension": True, "driver": True, "requiresTrustedInput": True,
            "browser": "Chromium 140", "capabilities": {}}
    out = cli._human("doctor", {"devices": [
        {**base, "device": "far", "host": "10.0.0.7", "remote": True, "latencyMs": 1.5},
        {**base, "device": "near", "host": "127.0.0.1", "remote": False, "latencyMs": 0.2},
        {**base, "device": "lost", "host": "10.0.0.8", "remote": True, "latencyMs": None}]})
    assert "device far:" in out and "remote host 10.0.0.7, latency 1.5 ms" in out
    assert "local host 127.0.0.1, latency 0.2 ms" in out
    assert "remote host 10.0.0.8, latency unknown (no pong)" in out


def test_a_device_with_an_unreadable_ca_file_exits_2_saying_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    credential = tmp_path / "cred"
    credential.write_text("x" * 64)
    bad = tmp_path / "ca.pem"
    bad.write_text("not a certificate")
    for ca in (str(bad), str(tmp_path / "missing.pem")):
        with pytest.raises(SystemExit) as done:
            cli.main(["device", "--bridge", "wss://192.0.2.7:17843", "--credential-file",
                      str(credential), "--ca-file", ca, "--name", "d"])
        assert done.value.code == 2
        assert "not a readable PEM CA file" in capsys.readouterr().err
