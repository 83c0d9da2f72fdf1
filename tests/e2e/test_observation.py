"""Observation end to end (issue 4): the snapshot, live refs and document fencing.

Pages: tests/e2e/pages/obs_*.html. Every test checks what the page itself recorded
(``event.isTrusted``, values, its own status text) next to what the tool answered.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import secrets
import threading
import time
from collections.abc import AsyncIterator, Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.routing import RoutingPolicy
from trustbridge.bridge.server import BridgeServer
from trustbridge.supervisor.runner import Supervisor

from .conftest import PAGES, Origins, Stack, ref_of, wait_until

pytestmark = pytest.mark.browser

SECRETS = {
    "Password": "hunter2-Secret!pw",
    "One-time code": "493817",
    "Card number": "4111111111111111",
    "Security": "7q3",  # name="cvv"; not all digits, so no tab id can contain it by chance
    "API key": "sk_live_abcdef123456",  # name="api_token"
}


# -- helpers ----------------------------------------------------------------------------


async def _open(stack: Stack, origins: Origins, query: str = "", frames: bool = False) -> dict:
    """Load obs_main.html; with ``frames``, wait until all three nested frames show."""
    other = f"other={origins.other_port}&" if frames else ""
    await stack.client.call("page.navigate", {"url": f"{origins.main}/obs_main.html?{other}{query}"})
    for _ in range(200):
        res = await _snap(stack)
        if not frames or "Frame 3 button" in res["snapshot"]:
            return res
        await asyncio.sleep(0.05)
    raise AssertionError("the nested frames never appeared:\n" + res["snapshot"])


async def _snap(stack: Stack, **params: object) -> dict:
    return await stack.client.call("page.snapshot", params)


async def _events(stack: Stack, frame=None) -> list[dict]:
    return await (frame or stack.page).evaluate("window.__events")


async def _status(stack: Stack) -> str:
    return await stack.page.locator("#status").text_content()


def _line(snapshot: str, role: str, name: str) -> str:
    found = [ln for ln in snapshot.splitlines() if re.match(rf'\s*- {role} "{re.escape(name)}"', ln)]
    assert len(found) == 1, f"expected one {role} {name!r} in:\n{snapshot}"
    return found[0]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _pages(first: dict) -> list[str]:
    """Lines of a paged snapshot without the trailer lines."""
    return [ln for ln in first["snapshot"].splitlines() if not ln.startswith("# truncated")]


@pytest.fixture(scope="module")
def slow_origin() -> Iterator[str]:
    """A third loopback origin serving the pages; a request with ``slow=1`` is answered
    after 4 s, so a navigation to it stays pending."""

    class Slow(SimpleHTTPRequestHandler):
        def do_GET(self) -> None:
            if "slow=1" in self.path:
                time.sleep(4)
            super().do_GET()

        def log_message(self, *args: object) -> None:
            pass

    class Server(ThreadingHTTPServer):
        def handle_error(self, *args: object) -> None:  # a browser that hung up early
            pass

    server = Server(("127.0.0.1", 0), partial(Slow, directory=str(PAGES)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
async def synthetic_stack() -> AsyncIterator[Stack]:
    """Chromium with the extension and no input driver: the device never asked for
    trusted input, so actions take the extension's synthetic path (labelled so)."""
    token = secrets.token_hex(16)
    device = "chromium-synthetic"
    server = BridgeServer(token, port=0, policy=RoutingPolicy())
    await server.start()
    sup = Supervisor(server.url, token, device, trusted_input=False)
    try:
        await sup.start()
        await wait_until(lambda: device in server.policy.extensions)
        client = await BridgeClient.connect(server.url, token)
        try:
            yield Stack(server, sup, client, device)
        finally:
            await client.close()
    finally:
        await sup.stop()
        await server.stop()


# -- the outline -------------------------------------------------------------------------


