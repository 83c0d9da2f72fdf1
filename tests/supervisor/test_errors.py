"""supervisor/errors.py: Playwright's error texts map to the project's errors, in order."""

from __future__ import annotations

import pytest
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout

from trustbridge.bridge.protocol import errors as E
from trustbridge.supervisor.errors import NOT_A_FIELD, RULES, map_error, map_playwright_errors

OBSCURED_LOG = (
    "Timeout 500ms exceeded.\nCall log:\n  - waiting for locator\n"
    '    - <div id="overlay"></div> intercepts pointer events\n  - retrying click action'
)


@pytest.mark.parametrize(
    ("exc", "cls", "details"),
    [
        (PlaywrightError("Error: tbloc-count=2; at eval"), E.LocatorNotUnique, {"count": 2}),
        (PlaywrightTimeout("tbloc-count=0; while waiting"), E.LocatorNotUnique, {"count": 0}),
        (PlaywrightTimeout(OBSCURED_LOG), E.ElementObscured,
         {"coveredBy": "div", "timeoutMs": 500}),
        (PlaywrightTimeout("  - element is not enabled"), E.ElementTargetDisabled,
         {"timeoutMs": 500}),
        (PlaywrightTimeout("  - element is not editable"), E.ElementNotEditable,
         {"timeoutMs": 500}),
        (PlaywrightTimeout("  - element is not visible"), E.Timeout,
         {"timeoutMs": 500, "cause": "not-visible"}),
        (PlaywrightTimeout("Timeout 500ms exceeded."), E.Timeout, {"timeoutMs": 500}),
        (PlaywrightError("Element is not attached to the DOM"), E.ElementTargetDetached, {}),
        (PlaywrightError("Target page, context or browser has been closed"),
         E.BrowserOperationUncertain, {}),
        (PlaywrightError("Frame was detached"), E.BrowserOperationUncertain, {}),
        (PlaywrightError("Page crashed"), E.BrowserCrashed, {"what": "renderer"}),
        (PlaywrightError("Target crashed"), E.BrowserCrashed, {"what": "renderer"}),
        (PlaywrightError("SyntaxError: Unexpected token ')'"), E.BadRequest, {}),
        (PlaywrightError("something new"), E.InternalError, {}),
    ],
)
def test_table_maps_each_known_text(exc: PlaywrightError, cls: type, details: dict) -> None:
    """Each known Playwright text becomes its project error with the facts it names."""
    err = map_error(exc, timeout_ms=500)
    assert type(err) is cls
    assert err.details == details


def test_unique_selector_count_wins_over_closed() -> None:
    """The locator count rule comes before "closed": a message with both is LOCATOR_NOT_UNIQUE."""
    err = map_error(PlaywrightError("tbloc-count=3; (page closed meanwhile)"))
    assert isinstance(err, E.LocatorNotUnique) and err.details == {"count": 3}


def test_detached_element_wins_over_the_generic_gone_rule() -> None:
    """"not attached to the DOM" is ELEMENT_TARGET_DETACHED although "detached"-like rules follow."""
    assert isinstance(map_error(PlaywrightError("Element is not attached to the DOM; frame detached")),
                      E.ElementTargetDetached)


def test_timeout_rules_do_not_apply_to_other_errors() -> None:
    """An error that is no timeout is never called TIMEOUT or OBSCURED by the call-log rules."""
    err = map_error(PlaywrightError(OBSCURED_LOG.replace("Timeout 500ms exceeded.", "boom")))
    assert isinstance(err, E.InternalError)


def test_a_timeout_mentioning_closed_stays_a_timeout() -> None:
    """The "closed" rule is for errors only: a timeout whose log says "closed" is TIMEOUT."""
    assert type(map_error(PlaywrightTimeout("waiting; popup closed"), timeout_ms=9)) is E.Timeout


def test_order_puts_the_count_first_and_the_plain_timeout_after_its_causes() -> None:
    """RULES order: locator count first; every timeout cause before the catch-all timeout."""
    names = [r.name for r in RULES]
    assert names[0] == "locator-count"
    catch_all = names.index("timeout")
    for cause in ("obscured", "disabled", "not-editable", "invisible"):
        assert names.index(cause) < catch_all
    assert names.index("detached-element") < names.index("gone")


def test_context_manager_raises_from_the_playwright_error() -> None:
    """map_playwright_errors raises the mapped error with the Playwright error as __cause__,
    and uses the caller's facts (the key pressed)."""
    original = PlaywrightError("Unknown key: \"Foo\"")
    with pytest.raises(E.BadRequest) as info:
        with map_playwright_errors(key="Control+Foo"):
            raise original
    assert info.value.__cause__ is original
    assert "(11 characters)" in info.value.message


def test_context_manager_lets_project_errors_through() -> None:
    """A project error raised inside passes unchanged (contexts nest)."""
    mine = E.RefNotFound("gone", {"ref": "e1"})
    with pytest.raises(E.RefNotFound) as info:
        with map_playwright_errors(timeout_ms=1):
            with map_playwright_errors(wanted=True):
                raise mine
    assert info.value is mine


def test_state_unchanged_is_value_not_set_with_the_wanted_state() -> None:
    """set_checked's "did not change its state" is ELEMENT_VALUE_NOT_SET: expected the
    state asked for, actual the other one, cause unchanged."""
    with pytest.raises(E.ElementValueNotSet) as info:
        with map_playwright_errors(wanted=False):
            raise PlaywrightError("Clicking the checkbox did not change its state")
    assert info.value.details == {"expected": False, "actual": True, "cause": "unchanged"}


def test_unknown_key_is_never_echoed() -> None:
    """An unknown key name (maybe a secret) is not in the message, details or next step."""
    with pytest.raises(E.BadRequest) as info:
        with map_playwright_errors(key="Shift+hunter2"):
            raise PlaywrightError('Unknown key: "hunter2"')
    assert "hunter2" not in info.value.to_payload().model_dump_json()
    assert "(13 characters)" in info.value.message


@pytest.mark.parametrize("text", [
    "Error: Element is not an <input>, <textarea> or <select> element",
    "Error: Node is not an <input>, <textarea> or <select> element",
    "Error: Not an <input> element",
])
def test_not_a_field_recognises_every_refusal_to_read_a_value(text: str) -> None:
    """Playwright's refusals to read a non-field's value (input_value on a contenteditable
    says "Node is not an <input>") are a fact about the element, never INTERNAL_ERROR."""
    assert NOT_A_FIELD.search(text)


def test_a_crash_is_recognised_before_the_generic_gone_rule() -> None:
    """"crashed" is BROWSER_CRASHED (renderer), not the unknown of a page that went away."""
    names = [r.name for r in RULES]
    assert names.index("crashed") < names.index("gone")
