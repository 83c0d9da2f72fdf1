"""Local files an agent touches (bridge/files.py, docs/security.md "Files"), against a real
loopback bridge with fake peers where a request is involved, no browser.

The break run's openings: a page that asks the agent to "attach your config" got the
bridge token through ``browser_file_upload``; and the MCP output directory was a fixed
shared /tmp path (0755, screenshots 0644) another local user could pre-create or link.
"""

from __future__ import annotations

import os
import stat
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from trustbridge.bridge import config, files
from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.mcp import Connection, build_server, devtools
from trustbridge.bridge.mcp.options import McpOptions, build_options
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.server import BridgeServer

from .fakes import FakeDriver, FakeExtension, FakePeer

Peers = Callable[..., Awaitable[FakePeer]]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private state directory with a bridge token in it; no XDG_RUNTIME_DIR."""
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    config.load_or_create_token()
    return tmp_path / "state"


def text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


@pytest.fixture
def mcp_with(bridge: BridgeServer) -> Callable[..., Any]:
    """``async with mcp_with(options) as mcp``: an in-process MCP client."""
    import contextlib

    @contextlib.asynccontextmanager
    async def open_(options: McpOptions) -> AsyncIterator[Client]:
        conn = Connection(url=bridge.url, token=bridge.token, embedded=False, options=options)
        try:
            async with Client(build_server(conn)) as client:
                yield client
        finally:
            await conn.close()
    return open_


async def test_upload_of_the_bridge_token_is_refused_naming_the_roots(
        home: Path, tmp_path: Path, peers: Peers, mcp_with: Callable[..., Any]) -> None:
    """The page asked for "your config": the token (directly, or through a link planted
    in an allowed root) is refused naming the roots, nothing reaches the peers; a file
    outside the roots is refused too; a file in the output directory or an
    --allowed-roots folder is given to the page."""
    out, docs = tmp_path / "out", tmp_path / "docs"
    out.mkdir()
    docs.mkdir()
    (out / "shot.png").write_bytes(b"x")
    (docs / "cv.pdf").write_bytes(b"x")
    (out / "link").symlink_to(home / "token")
    stray = tmp_path / "elsewhere.txt"
    stray.write_bytes(b"x")
    ext = await peers(FakeExtension)
    drv = await peers(FakeDriver)
    options = McpOptions(output_dir=out, allowed_roots=(docs,))
    async with mcp_with(options) as mcp:
        for path in (str(home / "token"), str(out / "link"), str(stray),
                     str(Path.home() / ".ssh" / "id_rsa")):
            refused = await mcp.call_tool("browser_file_upload", {"ref": "e5", "paths": [path]})
            shown = text(refused)
            assert refused.is_error and "Upload refused" in shown, shown
            assert str(out) in shown and str(docs) in shown, shown  # names the roots
        assert ext.methods() == [] and drv.methods() == []
        for path in (out / "shot.png", docs / "cv.pdf"):
            done = await mcp.call_tool("browser_file_upload", {"ref": "e5", "paths": [str(path)]})
            assert not done.is_error, text(done)
    uploads = [r.params["action"]["files"] for r in drv.requests if r.method == "driver.act"]
    assert uploads == [[str(out / "shot.png")], [str(docs / "cv.pdf")]]


async def test_unrestricted_file_access_still_never_uploads_the_state_directory(
        home: Path, tmp_path: Path, peers: Peers, mcp_with: Callable[..., Any]) -> None:
    stray = tmp_path / "elsewhere.txt"
    stray.write_bytes(b"x")
    await peers(FakeExtension)
    drv = await peers(FakeDriver)
    async with mcp_with(McpOptions(unrestricted_file_access=True)) as mcp:
        refused = await mcp.call_tool("browser_file_upload",
                                      {"ref": "e5", "paths": [str(home / "token")]})
        assert refused.is_error and "state directory" in text(refused)
        done = await mcp.call_tool("browser_file_upload", {"ref": "e5", "paths": [str(stray)]})
        assert not done.is_error, text(done)
    assert [r.method for r in drv.requests] == ["driver.act"]


async def test_the_bridge_refuses_an_upload_from_the_state_directory_from_any_client(
        home: Path, bridge: BridgeServer, peers: Peers) -> None:
    """A raw protocol client (or the SDK, or the CLI) sends the upload itself: the bridge
    refuses a state-directory file before anything is sent, in page.act and page.batch."""
    ext = await peers(FakeExtension)
    drv = await peers(FakeDriver)
    client = await BridgeClient.connect(bridge.url, bridge.token)
    try:
        upload = {"kind": "upload", "files": [str(home / "token")]}
        with pytest.raises(E.BadRequest) as refused:
            await client.call("page.act", {"ref": "e5", "action": upload})
        assert "state directory" in refused.value.message
        with pytest.raises(E.BadRequest):
            await client.call("page.batch", {"actions": [{"ref": "e5", "action": upload}]})
    finally:
        await client.close()
    assert ext.methods() == [] and drv.methods() == []


def test_allowed_roots_and_unrestricted_flags_parse(tmp_path: Path) -> None:
    options = build_options({"allowed_roots": f"{tmp_path / 'a'};{tmp_path / 'b'}",
                             "unrestricted_file_access": True}, env={})
    assert options.allowed_roots == (tmp_path / "a", tmp_path / "b")
    assert options.unrestricted_file_access is True
    assert options.embedded_kwargs()["allow_file_urls"] is True
    env = build_options({}, env={"PLAYWRIGHT_MCP_ALLOW_UNRESTRICTED_FILE_ACCESS": "true"})
    assert env.unrestricted_file_access is True


# -- the output directory ----------------------------------------------------------------


def test_the_default_output_directory_is_per_user_and_private(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert files.default_output_dir() == home / "mcp-output"
    assert not str(files.default_output_dir()).startswith("/tmp/trustbridge")
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert files.default_output_dir() == runtime / files.OUTPUT_DIR_NAME
    runtime.chmod(0o755)  # not a private runtime directory: not used
    assert files.default_output_dir() == home / "mcp-output"


async def test_saved_files_are_0600_in_a_0700_directory_and_a_planted_link_is_refused(
        home: Path, tmp_path: Path, bridge: BridgeServer, peers: Peers,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A screenshot saved to the default output directory: the directory 0700, the file
    0600. A directory another user planted as a symlink is refused, nothing written."""
    import base64

    import io

    from PIL import Image

    await peers(FakeExtension)
    drv = await peers(FakeDriver)
    raw = io.BytesIO()
    Image.new("RGB", (4, 4)).save(raw, format="PNG")
    drv.results["driver.screenshot"] = {
        "png": base64.b64encode(raw.getvalue()).decode(), "type": "png", "width": 4,
        "height": 4, "scale": 1, "clip": {"x": 0, "y": 0, "width": 4, "height": 4}}
    monkeypatch.setattr(devtools, "DEFAULT_OUTPUT_DIR", None)
    conn = Connection(url=bridge.url, token=bridge.token, embedded=False)
    try:
        async with Client(build_server(conn)) as mcp:
            saved = await mcp.call_tool("browser_take_screenshot", {"filename": "a.png"})
            assert not saved.is_error, text(saved)
            out = home / "mcp-output"
            assert stat.S_IMODE(out.stat().st_mode) == 0o700
            assert stat.S_IMODE((out / "a.png").stat().st_mode) == 0o600
            out.rename(tmp_path / "moved")
            (tmp_path / "attacker").mkdir()
            out.symlink_to(tmp_path / "attacker")
            refused = await mcp.call_tool("browser_take_screenshot", {"filename": "b.png"})
            assert refused.is_error and "link" in text(refused), text(refused)
            assert os.listdir(tmp_path / "attacker") == []
    finally:
        await conn.close()