async def test_outline_roles_names_states_landmarks_links(stack: Stack, origins: Origins) -> None:
    """Roles, accessible names, states, values, landmarks/groups nesting and full link
    URLs are printed as an agent needs them to find a target by role + name (+ within)."""
    snap = (await _open(stack, origins))["snapshot"]
    assert "[disabled]" in _line(snap, "button", "Disabled action")
    assert "[checked] [required]" in _line(snap, "checkbox", "I agree")
    assert "[pressed]" in _line(snap, "button", "Bold")
    assert "[expanded]" in _line(snap, "button", "Menu")
    assert "[selected]" in _line(snap, "option", "Apple")
    assert "[selected]" not in _line(snap, "option", "Pear")
    assert "[readonly]" in _line(snap, "textbox", "Fixed value")
    assert _line(snap, "textbox", "Fixed value").endswith(": fixed")
    assert "[level=1]" in _line(snap, "heading", "Observation")
    assert "[level=3]" in _line(snap, "heading", "Choices")
    combo = _line(snap, "combobox", "Size")
    assert combo.endswith(": Medium")
    # A collapsed select lists its options under its line, each with a ref (issue 14).
    lines = snap.splitlines()
    at = lines.index(combo)
    options = [ln.strip() for ln in lines[at + 1:at + 4]]
    assert [re.sub(r" \[ref=e\d+\]", "", o) for o in options] == [
        '- option "Small"', '- option "Medium" [selected]', '- option "Large"']
    assert all(_indent(ln) == _indent(combo) + 2 for ln in lines[at + 1:at + 4])
    # A relative href is printed resolved; on the page's own origin from its path on.
    assert "[url=/obs_second.html?from=main#top]" in _line(snap, "link", "Relative link")
    # Landmarks and groups carry refs and contain their targets (scope "within").
    for role, name in [("navigation", "Site"), ("form", "Account"), ("group", "Credentials"),
                       ("toolbar", "Form actions"), ("region", "Profile"), ("status", "Notifications")]:
        assert "[ref=" in _line(snap, role, name)
    lines = snap.splitlines()
    save = lines.index(_line(snap, "button", "Save"))
    ancestors = []  # nearest first: each earlier line with less indentation
    depth = _indent(lines[save])
    for ln in reversed(lines[:save]):
        if _indent(ln) < depth:
            ancestors.append(ln.strip())
            depth = _indent(ln)
    assert ancestors[0].startswith('- toolbar "Form actions"')
    assert ancestors[1].startswith('- form "Account"')
    assert ancestors[2].startswith("- main")
    # The legend names the group; its text is not repeated under it.
    assert '- text: Credentials' not in snap


async def test_focused_state(stack: Stack, origins: Origins) -> None:
    """The element with keyboard focus is marked [focused]."""
    await _open(stack, origins)
    await stack.page.focus("#username")
    snap = (await _snap(stack))["snapshot"]
    assert "[focused]" in _line(snap, "textbox", "Username")
    assert "[focused]" not in _line(snap, "textbox", "Password")


async def test_hidden_content_is_left_out(stack: Stack, origins: Origins) -> None:
    """display:none, visibility:hidden, aria-hidden and closed <details> content is not in
    the snapshot; a visible child of an invisible parent is."""
    snap = (await _open(stack, origins))["snapshot"]
    for gone in ["Display none button", "Invisible button", "Aria hidden button",
                 "Inside closed details", "Hidden paragraph text"]:
        assert gone not in snap
    assert "[ref=" in _line(snap, "button", "Visible child")
    assert "[ref=" in _line(snap, "button", "More")  # the <summary> of the closed <details>


async def test_shadow_roots_open_and_closed_marked(stack: Stack, origins: Origins) -> None:
    """Open and closed shadow roots are in the outline; closed content is marked."""
    snap = (await _open(stack, origins))["snapshot"]
    assert "[closed-shadow]" not in _line(snap, "button", "Shadow button")
    assert "[ref=" in _line(snap, "group", "Open widget")
    assert "[closed-shadow]" in _line(snap, "button", "Closed button")


async def test_implicit_controls_get_refs_and_take_trusted_clicks(stack: Stack, origins: Origins) -> None:
    """An onclick attribute, a tabindex and cursor:pointer make a roleless element a
    generic control with a ref; clicking it is trusted input the page receives."""
    snap = (await _open(stack, origins))["snapshot"]
    for name in ["Inline handler", "Focusable span", "Pointer div"]:
        assert "[ref=" in _line(snap, "generic", name)
    # Listeners added with addEventListener / the onclick property in the page's own
    # world are not visible to an isolated-world content script (see walker.js).
    assert re.search(r"- (text|generic \[ref=e\d+\]): Listener only", snap)
    assert "Listener only" not in "".join(ln for ln in snap.splitlines() if "[clickable]" in ln)
    result = await stack.act(ref_of(snap, "generic", "Pointer div"), kind="click")
    assert result["inputPath"] == "trusted"
    assert await _status(stack) == "clicked pointer"
    clicks = [e for e in await _events(stack) if e["type"] == "click"]
    assert clicks and all(e["trusted"] for e in clicks)


