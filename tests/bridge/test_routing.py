"""RoutingPolicy (design.md §2) tested by calling it: no sockets, no event loop."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from trustbridge.bridge import routing
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.models import DeviceInfo
from trustbridge.bridge.routing import (
    Local,
    RoutingPolicy,
    ToExtension,
    TrustedInput,
    parse_device_list,
)

D = "dev1"


def policy_with(*peers: tuple[str, str, str | None], seed: tuple[str, ...] = ()) -> RoutingPolicy:
    """A policy after the given ``(peer_id, role, device)`` joins."""
    policy = RoutingPolicy(required_trusted_input=seed)
    for peer, role, device in peers:
        policy.join(peer, role, device)
    return policy


# -- the rules of design.md §2, one test each ----------------------------------------------------


def test_rule1_driver_hello_makes_the_promise_and_its_leave_keeps_it() -> None:
    """Rule 1: a driver's join puts D in drivers and in required_trusted_input; its leave
    takes D out of drivers only."""
    policy = RoutingPolicy()
    assert D not in policy.required_trusted_input

    policy.join("drv", "driver", D)
    assert policy.drivers == {D: "drv"}
    assert policy.required_trusted_input == {D}

    policy.leave("drv")
    assert policy.drivers == {}
    assert policy.required_trusted_input == {D}


def test_rule2_seeded_device_is_protected_before_any_driver_was_seen() -> None:
    """Rule 2: a device seeded at start requires trusted input although no driver ever
    joined, so input to it fails instead of going synthetic."""
    policy = policy_with(("ext", "extension", D), seed=tuple(parse_device_list(f" {D} , other")))
    assert policy.drivers == {}
    assert policy.required_trusted_input == {D, "other"}
    with pytest.raises(E.TrustedInputUnavailable):
        policy.route("page.act", D)


def test_rule3_input_on_protected_device_with_driver_online_goes_through_the_driver() -> None:
    """Rule 3: page.act on a device in the set with its driver online routes to the
    extension (to resolve the ref) and then that driver."""
    policy = policy_with(("ext", "extension", D), ("drv", "driver", D))
    assert policy.route("page.act", D) == TrustedInput(device=D, extension="ext", driver="drv")
    assert policy.route("page.act", None) == TrustedInput(device=D, extension="ext", driver="drv")


def test_rule4_input_on_protected_device_with_driver_offline_fails_with_no_route() -> None:
    """Rule 4: page.act on a device in the set with its driver gone raises
    TrustedInputUnavailable (no route at all, so nothing is sent), whether or not the
    extension is connected."""
    policy = policy_with(("ext", "extension", D), ("drv", "driver", D))
    policy.leave("drv")
    with pytest.raises(E.TrustedInputUnavailable) as info:
        policy.route("page.act", D)
    assert info.value.details == {"device": D}
    with pytest.raises(E.TrustedInputUnavailable):
        policy.route("page.act", None)  # the only device, picked implicitly
    policy.leave("ext")
    with pytest.raises(E.TrustedInputUnavailable):  # checked before the extension is looked up
        policy.route("page.act", D)


def test_rule5_input_on_unprotected_device_takes_the_synthetic_extension_path() -> None:
    """Rule 5: page.act on a device that never asked for trusted input goes to its
    extension marked synthetic; non-input methods there are not marked."""
    policy = policy_with(("ext", "extension", D))
    assert policy.route("page.act", D) == ToExtension(device=D, extension="ext", synthetic=True)
    assert policy.route("page.snapshot", D) == ToExtension(D, "ext", synthetic=False)


def test_rule6_wait_stays_in_the_extension_even_with_a_driver_online() -> None:
    """Rule 6: page.wait is not input: it goes to the extension (not synthetic-labelled)
    for a protected device with its driver online, and also with the driver offline."""
    policy = policy_with(("ext", "extension", D), ("drv", "driver", D))
    assert policy.route("page.wait", D) == ToExtension(device=D, extension="ext", synthetic=False)
    policy.leave("drv")
    assert policy.route("page.wait", D) == ToExtension(device=D, extension="ext", synthetic=False)


# -- pick_device ---------------------------------------------------------------------------


def test_pick_device_with_nothing_connected_raises_device_not_connected() -> None:
    """pick_device(None) with no peer online raises DeviceNotConnected."""
    with pytest.raises(E.DeviceNotConnected):
        RoutingPolicy().pick_device(None)


def test_pick_device_with_only_a_seeded_device_offline_raises_device_not_connected() -> None:
    """A device known only from the seed is not online: pick_device(None) does not pick it."""
    with pytest.raises(E.DeviceNotConnected):
        RoutingPolicy(required_trusted_input={D}).pick_device(None)


def test_pick_device_with_one_device_online_picks_it() -> None:
    """pick_device(None) with exactly one device online returns that device."""
    assert policy_with(("ext", "extension", D)).pick_device(None) == D
    assert policy_with(("drv", "driver", D)).pick_device(None) == D


def test_pick_device_with_several_devices_online_needs_a_name() -> None:
    """pick_device(None) with two devices online raises BadRequest; naming one picks it."""
    policy = policy_with(("e1", "extension", "a"), ("e2", "extension", "b"))
    with pytest.raises(E.BadRequest) as info:
        policy.pick_device(None)
    assert info.value.details == {"known": ["a", "b"]}
    assert policy.pick_device("b") == "b"


def test_pick_device_named_unknown_raises_device_not_connected() -> None:
    """pick_device("nope") raises DeviceNotConnected even when other devices are online."""
    policy = policy_with(("ext", "extension", D))
    with pytest.raises(E.DeviceNotConnected) as info:
        policy.pick_device("nope")
    assert info.value.details == {"device": "nope", "known": [D]}


# -- membership ----------------------------------------------------------------------------


def test_newer_extension_replaces_older_and_older_leave_does_not_remove_it() -> None:
    """A second extension for the same device replaces the first (a restarted service
    worker); the first one's leave keeps the newer in place."""
    policy = policy_with(("ext-old", "extension", D), ("drv", "driver", D))
    policy.join("ext-new", "extension", D)
    assert policy.route("page.act", D) == TrustedInput(D, "ext-new", "drv")

    policy.leave("ext-old")
    assert policy.extensions == {D: "ext-new"}
    assert policy.route("page.act", D) == TrustedInput(D, "ext-new", "drv")


