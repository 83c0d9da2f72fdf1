"""TypedSecrets (bridge/secrets.py): what is remembered, when it is masked, how much."""

from __future__ import annotations

from trustbridge.bridge.secrets import MASK, TypedSecrets

D = "dev1"


def test_only_type_and_fill_of_four_characters_or_more_are_remembered() -> None:
    """click, 3-character text and blank padding are not kept; a kept value is masked
    once its field's line shows the mask."""
    s = TypedSecrets()
    s.typed(D, 1, "e1", {"kind": "click"})
    s.typed(D, 1, "e1", {"kind": "type", "text": "abc"})
    s.typed(D, 1, "e1", {"kind": "type", "text": "  ab  "})
    assert s.mask(D, "abc ab") == "abc ab"
    s.typed(D, 1, "e1", {"kind": "fill", "value": "card 4111"})
    s.learn(D, 1, f'- textbox "Card" [ref=e1]: {MASK}')
    assert s.mask(D, "card 4111 / card%204111 / card+4111") == f"{MASK} / {MASK} / {MASK}"


def test_a_ref_of_another_tab_does_not_mark_the_value() -> None:
    """The mask on tab 2's e1 says nothing about the e1 typed into on tab 1."""
    s = TypedSecrets()
    s.typed(D, 1, "e1", {"kind": "type", "text": "secret-1"})
    s.learn(D, 2, f"- textbox [ref=e1]: {MASK}")
    assert s.mask(D, "secret-1") == "secret-1"


def test_memory_is_bounded_per_device_and_never_shown() -> None:
    """Beyond per_device values the oldest is forgotten; repr shows no value."""
    s = TypedSecrets(per_device=2)
    for n in range(3):
        s.typed(D, 1, f"e{n}", {"kind": "type", "text": f"value-{n}"}, sensitive=True)
    assert s.mask(D, "value-0 value-1 value-2") == f"value-0 {MASK} {MASK}"
    assert "value" not in repr(s)


def test_tab_lists_and_page_results_are_masked_too() -> None:
    """A typed secret the page copied into its title and query is masked in a tabs.list
    result, in newTabs and in a navigate result's own url/title; other tabs are kept."""
    s = TypedSecrets()
    s.typed(D, 1, "e1", {"kind": "type", "text": "sk-live-42"}, sensitive=True)
    listed = {"tabs": [{"tabId": 1, "title": "t sk-live-42", "url": "http://a/?k=sk-live-42"},
                       {"tabId": 2, "title": "other", "url": "http://b/"}],
              "newTabs": [{"tabId": 3, "title": "sk-live-42"}],
              "title": "x sk-live-42", "url": "http://a/?k=sk-live-42"}
    s.scrub_tabs(D, listed)
    assert "sk-live-42" not in repr(listed)
    assert listed["tabs"][1] == {"tabId": 2, "title": "other", "url": "http://b/"}
    assert listed["tabs"][0]["url"] == f"http://a/?k={MASK}"


def test_find_results_are_masked_in_text_lines_and_ancestry() -> None:
    """A typed secret the page echoes is masked in a page.find result's outline text, in
    each match's line and ancestry, and in its url/title; other text is kept."""
    s = TypedSecrets()
    s.typed(D, 1, "e1", {"kind": "type", "text": "sk-live-42"}, sensitive=True)
    found = {"text": '- paragraph "echo sk-live-42" [ref=e5]', "url": "http://a/?k=sk-live-42",
             "title": "t", "matches": [{"ref": "e5", "line": '- paragraph "echo sk-live-42"',
                                        "ancestry": ['- region "sk-live-42 box"', "- main"]}]}
    s.scrub_find(D, found)
    assert "sk-live-42" not in repr(found)
    assert found["matches"][0]["ancestry"][1] == "- main" and found["title"] == "t"
    assert found["matches"][0]["line"] == f'- paragraph "echo {MASK}"'