# -- refs ----------------------------------------------------------------------------------


async def test_soft_changes_leave_refs_usable(stack: Stack, origins: Origins) -> None:
    """Title changes, toasts, a ticking timer, focus moves, a tab switch and later
    snapshots do not invalidate a ref: it still acts on the original element."""
    first = await _open(stack, origins, "churn=1")
    ref = ref_of(first["snapshot"], "button", "Save")
    tab = first["tabId"]
    await asyncio.sleep(0.3)  # title, clock and toasts change every 25 ms
    assert (await stack.page.title()) != "Observation page"
    for _ in range(3):
        await _snap(stack, tabId=tab)
    await stack.page.focus("#username")
    other = await stack.supervisor.context.new_page()  # another tab comes to the front
    await other.bring_to_front()
    try:
        result = await stack.client.call(
            "page.act", {"tabId": tab, "ref": ref, "action": {"kind": "click"}})
    finally:
        await other.close()
    assert result["resolvedBy"] == "original_ref" and result["rebound"] is False
    assert result["postActionDocumentChanged"] is False
    assert await _status(stack) == "saved"
    saves = [e for e in await _events(stack) if e["type"] == "click" and e["target"] == "save"]
    assert saves == [{"type": "click", "trusted": True, "target": "save"}]


async def test_rerendered_unique_field_rebinds_once(stack: Stack, origins: Origins) -> None:
    """A framework re-render replaces the field by an identical one: the ref rebinds to it
    once (resolvedBy semantic_rebind, rebound) and the typing lands there; a second
    replacement without a new snapshot is refused and nothing is typed."""
    snap = (await _open(stack, origins))["snapshot"]
    ref = ref_of(snap, "textbox", "Email")
    await stack.page.evaluate("rerenderEmail()")
    result = await stack.act(ref, kind="type", text="ada@example.test")
    assert result["resolvedBy"] == "semantic_rebind" and result["rebound"] is True
    assert await stack.page.locator(".email").input_value() == "ada@example.test"
    typed = [e for e in await _events(stack) if e["type"] == "input"]
    assert typed and {e["target"] for e in typed} == {"email-1"} and all(e["trusted"] for e in typed)
    # Acting again on the rebound element: no new rebind needed.
    again = await stack.act(ref, kind="press", key="End")
    assert again["rebound"] is False and again["resolvedBy"] == "semantic_rebind"
    await stack.page.evaluate("rerenderEmail()")
    with pytest.raises(E.ElementTargetDetached):
        await stack.act(ref, kind="type", text="x")
    assert await stack.page.locator(".email").input_value() == ""
    assert not [e for e in await _events(stack) if e["target"] == "email-2"]


async def test_rerender_into_two_equal_fields_is_ambiguous(stack: Stack, origins: Origins) -> None:
    """A re-render into two equal fields: ELEMENT_TARGET_AMBIGUOUS and nothing is acted on."""
    snap = (await _open(stack, origins))["snapshot"]
    ref = ref_of(snap, "textbox", "Email")
    await stack.page.evaluate("duplicateEmail()")
    with pytest.raises(E.ElementTargetAmbiguous) as info:
        await stack.act(ref, kind="type", text="ada@example.test")
    assert info.value.details.get("candidates") == 2
    assert await stack.page.locator(".email").evaluate_all("els => els.map(e => e.value)") == ["", ""]
    assert not [e for e in await _events(stack) if e["type"] in ("input", "keydown", "click")]


async def test_ref_expires_after_16_snapshots_without_it(stack: Stack, origins: Origins) -> None:
    """A ref not seen in the last 16 snapshots of its document is gone (REF_NOT_FOUND,
    details.expired); seen within them it still works."""
    snap = (await _open(stack, origins))["snapshot"]
    keep, drop = ref_of(snap, "button", "Save"), ref_of(snap, "button", "Bold")
    hide = "document.querySelector('[aria-pressed]').style.display = 'none'"
    show = "document.querySelector('[aria-pressed]').style.display = ''"
    await stack.page.evaluate(hide)
    for _ in range(15):
        await _snap(stack)
    await stack.page.evaluate(show)
    await stack.act(drop, kind="hover")  # 15 snapshots without it: still valid
    assert ref_of((await _snap(stack))["snapshot"], "button", "Bold") == drop  # seen again
    await stack.page.evaluate(hide)
    for _ in range(16):
        await _snap(stack)
    await stack.page.evaluate(show)
    with pytest.raises(E.RefNotFound) as info:
        await stack.act(drop, kind="click")
    assert info.value.details.get("expired") == "observations"
    assert not [e for e in await _events(stack) if e["type"] == "click"]
    await stack.act(keep, kind="click")  # seen in every snapshot: alive
    assert await _status(stack) == "saved"


