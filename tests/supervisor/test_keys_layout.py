"""supervisor/keys.py against the Playwright it drives, in headless Chromium: every name of
``LAYOUT_KEYS`` is a key Playwright takes, names outside it are refused as "Unknown key",
and a chord sent at once reaches the page as exactly the events ``keyboard.press`` gives
(same keys, codes, modifier state, order, ``isTrusted``; same effect on the field)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page, async_playwright

from trustbridge.supervisor.keys import LAYOUT_KEYS, pipelinable, press_on
from trustbridge.supervisor.launcher import find_chromium

pytestmark = pytest.mark.browser

# Every key and input event with what a page can read of it, in one list.
PAGE = """<!doctype html><meta charset="utf-8"><textarea id="f">one two</textarea><script>
window.__log = [];
for (const type of ['keydown', 'keypress', 'keyup']) {
  window.addEventListener(type, (e) => __log.push([type, e.key, e.code, e.keyCode, e.ctrlKey,
    e.metaKey, e.shiftKey, e.altKey, e.repeat, e.location, e.isTrusted]), true);
}
for (const type of ['beforeinput', 'input']) {
  window.addEventListener(type, (e) => __log.push([type, e.inputType, e.data, e.isTrusted]), true);
}
</script>"""
RESET = """() => { const f = document.getElementById('f'); f.value = 'one two';
  f.focus(); f.setSelectionRange(3, 3); window.__log = []; }"""
STATE = """() => { const f = document.getElementById('f');
  return [window.__log, f.value, f.selectionStart, f.selectionEnd]; }"""


@pytest.fixture
async def page() -> AsyncIterator[Page]:
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=find_chromium(), headless=True)
        try:
            page = await browser.new_page()
            await page.set_content(PAGE)
            yield page
        finally:
            await browser.close()


async def test_every_layout_name_is_a_playwright_key(page: Page) -> None:
    refused = []
    for name in sorted(LAYOUT_KEYS):
        try:
            await page.keyboard.down(name)
            await page.keyboard.up(name)
        except PlaywrightError as exc:
            refused.append((name, str(exc).splitlines()[0]))
    assert refused == []


@pytest.mark.parametrize("name", ["é", "€", "Ctrl", "Esc", ""])
async def test_other_names_are_refused(page: Page, name: str) -> None:
    with pytest.raises(PlaywrightError, match="Unknown key"):
        await page.keyboard.down(name)


@pytest.mark.parametrize("chord", [
    "ControlOrMeta+A", "Shift+ArrowLeft", "Control+Shift+ArrowLeft", "Shift+a", "Shift+A",
    "Control+Backspace", "Alt+ArrowDown", "Shift+Home", "Control++",
])
async def test_a_chord_sent_at_once_is_the_chord_pressed(page: Page, chord: str) -> None:
    """The page's log of events, the field's value and its selection after the chord, sent
    at once and as one keyboard.press (the field reset between), are the same."""
    assert pipelinable(chord)
    seen = []
    for pipelined in (False, True):
        await page.evaluate(RESET)
        await press_on(page.keyboard, chord, pipelined=pipelined)
        # Every event was answered before the call returned; one more round trip reads.
        seen.append(await page.evaluate(STATE))
    assert seen[0] == seen[1]
    assert seen[0][0], "the page saw no event"
    assert all(e[-1] is True for e in seen[0][0]), "an event was not trusted"


OPTIONS = "".join(f"<option value='v{i}'>Item {i}</option>" for i in range(30))
SELECT = """<!doctype html><meta charset="utf-8"><select id="s">OPTIONS</select><script>
window.__log = [];
for (const type of ['keydown', 'keyup', 'input', 'change']) {
  document.addEventListener(type, (e) => __log.push([type, e.key || '', e.isTrusted,
    document.getElementById('s').value]), true);
}
</script>""".replace("OPTIONS", OPTIONS)


async def test_keys_in_the_open_select_popup_sent_at_once_are_the_keys_pressed(
        page: Page) -> None:
    """Chromium's select popup opened by Alt+ArrowDown: End, 9 ArrowUp and Enter sent at
    once (select.py's popup route) leave the page the same log (the popup's keys reach the
    popup, not the page: only the chord and one input + change) and the same value as the
    eleven presses one after the other."""
    await page.set_content(SELECT)
    popup = ["End", *["ArrowUp"] * 9, "Enter"]
    assert pipelinable(popup)
    seen = []
    for pipelined in (False, True):
        await page.evaluate("document.getElementById('s').value = 'v0'; "
                            "document.getElementById('s').focus(); window.__log = []")
        await press_on(page.keyboard, "Alt+ArrowDown", pipelined=pipelined)
        await press_on(page.keyboard, popup, pipelined=pipelined)
        seen.append(await page.evaluate("[window.__log, document.getElementById('s').value]"))
    assert seen[0] == seen[1]
    log, value = seen[0]
    assert value == "v20"
    assert [e[0] for e in log if e[0] in ("input", "change")] == ["input", "change"]
    assert all(e[2] is True for e in log)
