"""One extension source tree for Chromium and Firefox: only extension/src/shim/ names a
browser namespace (chrome.* / browser.*); everything else imports `api` from the shim,
and page/ code imports nothing browser-specific at all (it stays pure DOM)."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "extension" / "src"
NAMESPACE = re.compile(
    r"\bglobalThis\.(?:chrome|browser)\b|(?<![\w.$])(?:chrome|browser)\s*(?:\.|\?\.|\[)")
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
STRING = re.compile(r"'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\"|`(?:\\.|[^`\\])*`", re.DOTALL)


def _code(path: Path) -> str:
    """The file without comments and string literals."""
    return STRING.sub("''", COMMENT.sub("", path.read_text()))


def test_only_the_shim_touches_browser_namespaces() -> None:
    """No chrome.* / browser.* outside extension/src/shim/."""
    offenders = [
        str(p.relative_to(SRC)) for p in sorted(SRC.rglob("*.js"))
        if "shim" not in p.relative_to(SRC).parts and NAMESPACE.search(_code(p))
    ]
    assert offenders == []


def test_page_code_does_not_import_the_shim() -> None:
    """page/ stays pure DOM: it never imports the shim (callers pass what it needs)."""
    offenders = [str(p.relative_to(SRC)) for p in sorted((SRC / "page").rglob("*.js"))
                 if "shim/" in p.read_text()]
    assert offenders == []


def test_the_guard_sees_a_namespace_call(tmp_path: Path) -> None:
    """The pattern catches real calls and ignores comments and strings."""
    f = tmp_path / "x.js"
    f.write_text("// chrome.tabs in a comment\nconst s = 'browser.tabs';\n")
    assert not NAMESPACE.search(_code(f))
    f.write_text("await chrome.tabs.query({});\n")
    assert NAMESPACE.search(_code(f))
    f.write_text("const api = globalThis.browser ?? x;\n")
    assert NAMESPACE.search(_code(f))
    f.write_text("this.browser = info.browser.name;\n")  # properties named browser
    assert NAMESPACE.search(_code(f)) is None
    f.write_text("browser?.runtime.id\n")
    assert NAMESPACE.search(_code(f))
