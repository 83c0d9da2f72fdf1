"""scripts/mcp_conformance.py: its comparison logic on recorded outcomes, and a tiny run of
the real script against both servers (``trustbridge mcp`` and Playwright MCP on headless
Chromium), checking what the page recorded on each side."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "mcp_conformance", REPO / "scripts" / "mcp_conformance.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


conf = _load()


def _step(tool: str, **kw: object) -> object:
    base = {"listed": True, "ok": True, "shape": {"isError": False, "content": ["text"],
                                                  "sections": ["### Page"]}}
    return conf.StepResult(tool, kw.pop("note", ""), **{**base, **kw})


def test_find_ref_by_role_and_name_then_name() -> None:
    """A ref is found by role and name in either server's snapshot lines, else by name."""
    ours = '- button "Count" [ref=e1]\n- textbox "Name" [ref=e2]: Ada'
    theirs = '  - generic [ref=e3]:\n    - button "Upload file" [active] [ref=e36]'
    assert conf.find_ref(ours, conf.Ref("textbox", "Name")) == "e2"
    assert conf.find_ref(theirs, conf.Ref("button", "Upload file")) == "e36"
    assert conf.find_ref(theirs, conf.Ref("textbox", "Upload file")) == "e36"
    assert conf.find_ref(ours, conf.Ref("button", "Missing")) is None


def test_changes_are_per_step_deltas() -> None:
    """A step's outcome counts only its own events and trusts only its own events."""
    before = {"count": {"n": 2, "u": 1}, "keys": {"n": 1, "u": 0, "seq": ["a"]}}
    after = {"count": {"n": 3, "u": 1}, "keys": {"n": 3, "u": 0, "seq": ["a", "b", "Enter"]},
             "loaded": True}
    got = conf.changes(before, after, ("count", "keys", "loaded", "hover"))
    assert got == {"count": {"n": 1, "trusted": True},
                   "keys": {"n": 2, "trusted": True, "seq": ["b", "Enter"]},
                   "loaded": True, "hover": None}


def test_compare_rows() -> None:
    """Same outcome is ok; an argument trustbridge refused, a missing tool, and an outcome
    that differs only in trust are rows with the difference named."""
    same = conf.compare([_step("browser_click", outcome={"count": {"n": 1}})],
                        [_step("browser_click", outcome={"count": {"n": 1}})])
    assert same[0].both_ok and same[0].differences == []
    adapted = conf.compare([_step("browser_hover", adapted=["refuses `target`; took `ref`"])],
                           [_step("browser_hover")])
    assert not adapted[0].both_ok
    assert adapted[0].differences == ["trustbridge refuses `target`; took `ref`"]
    missing = conf.compare([_step("browser_find", listed=False)], [_step("browser_find")])
    assert missing[0].differences == ["missing on trustbridge"]
    trust = conf.compare([_step("browser_select_option", outcome={"s": {"v": 1, "trusted": True}})],
                         [_step("browser_select_option", outcome={"s": {"v": 1, "trusted": False}})])
    assert not trust[0].both_ok and any(d.startswith("intended:") for d in trust[0].differences)
    worse = conf.compare([_step("browser_click", outcome={"s": {"v": 1, "trusted": False}})],
                         [_step("browser_click", outcome={"s": {"v": 1, "trusted": True}})])
    assert not any(d.startswith("intended:") for d in worse[0].differences)


def test_refused_argument_paths() -> None:
    """The refused fields are read from trustbridge's BAD_REQUEST text and dropped by path."""
    text = ("Error BAD_REQUEST in browser_take_screenshot: Invalid arguments: type: Extra "
            "inputs are not permitted; fields.0.target: Extra inputs are not permitted.")
    assert conf.refused_fields(text) == ["type", "fields.0.target"]
    args = {"type": "png", "fields": [{"target": "e1", "name": "x"}]}
    assert conf.drop_path(conf.drop_path(args, "type"), "fields.0.target") == {
        "fields": [{"name": "x"}]}
    assert conf.rename_args({"fields": [{"target": "e1"}], "startTarget": "e2"}) == {
        "fields": [{"ref": "e1"}], "startRef": "e2"}


def _playwright_mcp() -> None:
    """Install Playwright MCP from the lock file when npm can; skip when it cannot."""
    if conf.playwright_version() is not None:
        return
    npm = shutil.which("npm")
    if shutil.which("node") is None or npm is None:
        pytest.skip("node/npm missing: Playwright MCP (the peer) cannot run here")
    proc = subprocess.run([npm, "ci", "--prefix", str(conf.CONFORMANCE), "--no-audit",
                           "--no-fund"], capture_output=True, text=True, timeout=300,
                          check=False, env={**__import__("os").environ,
                                            "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"})
    if proc.returncode != 0 or conf.playwright_version() is None:
        pytest.skip(f"npm ci --prefix scripts/conformance failed: {proc.stderr[-300:]}")


@pytest.mark.browser
@pytest.mark.timeout(240)
async def test_tiny_run_against_both_servers() -> None:
    """navigate + click + hover on both servers: each page saw one trusted click and one
    trusted mouseenter, and the report has a row per step."""
    if not Path(conf.CHROMIUM).exists():
        pytest.skip(f"{conf.CHROMIUM} missing: both servers run Debian's Chromium")
    _playwright_mcp()
    report = await conf.conformance({"browser_click", "browser_hover"})
    calls = report["calls"]
    for side in ("trustbridge", "playwright"):
        click = next(c for c in calls[side] if c["tool"] == "browser_click")
        assert click["outcome"] == {"count": {"n": 1, "trusted": True}}, (side, click)
        hover = next(c for c in calls[side] if c["tool"] == "browser_hover")
        assert hover["outcome"] == {"hover": {"n": 1, "trusted": True}}, (side, hover)
    tools = [r["tool"] for r in report["rows"]]
    assert tools[0] == "browser_navigate" and "browser_hover" in tools
    assert report["playwrightMcp"] == "0.0.86"
