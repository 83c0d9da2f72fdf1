"""The SDK's result types (bridge/sdk_results.py) name the optional fields the protocol's
results carry (bridge/protocol/results.py), typed as they arrive."""

from __future__ import annotations

import typing
from typing import Any, NotRequired

from trustbridge.bridge import sdk_results as S
from trustbridge.bridge.protocol import results as R


def test_act_result_names_the_optional_fields_of_issues_14_15_and_18() -> None:
    """hit, fastPath, fastRefused, downloads and fileChooser are NotRequired keys of the
    SDK's ActResult, each the type the bridge sends and each a protocol ActResult field."""
    hints = typing.get_type_hints(S.ActResult, include_extras=True)
    expected = {"hit": NotRequired[dict[str, Any]], "fastPath": NotRequired[bool],
                "fastRefused": NotRequired[str], "downloads": NotRequired[list[dict[str, Any]]],
                "fileChooser": NotRequired[dict[str, Any]]}
    assert {k: hints.get(k) for k in expected} == expected
    assert set(expected) <= set(R.ActResult.model_fields)
