"""bridge/ax_facts.py and supervisor/frames.py ``ax_fact``, called directly: how a
snapshot line is rewritten from Chromium's accessibility facts (issue 30 item 8), and how
a CDP AXNode becomes a fact. The browser side is tests/e2e/test_ax_internals.py."""

from __future__ import annotations

from typing import Any

from trustbridge.bridge import ax_facts
from trustbridge.bridge.protocol import errors as E
from trustbridge.supervisor.frames import ax_fact

SNAP = "\n".join([
    "- paragraph [ref=e1]: Settings",
    "- generic [focused] [ref=e2]",
    '- generic "Plain" [ref=e3]',
    "- button [expanded] [ref=e4]: x",
    "- iframe [ref=e5]",
    '  - generic [ref=f1e6]',
])


def test_rewrite_replaces_role_and_name_keeps_states_and_value() -> None:
    facts = {"e2": {"role": "switch", "name": 'Dark "mode"', "states": ["checked"]},
             "e4": {"role": "button", "name": "Normal", "states": ["expanded"]},
             "f1e6": {"role": "checkbox", "name": "Wi-Fi", "states": []}}
    out = ax_facts.rewrite(SNAP, facts).split("\n")
    assert out[1] == '- switch "Dark \\"mode\\"" [checked] [focused] [ref=e2]'
    assert out[2] == '- generic "Plain" [ref=e3]'  # no fact: left alone
    assert out[3] == '- button "Normal" [expanded] [ref=e4]: x'  # no doubled state
    assert out[5] == '  - checkbox "Wi-Fi" [ref=f1e6]'
    assert ax_facts.rewrite(SNAP, {}) == SNAP


async def test_apply_asks_the_driver_once_per_frame_and_survives_its_failure() -> None:
    calls: list[tuple[str, dict[str, Any]]] = []

    async def call(method: str, params: dict[str, Any], _t: float) -> dict[str, Any]:
        calls.append((method, params))
        if params["frameToken"] == "bad":
            raise E.InternalError("tree unreadable")
        return {"facts": {"e2": {"role": "switch", "name": "Dark mode", "states": []},
                          "e9": {"role": "button", "name": "not asked", "states": []}},
                "source": "chromium-ax"}

    result = {"snapshot": SNAP, "mode": "snapshot",
              "axCandidates": {"tok": [["e2", "e2"], ["e3", "e3"]], "bad": [["f1e6", "e6"]]}}
    await ax_facts.apply(result, call)
    assert "axCandidates" not in result
    assert sorted(c[1]["frameToken"] for c in calls) == ["bad", "tok"]
    assert '- switch "Dark mode" [focused] [ref=e2]' in result["snapshot"]
    assert "not asked" not in result["snapshot"]
    assert "  - generic [ref=f1e6]" in result["snapshot"]  # its frame's read failed


async def test_apply_without_a_driver_or_candidates_changes_nothing() -> None:
    """No driver (or no candidate: a page with no such element) asks nothing."""
    calls: list[str] = []

    async def call(method: str, _p: dict[str, Any], _t: float) -> dict[str, Any]:
        calls.append(method)
        return {"facts": {}}

    result = {"snapshot": SNAP, "mode": "snapshot", "axCandidates": {"tok": [["e2", "e2"]]}}
    await ax_facts.apply(result, None)
    assert result == {"snapshot": SNAP, "mode": "snapshot"}
    await ax_facts.apply(result, call)
    assert result == {"snapshot": SNAP, "mode": "snapshot"} and calls == []
    read = {"snapshot": "x", "mode": "read", "axCandidates": {"tok": [["e2", "e2"]]}}
    await ax_facts.apply(read, call)
    assert calls == [] and "axCandidates" not in read


def test_ax_fact_maps_chromium_roles_and_states() -> None:
    node = {"ignored": False, "role": {"value": "switch"}, "name": {"value": "Dark mode"},
            "properties": [{"name": "checked", "value": {"value": "true"}},
                           {"name": "focusable", "value": {"value": True}}]}
    assert ax_fact(node) == {"role": "switch", "name": "Dark mode", "states": ["checked"]}
    mixed = {"role": {"value": "checkBox"}, "name": {"value": "All"},
             "properties": [{"name": "checked", "value": {"value": "mixed"}},
                            {"name": "disabled", "value": {"value": True}}]}
    assert ax_fact(mixed) == {"role": "checkbox", "name": "All",
                              "states": ["disabled", "checked=mixed"]}
    assert ax_fact({"role": {"value": "generic"}, "name": {"value": ""}}) is None
    assert ax_fact({"ignored": True, "role": {"value": "button"}}) is None
