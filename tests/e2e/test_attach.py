"""End to end: a person's own Chromium, paired by code and given trusted input by
``trustbridge attach --cdp`` (docs/attach.md, issue 17 item 3).

The test starts Debian's Chromium itself, as a person would: headless=new,
``--remote-debugging-port=0`` (Chromium picks a free port and writes it to
``DevToolsActivePort`` in the profile), a temporary ``--user-data-dir``, and a copy of the
built extension with NO config.json (``--load-extension`` / ``--disable-extensions-except``).
The test's own Playwright connection over the same DevTools endpoint plays the person: it
opens the options page, types the bridge URL and the code, and opens the test page. What
the page counted (``event.isTrusted``) is the evidence.

Chromium only: Firefox has no DevTools endpoint to attach to (docs/attach.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import secrets
import shutil
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.async_api import BrowserContext, Page, async_playwright

from trustbridge.bridge import pairing as P
from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.routing import RoutingPolicy
from trustbridge.bridge.server import BridgeServer
from trustbridge.supervisor.extension_copy import extension_source

from .conftest import Origins, ref_of, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

CHROMIUM = "/usr/bin/chromium"
DEVICE = "mine"
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Person:
    """The person's browser, the bridge it pairs with, and what the test watches."""

    server: BridgeServer
    client: BridgeClient
    chromium: asyncio.subprocess.Process
    cdp: str
    context: BrowserContext
    extension_id: str
    home: Path
    token_file: Path
    handshakes: list[str] = field(default_factory=list)
    """The Origin header of every WebSocket handshake the bridge saw."""

    async def options(self) -> Page:
        page = await self.context.new_page()
        await page.goto(f"chrome-extension://{self.extension_id}/options.html")
        await _until(page, "#current", "textContent", lambda v: v not in ("", "Reading…"))
        return page

    async def pair(self, page: Page, code: str) -> tuple[str, str]:
        """Type the URL and code as a person does; returns (status state, status text)."""
        await page.fill("#url", self.server.url)
        await page.fill("#code", code)
        await page.click("#submit")
        state = await _until(page, "#status", "data-state", lambda v: v in ("paired", "error"))
        return state, await page.locator("#status").inner_text()


async def _until(page: Page, css: str, what: str, ok, timeout_s: float = 30) -> str:
    """Poll an element's attribute (or ``textContent``) until ``ok(value)``; returns it.
    (Not wait_for_function: the extension page's CSP forbids evaluating a string.)"""
    element = page.locator(css)
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        value = (await element.text_content() if what == "textContent"
                 else await element.get_attribute(what)) or ""
        if ok(value):
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"{css} {what} stayed {value!r}")
        await asyncio.sleep(0.05)


def _unpacked_id(folder: Path) -> str:
    """Chromium's id of an extension loaded unpacked from ``folder``: the first 16 bytes of
    the SHA-256 of its absolute path, each hex digit written as a letter a-p."""
    digest = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:32]
    return "".join(chr(ord("a") + int(d, 16)) for d in digest)


def _free_of_config(folder: Path) -> None:
    assert not (folder / "config.json").exists(), "a person's copy has no config.json"


@pytest.fixture
async def person(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Person]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    monkeypatch.setenv("TRUSTBRIDGE_HOME", str(home))
    token = secrets.token_hex(16)
    token_file = home / "token"
    token_file.write_text(token + "\n")
    token_file.chmod(0o600)
    server = BridgeServer(token, host="127.0.0.1", port=0, policy=RoutingPolicy())
    handshakes: list[str] = []
    check = server._check_origin

    def counting(conn, request):  # type: ignore[no-untyped-def]
        handshakes.append(request.headers.get("Origin") or "")
        return check(conn, request)

    server._check_origin = counting  # type: ignore[method-assign]
    await server.start()
    ext = tmp_path / "extension"
    shutil.copytree(extension_source(), ext)
    _free_of_config(ext)
    profile = tmp_path / "profile"
    chromium = await asyncio.create_subprocess_exec(
        CHROMIUM, "--headless=new", "--remote-debugging-port=0",
        "--remote-debugging-address=127.0.0.1", f"--user-data-dir={profile}",
        f"--disable-extensions-except={ext}", f"--load-extension={ext}",
        "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
        "--disable-component-update", "--disable-sync",
        # As Playwright launches it (chromiumSandbox off): as root, the sandbox cannot start.
        "--no-sandbox", "about:blank",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True)
    pw = await async_playwright().start()
    client = None
    try:
        port_file = profile / "DevToolsActivePort"
        await wait_until(lambda: port_file.is_file() and port_file.read_text().strip() != "")
        cdp = f"http://127.0.0.1:{port_file.read_text().split()[0]}"
        browser = await pw.chromium.connect_over_cdp(cdp)
        context = browser.contexts[0]
        # Not read from the service worker's URL: unpaired, the worker may already be
        # stopped by Chromium's 30 s idle timer on a slow machine.
        extension_id = _unpacked_id(ext)
        client = await BridgeClient.connect(server.url, token)
        yield Person(server, client, chromium, cdp, context, extension_id, home, token_file,
                     handshakes)
    finally:
        if client is not None:
            await client.close()
        await pw.stop()  # the test's connection only; the browser is stopped below
        chromium.terminate()  # by its pid (the Debian wrapper execs the browser itself)
        try:
            await asyncio.wait_for(chromium.wait(), 10)
        except TimeoutError:
            chromium.kill()
            await chromium.wait()
        await server.stop()


