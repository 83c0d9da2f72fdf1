"""The CDP door (supervisor/cdp_flat.py, supervisor/cdp_proxy.py) against a fake
nested-mode browser session: flat ↔ nested translation, one answer per command, the
emulated browser-level auto-attach, and the loopback server's token checks."""

from __future__ import annotations

import asyncio
import json
import logging
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from trustbridge.supervisor.cdp_flat import (
    PARSE_ERROR,
    SESSION_NOT_FOUND,
    CdpError,
    FlatClient,
    cdp_error_message,
    matches,
)
from trustbridge.supervisor.cdp_proxy import CdpProxy


class FakeRoot:
    """A browser-level session in nested mode: attachToTarget announces the session
    (``Target.attachedToTarget``) before answering; everything else is recorded."""

    def __init__(self, targets: list[dict[str, Any]] | None = None) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.targets = targets or []
        self.client: FlatClient | None = None
        self.fail: dict[str, str] = {}
        self.gates: dict[str, asyncio.Event] = {}  # method → answered once set
        self._n = 0

    async def send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.sent.append((method, params))
        if method in self.fail:
            raise CdpError(self.fail[method])
        if method == "Target.attachToTarget":
            self._n += 1
            sid = f"S{self._n}"
            info = next((t for t in self.targets if t["targetId"] == params["targetId"]),
                        {"targetId": params["targetId"], "type": "page"})
            assert self.client is not None
            self.client.root_event("Target.attachedToTarget", {
                "sessionId": sid, "targetInfo": info, "waitingForDebugger": False})
            return {"sessionId": sid}
        if method == "Target.getTargets":
            return {"targetInfos": self.targets}
        if method == "Target.getTargetInfo":
            info = next((t for t in self.targets if t["targetId"] == params["targetId"]),
                        {"targetId": params["targetId"], "type": "page", "url": ""})
            return {"targetInfo": info}
        if method == "Browser.getVersion":
            return {"product": "Chrome/156"}
        if method in self.gates:
            await self.gates[method].wait()
        if method == "Target.createTarget":
            self._n += 1
            return {"targetId": f"N{self._n}"}
        if method == "Target.createBrowserContext":
            self._n += 1
            return {"browserContextId": f"X{self._n}"}
        return {}

    def inner(self, index: int = -1) -> dict[str, Any]:
        """The message the ``index``-th sendMessageToTarget carried (parsed)."""
        sends = [p for m, p in self.sent if m == "Target.sendMessageToTarget"]
        return {"sessionId": sends[index]["sessionId"],
                "message": json.loads(sends[index]["message"])}

    def from_target(self, session: str, message: dict[str, Any]) -> None:
        assert self.client is not None
        self.client.root_event("Target.receivedMessageFromTarget",
                               {"sessionId": session, "message": json.dumps(message)})


def make(targets: list[dict[str, Any]] | None = None) -> tuple[FlatClient, FakeRoot, list]:
    root, out = FakeRoot(targets), []
    client = FlatClient(root.send, out.append)
    root.client = client
    return client, root, out


async def cmd(client: FlatClient, **msg: Any) -> None:
    await client.command(json.dumps(msg))


async def attached(client: FlatClient, root: FakeRoot, out: list) -> str:
    await cmd(client, id=1, method="Target.attachToTarget",
              params={"targetId": "T1", "flatten": True})
    out.clear()
    return "S1"


async def test_attach_to_target_is_nested_and_announced_before_its_answer() -> None:
    client, root, out = make()
    await cmd(client, id=1, method="Target.attachToTarget",
              params={"targetId": "T1", "flatten": True})
    assert root.sent == [("Target.getTargetInfo", {"targetId": "T1"}),  # not the extension's
                         ("Target.attachToTarget", {"targetId": "T1", "flatten": False})]
    assert out[0]["method"] == "Target.attachedToTarget" and "sessionId" not in out[0]
    assert out[1] == {"id": 1, "result": {"sessionId": "S1"}}


