"""``trustbridge mcp`` with Playwright MCP's launch options, as an MCP client runs it: the
``mcp`` client library spawns ``python -m trustbridge mcp <flags>`` over stdio, with its own
state directory, so the server starts its own bridge and headless browser with those
options. Every check reads what the page itself saw (innerWidth, its requests, its
localStorage, the click's isTrusted) through the tools.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from trustbridge.bridge.mcp.server import TOOLS

REPO = Path(__file__).resolve().parents[2]
FIREFOX_MISSING = not (shutil.which("firefox-esr") or os.environ.get("TRUSTBRIDGE_FIREFOX"))
BROWSERS = (
    pytest.param("chromium", id="chromium"),
    pytest.param("firefox", id="firefox", marks=[
        pytest.mark.firefox,
        pytest.mark.skipif(FIREFOX_MISSING,
                           reason="Firefox ESR is not installed (apt-get install firefox-esr)")]),
)
"""The browsers ``--browser`` runs here (Camoufox's binary cannot be fetched on this
machine; its launch path is covered offline in tests/supervisor/test_launch_options.py)."""
VISION_TOOLS = {"browser_mouse_click_xy", "browser_mouse_move_xy", "browser_mouse_drag_xy"}
"""Playwright MCP's ``--caps vision`` tools (its README) that trustbridge lists too."""


@asynccontextmanager
async def mcp_server(home: Path, *flags: str, **env: str) -> AsyncIterator[Client]:
    """``trustbridge mcp --bridge-port 0 <flags>`` over stdio with state directory ``home``
    (and ``env`` on top of ours); its stderr goes to ``home/stderr.log``."""
    home.mkdir(parents=True, exist_ok=True)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "trustbridge", "mcp", "--bridge-port", "0", *flags],
        env=dict(os.environ, TRUSTBRIDGE_HOME=str(home), **env), cwd=str(REPO))
    errlog = await asyncio.to_thread(open, home / "stderr.log", "w")
    try:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as client:
            yield client
    finally:
        errlog.close()


def _text(result) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


async def _call(client: Client, tool: str, args: dict) -> str:
    result = await client.call_tool(tool, args)
    assert not result.is_error, f"{tool} {args}: {_text(result)}"
    return _text(result)


async def _evaluate(client: Client, function: str) -> object:
    """The JSON value ``function`` returned in the page (browser_evaluate)."""
    text = await _call(client, "browser_evaluate", {"function": function})
    return json.JSONDecoder().raw_decode(text.split("it returned:\n", 1)[1])[0]


def _ref(text: str, role: str, name: str) -> str:
    found = re.findall(rf'- {re.escape(role)} "{re.escape(name)}"[^\n]*?\[ref=((?:f\d+)?e\d+)\]',
                       text)
    assert len(found) == 1, f"expected one {role} {name!r} in:\n{text}"
    return found[0]


async def _status(client: Client, contains: str) -> str:
    """The page's status line once it contains ``contains`` (browser_wait_for, then read)."""
    await _call(client, "browser_wait_for", {"text": contains})
    return str(await _evaluate(client, "() => document.querySelector('[role=status]').textContent"))


@pytest.mark.parametrize("browser", BROWSERS)
async def test_viewport_size_sets_the_pages_inner_size(tmp_path: Path, origins,
                                                       browser: str) -> None:
    """--viewport-size 800x600: the page's innerWidth is 800 and innerHeight 600. And
    browser_evaluate without a world, as a Playwright MCP client sends it, reads the page's
    own globals (window.app.state)."""
    async with mcp_server(tmp_path, "--browser", browser, "--viewport-size", "800x600") as client:
        await _call(client, "browser_navigate", {"url": f"{origins.main}/mcp_cli/storage.html"})
        assert await _evaluate(client, "() => [innerWidth, innerHeight]") == [800, 600]
        assert await _evaluate(client, "() => window.app.state") == {"page": "storage"}


async def test_caps_vision_lists_the_vision_tools_only_when_asked(tmp_path: Path) -> None:
    """--caps vision lists every tool of cap vision (Playwright MCP's coordinate tools);
    without it none of them is listed."""
    vision = {t.name for t in TOOLS if t.cap == "vision"}
    assert VISION_TOOLS <= vision, f"vision tools registered: {sorted(vision)}"
    async with mcp_server(tmp_path / "plain", "--no-embedded") as client:
        plain = {t.name for t in (await client.list_tools()).tools}
    async with mcp_server(tmp_path / "vision", "--no-embedded", "--caps", "vision") as client:
        with_vision = {t.name for t in (await client.list_tools()).tools}
    assert not plain & vision
    assert vision <= with_vision
    assert with_vision - vision == plain


@pytest.mark.parametrize("browser", BROWSERS)
async def test_blocked_origins_fail_in_the_page_and_others_load(tmp_path: Path, origins,
                                                                browser: str) -> None:
    """--blocked-origins http://localhost:*: the page's request to that origin fails in the
    page while its same-origin request loads; navigating there is refused."""
    async with mcp_server(tmp_path, "--browser", browser,
                          "--blocked-origins", "http://localhost:*") as client:
        page = f"{origins.main}/mcp_cli/origins.html?other={origins.other}"
        await _call(client, "browser_navigate", {"url": page})
        status = await _status(client, "other origin")
        assert status == "same origin loaded; other origin failed: TypeError", status
        nav = await client.call_tool("browser_navigate",
                                     {"url": f"{origins.other}/mcp_cli/storage.html"})
        assert nav.is_error and "Navigation failed" in _text(nav), _text(nav)
    assert "blocked a navigation" in (tmp_path / "stderr.log").read_text()