def test_second_driver_is_refused_while_the_first_is_online() -> None:
    """join() of a driver for a device with a live driver raises Unauthorized and changes
    nothing; after the first leaves, a new driver joins."""
    policy = policy_with(("ext", "extension", D), ("drv-1", "driver", D))
    with pytest.raises(E.Unauthorized) as refused:
        policy.join("drv-2", "driver", D, capabilities={"trustedInput": True})
    assert refused.value.details == {"device": D, "reason": "driverAlreadyConnected"}
    assert policy.role_of("drv-2") is None
    assert policy.route("page.act", D) == TrustedInput(D, "ext", "drv-1")

    policy.leave("drv-1")
    policy.join("drv-2", "driver", D)
    assert policy.route("page.act", D) == TrustedInput(D, "ext", "drv-2")


def test_extension_or_driver_without_device_is_refused() -> None:
    """join() of an extension or a driver with no device raises BadRequest and changes nothing."""
    policy = RoutingPolicy()
    for role in ("extension", "driver"):
        with pytest.raises(E.BadRequest):
            policy.join("p", role, None)
    assert (policy.drivers, policy.extensions, policy.required_trusted_input) == ({}, {}, set())
    assert policy.role_of("p") is None


def test_client_join_and_leave_touch_no_device_table() -> None:
    """A client peer (even naming a device) is neither a driver nor an extension."""
    policy = policy_with(("c", "client", D))
    assert policy.role_of("c") == "client"
    assert (policy.drivers, policy.extensions, policy.required_trusted_input) == ({}, {}, set())
    policy.leave("c")
    policy.leave("never-joined")
    assert policy.role_of("c") is None


# -- other routes ----------------------------------------------------------------------------


def test_devices_list_is_answered_locally_even_with_no_device() -> None:
    """devices.list is the bridge's own method: a Local route with nothing connected."""
    assert RoutingPolicy().route("devices.list", None) == Local()


