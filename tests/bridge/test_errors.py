"""bridge/protocol/errors.py: typed facts, next steps, and the wire round trip."""

from __future__ import annotations

import pytest

from trustbridge.bridge.protocol import errors as E


def test_both_constructor_forms_give_the_same_facts() -> None:
    """Cls(message, details) and Cls(message, **facts) set the same typed attributes and details."""
    a = E.RefNotFound("Ref e9 is unknown.", {"ref": "e9", "tabId": 3})
    b = E.RefNotFound("Ref e9 is unknown.", ref="e9", tabId=3)
    assert (a.ref, a.tabId, a.details) == (b.ref, b.tabId, b.details) == ("e9", 3,
                                                                         {"ref": "e9", "tabId": 3})


def test_a_fact_not_given_is_none_and_an_unknown_one_is_refused() -> None:
    """Missing facts read None; a keyword that is not a fact of the class is a TypeError."""
    err = E.TrustedInputUnavailable("Driver offline.")
    assert err.device is None and err.details == {}
    with pytest.raises(TypeError, match="LocatorNotUnique has no facts"):
        E.LocatorNotUnique("x", ref="e1")


def test_every_code_has_its_class_and_a_default_next_step() -> None:
    """Each wire code maps to a class of that code with a next step of its own."""
    steps = set()
    for code in E.ErrorCode:
        cls = E.error_class(code)
        assert cls.code is code
        assert cls.DEFAULT_NEXT_STEP and cls.DEFAULT_NEXT_STEP != E.TrustbridgeError.DEFAULT_NEXT_STEP
        steps.add(cls.DEFAULT_NEXT_STEP)
    assert len(steps) == len(E.ErrorCode)


def test_wire_round_trip_keeps_class_facts_and_a_given_next_step() -> None:
    """to_payload → error_from_payload gives the same class, facts and next step."""
    sent = E.LocatorNotUnique("Matched 2.", count=2, next_step="Scroll the list first.")
    payload = sent.to_payload()
    assert payload.nextStep == "Scroll the list first."
    back = E.error_from_payload(payload)
    assert type(back) is E.LocatorNotUnique
    assert (back.count, back.next_step, back.advice) == (2, "Scroll the list first.",
                                                         "Scroll the list first.")


def test_class_default_next_step_travels_but_is_not_taken_for_a_specific_one() -> None:
    """Without a given step the wire carries the class default; restored, next_step is None
    (so surfaces may phrase the general advice) and advice is that default."""
    payload = E.BrowserTabClosed("Tab 4 is gone.", tabId=4).to_payload()
    assert payload.nextStep == E.BrowserTabClosed.DEFAULT_NEXT_STEP
    back = E.error_from_payload(payload)
    assert back.next_step is None and back.advice == E.BrowserTabClosed.DEFAULT_NEXT_STEP


def test_payload_without_next_step_from_an_older_peer_restores() -> None:
    """A wire error without nextStep (the extension sends none) restores with the default advice."""
    payload = E.ErrorPayload.model_validate(
        {"code": "REF_NOT_FOUND", "message": "Ref e1 ...", "details": {"ref": "e1"}})
    back = E.error_from_payload(payload)
    assert type(back) is E.RefNotFound and back.ref == "e1"
    assert back.advice == E.RefNotFound.DEFAULT_NEXT_STEP


def test_unknown_code_is_internal_error() -> None:
    """A code this version does not know maps to InternalError."""
    assert E.error_class("SOMETHING_NEW") is E.InternalError
