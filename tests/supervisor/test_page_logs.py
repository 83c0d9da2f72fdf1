"""supervisor/page_logs.py without a browser: Playwright MCP's levels, the bounded
buffers, the navigation epochs and the static rule, on stand-in Playwright objects."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from trustbridge.bridge.protocol.models import DriverConsoleParams, DriverNetworkParams
from trustbridge.supervisor import page_logs as P


@dataclass(eq=False)
class FakeResponse:
    status: int
    status_text: str = "OK"


@dataclass(eq=False)
class FakeRequest:
    url: str
    resource_type: str = "fetch"
    method: str = "GET"
    frame: Any = None
    nav: bool = False
    failure: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    post_data: str | None = None
    timing: dict[str, float] = field(default_factory=dict)

    def is_navigation_request(self) -> bool:
        return self.nav


@dataclass(eq=False)
class FakeFrame:
    url: str = "http://a/"
    page: Any = None


def console(frame: Any, **params: Any) -> dict[str, Any]:
    return asyncio.run(P.console(frame, DriverConsoleParams(frameToken="t", **params)))


def network(frame: Any, **params: Any) -> dict[str, Any]:
    return asyncio.run(P.network(frame, DriverNetworkParams(frameToken="t", **params)))


def respond(log: P.PageLog, request: FakeRequest, status: int) -> None:
    log.by_request[request].response = FakeResponse(status)  # type: ignore[index,assignment]


def test_levels_are_playwright_mcps() -> None:
    """assert/error → error, warning, debug-like types → debug, anything else → info."""
    assert [P.level_of(t) for t in ("assert", "error", "warning", "log", "table", "trace",
                                    "startGroup", "whatever")] == \
        ["error", "error", "warning", "info", "info", "debug", "debug", "info"]


def test_buffers_keep_the_newest_entries_and_forget_dropped_requests() -> None:
    """At most MAX_ENTRIES per buffer; a request dropped from the buffer is not tracked."""
    log = P.PageLog()
    first = FakeRequest("http://a/0")
    log.add_request(first)  # type: ignore[arg-type]
    for i in range(1, P.MAX_ENTRIES + 5):
        log.add_request(FakeRequest(f"http://a/{i}"))  # type: ignore[arg-type]
        log.add_console({"type": "log", "text": str(i)})
    assert len(log.requests) == len(log.console) == P.MAX_ENTRIES
    assert log.requests[0].id == 6 and first not in log.by_request
    assert log.console[0]["text"] == "5"


def test_console_filters_by_level_and_by_navigation_unless_all() -> None:
    """Counts are of the span, whatever the level; a navigation starts a new span."""
    page, frame = object(), FakeFrame()
    frame.page = page
    log = P._logs[page] = P.PageLog()  # type: ignore[index]
    try:
        log.add_console({"type": "log", "text": "old"})
        log.navigated(frame)  # type: ignore[arg-type]
        for kind in ("error", "warning", "log", "debug"):
            log.add_console({"type": kind, "text": kind})
        got = console(frame, level="warning")
        assert [m["text"] for m in got["messages"]] == ["error", "warning"]
        assert (got["total"], got["errors"], got["warnings"]) == (4, 1, 1)
        every = console(frame, level="debug", all=True)
        assert every["total"] == 5 and every["messages"][0]["text"] == "old"
    finally:
        P._logs.pop(page, None)  # type: ignore[call-overload]


def test_network_hides_successful_static_requests_and_keeps_the_document_in_its_epoch() -> None:
    """A committed navigation moves its own document request into the new span; a
    successful image is static, a failed one and any fetch are not."""
    page, frame = object(), FakeFrame("http://a/next")
    frame.page = page
    log = P._logs[page] = P.PageLog()  # type: ignore[index]
    try:
        log.add_request(FakeRequest("http://a/old.png", "image"))  # type: ignore[arg-type]
        doc = FakeRequest("http://a/next", "document", frame=frame, nav=True)
        log.add_request(doc)  # type: ignore[arg-type]
        respond(log, doc, 200)
        log.navigated(frame)  # type: ignore[arg-type]
        ok_img = FakeRequest("http://a/ok.png", "image")
        bad_img = FakeRequest("http://a/bad.png", "image")
        api = FakeRequest("http://a/api")
        for r in (ok_img, bad_img, api):
            log.add_request(r)  # type: ignore[arg-type]
        respond(log, ok_img, 200)
        respond(log, bad_img, 404)
        respond(log, api, 200)
        got = network(frame)
        assert [r["url"] for r in got["requests"]] == ["http://a/bad.png", "http://a/api"]
        assert got["hiddenStatic"] == 2  # the document and ok.png
        every = network(frame, includeStatic=True)
        assert [r["id"] for r in every["requests"]] == [2, 3, 4, 5]
    finally:
        P._logs.pop(page, None)  # type: ignore[call-overload]


def test_a_console_listing_over_the_result_cap_is_refused_and_nothing_cleared() -> None:
    """issue 32 item 3: 200 messages of 10,000 characters (2 MB) answer RESULT_TOO_LARGE
    with the size and how to narrow it, measured in the supervisor; ``clear`` clears
    nothing then, and a narrower ask (errors only) is answered."""
    import pytest

    from trustbridge.bridge.protocol import errors as E
    from trustbridge.bridge.protocol.limits import RESULT_CAP_BYTES

    page, frame = object(), FakeFrame()
    frame.page = page
    log = P._logs[page] = P.PageLog()  # type: ignore[index]
    try:
        for _ in range(200):
            log.add_console({"type": "log", "text": "x" * P.MAX_TEXT_CHARS})
        log.add_console({"type": "error", "text": "boom"})
        with pytest.raises(E.ResultTooLarge) as caught:
            console(frame, level="info", clear=True)
        assert caught.value.details["bytes"] > 2_000_000
        assert caught.value.details["limitBytes"] == RESULT_CAP_BYTES
        assert "level" in caught.value.advice
        assert len(log.console) == 201  # nothing cleared
        assert [m["text"] for m in console(frame, level="error")["messages"]] == ["boom"]
    finally:
        P._logs.pop(page, None)  # type: ignore[call-overload]