@pytest.mark.parametrize("method", ["page.explode", "driver.act", "page.resolveTarget", ""])
def test_non_client_methods_are_bad_requests(method: str) -> None:
    """Unknown methods and peer-only methods cannot be routed from a client."""
    policy = policy_with(("ext", "extension", D), ("drv", "driver", D))
    with pytest.raises(E.BadRequest):
        policy.route(method, D)


def test_protected_device_with_extension_offline_is_not_connected() -> None:
    """page.act on a protected device whose driver is online but extension is not raises
    DeviceNotConnected (the ref cannot be resolved), never a synthetic route."""
    policy = policy_with(("drv", "driver", D))
    with pytest.raises(E.DeviceNotConnected):
        policy.route("page.act", D)


def test_devices_reports_online_peers_and_promises_apart() -> None:
    """devices() lists every known device with extension/driver online and the promise."""
    policy = RoutingPolicy(required_trusted_input={"seeded"})
    policy.join("ext", "extension", D, browser="Chromium 140")
    policy.join("drv", "driver", D)
    policy.leave("drv")
    assert policy.devices() == [
        DeviceInfo(
            device=D,
            extension=True,
            driver=False,
            requiresTrustedInput=True,
            browser="Chromium 140",
        ),
        DeviceInfo(device="seeded", extension=False, driver=False, requiresTrustedInput=True),
    ]


# -- parse_device_list and module shape --------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, set()),
        ("", set()),
        (" , ,", set()),
        ("dev1", {"dev1"}),
        (" dev1 ,dev2,, dev1 ", {"dev1", "dev2"}),
    ],
)
def test_parse_device_list(value: str | None, expected: set[str]) -> None:
    """BRIDGE_REQUIRE_TRUSTED_INPUT parsing: comma-separated, trimmed, blanks/repeats dropped."""
    assert parse_device_list(value) == expected


def test_routing_module_does_no_io() -> None:
    """The policy imports no socket, websockets or asyncio module (design.md §10)."""
    tree = ast.parse(Path(routing.__file__).read_text())
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            imported.add(node.module.split(".")[0])
    assert not imported & {"asyncio", "websockets", "socket", "anyio", "selectors"}


def test_extension_of_a_supervised_browser_carries_the_promise() -> None:
    """An extension whose hello says requiresTrustedInput puts its device in the set, so
    after a bridge restart its input fails plainly until the driver is back."""
    policy = RoutingPolicy()
    policy.join("ext", "extension", "dev", capabilities={"requiresTrustedInput": True})
    assert "dev" in policy.required_trusted_input
    with pytest.raises(E.TrustedInputUnavailable):
        policy.route("page.act", "dev")
    plain = RoutingPolicy()
    plain.join("ext", "extension", "dev", capabilities={"requiresTrustedInput": False})
    assert plain.route("page.act", "dev") == ToExtension("dev", "ext", synthetic=True)


def test_older_live_peer_takes_over_when_the_newer_leaves() -> None:
    """A second extension for a device that connects and leaves does not strand the
    device: the older connection, still open, is routed to again."""
    policy = RoutingPolicy()
    policy.join("drv1", "driver", "dev")
    policy.join("ext1", "extension", "dev")
    policy.join("ext2", "extension", "dev")
    policy.leave("ext2")
    assert policy.route("page.act", "dev") == TrustedInput("dev", "ext1", "drv1")


# -- dialogs block their own tab (issue 13, item 6) ---------------------------------------


def _with_dialog_on(tab: int | None) -> RoutingPolicy:
    """A device with a driver whose tab ``tab`` has an alert open (None: not placed yet)."""
    policy = policy_with(("ext", "extension", D), ("drv", "driver", D))
    dialog = policy.dialog_event("drv", "dialog.opened", {
        "dialogId": 1, "type": "alert", "message": "hi", "url": "http://a/"})
    assert dialog is not None
    if tab is not None:
        assert policy.dialogs.place(D, dialog, [{"tabId": tab, "url": "http://a/"},
                                                {"tabId": 9, "url": "http://b/"}])
    return policy