# -- credentials in URLs -------------------------------------------------------------------

CRED_URL = "http://alice:hunter2pw@127.0.0.1:8000/app?x=1"


async def test_credentials_in_urls_are_redacted_from_results_errors_and_logs(
        bridge: BridgeServer, peers: Peers, mcp_with: Callable[..., Any],
        caplog: pytest.LogCaptureFixture) -> None:
    """browser_navigate to http://user:pw@host/ echoed the credentials. Every answer the
    bridge sends (navigate result, tab list, snapshot URL, an error's message) and the
    MCP text carry the URL with its user info replaced; the page still got the URL."""
    ext = await peers(FakeExtension)
    await peers(FakeDriver)
    ext.results["page.navigate"] = {"url": CRED_URL, "tabId": 1, "title": ""}
    ext.results["tabs.list"] = {"tabs": [{"tabId": 1, "url": CRED_URL, "title": "",
                                          "active": True}]}
    snap = dict(ext.results["page.snapshot"], url=CRED_URL,
                snapshot=f'- link "in" [ref=e1]:\n  - /url: {CRED_URL}')
    ext.results["page.snapshot"] = snap
    client = await BridgeClient.connect(bridge.url, bridge.token)
    try:
        answers = [await client.call("page.navigate", {"url": CRED_URL}),
                   await client.call("tabs.list", {}),
                   await client.call("page.snapshot", {})]
        ext.errors["page.wait"] = E.BadRequest(f"could not load {CRED_URL}", {"url": CRED_URL})
        with pytest.raises(E.BadRequest) as failed:
            await client.call("page.wait", {"ms": 1})
    finally:
        await client.close()
    sent = [r.params.get("url") for r in ext.requests if r.method == "page.navigate"]
    assert sent == [CRED_URL]  # the page gets what was asked
    for shown in (*map(repr, answers), failed.value.message, repr(failed.value.details)):
        assert "hunter2pw" not in shown and "alice" not in shown, shown
        assert "127.0.0.1:8000/app" in shown
    async with mcp_with(McpOptions()) as mcp:
        result = await mcp.call_tool("browser_navigate", {"url": CRED_URL})
        assert "hunter2pw" not in text(result) and "127.0.0.1:8000" in text(result)
    assert "hunter2pw" not in caplog.text
