"""Per-device capabilities (from the peers' hellos) in RoutingPolicy.devices() and in the
doctor output; no sockets. The routing rules themselves are in test_routing.py."""

from __future__ import annotations

from bridge.cli import _human
from bridge.routing import RoutingPolicy

EXT_CAPS = {"closedShadowVisible": True, "syntheticInput": True}
DRV_CAPS = {"trustedInput": True, "coordinateRoute": False}


def test_devices_merge_the_connected_extension_and_driver_capabilities() -> None:
    """A device lists its extension's capabilities and its driver's, each only while that
    peer is connected; the device's promise is unaffected."""
    policy = RoutingPolicy()
    policy.join("ext", "extension", "ff", browser="Firefox 153.8.0", capabilities=EXT_CAPS)
    policy.join("drv", "driver", "ff", browser="firefox 153.8.0", capabilities=DRV_CAPS)
    (info,) = policy.devices()
    assert info.capabilities == {**EXT_CAPS, **DRV_CAPS}
    assert info.browser == "Firefox 153.8.0"
    policy.leave("drv")
    (info,) = policy.devices()
    assert info.capabilities == EXT_CAPS
    assert info.requiresTrustedInput is True and info.driver is False


def test_a_newer_peer_replaces_the_older_ones_capabilities() -> None:
    """A reconnecting driver with other capabilities replaces the old ones; the old peer
    leaving afterwards changes nothing."""
    policy = RoutingPolicy()
    policy.join("drv1", "driver", "d", capabilities={"trustedInput": True, "coordinateRoute": False})
    policy.join("drv2", "driver", "d", capabilities={"trustedInput": True, "coordinateRoute": True})
    policy.leave("drv1")
    assert policy.devices()[0].capabilities == {"trustedInput": True, "coordinateRoute": True}


def test_device_seeded_but_never_seen_has_no_capabilities() -> None:
    """A device known only from BRIDGE_REQUIRE_TRUSTED_INPUT reports none."""
    assert RoutingPolicy({"seeded"}).devices()[0].capabilities == {}


def test_doctor_prints_the_capabilities() -> None:
    """`trustbridge doctor` shows each capability as name=yes/no after the browser."""
    policy = RoutingPolicy()
    policy.join("ext", "extension", "ff", browser="Firefox 153.8.0", capabilities=EXT_CAPS)
    policy.join("drv", "driver", "ff", capabilities=DRV_CAPS)
    out = _human("doctor", {"devices": [d.model_dump() for d in policy.devices()]})
    assert out == (
        "device ff: extension connected, driver online, input trusted, browser Firefox 153.8.0, "
        "capabilities closedShadowVisible=yes coordinateRoute=no syntheticInput=yes "
        "trustedInput=yes"
    )