def test_a_placed_dialog_blocks_only_its_tab() -> None:
    """Tab 5's alert: snapshot and input on tab 9 route; on tab 5 they get DIALOG_OPEN
    naming the tab; tabs.close/navigate/select of tab 5 and tabs.new still route (selecting
    the blocked tab is how an agent gets to answer its dialog)."""
    policy = _with_dialog_on(5)
    assert policy.route("page.act", D, 9) == TrustedInput(D, "ext", "drv")
    assert policy.route("page.snapshot", D, 9) == ToExtension(D, "ext")
    for method in ("page.snapshot", "page.act"):
        with pytest.raises(E.DialogOpen) as blocked:
            policy.route(method, D, 5)
        assert blocked.value.details["tabId"] == 5
    for method in ("tabs.close", "page.navigate", "tabs.new", "page.dialog", "tabs.list",
                   "tabs.select"):
        policy.route(method, D, 5)
    assert policy.devices()[0].dialog == {"type": "alert", "message": "hi", "url": "http://a/",
                                          "tabId": 5}


def test_a_request_without_tab_uses_the_active_tab_learnt() -> None:
    """No tabId: the active tab decides; unknown active tab means any dialog may be on it."""
    policy = _with_dialog_on(5)
    assert policy.route("page.snapshot", D, None, lambda _d: 9) == ToExtension(D, "ext")
    with pytest.raises(E.DialogOpen):
        policy.route("page.snapshot", D, None, lambda _d: 5)
    with pytest.raises(E.DialogOpen):
        policy.route("page.snapshot", D, None, lambda _d: None)


def test_an_unplaced_dialog_blocks_every_tab_until_placed_or_closed() -> None:
    """Before its tab is known a dialog blocks all tabs (cautious, never false); its
    dialog.closed by id frees the device; the driver leaving forgets it."""
    policy = _with_dialog_on(None)
    with pytest.raises(E.DialogOpen):
        policy.route("page.snapshot", D, 9)
    policy.dialog_event("drv", "dialog.closed", {"dialogId": 2})
    with pytest.raises(E.DialogOpen):
        policy.route("page.snapshot", D, 9)
    policy.dialog_event("drv", "dialog.closed", {"dialogId": 1})
    assert policy.route("page.snapshot", D, 9) == ToExtension(D, "ext")
    policy = _with_dialog_on(None)
    policy.leave("drv")
    assert policy.open_dialogs == {}


def test_page_dialog_answers_the_named_tabs_dialog() -> None:
    """to_answer: the named tab's dialog, else the active tab's, else the oldest."""
    policy = _with_dialog_on(5)
    other = policy.dialog_event("drv", "dialog.opened", {
        "dialogId": 2, "type": "confirm", "message": "ok?", "url": "http://b/"})
    assert other is not None and policy.dialogs.place(D, other, [{"tabId": 9, "url": "http://b/"}])
    book = policy.dialogs
    assert [book.to_answer(D, 9, None).id, book.to_answer(D, 5, 9).id] == [2, 1]
    assert [book.to_answer(D, None, 9).id, book.to_answer(D, None, None).id] == [2, 1]
    assert book.to_answer(D, 7, None) is None


def test_cdp_consent_is_the_extensions_word_and_only_a_boolean() -> None:
    """``consent.cdp {allowed}`` (the person's toggle, docs/cdp.md) updates the
    extension's ``cdpAllowed``; a driver's, or a non-boolean, changes nothing."""
    policy = RoutingPolicy()
    policy.join("ext", "extension", "dev1", capabilities={"attended": True})
    policy.join("drv", "driver", "dev1")
    assert policy.extension_capabilities("dev1") == {"attended": True}
    assert policy.consent_cdp("drv", True) is False
    assert policy.consent_cdp("ext", "yes") is False
    assert "cdpAllowed" not in policy.extension_capabilities("dev1")
    assert policy.consent_cdp("ext", True) is True
    assert policy.extension_capabilities("dev1")["cdpAllowed"] is True
    assert policy.consent_cdp("ext", False) is True
    assert policy.extension_capabilities("dev1")["cdpAllowed"] is False
    assert policy.extension_capabilities("nowhere") == {}
