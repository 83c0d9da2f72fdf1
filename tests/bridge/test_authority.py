"""Who may do what to another agent's session (docs/security.md "Who may do what"), on a
real BridgeServer with a fake extension and driver (tests/bridge/fakes.py), no browser.

The hostile second agent of a break run: it listed every session's label, stopped
another agent's session, claimed the tab that freed and read what had been typed there.
Here only the session itself, a person (the extension's Stop) and an operator (a
connection whose hello carries the operator credential) may stop a session; a stopper
never takes the stopped session's tabs; other sessions' labels are listed to operators
only; and reads that can show typed content (screenshot, console, network, find,
evaluate in either world) are the owner's only. Nothing refused reaches the peers.
"""

from __future__ import annotations

import asyncio

import pytest

from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.protocol import errors as E

from .fakes import FakeExtension, wait_until
# The bridge with fake peers and its helpers are test_client_sessions' own (one copy).
from .test_client_sessions import D, STEP_S, TOKEN, URL, Bridge, bridge, call  # noqa: F401

pytestmark = pytest.mark.timeout(30)


async def _alice_owns_tab_1(bridge: Bridge) -> BridgeClient:
    alice = await bridge.client()
    await alice.open_session("alice")
    await call(alice, "page.navigate", {"tabId": 1, "url": URL})  # claims tab 1
    return alice


async def test_a_peer_session_can_neither_stop_another_nor_take_its_tab(
        bridge: Bridge) -> None:
    """The break run's first opening: bob stops alice and claims her tab. Now bob's stop
    is UNAUTHORIZED before any label is looked up, alice keeps working, and bob's claim
    and evaluate of her tab are TAB_CLAIMED with nothing sent."""
    alice = await _alice_owns_tab_1(bridge)
    bob = await bridge.client()
    await bob.open_session("bob")
    sent = bridge.sent()

    with pytest.raises(E.Unauthorized) as refused:
        await call(bob, "session.stop", {"label": "alice"})
    assert refused.value.details.get("reason") == "notOperator"
    with pytest.raises(E.Unauthorized) as unknown:  # the same answer: no label oracle
        await call(bob, "session.stop", {"label": "nobody"})
    assert unknown.value.message == refused.value.message
    with pytest.raises(E.Unauthorized):  # a wrong secret is no authority either
        await call(bob, "session.stop", {"label": "alice", "secret": "x" * 32})
    for method, params in (("tabs.claim", {"tabId": 1}),
                           ("page.evaluate", {"tabId": 1, "expression": "1"}),
                           ("page.evaluate", {"tabId": 1, "expression": "1",
                                              "world": "main"})):
        with pytest.raises(E.TabClaimed):
            await call(bob, method, params)
    assert bridge.sent() == sent, "a refused request reached a peer"

    assert (await call(alice, "page.navigate", {"tabId": 1, "url": URL}))["tabId"] == 1
    assert bridge.server.executor.sessions.find("alice") is not None


async def test_sessions_list_names_other_sessions_only_to_operators(bridge: Bridge) -> None:
    await _alice_owns_tab_1(bridge)
    bob = await bridge.client()
    await bob.open_session("bob")
    listed = await call(bob, "sessions.list")
    assert [r["label"] for r in listed["sessions"]] == ["bob"]
    assert listed["sessions"][0]["yours"] is True
    assert listed["others"] == 1
    assert "alice" not in repr(listed)

    op = await bridge.client(operator=bridge.server.operator_token)
    listed = await call(op, "sessions.list")
    assert {r["label"] for r in listed["sessions"]} >= {"alice", "bob"}
    assert listed.get("others", 0) == 0


async def test_a_wrong_operator_credential_is_refused_at_hello(bridge: Bridge) -> None:
    with pytest.raises(E.Unauthorized):
        await bridge.client(operator="not-the-operator-credential")
    with pytest.raises(E.Unauthorized):  # the bridge token is not the operator's
        await bridge.client(operator=TOKEN)


