"""scripts/corpus_diff.py's pure parts: the tasks file, ref lookup, the outcome check and
the accessibility agreement count (the benchmark itself is run by hand)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    sys.path.insert(0, str(REPO / "scripts"))  # it imports mcp_conformance beside it
    spec = importlib.util.spec_from_file_location("corpus_diff",
                                                  REPO / "scripts" / "corpus_diff.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


cd = _load()


def test_every_task_is_well_formed_and_its_hand_written_page_exists() -> None:
    """Each task has a page, words, steps of known verbs and a source; every page under
    pages/ exists and loads the shared record (library pages need their build)."""
    tasks = cd.load_tasks()
    assert len(tasks) >= 60
    assert len({t.name for t in tasks}) == len(tasks)
    for t in tasks:
        assert t.task and t.source and t.steps, t
        for verb, role, name, *rest in t.steps:
            tool, _ = cd.mcp_args(verb, role, name, rest[0] if rest else {})
            assert tool.startswith("browser_")
        if t.page.startswith("pages/"):
            page = cd.CORPUS / t.page
            assert 'src="record.js"' in page.read_text(), page
        else:
            assert any((cd.CORPUS / "lib" / "src").glob(Path(t.page).stem + ".*")), t.page


def test_find_ref_takes_role_and_name_or_an_unnamed_element_of_the_role() -> None:
    snap = ('- iframe "Body" [ref=e5]\n  - textbox [multiline] [ref=f1e6]\n'
            '- textbox "Name" [ref=e7]')
    assert cd.find_ref(snap, cd.mc.Ref("textbox", "Name")) == "e7"
    assert cd.find_ref(snap, cd.mc.Ref("textbox", "")) == "f1e6"
    assert cd.find_ref(snap, cd.mc.Ref("button", "")) is None
    missing: list[str] = []
    assert cd.resolve({"target": cd.mc.Ref("button", "Go")}, snap, missing) == {"target": "e0"}
    assert missing == ['button "Go"']


def test_outcome_needs_the_value_and_no_untrusted_event() -> None:
    assert cd.outcome_cause(json.dumps(["Banana", 0]), "Banana") == (True, "")
    ok, cause = cd.outcome_cause(json.dumps(["Banana", 2]), "Banana")
    assert not ok and "2 untrusted" in cause
    ok, cause = cd.outcome_cause(json.dumps([None, 0]), "Banana")
    assert not ok and 'recorded null, expected "Banana"' in cause
    assert cd.outcome_cause("<probe error: x>", "a")[0] is False


def test_agreement_counts_role_name_and_ref() -> None:
    snap = '- button "Save" [ref=e1]\n- checkbox "Terms"\n- link "Docs" [ref=e3]'
    hit, misses = cd.agreement([("button", "Save"), ("checkbox", "Terms"),
                                ("link", "Docs"), ("tab", "More")], snap)
    assert hit == 2 and misses == ['checkbox "Terms"', 'tab "More"']
