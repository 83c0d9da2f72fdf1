"""RoutingPolicy.recovering (issue 32 item 2): while a part of a device is being brought
back, the answers that need it name the part, the recovery and the seconds still
expected; with no recovery running they promise none; the record goes when the part is
back."""

from __future__ import annotations

import time

import pytest

from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.routing import RoutingPolicy

pytestmark = pytest.mark.unit


def _policy() -> RoutingPolicy:
    policy = RoutingPolicy()
    policy.join("d1", "driver", "dev", "chromium", {"watchesExtension": True})
    return policy


def test_a_missing_extension_under_recovery_names_it_and_the_wait() -> None:
    policy = _policy()
    policy.recovering["dev"] = {"part": "extension", "action": "restarting the browser",
                                "expectedWaitS": 20, "since": time.monotonic() - 5,
                                "needsDriver": False}
    with pytest.raises(E.DeviceNotConnected) as err:
        policy.route("page.snapshot", "dev")
    assert "extension is being recovered (restarting the browser)" in err.value.message
    assert "retry in about 15 s" in err.value.message
    assert err.value.details["recovering"]["part"] == "extension"


def test_input_without_its_driver_under_a_supervisor_restart_says_so() -> None:
    policy = _policy()
    policy.leave("d1")
    policy.join("e1", "extension", "dev")
    policy.recovering["dev"] = {"part": "supervisor", "action": "starting it again",
                                "expectedWaitS": 20, "since": time.monotonic(),
                                "needsDriver": True}
    with pytest.raises(E.TrustedInputUnavailable) as err:
        policy.route("page.act", "dev")
    assert "supervisor is being recovered" in err.value.message
    assert "Restart its driver" not in err.value.message


def test_no_recovery_no_promise_and_the_record_goes_when_the_part_is_back() -> None:
    policy = _policy()
    with pytest.raises(E.DeviceNotConnected) as err:
        policy.route("page.snapshot", "dev")
    assert "retry in about" not in err.value.message
    policy.recovering["dev"] = {"part": "extension", "action": "x", "expectedWaitS": 20,
                                "since": time.monotonic(), "needsDriver": False}
    policy.join("e1", "extension", "dev")
    assert "dev" not in policy.recovering
    policy.route("page.snapshot", "dev")


def test_no_browser_at_all_while_one_starts_says_it_is_starting() -> None:
    policy = RoutingPolicy()
    policy.recovering["dev"] = {"part": "browser", "action": "the bridge's owner is "
                                "starting it", "expectedWaitS": 20,
                                "since": time.monotonic(), "needsDriver": True}
    with pytest.raises(E.DeviceNotConnected) as err:
        policy.route("page.snapshot", None)
    assert "trustbridge up" not in err.value.message
    assert "starting it" in err.value.message


def test_the_mcp_next_step_during_a_recovery_says_wait_not_restart() -> None:
    from trustbridge.bridge.mcp.tool import error_result

    err = E.DeviceNotConnected("The extension of device 'dev' is not connected; ...",
                               {"device": "dev", "recovering": {
                                   "part": "extension", "action": "x", "expectedWaitS": 12}})
    text = error_result("browser_snapshot", err).content[0].text
    assert "Wait about 12 s" in text and "trustbridge up" not in text
