"""``trustbridge mcp --http PORT`` (bridge/mcp/http.py, bridge/cli.py) over real HTTP on
127.0.0.1: no request reaches a tool without ``Authorization: Bearer <token>``, and no
web page origin gets in even with it. ``--no-embedded``: no bridge, no browser (tools/list
needs neither)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

REPO = Path(__file__).resolve().parents[2]
STEP_S = 15.0
"""Upper bound, seconds, on the server starting or answering."""

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "test", "version": "0"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@asynccontextmanager
async def http_server(home: Path, *args: str) -> AsyncIterator[tuple[str, Path]]:
    """``trustbridge mcp --http PORT --no-embedded ARGS`` with state directory ``home``;
    yields its URL once it accepts connections, and the file its stderr went to."""
    port = _free_port()
    errlog = home / "stderr.log"
    with errlog.open("w") as err:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "trustbridge", "mcp", "--http", str(port), "--no-embedded",
            *args, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=err, cwd=str(REPO), env=dict(os.environ, TRUSTBRIDGE_HOME=str(home)))
    try:
        async with asyncio.timeout(STEP_S):
            while True:
                assert proc.returncode is None, errlog.read_text()
                try:
                    _, writer = await asyncio.open_connection("127.0.0.1", port)
                    writer.close()
                    break
                except OSError:
                    await asyncio.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp", errlog
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), STEP_S)
            except TimeoutError:
                proc.kill()
                await proc.wait()


async def _post(url: str, **headers: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=STEP_S, trust_env=False) as http:
        return await http.post(url, json=INITIALIZE, headers={**MCP_HEADERS, **headers})


async def _tool_names(url: str, token: str) -> set[str]:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                  timeout=STEP_S, trust_env=False) as http, \
            Client(streamable_http_client(url, http_client=http)) as client:
        return {t.name for t in (await client.list_tools()).tools}


async def test_own_token_is_required_and_printed_with_a_client_config(tmp_path: Path) -> None:
    """Default: a token of the server's own, 0600 in the state directory and printed once
    with a client config holding it; no token or a wrong one → 401 (no tool reached),
    the right one → tools/list works; the bridge token is not accepted."""
    bridge_token = "b" * 64
    (tmp_path / "token").write_text(bridge_token + "\n")
    async with http_server(tmp_path) as (url, errlog):
        token_file = tmp_path / "mcp-http-token"
        token = token_file.read_text().strip()
        assert re.fullmatch(r"[0-9a-f]{64}", token)
        assert token_file.stat().st_mode & 0o777 == 0o600

        for headers in ({}, {"Authorization": "Bearer " + "0" * 64},
                        {"Authorization": f"Bearer {token}x"}, {"Authorization": token},
                        {"Authorization": f"Bearer {bridge_token}"}):
            refused = await _post(url, **headers)
            assert refused.status_code == 401, headers
            assert refused.headers["www-authenticate"].startswith("Bearer")
            assert "serverInfo" not in refused.text

        assert "browser_click" in await _tool_names(url, token)

        printed = errlog.read_text()
        assert printed.count(token) == 2, printed  # the token line and the config
        config = json.loads(printed[printed.index("{"):printed.rindex("}") + 1])
        server = config["mcpServers"]["trustbridge"]
        assert server == {"url": url, "headers": {"Authorization": f"Bearer {token}"}}
    async with http_server(tmp_path) as (_url, _errlog):
        assert (tmp_path / "mcp-http-token").read_text().strip() == token  # kept across starts


async def test_web_origins_are_refused_even_with_the_token(tmp_path: Path) -> None:
    """A request with an ``Origin`` header (a web page, including one served from
    127.0.0.1) gets 403 with the right token; without the token, 401."""
    async with http_server(tmp_path) as (url, _errlog):
        token = (tmp_path / "mcp-http-token").read_text().strip()
        auth = f"Bearer {token}"
        for origin in ("https://evil.example", "http://127.0.0.1:8765", "null"):
            assert (await _post(url, Authorization=auth, Origin=origin)).status_code == 403
        assert (await _post(url, Origin="https://evil.example")).status_code == 401
        ok = await _post(url, Authorization=auth)
        assert ok.status_code == 200 and "serverInfo" in ok.text


async def test_token_file_option_uses_that_token(tmp_path: Path) -> None:
    """``--http-token-file PATH`` (e.g. the bridge token): that token and no other."""
    bridge_token = "c" * 64
    path = tmp_path / "token"
    path.write_text(bridge_token + "\n")
    async with http_server(tmp_path, "--http-token-file", str(path)) as (url, _errlog):
        assert not (tmp_path / "mcp-http-token").exists()
        assert "browser_snapshot" in await _tool_names(url, bridge_token)
        assert (await _post(url)).status_code == 401


async def test_token_file_that_is_missing_or_empty_is_refused(tmp_path: Path) -> None:
    """A missing or empty ``--http-token-file`` ends the command with exit 2 and the
    reason, before it listens."""
    empty = tmp_path / "empty"
    empty.write_text("\n")
    for path in (tmp_path / "absent", empty):
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "trustbridge", "mcp", "--http", str(_free_port()),
            "--no-embedded", "--http-token-file", str(path),
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE, cwd=str(REPO),
            env=dict(os.environ, TRUSTBRIDGE_HOME=str(tmp_path)))
        _out, err = await asyncio.wait_for(proc.communicate(), STEP_S)
        assert proc.returncode == 2, err
        assert str(path) in err.decode()
