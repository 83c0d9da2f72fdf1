"""Unit tests of the delivery receipt's file-input and quiet signs (extension/src/page/receipt.js),
run in Node's own test runner: tests/extension/receipt_units.test.mjs."""

from __future__ import annotations

from .node_units import run_node_units


def test_receipt_units_in_node() -> None:
    """A file input clicked right after a receipt's press marks it ``fileInput`` (pushed
    again when already pushed; with the first push for a click on the input itself); no
    mark for other elements, disabled inputs, no press or a press too long ago. One push
    per delivered click (no quiet sign since protocol 4); the download sign for a trusted
    navigate event with a download request, none without the Navigation API, and for a
    click that follows a download link (with or without it; none for a plain link, a
    prevented click or an untrusted one); the
    submission sign for a trusted formdata event of a form that navigates this frame
    (pushed again after the first push), none for a named target or an untrusted event."""
    run_node_units("receipt_units.test.mjs", 17)