# -- document fencing ----------------------------------------------------------------------


async def test_click_navigation_then_old_ref_is_refused(stack: Stack, origins: Origins) -> None:
    """A click that navigates says postActionDocumentChanged; a ref of the old page then
    fails with BROWSER_DOCUMENT_CHANGED although the new page has a #save too."""
    snap = (await _open(stack, origins))["snapshot"]
    save = ref_of(snap, "button", "Save")
    result = await stack.act(ref_of(snap, "link", "Second page"), kind="click")
    assert result["postActionDocumentChanged"] is True
    assert await stack.page.locator("h1").text_content() == "Second page"
    with pytest.raises(E.BrowserDocumentChanged):
        await stack.act(save, kind="click")
    assert await _events(stack) == []


async def test_reload_and_back_fence_refs(stack: Stack, origins: Origins) -> None:
    """After a reload, and after going back, refs of the document that was left fail
    with BROWSER_DOCUMENT_CHANGED and the page receives nothing."""
    snap = (await _open(stack, origins))["snapshot"]
    save = ref_of(snap, "button", "Save")
    await stack.page.reload()
    with pytest.raises(E.BrowserDocumentChanged):
        await stack.act(save, kind="click")
    assert await _events(stack) == []
    await stack.client.call("page.navigate", {"url": f"{origins.main}/obs_second.html"})
    second = ref_of((await _snap(stack))["snapshot"], "button", "Save")
    await stack.page.go_back()
    await stack.page.wait_for_selector("#email-slot")
    with pytest.raises(E.BrowserDocumentChanged):
        await stack.act(second, kind="click")
    assert not [e for e in await _events(stack) if e["type"] == "click"]
    fresh = ref_of((await _snap(stack))["snapshot"], "button", "Save")
    await stack.act(fresh, kind="click")
    assert await _status(stack) == "saved"


async def test_pending_navigation_fences_refs(stack: Stack, origins: Origins, slow_origin: str) -> None:
    """While the page is navigating away (the next document not yet there), a ref of the
    current document already fails with BROWSER_DOCUMENT_CHANGED, and neither the old
    page nor the next one receives the click."""
    await stack.client.call("page.navigate", {"url": f"{slow_origin}/obs_main.html"})
    save = ref_of((await _snap(stack))["snapshot"], "button", "Save")
    # A navigation the page starts by itself (a script, a timer): the tool did not ask for it.
    await stack.page.evaluate("location.href = 'obs_second.html?slow=1'")
    await asyncio.sleep(0.2)
    assert "obs_main.html" in stack.page.url  # the old document is still shown
    with pytest.raises(E.BrowserDocumentChanged) as info:
        await stack.act(save, kind="click")
    assert info.value.details.get("reason") == "navigation-pending"
    await stack.page.wait_for_url("**/obs_second.html?slow=1", timeout=15_000)
    await stack.page.wait_for_function("Array.isArray(window.__events)")
    assert await _events(stack) == []  # the next page got nothing
    old = await stack.page.evaluate("sessionStorage.getItem('obs-main-events')")
    assert old is None  # the old page recorded no event either


async def test_refs_across_three_nested_frames(stack: Stack, origins: Origins) -> None:
    """Refs in three nested frames (the middle one cross-origin) carry frame prefixes and
    each click reaches its own frame as trusted input."""
    snap = (await _open(stack, origins, frames=True))["snapshot"]
    refs = [ref_of(snap, "button", f"Frame {i} button") for i in (1, 2, 3)]
    prefixes = {re.match(r"(f\d+)e", r).group(1) for r in refs}
    assert len(prefixes) == 3
    # Nesting: each frame's content sits under its <iframe> line.
    lines = snap.splitlines()
    depths = [_indent(lines[lines.index(_line(snap, "button", f"Frame {i} button"))]) for i in (1, 2, 3)]
    assert depths[0] < depths[1] < depths[2]
    for ref in refs:
        assert (await stack.act(ref, kind="click"))["inputPath"] == "trusted"
    for i, needle in [(1, "obs_frame1.html"), (2, "obs_frame2.html"), (3, "obs_frame3.html")]:
        frame = next(f for f in stack.page.frames if needle in f.url)
        assert await _events(stack, frame) == [{"type": "click", "trusted": True, "target": f"b{i}"}]
    assert not [e for e in await _events(stack) if e["type"] == "click"]