async def test_without_origin_lists_both_origins_load(tmp_path: Path, origins) -> None:
    """Without --blocked-origins the same page loads both origins (the check above can
    fail)."""
    async with mcp_server(tmp_path) as client:
        await _call(client, "browser_navigate",
                    {"url": f"{origins.main}/mcp_cli/origins.html?other={origins.other}"})
        assert await _status(client, "other origin") == "same origin loaded; other origin loaded"


@pytest.mark.parametrize("browser", BROWSERS)
async def test_user_data_dir_keeps_local_storage_across_runs(tmp_path: Path, origins,
                                                             browser: str) -> None:
    """--user-data-dir DIR: a visit stored by a trusted click in one server run is in the
    page's localStorage in the next run; without it (isolated) the next run starts empty."""
    profile = tmp_path / "profile"
    url = f"{origins.main}/mcp_cli/storage.html"
    for run in (1, 2):
        async with mcp_server(tmp_path / f"run{run}", "--browser", browser,
                              "--user-data-dir", str(profile)) as client:
            snap = await _call(client, "browser_navigate", {"url": url})
            assert f"stored visits={run - 1} at load" in snap, snap
            await _call(client, "browser_click",
                        {"element": "Save visit", "ref": _ref(snap, "button", "Save visit")})
            assert await _status(client, "after click") == f"stored visits={run} after click"
    async with mcp_server(tmp_path / "isolated", "--browser", browser, "--isolated") as client:
        snap = await _call(client, "browser_navigate", {"url": url})
        assert "stored visits=0 at load" in snap, snap


@pytest.mark.firefox
@pytest.mark.skipif(FIREFOX_MISSING, reason="Firefox ESR is not installed (apt-get install "
                    "firefox-esr)")
async def test_browser_firefox_navigates_and_clicks_trusted(tmp_path: Path, origins) -> None:
    """--browser firefox, one line: Firefox ESR loads the page and a browser_click reaches
    it with isTrusted true."""
    async with mcp_server(tmp_path, "--browser", "firefox") as client:
        snap = await _call(client, "browser_navigate", {"url": f"{origins.main}/mcp.html"})
        await _call(client, "browser_click",
                    {"element": "Record", "ref": _ref(snap, "button", "Record")})
        assert (await _status(client, "click isTrusted")).startswith("click isTrusted=true")
        agent = await _evaluate(client, "() => navigator.userAgent")
        assert "Firefox/" in str(agent), agent


async def test_the_browser_starts_while_the_client_initializes(tmp_path: Path, origins) -> None:
    """With no bridge running, `trustbridge mcp` starts its browser as soon as the client
    connects, before any tool call (the start overlaps the client's initialize and
    tools/list): the state directory gets the embedded bridge's endpoint with no call
    made, and the first browser_navigate then loads the page."""
    async with mcp_server(tmp_path, "--browser", "chromium") as client:
        endpoint = tmp_path / "endpoint.json"
        for _ in range(1200):  # up to 120 s: a loaded machine starts Chromium slowly
            if endpoint.exists():
                break
            await asyncio.sleep(0.1)
        assert endpoint.exists(), (tmp_path / "stderr.log").read_text()
        snap = await _call(client, "browser_navigate", {"url": f"{origins.main}/mcp.html"})
        assert 'button "Record"' in snap


def hide_camoufox_package(folder: Path) -> str:
    """A PYTHONPATH under which ``import camoufox`` fails as in an install without the
    ``camoufox`` extra (a sitecustomize sets ``sys.modules["camoufox"] = None``); the
    worktree's own entries follow it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text('import sys\nsys.modules["camoufox"] = None\n')
    return os.pathsep.join([str(folder), str(REPO), os.environ.get("PYTHONPATH", "")])


async def test_browser_camoufox_without_the_extra_says_how_to_add_it(tmp_path: Path) -> None:
    """--browser camoufox where the camoufox package (an optional extra) is absent: the
    first tool call fails with DEVICE_NOT_CONNECTED naming `pip install
    'trustbridge[camoufox]'` and the fetch after it (not a ModuleNotFoundError); the
    server stays up."""
    async with mcp_server(tmp_path, "--browser", "camoufox",
                          PYTHONPATH=hide_camoufox_package(tmp_path / "site")) as client:
        nav = await client.call_tool("browser_navigate", {"url": "http://127.0.0.1:9/"})
        text = _text(nav)
        assert nav.is_error and "DEVICE_NOT_CONNECTED" in text, text
        assert "pip install 'trustbridge[camoufox]'" in text, text
        assert "python -m camoufox fetch" in text and "No module named" not in text, text
        assert {t.name for t in (await client.list_tools()).tools}  # still serving


async def test_browser_camoufox_without_its_binary_says_how_to_get_it(tmp_path: Path) -> None:
    """--browser camoufox with no Camoufox binary: the first tool call fails with
    DEVICE_NOT_CONNECTED naming the missing binary and the fetch command; the server stays up."""
    missing = tmp_path / "no-camoufox" / "camoufox-bin"
    async with mcp_server(tmp_path, "--browser", "camoufox",
                          TRUSTBRIDGE_CAMOUFOX=str(missing)) as client:
        nav = await client.call_tool("browser_navigate", {"url": "http://127.0.0.1:9/"})
        text = _text(nav)
        assert nav.is_error and "DEVICE_NOT_CONNECTED" in text, text
        assert f"No Camoufox binary at {missing}" in text and "python -m camoufox fetch" in text
        assert "camoufox could not be started" in text  # the next step names the cause
        assert {t.name for t in (await client.list_tools()).tools}  # still serving
