"""Playwright's errors mapped to the project's, in one ordered table (docs/design.md §6).

Playwright reports every failure as ``playwright.async_api.Error`` (``TimeoutError`` is a
subclass) with its cause only in the message text. The driver and the verbs
(supervisor/driver.py, supervisor/actions.py) run their Playwright calls inside
:func:`map_playwright_errors`, which raises the project error of the first rule in
:data:`RULES` whose pattern the message matches, ``from`` the Playwright error (as httpx
maps httpcore's exceptions). Project errors raised inside pass through untouched, so
contexts nest: an inner one with more facts (``key``, ``wanted``) maps first.

Order matters: the unique selector's own refusal (``tbloc-count=N;``, locator_engine.py)
comes first, since it travels inside timeouts and other errors alike; the causes a
timeout's call log names come before the plain timeout; a detached element before the
generic "closed / detached" (its text also says "detached"-like things).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout

from trustbridge.bridge.protocol import errors as E

from .locator_engine import NOT_UNIQUE_COUNT

Applies = Literal["any", "timeout", "error"]
Make = Callable[[re.Match[str], str, dict[str, Any]], E.TrustbridgeError]


@dataclass(frozen=True)
class Rule:
    """One row of the table.

    Attributes:
        name: what the row recognises (for tests and logs).
        pattern: searched in the Playwright error's message.
        applies: ``timeout``: only to Playwright's TimeoutError; ``error``: only to other
            errors; ``any``: both.
        make: builds the project error from the match, the message and the caller's
            facts (``timeout_ms``, ``key``, ``wanted``; absent ones are not used).
    """

    name: str
    pattern: re.Pattern[str]
    applies: Applies
    make: Make


def _locator_not_unique(m: re.Match[str], _text: str, _facts: dict[str, Any]) -> E.TrustbridgeError:
    return locator_not_unique(int(m.group(1)))


def locator_not_unique(count: int) -> E.LocatorNotUnique:
    """LOCATOR_NOT_UNIQUE for a CSS locator that matched ``count`` elements, not one."""
    return E.LocatorNotUnique(
        f"The locator matched {count} elements at action time, not exactly one; "
        "the page changed since the snapshot. Take a new snapshot.",
        {"count": count},
    )


def _timeout_facts(facts: dict[str, Any]) -> dict[str, Any]:
    return {"timeoutMs": facts["timeout_ms"]} if facts.get("timeout_ms") is not None else {}


def _obscured(m: re.Match[str], _text: str, facts: dict[str, Any]) -> E.TrustbridgeError:
    return E.ElementObscured(
        f"Another element (<{m.group(1)}>) covers the target's click point; close or "
        "scroll it away, then retry.",
        {"coveredBy": m.group(1), **_timeout_facts(facts)},
    )


def _disabled(_m: re.Match[str], _text: str, facts: dict[str, Any]) -> E.TrustbridgeError:
    return E.ElementTargetDisabled(
        "The target is disabled; wait until it is enabled.", _timeout_facts(facts))


def _not_editable(_m: re.Match[str], _text: str, facts: dict[str, Any]) -> E.TrustbridgeError:
    return E.ElementNotEditable(
        "The target does not accept text (readonly or disabled); nothing was typed.",
        _timeout_facts(facts))


def _invisible(_m: re.Match[str], _text: str, facts: dict[str, Any]) -> E.TrustbridgeError:
    return E.Timeout(
        "The target stayed invisible; scroll or open what hides it, then retry.",
        {**_timeout_facts(facts), "cause": "not-visible"})


def _timeout(_m: re.Match[str], _text: str, facts: dict[str, Any]) -> E.TrustbridgeError:
    ms = facts.get("timeout_ms")
    within = f"within {ms} ms" if ms is not None else "in time"
    return E.Timeout(f"The target did not become actionable {within}.", _timeout_facts(facts))


def _detached(_m: re.Match[str], _text: str, _facts: dict[str, Any]) -> E.TrustbridgeError:
    return E.ElementTargetDetached(
        "The element left the document before the action; take a new snapshot.")


KEY_NAMES_URL = "https://playwright.dev/python/docs/api/class-keyboard#keyboard-press"
"""The list of key names ``press`` takes (Playwright's, which the driver passes on)."""


def _unknown_key(_m: re.Match[str], _text: str, facts: dict[str, Any]) -> E.TrustbridgeError:
    # The key name is never echoed: an agent may have sent a secret as a key (issue 13
    # item 7); its length is enough to find the mistake. Playwright's own message
    # ("Unknown key: \"...\"") stays behind as the __cause__, never on the wire.
    key = facts.get("key")
    size = f" ({len(key)} characters)" if isinstance(key, str) else ""
    return E.BadRequest(
        f"Unknown key name{size}; see the key names list ({KEY_NAMES_URL}): Enter, "
        "ArrowDown, a, Control+A ...", next_step="Use a key name from that list.")


def _not_checkable(_m: re.Match[str], _text: str, _facts: dict[str, Any]) -> E.TrustbridgeError:
    return E.BadRequest("The target is not a checkbox, radio or switch.")


def _state_unchanged(_m: re.Match[str], _text: str, facts: dict[str, Any]) -> E.TrustbridgeError:
    # Playwright read the state back after its click: the page kept the old one.
    wanted = facts.get("wanted")
    actual = None if wanted is None else not wanted
    return E.ElementValueNotSet(
        "The trusted click landed but the control did not change state; the page "
        "refused it.", expected=wanted, actual=actual, cause="unchanged")


def _crashed(_m: re.Match[str], _text: str, _facts: dict[str, Any]) -> E.TrustbridgeError:
    return E.BrowserCrashed(
        "The tab's renderer crashed during the action; what it did is lost with the page "
        "and it was not repeated.", what="renderer")


def _gone(_m: re.Match[str], _text: str, _facts: dict[str, Any]) -> E.TrustbridgeError:
    return E.BrowserOperationUncertain(
        "The page or frame went away during the action; it may have partly happened and "
        "will not be repeated. Take a new snapshot.")


def _bad_selector(_m: re.Match[str], _text: str, _facts: dict[str, Any]) -> E.TrustbridgeError:
    return E.BadRequest("The extension produced a locator the driver cannot parse.")


RULES: tuple[Rule, ...] = (
    # supervisor/locator_engine.py: the unique selector throws `tbloc-count=N;`.
    Rule("locator-count", NOT_UNIQUE_COUNT, "any", _locator_not_unique),
    # Playwright's call log: `<div id="overlay"></div> intercepts pointer events`, or
    # `<span>…</span> from <div …>…</div> subtree intercepts pointer events`.
    Rule("obscured", re.compile(r"- <([a-z0-9-]+)[^\n]*? intercepts pointer events"),
         "timeout", _obscured),
    Rule("disabled", re.compile(r"element is not enabled|element is disabled"), "timeout",
         _disabled),
    Rule("not-editable", re.compile(r"element is not editable|readonly"), "timeout",
         _not_editable),
    Rule("invisible", re.compile(r"element is not visible"), "timeout", _invisible),
    Rule("timeout", re.compile(r""), "timeout", _timeout),
    Rule("detached-element", re.compile(r"Element is not attached|not attached to the DOM"),
         "error", _detached),
    Rule("unknown-key", re.compile(r"Unknown key"), "error", _unknown_key),
    Rule("not-checkable", re.compile(r"Not a checkbox or radio button"), "error",
         _not_checkable),
    Rule("state-unchanged", re.compile(r"did not change its state"), "error",
         _state_unchanged),
    # Before "gone": a crashed renderer is a fact about the tab, not an unknown.
    Rule("crashed", re.compile(r"(?:Target|Page) crashed", re.IGNORECASE), "error", _crashed),
    Rule("gone", re.compile(r"closed|detached|crash", re.IGNORECASE), "error", _gone),
    Rule("bad-selector", re.compile(r"Unexpected token|is not a valid selector"), "error",
         _bad_selector),
)
"""The table, first match wins; an error no rule matches is INTERNAL_ERROR."""

NOT_A_FIELD = re.compile(r"(?:Element|Node) is not an <input>|Not an <input>", re.IGNORECASE)
"""Playwright's refusal to read or edit an element that is no input, textarea or select
(``is_editable``, ``input_value``): a fact about the element, not a failure."""


def map_error(exc: PlaywrightError, **facts: Any) -> E.TrustbridgeError:
    """The project error for a Playwright error: the first matching rule of RULES.

    Args:
        exc: the Playwright error (a TimeoutError too).
        facts: what the caller knows: ``timeout_ms`` (the action's timeout, ms), ``key``
            (the key pressed), ``wanted`` (the checked state asked for).
    """
    text = str(exc)
    timed_out = isinstance(exc, PlaywrightTimeout)
    for rule in RULES:
        if rule.applies == ("error" if timed_out else "timeout"):
            continue
        if m := rule.pattern.search(text):
            return rule.make(m, text, facts)
    first = text.splitlines()[0][:200] if text else type(exc).__name__
    return E.InternalError(f"The browser rejected the action: {first}")


@contextlib.contextmanager
def map_playwright_errors(**facts: Any) -> Iterator[None]:
    """Raise the project error of any Playwright error raised inside, ``from`` it.

    Args:
        facts: passed to :func:`map_error` (``timeout_ms``, ``key``, ``wanted``).

    Raises:
        TrustbridgeError: the mapped error (see RULES); project errors raised inside
            pass through as they are.
    """
    try:
        yield
    except PlaywrightError as exc:
        raise map_error(exc, **facts) from exc