async def test_a_session_command_is_wrapped_and_its_answer_unwrapped_once() -> None:
    client, root, out = make()
    sid = await attached(client, root, out)
    await cmd(client, id=5, sessionId=sid, method="Runtime.evaluate",
              params={"expression": "document.title"})
    sent = root.inner()
    assert sent["sessionId"] == sid
    assert sent["message"]["method"] == "Runtime.evaluate"
    assert sent["message"]["params"] == {"expression": "document.title"}
    reply = {"id": sent["message"]["id"], "result": {"result": {"value": "hi"}}}
    root.from_target(sid, reply)
    root.from_target(sid, reply)  # a repeat (or another client's id) answers nothing
    assert out == [{"id": 5, "sessionId": sid, "result": {"result": {"value": "hi"}}}]
    root.from_target(sid, {"method": "Page.loadEventFired", "params": {"timestamp": 1}})
    assert out[-1] == {"method": "Page.loadEventFired", "params": {"timestamp": 1},
                       "sessionId": sid}


async def test_a_child_session_goes_through_its_parent_and_back() -> None:
    client, root, out = make()
    sid = await attached(client, root, out)
    await cmd(client, id=6, sessionId=sid, method="Target.setAutoAttach",
              params={"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True})
    assert root.inner()["message"]["params"]["flatten"] is False
    root.from_target(sid, {"id": root.inner()["message"]["id"], "result": {}})
    # The page's iframe session, announced inside the page's messages.
    root.from_target(sid, {"method": "Target.attachedToTarget", "params": {
        "sessionId": "C1", "targetInfo": {"targetId": "F1", "type": "iframe"},
        "waitingForDebugger": True}})
    assert out[-1]["sessionId"] == sid and out[-1]["params"]["sessionId"] == "C1"
    assert client.parents["C1"] == sid
    await cmd(client, id=7, sessionId="C1", method="Runtime.runIfWaitingForDebugger")
    wrap = root.inner()
    assert wrap["sessionId"] == sid
    assert wrap["message"]["method"] == "Target.sendMessageToTarget"
    assert wrap["message"]["params"]["sessionId"] == "C1"
    carried = json.loads(wrap["message"]["params"]["message"])
    assert carried["method"] == "Runtime.runIfWaitingForDebugger"
    root.from_target(sid, {"id": wrap["message"]["id"], "result": {}})  # the wrapper's: not
    root.from_target(sid, {"method": "Target.receivedMessageFromTarget", "params": {
        "sessionId": "C1", "message": json.dumps({"id": carried["id"], "result": {}})}})
    root.from_target(sid, {"method": "Target.receivedMessageFromTarget", "params": {
        "sessionId": "C1", "message": json.dumps({"method": "Runtime.executionContextCreated",
                                                  "params": {}})}})
    assert out[-2:] == [{"id": 7, "sessionId": "C1", "result": {}},
                        {"method": "Runtime.executionContextCreated", "params": {},
                         "sessionId": "C1"}]
    assert [m.get("id") for m in out].count(7) == 1


async def test_a_failed_wrapper_answers_the_carried_command_once() -> None:
    client, root, out = make()
    sid = await attached(client, root, out)
    client.parents["C1"] = sid
    await cmd(client, id=8, sessionId="C1", method="Page.enable")
    wrap = root.inner()["message"]
    error = {"code": -32001, "message": "Session with given id not found."}
    root.from_target(sid, {"id": wrap["id"], "error": error})
    assert out == [{"id": 8, "sessionId": "C1", "error": error}]


async def test_a_detached_session_answers_its_waiting_commands_and_forgets_children() -> None:
    client, root, out = make()
    sid = await attached(client, root, out)
    client.parents["C1"] = sid
    await cmd(client, id=9, sessionId=sid, method="Page.navigate", params={"url": "x"})
    await cmd(client, id=10, sessionId="C1", method="Page.enable")
    client.root_event("Target.detachedFromTarget", {"sessionId": sid, "targetId": "T1"})
    answers = sorted((m["id"], "error" in m) for m in out if "id" in m)
    assert answers == [(9, True), (10, True)]
    assert out[-1] == {"method": "Target.detachedFromTarget",
                       "params": {"sessionId": sid, "targetId": "T1"}}
    assert client.parents == {}
    await cmd(client, id=11, sessionId="C1", method="Page.enable")
    assert out[-1]["error"]["code"] == SESSION_NOT_FOUND


async def test_browser_close_is_answered_and_never_sent() -> None:
    client, root, out = make()
    await cmd(client, id=3, method="Browser.close")
    assert out == [{"id": 3, "result": {}}] and client.closing
    assert root.sent == []


async def test_download_behaviour_stays_the_runtimes() -> None:
    client, root, out = make()
    await cmd(client, id=3, method="Browser.setDownloadBehavior",
              params={"behavior": "allowAndName", "downloadPath": "/tmp/x"})
    assert out == [{"id": 3, "result": {}}] and root.sent == []
    sid = await attached(client, root, out)
    root.sent.clear()
    await cmd(client, id=4, sessionId=sid, method="Page.setDownloadBehavior",
              params={"behavior": "allow", "downloadPath": "/tmp/x"})
    assert out == [{"id": 4, "sessionId": sid, "result": {}}] and root.sent == []
    # A context the client created is its own: its download behaviour is applied.
    await cmd(client, id=5, method="Target.createBrowserContext")
    context = out[-1]["result"]["browserContextId"]
    params = {"behavior": "allowAndName", "downloadPath": "/tmp/x",
              "browserContextId": context}
    await cmd(client, id=6, method="Browser.setDownloadBehavior", params=params)
    assert root.sent[-1] == ("Browser.setDownloadBehavior", params)


REFUSED_NOW = ("Browser.crash", "Browser.crashGpuProcess", "Tethering.bind",
               "Target.exposeDevToolsProtocol", "Target.sendMessageToTarget",
               "Extensions.uninstall")


async def test_commands_that_take_the_shared_browser_down_are_refused_on_every_session(
        ) -> None:
    client, root, out = make()
    sid = await attached(client, root, out)
    root.sent.clear()
    for n, method in enumerate(REFUSED_NOW):
        await cmd(client, id=20 + n, method=method, params={})
        await cmd(client, id=40 + n, sessionId=sid, method=method, params={})
    assert root.sent == []  # neither sent at the root nor carried to the page
    for n, method in enumerate(REFUSED_NOW):
        at_root, on_page = out[2 * n], out[2 * n + 1]
        assert at_root["id"] == 20 + n and "sessionId" not in at_root
        assert on_page["id"] == 40 + n and on_page["sessionId"] == sid
        for answer in (at_root, on_page):
            assert answer["error"]["message"].startswith(f"{method} is refused")
            assert "this connection stays open" in answer["error"]["message"]
    assert "every session's tabs" in out[0]["error"]["message"]
    # A renderer crash is one page's, and passes; the connection goes on.
    await cmd(client, id=60, sessionId=sid, method="Page.crash")
    assert root.inner()["message"]["method"] == "Page.crash"
    await cmd(client, id=61, method="Browser.getVersion")
    assert out[-1] == {"id": 61, "result": {"product": "Chrome/156"}}
    assert not client.closing


async def test_browser_close_on_a_page_session_ends_the_connection_and_is_not_sent() -> None:
    client, root, out = make()
    sid = await attached(client, root, out)
    root.sent.clear()
    await cmd(client, id=3, sessionId=sid, method="Browser.close")
    assert out == [{"id": 3, "sessionId": sid, "result": {}}] and client.closing
    assert root.sent == []


async def test_leaving_closes_what_the_client_created_and_not_what_it_attached() -> None:
    client, root, out = make()
    sid = await attached(client, root, out)  # the runtime's page T1: attached only
    await cmd(client, id=2, method="Target.createTarget", params={"url": "about:blank"})
    await cmd(client, id=3, method="Target.createTarget", params={"url": "about:blank"})
    await cmd(client, id=4, method="Target.createBrowserContext")
    made = [m["result"] for m in out if m.get("id") in (2, 3, 4)]
    first, second, context = made[0]["targetId"], made[1]["targetId"], \
        made[2]["browserContextId"]
    await cmd(client, id=5, method="Target.closeTarget", params={"targetId": first})
    root.sent.clear()
    await client.close()
    assert root.sent == [("Target.closeTarget", {"targetId": second}),
                         ("Target.disposeBrowserContext", {"browserContextId": context}),
                         ("Target.detachFromTarget", {"sessionId": sid})]
    assert client.own_targets == set() and client.own_contexts == set()


async def test_a_creation_still_running_when_the_client_leaves_is_closed_too() -> None:
    client, root, _out = make()
    root.gates["Target.createTarget"] = asyncio.Event()
    asking = asyncio.ensure_future(cmd(client, id=2, method="Target.createTarget",
                                       params={"url": "about:blank"}))
    for _ in range(5):
        await asyncio.sleep(0)
    asking.cancel()  # the connection ended: its command tasks are cancelled
    leaving = asyncio.ensure_future(client.close())
    await asyncio.sleep(0)
    assert not leaving.done()  # waits for the browser's answer
    root.gates["Target.createTarget"].set()
    await asyncio.wait_for(leaving, 5)
    assert root.sent[-1] == ("Target.closeTarget", {"targetId": "N1"})


async def test_garbage_gets_cdp_errors_and_the_client_goes_on() -> None:
    client, _root, out = make()
    await client.command("{not json")
    await client.command(json.dumps([1, 2]))
    await cmd(client, id=4, params={})
    await cmd(client, id=5, method="Page.enable", sessionId="nope")
    await cmd(client, id=6, method="Target.attachToBrowserTarget")
    assert out[0]["error"]["code"] == PARSE_ERROR
    assert out[1]["error"]["code"] == -32600
    assert out[2]["id"] == 4 and "error" in out[2]
    assert out[3]["id"] == 5 and out[3]["error"]["code"] == SESSION_NOT_FOUND
    assert out[4]["id"] == 6 and "error" in out[4]
    await cmd(client, id=7, method="Browser.getVersion")
    assert out[-1] == {"id": 7, "result": {"product": "Chrome/156"}}


async def test_a_root_error_is_the_commands_answer() -> None:
    client, root, out = make()
    root.fail["Target.attachToTarget"] = "No target with given id found"
    await cmd(client, id=2, method="Target.attachToTarget", params={"targetId": "X"})
    assert out == [{"id": 2, "error": {"code": -32000,
                                       "message": "No target with given id found"}}]


async def test_browser_level_auto_attach_is_emulated_with_the_filter() -> None:
    targets = [{"targetId": "P", "type": "page"}, {"targetId": "U", "type": "browser_ui"},
               {"targetId": "B", "type": "browser"}, {"targetId": "W", "type": "service_worker"}]
    client, root, out = make(targets)
    await cmd(client, id=2, method="Target.setAutoAttach",
              params={"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True})
    attaches = [p["targetId"] for m, p in root.sent if m == "Target.attachToTarget"]
    assert attaches == ["P", "W"]
    assert ("Target.setDiscoverTargets", {"discover": True}) in root.sent
    assert [m.get("method") for m in out] == ["Target.attachedToTarget"] * 2 + [None]
    assert out[-1] == {"id": 2, "result": {}}
    # Discovery is the proxy's own: not shown to a client that did not ask for it.
    root.targets.append({"targetId": "P2", "type": "page"})
    client.root_event("Target.targetCreated", {"targetInfo": root.targets[-1]})
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert not [m for m in out if m.get("method") == "Target.targetCreated"]
    assert out[-1]["method"] == "Target.attachedToTarget"
    assert out[-1]["params"]["targetInfo"]["targetId"] == "P2"


def test_filter_rule() -> None:
    assert matches([{"type": "page"}], "page")
    assert not matches([{"type": "page"}], "iframe")
    assert not matches([{"type": "page", "exclude": True}, {}], "page")
    assert matches([{"type": "page", "exclude": True}, {}], "worker")


def test_playwright_prefix_is_dropped() -> None:
    exc = Exception("CDPSession.send: Protocol error (Target.attachToTarget): No target")
    assert cdp_error_message(exc) == "No target"


async def test_close_detaches_what_the_client_attached() -> None:
    client, root, out = make()
    sid = await attached(client, root, out)
    await client.close()
    assert root.sent[-1] == ("Target.detachFromTarget", {"sessionId": sid})


# -- the loopback server -------------------------------------------------------------


class FakeCdpSession:
    def __init__(self) -> None:
        self.handlers: dict[str, Any] = {}
        self.detached = False

    def on(self, event: str, handler: Any) -> None:
        self.handlers[event] = handler

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return {"product": "Chrome/156", "method": method}

    async def detach(self) -> None:
        self.detached = True


class FakeBrowser:
    version = "156.0"

    def __init__(self) -> None:
        self.sessions: list[FakeCdpSession] = []

    def is_connected(self) -> bool:
        return True

    def on(self, _event: str, _handler: Any) -> None:
        pass

    async def new_browser_cdp_session(self) -> FakeCdpSession:
        self.sessions.append(FakeCdpSession())
        return self.sessions[-1]


@pytest.fixture
async def proxy():
    fake = FakeBrowser()
    p = CdpProxy(lambda: fake, "dev")
    p.fake = fake  # type: ignore[attr-defined]
    yield p
    await p.close()


async def test_the_token_is_required(proxy: CdpProxy) -> None:
    ep = await proxy.endpoint("agent-a")
    assert ep["url"].startswith("ws://127.0.0.1:") and ep["session"] == "agent-a"
    base = ep["url"].rsplit("/", 1)[0]
    for url in (base + "/", base + "/wrong-token", f"ws://127.0.0.1:{proxy.port}/"):
        with pytest.raises(InvalidStatus) as info:
            async with connect(url, proxy=None):
                pass
        assert info.value.response.status_code in (403, 404)
    with pytest.raises(InvalidStatus) as info:
        async with connect(base + "/wrong-token", proxy=None):
            pass
    assert info.value.response.status_code == 403
    with pytest.raises(InvalidStatus) as info:  # a web page's socket
        async with connect(ep["url"], proxy=None, origin="http://evil.example"):
            pass
    assert info.value.response.status_code == 403
    assert proxy.fake.sessions == []  # type: ignore[attr-defined]


async def test_a_repeated_host_header_is_a_400_without_a_traceback(
        proxy: CdpProxy, caplog: pytest.LogCaptureFixture) -> None:
    ep = await proxy.endpoint(None)
    path = ep["url"].split(f":{proxy.port}", 1)[1]
    here = f"127.0.0.1:{proxy.port}"

    async def status_of(*hosts: str) -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
        head = "".join(f"Host: {h}\r\n" for h in hosts)
        writer.write((f"GET {path} HTTP/1.1\r\n{head}Upgrade: websocket\r\n"
                      "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                      "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        await writer.drain()
        line = await asyncio.wait_for(reader.readline(), 10)
        writer.close()
        return line

    caplog.set_level(logging.DEBUG)
    assert (await status_of(here, "evil.example")).startswith(b"HTTP/1.1 400")
    assert (await status_of(here, here)).startswith(b"HTTP/1.1 400")
    assert (await status_of()).startswith(b"HTTP/1.1 400")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert proxy.fake.sessions == []  # type: ignore[attr-defined]
    assert (await status_of(here)).startswith(b"HTTP/1.1 101")  # the door still works


async def test_tokens_are_per_session_label(proxy: CdpProxy) -> None:
    a, again, b = [await proxy.endpoint(x) for x in ("a", "a", "b")]
    assert a["url"] == again["url"] and a["url"] != b["url"]


async def test_a_client_speaks_cdp_and_browser_close_ends_only_its_connection(
        proxy: CdpProxy) -> None:
    ep = await proxy.endpoint(None)
    async with connect(ep["url"], proxy=None) as ws:
        await ws.send(json.dumps({"id": 1, "method": "Browser.getVersion"}))
        assert json.loads(await ws.recv()) == {"id": 1, "result": {
            "product": "Chrome/156", "method": "Browser.getVersion"}}
        await ws.send("garbage")
        assert "error" in json.loads(await ws.recv())
        await ws.send(json.dumps({"id": 2, "method": "Browser.close"}))
        assert json.loads(await ws.recv()) == {"id": 2, "result": {}}
        with pytest.raises(ConnectionClosed):
            await asyncio.wait_for(ws.recv(), 10)
    fake = proxy.fake  # type: ignore[attr-defined]
    for _ in range(200):  # the server's cleanup runs after the close
        if fake.sessions[0].detached:
            break
        await asyncio.sleep(0.01)
    assert fake.sessions[0].detached
    async with connect(ep["url"], proxy=None) as ws:  # the door stays open for others
        await ws.send(json.dumps({"id": 1, "method": "Browser.getVersion"}))
        assert json.loads(await ws.recv())["id"] == 1


async def test_json_version_names_the_websocket(proxy: CdpProxy) -> None:
    ep = await proxy.endpoint(None)

    def get(url: str) -> tuple[int, Any]:
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as err:
            return err.code, None

    assert await asyncio.to_thread(get, ep["httpUrl"] + "/json/version/") == (
        200, {"Browser": "Chrome/156.0", "Protocol-Version": "1.3",
              "webSocketDebuggerUrl": ep["url"]})
    status, _ = await asyncio.to_thread(get, ep["httpUrl"][:-3] + "bad/json/version")
    assert status == 403


async def test_a_child_detached_at_the_root_goes_to_its_parent() -> None:
    client, root, out = make()
    sid = await attached(client, root, out)
    client.parents["C1"] = sid
    task = asyncio.ensure_future(cmd(client, id=12, method="Target.detachFromTarget",
                                     params={"sessionId": "C1"}))
    for _ in range(10):
        await asyncio.sleep(0)
    sent = root.inner()
    assert sent["sessionId"] == sid
    assert sent["message"]["method"] == "Target.detachFromTarget"
    assert sent["message"]["params"] == {"sessionId": "C1"}
    root.from_target(sid, {"id": sent["message"]["id"], "result": {}})
    await asyncio.wait_for(task, 5)
    assert out == [{"id": 12, "result": {}}]  # answered at the root, where it was asked


EXTENSION_SW = {"targetId": "SW", "type": "service_worker",
                "url": "chrome-extension://abcdefghijklmnopabcdefghijklmnop/background.js"}
EXTENSION_PAGE = {"targetId": "EP", "type": "page",
                  "url": "chrome-extension://abcdefghijklmnopabcdefghijklmnop/popup.html"}
WEB_PAGE = {"targetId": "P1", "type": "page", "url": "http://127.0.0.1:8000/"}


async def test_the_extensions_targets_are_never_attached_or_acted_on() -> None:
    """The break run attached to the extension's service worker through the door and
    read its config.json (the bridge token), and ended it with chrome.runtime.reload():
    no command naming an extension target is sent, auto-attach skips them, and the
    Extensions domain is refused; a web page attaches as before."""
    client, root, out = make([EXTENSION_SW, EXTENSION_PAGE, WEB_PAGE])
    for n, (method, target) in enumerate([
            ("Target.attachToTarget", "SW"), ("Target.attachToTarget", "EP"),
            ("Target.closeTarget", "SW"), ("Target.activateTarget", "EP"),
            ("Target.autoAttachRelated", "SW")]):
        await cmd(client, id=n + 1, method=method, params={"targetId": target})
        assert "the trustbridge extension's" in out[-1]["error"]["message"], out[-1]
    for n, method in enumerate(("Extensions.getStorageItems", "Extensions.loadUnpacked")):
        await cmd(client, id=20 + n, method=method, params={"id": "x", "storageArea": "local"})
        assert "Extensions domain" in out[-1]["error"]["message"]
    assert not [m for m, _ in root.sent if m != "Target.getTargetInfo"]
    await cmd(client, id=30, method="Target.setAutoAttach",
              params={"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True,
                      "filter": [{"type": "service_worker"}, {"type": "page"}]})
    attached_to = [p["targetId"] for m, p in root.sent if m == "Target.attachToTarget"]
    assert attached_to == ["P1"]


@pytest.mark.parametrize("url", ["file:///etc/passwd", "chrome://version/",
                                 "chrome-extension://abcdefghijklmnopabcdefghijklmnop/config.json",
                                 "view-source:http://127.0.0.1/", "javascript:alert(1)"])
async def test_create_target_and_navigate_refuse_what_the_bridge_would_not_load(
        url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRUSTBRIDGE_ALLOW_FILE_URLS", raising=False)
    client, root, out = make([WEB_PAGE])
    await cmd(client, id=1, method="Target.createTarget", params={"url": url})
    assert "is refused by the trustbridge CDP door" in out[-1]["error"]["message"], out[-1]
    sid = await attached(client, root, out)
    await cmd(client, id=2, sessionId=sid, method="Page.navigate", params={"url": url})
    assert "is refused by the trustbridge CDP door" in out[-1]["error"]["message"], out[-1]
    assert not [m for m, _ in root.sent if m in ("Target.createTarget",
                                                  "Target.sendMessageToTarget")]
    await cmd(client, id=3, method="Target.createTarget", params={"url": "about:blank"})
    await cmd(client, id=4, sessionId=sid, method="Page.navigate",
              params={"url": "http://127.0.0.1:8000/x"})
    assert [m for m, _ in root.sent if m in ("Target.createTarget",
                                             "Target.sendMessageToTarget")] == [
        "Target.createTarget", "Target.sendMessageToTarget"]


async def test_set_file_input_files_never_hands_a_page_the_state_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path / "state"))
    client, root, out = make([WEB_PAGE])
    sid = await attached(client, root, out)
    await cmd(client, id=2, sessionId=sid, method="DOM.setFileInputFiles",
              params={"files": [str(tmp_path / "state" / "token")], "nodeId": 3})
    assert "state directory" in out[-1]["error"]["message"], out[-1]
    assert not [m for m, _ in root.sent if m == "Target.sendMessageToTarget"]
