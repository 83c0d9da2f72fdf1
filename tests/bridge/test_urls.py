"""The URL policy of bridge/urls.py: which URLs page.navigate and tabs.new may load, and
the origin lists (bridge/protocol/origins.py) applied before anything is sent."""

from __future__ import annotations

import pytest

from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.origins import OriginPolicy, parse_origin_list
from trustbridge.bridge.urls import BLOCKED_ORIGIN_NEXT_STEP, check_navigation_url


def policy(allowed: str = "", blocked: str = "") -> OriginPolicy:
    return OriginPolicy(parse_origin_list(allowed), parse_origin_list(blocked))


def test_a_blocked_origin_is_refused_with_the_policy_s_reason_and_a_next_step() -> None:
    """--blocked-origins http://localhost:*: any localhost port is refused; the message is
    the policy's refusal, the details carry it, and the next step names the lists."""
    rules = policy(blocked="http://localhost:*")
    url = "http://localhost:8123/a/page.html?q=1"
    with pytest.raises(E.BadRequest) as info:
        check_navigation_url(url, origins=rules)
    reason = rules.refusal(url)
    assert reason == "http://localhost:8123 is in --blocked-origins (http://localhost:*)"
    assert info.value.message == f"Navigation failed before anything was sent: {reason}."
    assert info.value.details == {"scheme": "http", "reason": reason}
    assert info.value.next_step == BLOCKED_ORIGIN_NEXT_STEP
    assert "--allowed-origins" in info.value.to_payload().nextStep
    check_navigation_url("http://127.0.0.1:8123/", origins=rules)
    check_navigation_url("https://localhost/", origins=rules)  # another scheme: not named


def test_an_allow_list_refuses_every_origin_it_does_not_name() -> None:
    """--allowed-origins example.com: that host over http and https loads, others are
    refused naming the allow list; about:blank is no origin and still loads."""
    rules = policy(allowed="example.com")
    check_navigation_url("https://example.com/x", origins=rules)
    check_navigation_url("http://example.com:8080/", origins=rules)
    check_navigation_url("about:blank", origins=rules)
    with pytest.raises(E.BadRequest, match=r"https://other\.test is not in --allowed-origins"):
        check_navigation_url("https://other.test/", origins=rules)


def test_the_block_list_wins_over_the_allow_list() -> None:
    """An origin on both lists is refused as blocked (Playwright MCP's order)."""
    rules = policy(allowed="*", blocked="https://ads.example")
    with pytest.raises(E.BadRequest, match="is in --blocked-origins"):
        check_navigation_url("https://ads.example/banner", origins=rules)
    check_navigation_url("https://example.org/", origins=rules)


def test_without_a_policy_or_with_an_empty_one_every_http_url_loads() -> None:
    """No policy, or one with no lists: nothing is refused for its origin."""
    for rules in (None, policy()):
        check_navigation_url("http://localhost:8123/", origins=rules)


def test_the_scheme_rules_come_first() -> None:
    """A file: or javascript: URL is refused for its scheme whatever the origin lists say."""
    rules = policy(allowed="*")
    with pytest.raises(E.BadRequest) as info:
        check_navigation_url("file:///etc/passwd", origins=rules)
    assert info.value.details == {"scheme": "file"}
    check_navigation_url("file:///tmp/x.html", allow_file_urls=True, origins=policy(blocked="*"))
    with pytest.raises(E.BadRequest, match="javascript"):
        check_navigation_url("javascript:alert(1)", origins=rules)


@pytest.mark.parametrize("url, scheme, step_says", [
    ("file:///etc/passwd", "file", "http.server --bind 127.0.0.1"),
    ("data:text/html,<p>x", "data", "about:blank"),
    ("javascript:alert(1)", "javascript", "page.evaluate"),
    ("example.com/page", None, "https://"),
    ("chrome://settings", "chrome", "http(s): URL or about:blank"),
])
def test_every_refused_url_says_nothing_was_loaded_and_what_to_do_instead(
        url: str, scheme: str | None, step_says: str) -> None:
    """Each refusal carries its own next step (before, all but the origin lists fell back to
    BadRequest's generic "check the request against the schema", which a well-formed URL
    cannot fix)."""
    with pytest.raises(E.BadRequest) as info:
        check_navigation_url(url)
    assert info.value.details["scheme"] == scheme
    step = info.value.to_payload().nextStep
    assert step_says in step
    assert "schema" not in step
