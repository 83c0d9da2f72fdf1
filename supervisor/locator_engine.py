"""The driver's selector engine for the extension's locators, run in an isolated world.

The extension's locators (DESIGN §4, extension/src/page/locator.js) are a small subset of
CSS: ``css:light=<standard CSS over the document>`` then, per open shadow root crossed,
`` >> :scope > <child path>``. Playwright's own CSS engine evaluates such paths in
JavaScript element by element; on a 60,000-row table one ``:nth-of-type`` path took 146 s
(shared/cases/27). This engine evaluates the same grammar with the browser's native
``querySelectorAll`` (milliseconds), and Playwright runs it in an isolated world
(``content_script=True``), so page script that patches DOM methods cannot redirect it.

Registered once per Playwright instance, before any browser context exists.
"""

from __future__ import annotations

from playwright.async_api import Playwright

ENGINE = "tbloc"
"""Prefix of the driver's selectors: ``tbloc=<extension locator>``."""

_SCRIPT = r"""
({
  queryAll(root, selector) {
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
    return current;
  },
  query(root, selector) {
    return this.queryAll(root, selector)[0] || null;
  },
})
"""


async def register(playwright: Playwright) -> None:
    """Register the engine (idempotent per Playwright instance)."""
    try:
        await playwright.selectors.register(ENGINE, script=_SCRIPT, content_script=True)
    except Exception as exc:  # already registered on this instance
        if "already registered" not in str(exc):
            raise


def selector(locator: str) -> str:
    """The Playwright selector for an extension locator."""
    return f"{ENGINE}={locator}"