async def _click(person: Person, tab: int) -> dict:
    snap = (await person.client.call("page.snapshot", {"tabId": tab}))["snapshot"]
    return await person.client.call(
        "page.act", {"tabId": tab, "ref": ref_of(snap, "button", "Count me"),
                     "action": {"kind": "click"}})


async def _counts(page: Page) -> tuple[int, int]:
    clicks, trusted = await page.evaluate("[window.clicks, window.trusted]")
    return clicks, trusted


async def _attach(person: Person) -> asyncio.subprocess.Process:
    """``trustbridge attach --cdp`` as a person runs it (no --device: the extension's
    stored pairing names it), once the bridge has its driver. A subprocess of this loop
    (the bridge runs in it too and must keep serving while the test waits)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "trustbridge", "attach", "--cdp", person.cdp,
        "--bridge", person.server.url, "--token-file", str(person.token_file),
        cwd=ROOT, env={**os.environ, "TRUSTBRIDGE_HOME": str(person.home)},
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    try:
        await wait_until(lambda: DEVICE in person.server.policy.drivers
                         or proc.returncode is not None, timeout_s=90)
    except BaseException:
        proc.kill()
        await proc.wait()
        raise
    if proc.returncode is not None:
        _, err = await proc.communicate()
        raise AssertionError(f"attach exited {proc.returncode}: {err.decode()}")
    return proc


async def test_paired_by_code_attached_over_cdp_trusted_then_unavailable(
        person: Person, origins: Origins) -> None:
    # Unpaired: the extension connects nowhere; its options page says so.
    options = await person.options()
    assert (await options.inner_text("#current")).startswith("Not paired")
    assert (await person.client.call("devices.list", {}))["devices"] == []

    # A wrong code is refused and nothing is stored, in the bridge or in the browser.
    made = await person.client.call("pairing.create", {"device": DEVICE})
    wrong = "ZZZZ-ZZZZ" if P.normalise_code(made["code"]) != "ZZZZZZZZ" else "YYYY-YYYY"
    state, text = await person.pair(options, wrong)
    assert state == "error" and "UNAUTHORIZED" in text, text
    assert not (person.home / P.FILE).exists()
    assert (await options.inner_text("#current")).startswith("Not paired")
    assert (await person.client.call("devices.list", {}))["devices"] == []
    ext_origin = f"chrome-extension://{person.extension_id}"
    # The one handshake from the extension so far is the options page's refused exchange:
    # the unpaired background never tried to connect.
    assert [o for o in person.handshakes if o.startswith("chrome-extension://")] == [ext_origin]

    # The right code pairs it; the background connects with the stored credential.
    state, text = await person.pair(options, made["code"])
    assert state == "paired" and DEVICE in text, text
    await wait_until(lambda: DEVICE in person.server.policy.extensions)
    assert (person.home / P.FILE).exists()
    await options.close()

    page = await person.context.new_page()
    await page.goto(f"{origins.main}/attach/page.html")
    tabs = (await person.client.call("tabs.list", {"device": DEVICE}))["tabs"]
    tab = next(t["tabId"] for t in tabs if t["url"].endswith("/attach/page.html"))
    # A person opened it in their own browser: a session acts there only once it claimed
    # the tab, and says it was a person's (docs/sessions.md).
    with pytest.raises(E.TabClaimed) as refused:
        await _click(person, tab)
    assert refused.value.person is True and await _counts(page) == (0, 0)
    claimed = await person.client.call("tabs.claim", {"device": DEVICE, "tabId": tab})
    assert claimed["person"] is True

    # No driver yet: the click is synthetic and says so; the page saw an untrusted click.
    result = await _click(person, tab)
    assert result["inputPath"] == "synthetic"
    assert await _counts(page) == (1, 0)

    # Attaching as another device is refused before any driver says hello: that
    # extension's refs would name frames the driver does not hold.
    # (A subprocess of this loop's own: the bridge in this loop keeps serving meanwhile.)
    other = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "trustbridge", "attach", "--cdp", person.cdp, "--device", "other",
        "--bridge", person.server.url, "--token-file", str(person.token_file),
        cwd=ROOT, env={**os.environ, "TRUSTBRIDGE_HOME": str(person.home)},
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    _, refused = await asyncio.wait_for(other.communicate(), 120)
    assert other.returncode == 1 and b"paired as device 'mine'" in refused, refused
    assert person.server.policy.drivers == {}
    assert person.chromium.returncode is None  # detaching left the browser running

    proc = await _attach(person)
    try:
        devices = {d["device"]: d for d in
                   (await person.client.call("devices.list", {}))["devices"]}
        assert devices[DEVICE]["driver"] and devices[DEVICE]["requiresTrustedInput"]
        result = await _click(person, tab)
        assert result["inputPath"] == "trusted"
        assert await _counts(page) == (2, 1)  # the page saw event.isTrusted === true
    finally:
        proc.send_signal(signal.SIGTERM)  # Ctrl-C's path: detach, leave the browser open
        try:
            _, err = await asyncio.wait_for(proc.communicate(), 30)
        except TimeoutError:
            proc.kill()
            _, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    assert b"attached: device mine" in err and b"detached; the browser stays open" in err
    await wait_until(lambda: DEVICE not in person.server.policy.drivers)

    # The driver is gone, the browser and its extension are not: input is refused, never
    # sent down the synthetic path, and the page counted nothing more.
    assert person.chromium.returncode is None
    assert DEVICE in person.server.policy.extensions
    with pytest.raises(E.TrustedInputUnavailable):
        await _click(person, tab)
    await asyncio.sleep(0)  # nothing was sent, so nothing can still be on its way
    assert await _counts(page) == (2, 1)
    with contextlib.suppress(Exception):
        await page.close()