async def test_an_operator_stops_a_session_but_never_takes_its_tabs(bridge: Bridge) -> None:
    """The operator's stop works as before (queued work cancelled, tabs released, left
    open); the operator's own session is then refused on the released tab (claim and
    action), while a third session may take it."""
    alice = await _alice_owns_tab_1(bridge)
    op = await bridge.client(operator=bridge.server.operator_token)
    await op.open_session("ops")
    stopped = await call(op, "session.stop", {"label": "alice"})
    assert stopped["stopped"] is True
    assert stopped["released"] == [{"device": D, "tabId": 1}]
    with pytest.raises(E.SessionStopped) as info:
        await call(alice, "page.navigate", {"tabId": 1, "url": URL})
    assert info.value.details["by"] == "the operator (session 'ops')"

    sent = bridge.sent()
    for method, params in (("tabs.claim", {"tabId": 1}),
                           ("page.navigate", {"tabId": 1, "url": URL}),
                           ("page.screenshot", {"tabId": 1})):
        with pytest.raises(E.TabClaimed) as claimed:
            await call(op, method, params)
        assert claimed.value.details.get("stoppedBy") == "ops"
    assert bridge.sent() == sent

    carol = await bridge.client()
    await carol.open_session("carol")
    assert (await call(carol, "page.navigate", {"tabId": 1, "url": URL}))["tabId"] == 1


async def test_a_session_stops_itself_and_its_secret_stops_it_from_another_connection(
        bridge: Bridge) -> None:
    """The session itself keeps its power: on its own connection, or from a later one
    that holds its secret (the CLI's ``sessions stop NAME`` of its own ``--session``)."""
    kept = await bridge.client()
    opened = await kept.open_session("kept", on_disconnect="keep")
    await call(kept, "page.navigate", {"tabId": 1, "url": URL})
    other = await bridge.client()
    stopped = await call(other, "session.stop", {"label": "kept", "secret": opened["secret"]})
    assert stopped["stopped"] is True and stopped["released"] == [{"device": D, "tabId": 1}]
    # The holder of the secret is the session: no bar on the tab.
    assert (await call(other, "page.navigate", {"tabId": 1, "url": URL}))["tabId"] == 1

    mine = await bridge.client()
    await mine.open_session("mine")
    assert (await call(mine, "session.stop"))["label"] == "mine"


async def test_only_the_extension_of_the_sessions_device_may_stop_it(bridge: Bridge) -> None:
    """The person's Stop (extension event ``session.stop``) works for a session that
    owns a tab of that extension's device; a token holder that says hello as the
    extension of another device stops nothing."""
    await _alice_owns_tab_1(bridge)
    async with FakeExtension(bridge.server.url, TOKEN, "impostor-device") as impostor:
        await impostor.send_event("session.stop", {"label": "alice"})
        await asyncio.sleep(0.3)
    session = bridge.server.executor.sessions.find("alice")
    assert session is not None and not session.stopped

    await bridge.ext.send_event("session.stop", {"label": "alice"})
    await wait_until(lambda: session.stopped, STEP_S)
    assert session.stopped_by == "a person (the browser's Stop button)"


@pytest.mark.parametrize("method, params", [
    ("page.screenshot", {}),
    ("page.console", {}),
    ("page.network", {}),
    ("page.find", {"text": "4111"}),
    ("page.pdf", {}),
    ("page.snapshot", {"mode": "read"}),
    ("page.wait", {"text": "41", "timeoutMs": 10}),  # an oracle for a masked value
    ("page.wait", {"textGone": "41", "timeoutMs": 10}),
])
async def test_reads_that_can_show_typed_content_are_the_owners_only(
        bridge: Bridge, method: str, params: dict) -> None:
    """A screenshot shows a typed card number in clear, the console an error message
    carrying it, the network record a posted form, find matches typed text: on another
    session's tab each is TAB_CLAIMED before anything is sent. The snapshot (typed
    secrets redacted) and a plain wait (``ms``) stay allowed."""
    await _alice_owns_tab_1(bridge)
    bob = await bridge.client()
    await bob.open_session("bob")
    sent = bridge.sent()
    with pytest.raises(E.TabClaimed) as info:
        await call(bob, method, {"tabId": 1, **params})
    assert info.value.details["owner"] == "alice"
    assert bridge.sent() == sent
    assert (await call(bob, "page.snapshot", {"tabId": 1}))["tabId"] == 1
    assert (await call(bob, "page.wait", {"tabId": 1, "ms": 1}))["tabId"] == 1