# -- sensitive values ----------------------------------------------------------------------


async def test_sensitive_values_never_printed_in_snapshots_errors_or_logs(
        stack: Stack, origins: Origins, caplog: pytest.LogCaptureFixture) -> None:
    """Password, one-time code, card, CVV and token values typed into the page appear in no
    snapshot mode, no error and no log line; their fields show a fixed mask."""
    caplog.set_level(logging.DEBUG, logger="trustbridge")
    snap = (await _open(stack, origins))["snapshot"]
    results = []
    for name, value in SECRETS.items():
        results.append(await stack.act(ref_of(snap, "textbox", name), kind="type", text=value))
    for sel, value in zip(["#password", "#otp", "#card", "#cvv", "#apikey"], SECRETS.values()):
        assert await stack.page.locator(sel).input_value() == value  # the page has them
    # The page echoes one secret in its text (a "show password" feature); still masked.
    await stack.page.evaluate(f"document.getElementById('status').textContent = {json.dumps(SECRETS['Password'])}")
    outputs = [json.dumps(r) for r in results]
    full = await _snap(stack)
    outputs.append(full["snapshot"])
    for name in SECRETS:
        assert _line(full["snapshot"], "textbox", name).endswith(": ••••••")
    outputs.append((await _snap(stack, mode="read"))["snapshot"])
    outputs.append((await _snap(stack, mode="diff"))["snapshot"])
    outputs.append((await _snap(stack, ref=ref_of(snap, "form", "Account")))["snapshot"])
    paged = await _snap(stack, maxChars=1000)
    outputs.append(paged["snapshot"])
    while paged["cursor"]:
        paged = await _snap(stack, cursor=paged["cursor"], maxChars=1000)
        outputs.append(paged["snapshot"])
    # Errors around the sensitive fields: a stale ref after the form is replaced, and a
    # typing refused by the disabled button; neither may carry a value.
    for action in [{"kind": "type", "text": SECRETS["Password"]}]:
        with pytest.raises(E.TrustbridgeError) as info:
            await stack.client.call("page.act", {"ref": ref_of(snap, "button", "Disabled action"),
                                                 "action": action, "timeoutMs": 500})
        outputs.append(str(info.value) + json.dumps(info.value.details))
    await stack.page.evaluate("document.getElementById('account').innerHTML = ''")
    with pytest.raises(E.ElementTargetDetached) as info:
        await stack.act(ref_of(snap, "textbox", "Password"), kind="type", text=SECRETS["Password"])
    outputs.append(str(info.value) + json.dumps(info.value.details))
    outputs.extend(r.getMessage() for r in caplog.records)
    outputs.extend(repr(r.args) for r in caplog.records)
    blob = "\n".join(outputs)
    for value in SECRETS.values():
        assert value not in blob


# -- budget, read, subtree, diff -----------------------------------------------------------


async def test_budget_pages_with_cursor_cover_the_whole_snapshot(stack: Stack, origins: Origins) -> None:
    """A small budget cuts the snapshot at line boundaries with a cursor; following the
    cursors gives exactly the full snapshot, and refs from a late page work."""
    full = (await _open(stack, origins, "many=300", frames=True))
    page = await _snap(stack, maxChars=3000)
    first_cursor = page["cursor"]
    assert page["truncated"] is True and first_cursor
    assert page["snapshot"].splitlines()[-1].startswith("# truncated")
    longest = max(len(ln) for ln in full["snapshot"].splitlines())
    lines, pages = [], 0
    while True:
        pages += 1
        assert page["chars"] <= 3000 + longest + 1
        lines.extend(_pages(page))
        if not page["cursor"]:
            assert page["truncated"] is False
            break
        page = await _snap(stack, cursor=page["cursor"], maxChars=3000)
    assert pages > 3
    assert lines == full["snapshot"].splitlines()
    await stack.act(ref_of("\n".join(lines), "button", "Item 299"), kind="click")
    clicks = [e for e in await _events(stack) if e["type"] == "click"]
    assert clicks == [{"type": "click", "trusted": True, "target": "button"}]
    with pytest.raises(E.BadRequest):  # a cursor is used once
        await _snap(stack, cursor=first_cursor)


