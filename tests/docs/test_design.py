"""docs/design.md is the design the code cites: every cited section exists, §2 has the
rules the code names, and §6 explains every wire error code."""

from __future__ import annotations

import re
from pathlib import Path

from trustbridge.bridge.protocol.errors import ErrorCode

ROOT = Path(__file__).resolve().parents[2]
DESIGN = ROOT / "docs" / "design.md"
CITING = ("bridge", "supervisor", "extension/src", "docs", "tests", "scripts")
CITATION = re.compile(r"design\.md\s+§(\d+(?:\.\d+)?)((?:,\s*§\d+)*)(?:\s+rule\s+(\d+))?")


def _sections(text: str) -> set[str]:
    """Section numbers of the design's headings (``## §2 …``, ``### §5.1 …``)."""
    return set(re.findall(r"^#{2,3} §(\d+(?:\.\d+)?) ", text, re.M))


def _section(text: str, number: str) -> str:
    """The body of top-level section ``number`` (up to the next ``## `` heading)."""
    start = re.search(rf"^## §{re.escape(number)} .*$", text, re.M)
    assert start is not None, f"no section §{number}"
    end = re.search(r"^## ", text[start.end():], re.M)
    return text[start.end(): start.end() + end.start() if end else len(text)]


def _citations() -> list[tuple[str, str, str | None]]:
    """(file:line, section, rule or None) for every ``design.md §N [rule M]`` in the repo."""
    found = []
    for base in CITING:
        for path in sorted((ROOT / base).rglob("*")):
            if not path.is_file() or path.suffix not in {".py", ".js", ".mjs", ".md"} \
                    or path == DESIGN or "node_modules" in path.parts:
                continue
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                for m in CITATION.finditer(line):
                    where = f"{path.relative_to(ROOT)}:{number}"
                    found.append((where, m.group(1), m.group(3)))
                    found += [(where, extra, None) for extra in re.findall(r"§(\d+)", m.group(2))]
    return found


def test_the_design_has_the_eleven_numbered_sections() -> None:
    """Top-level sections §1 to §11 exist, in order, and nothing beyond them."""
    tops = re.findall(r"^## §(\d+) ", DESIGN.read_text(), re.M)
    assert tops == [str(n) for n in range(1, 12)]


def test_every_cited_section_exists() -> None:
    """Each `design.md §N` in code, tests, scripts and docs names a section the design has."""
    sections = _sections(DESIGN.read_text())
    citations = _citations()
    assert citations, "no citations found: the pattern no longer matches the code"
    missing = [(where, sec) for where, sec, _ in citations if sec not in sections]
    assert missing == []


def test_every_cited_rule_is_one_of_section_2s_numbered_rules() -> None:
    """`design.md §2 rule N` citations name one of the rules §2 numbers (1-7)."""
    rules = set(re.findall(r"^(\d+)\. \*\*", _section(DESIGN.read_text(), "2"), re.M))
    assert rules == {str(n) for n in range(1, 8)}
    bad = [(where, rule) for where, sec, rule in _citations()
           if rule is not None and (sec != "2" or rule not in rules)]
    assert bad == []


def test_section_6_explains_every_wire_error_code() -> None:
    """§6 has one table row per ErrorCode in bridge/protocol/errors.py, and no others."""
    rows = re.findall(r"^\| `([A-Z_]+)` \|", _section(DESIGN.read_text(), "6"), re.M)
    assert sorted(rows) == sorted(code.value for code in ErrorCode)
    assert len(rows) == len(set(rows))
