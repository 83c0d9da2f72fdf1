"""The driver's selector engine for the extension's locators, run in an isolated world.

The extension's locators (design.md §4, extension/src/page/locator.js) are a small subset of
CSS: ``css:light=<standard CSS over the document>`` then, per open shadow root crossed,
`` >> :scope > <child path>``. Playwright's own CSS engine evaluates such paths in
JavaScript element by element; on a 60,000-row table (480,000 elements) one
``:nth-of-type`` path took 146 s. This engine evaluates the same grammar with the browser's native
``querySelectorAll`` (milliseconds), and Playwright runs it in an isolated world
(``content_script=True``), so page script that patches DOM methods cannot redirect it.

The locator travels as a JSON string (``tbloc="css:light=#h >> :scope > p"``):
Playwright splits a selector at every unquoted ``>>``, which would hand the shadow
segments to its own CSS engine. :func:`unique_selector` makes the engine itself throw
unless exactly one element matches, so a locator action fails at once with the count
instead of waiting for a match. The engine's own cost is that of one
``querySelectorAll``: ``locator.count()`` takes the same ~1.5 ms through it as through
Playwright's ``css=#id`` (round trip included).

Registered once per Playwright instance, before any browser context exists.
"""

from __future__ import annotations

import json
import re

from playwright.async_api import Playwright

from .isolated_eval import ENGINE as EVAL_ENGINE
from .isolated_eval import ENGINE_SCRIPT as EVAL_SCRIPT
from .labels import ENGINE as LABEL_ENGINE
from .labels import ENGINE_SCRIPT as LABEL_SCRIPT

ENGINE = "tbloc"
"""Prefix of the driver's selectors: ``tbloc=<JSON string of the extension locator>``."""

_SCRIPT = r"""
({
  queryAll(root, body) {
    // body: the extension locator as a JSON string (so Playwright's parser never splits
    // it at ' >> '), optionally after 'unique:'; a bare locator is accepted too.
    const unique = body.startsWith('unique:');
    if (unique) body = body.slice('unique:'.length);
    const selector = body.startsWith('"') ? JSON.parse(body) : body;
    const segments = selector.split(' >> ');
    const first = segments.shift();
    if (!first.startsWith('css:light=')) throw new Error('tbloc: locator must start with css:light=');
    const doc = root.ownerDocument || root;
    let current = Array.from(doc.querySelectorAll(first.slice('css:light='.length)));
    for (const segment of segments) {
      if (!segment.startsWith(':scope > ')) throw new Error('tbloc: shadow segment must start with :scope >');
      const path = segment.slice(':scope > '.length);
      const depth = path.split(' > ').length;
      const next = [];
      for (const host of current) {
        const shadow = host.shadowRoot;
        if (!shadow) continue;
        for (const el of shadow.querySelectorAll(path)) {
          let up = el;
          for (let i = 0; i < depth && up; i++) up = up.parentNode;
          if (up === shadow) next.push(el);  // anchored at the root's children
        }
      }
      current = next;
    }
    if (unique && current.length !== 1) throw new Error('tbloc-count=' + current.length + ';');
    return current;
  },
  query(root, selector) {
    return this.queryAll(root, selector)[0] || null;
  },
})
"""


async def register(playwright: Playwright) -> None:
    """Register the driver's engines: this one, the isolated-world evaluation of
    supervisor/isolated_eval.py and the label chooser of supervisor/labels.py (idempotent
    per Playwright instance)."""
    for name, script in ((ENGINE, _SCRIPT), (EVAL_ENGINE, EVAL_SCRIPT),
                         (LABEL_ENGINE, LABEL_SCRIPT)):
        try:
            await playwright.selectors.register(name, script=script, content_script=True)
        except Exception as exc:  # already registered on this instance
            if "already registered" not in str(exc):
                raise


def selector(locator: str) -> str:
    """The Playwright selector matching every element of an extension locator."""
    return f"{ENGINE}={json.dumps(locator)}"


def unique_selector(locator: str) -> str:
    """The Playwright selector of an extension locator that must match exactly one element.

    Every evaluation of it (each actionability retry of a locator action included) throws
    in the page when the locator matches 0 or ≥2 elements, so the action fails at once
    instead of waiting for its timeout; :data:`NOT_UNIQUE_COUNT` reads the count from the
    error.
    """
    return f"{ENGINE}=unique:{json.dumps(locator)}"


NOT_UNIQUE_COUNT = re.compile(r"tbloc-count=(\d+);")
"""What the unique selector throws when it does not match exactly one element; group 1 is
the count (read by supervisor/errors.py, which maps it to LOCATOR_NOT_UNIQUE)."""