async def test_read_mode_gives_visible_text_with_the_same_cursor(stack: Stack, origins: Origins) -> None:
    """read mode returns the visible text of all frames, paged by the same cursor."""
    await _open(stack, origins, "many=200", frames=True)
    page = await _snap(stack, mode="read", maxChars=1000)
    text = []
    while True:
        text.extend(_pages(page))
        if not page["cursor"]:
            break
        page = await _snap(stack, cursor=page["cursor"], maxChars=1000)
    body = "\n".join(text)
    assert "# Observation" in body and "idle" in body and "Item 199" in body
    assert "Frame 1 button" in body and "Frame 3 button" in body
    assert "[ref=" not in body
    for gone in ["Display none button", "Hidden paragraph text", "Inside closed details"]:
        assert gone not in body


async def test_subtree_snapshot_by_ref(stack: Stack, origins: Origins) -> None:
    """A snapshot of one ref holds that element and its subtree, with the same refs."""
    snap = (await _open(stack, origins))["snapshot"]
    toolbar = ref_of(snap, "toolbar", "Form actions")
    sub = (await _snap(stack, ref=toolbar))["snapshot"]
    assert sub.splitlines()[0].startswith('- toolbar "Form actions"')
    assert ref_of(sub, "button", "Save") == ref_of(snap, "button", "Save")
    assert "Username" not in sub and "Profile" not in sub


async def test_diff_against_previous_snapshot_and_truncation_keeps_baseline(
        stack: Stack, origins: Origins) -> None:
    """diff mode shows what changed since the previous complete snapshot; a truncated
    snapshot does not become the baseline."""
    await _open(stack, origins)  # complete: the baseline
    await stack.act(ref_of((await _snap(stack))["snapshot"], "button", "Save"), kind="click")
    diff = await _snap(stack, mode="diff")
    text = diff["snapshot"]
    assert diff["diff"]["baseline"] is True
    assert re.search(r"^- .*: idle$", text, re.M) and re.search(r"^\+ .*: saved$", text, re.M)
    assert re.search(r'^\+ .*button "Disabled after save"', text, re.M)
    assert re.search(r'^  .*toolbar "Form actions"', text, re.M)  # where it happened
    assert "Username" not in text
    again = await _snap(stack, mode="diff")
    assert again["snapshot"].startswith("# no changes") and again["diff"]["added"] == 0
    await stack.page.evaluate("document.getElementById('status').textContent = 'changed again'")
    cut = await _snap(stack, maxChars=1000)
    assert cut["truncated"] is True  # not followed: not a baseline
    after = await _snap(stack, mode="diff")
    assert after["diff"] == {"baseline": True, "added": 1, "removed": 1}
    assert re.search(r"^\+ .*changed again", after["snapshot"], re.M)


async def test_synthetic_path_results_carry_resolution_and_document_change(
        synthetic_stack: Stack, origins: Origins) -> None:
    """On a device without a driver, action results also say resolvedBy / rebound and
    postActionDocumentChanged (a link click that navigates), labelled synthetic."""
    stack = synthetic_stack
    snap = (await _open(stack, origins))["snapshot"]
    await stack.page.evaluate("rerenderEmail()")
    typed = await stack.act(ref_of(snap, "textbox", "Email"), kind="type", text="ada")
    assert typed["inputPath"] == "synthetic"
    assert typed["resolvedBy"] == "semantic_rebind" and typed["rebound"] is True
    assert typed["postActionDocumentChanged"] is False
    assert await stack.page.locator(".email").input_value() == "ada"
    clicked = await stack.act(ref_of(snap, "link", "Second page"), kind="click")
    assert clicked["inputPath"] == "synthetic" and clicked["postActionDocumentChanged"] is True
    await stack.page.wait_for_url("**/obs_second.html")
    with pytest.raises(E.BrowserDocumentChanged):
        await stack.act(ref_of(snap, "button", "Save"), kind="click")


async def test_refs_no_snapshot_gave_are_ref_not_found(stack: Stack, origins: Origins) -> None:
    """e0 (refs start at e1), a number beyond every snapshot and a malformed ref are
    REF_NOT_FOUND, not a changed document; nothing reaches the page."""
    await _open(stack, origins)
    for ref in ("e0", "e99999", "f0e1x"):
        with pytest.raises((E.RefNotFound, E.BadRequest)) as info:
            await stack.act(ref, kind="click")
        if ref != "f0e1x":
            assert isinstance(info.value, E.RefNotFound), (ref, info.value)
    assert not [e for e in await _events(stack) if e["type"] == "click"]
