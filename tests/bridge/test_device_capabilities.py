"""Per-device capabilities (from the peers' hellos) in RoutingPolicy.devices() and in the
doctor output; no sockets. The routing rules themselves are in test_routing.py."""

from __future__ import annotations

import pytest

from trustbridge.bridge.cli import _human
from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.routing import RoutingPolicy

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


def test_a_driver_that_comes_after_the_old_one_left_shows_its_own_capabilities() -> None:
    """A second driver is refused while the first is online (its capabilities stay); once
    the first has left, a new driver's capabilities are the device's."""
    policy = RoutingPolicy()
    policy.join("drv1", "driver", "d", capabilities={"trustedInput": True, "coordinateRoute": False})
    with pytest.raises(E.Unauthorized):
        policy.join("drv2", "driver", "d",
                    capabilities={"trustedInput": True, "coordinateRoute": True})
    assert policy.devices()[0].capabilities == {"trustedInput": True, "coordinateRoute": False}
    policy.leave("drv1")
    policy.join("drv3", "driver", "d", capabilities={"trustedInput": True, "coordinateRoute": True})
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
