"""Where the optional case corpus is looked for, and the skip reason when it is absent."""

from __future__ import annotations

from pathlib import Path

from .corpus import absent_reason, case_dirs, corpus_folder


def test_env_variable_wins_over_the_folder_beside_the_clone(tmp_path: Path) -> None:
    """$TRUSTBRIDGE_CASES names the corpus; without it, shared/cases in the clone's parent."""
    repo = tmp_path / "clone"
    assert corpus_folder({"TRUSTBRIDGE_CASES": "/x/cases"}, repo) == Path("/x/cases")
    assert corpus_folder({}, repo) == tmp_path / "shared" / "cases"
    assert corpus_folder({"TRUSTBRIDGE_CASES": ""}, repo) == tmp_path / "shared" / "cases"


def test_only_numbered_folders_with_a_case_file_count(tmp_path: Path) -> None:
    """NN-slug folders holding case.json are cases, sorted; others are not."""
    for name, has_case in [("10-b", True), ("02-a", True), ("03-empty", False), ("notes", True)]:
        (tmp_path / name).mkdir()
        if has_case:
            (tmp_path / name / "case.json").write_text("{}")
    assert [p.name for p in case_dirs(tmp_path)] == ["02-a", "10-b"]
    assert case_dirs(tmp_path / "missing") == []


def test_absent_corpus_gives_a_reason_naming_the_place_and_the_variable(tmp_path: Path) -> None:
    """No cases: the reason says where it looked and how to provide the corpus; cases: None."""
    reason = absent_reason(tmp_path / "nowhere", [])
    assert reason is not None
    assert str(tmp_path / "nowhere") in reason and "TRUSTBRIDGE_CASES" in reason
    assert absent_reason(tmp_path, [tmp_path / "01-x"]) is None
