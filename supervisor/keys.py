"""Chords the verbs press (fill's ``ControlOrMeta+A``, select's ``Alt+ArrowDown``, a
``press`` of ``Control+Shift+K``) and the keys select presses in Chromium's open popup:
their keydown and keyup events handed to Playwright at once instead of one
``keyboard.press`` per key, awaited in turn (issue 18, latency), where that keeps every
event the page sees. A single key stays one ``keyboard.press`` (:func:`pipelinable`).

What the page sees is the same as ``keyboard.press(key)``: the downs of the chord's keys in
order, then their ups in reverse order, with the same ``key``, ``code``, modifier state,
``repeat`` and ``isTrusted``. Why that holds (Playwright 1.62, read in the installed
driver's server code: server/input.ts, chromium/crInput.ts, firefox/ffInput.ts,
bidi/bidiInput.ts, utils/pipeTransport.ts; Juggler's protocol/PageHandler.js and
content/PageAgent.js):

- ``keyboard.press(key)`` is one message to Playwright's Node driver, which splits the
  key at ``+`` (:func:`split` is the same split) and awaits one browser call per event.
  ``keyboard.down``/``up`` are one message per event.
- ``Keyboard.down``/``up`` resolve ``ControlOrMeta`` as ``press`` does (Meta when the
  *driver* runs on macOS, Control elsewhere: ``resolveSmartModifierString``), and update
  the pressed keys and modifiers synchronously, before their first await; the event's
  text (none while a modifier other than Shift is held) and the modifiers mask the
  browser gets are computed from that state synchronously too.
- Python's client writes each message when its coroutine first runs
  (``Connection._send_message_to_server``), so :func:`asyncio.gather` writes them in
  order; the driver dispatches each message in its own ``setImmediate`` task, and the
  steps of one call up to its browser message are microtasks (no tracing, no pause on
  this driver), so each call's state update and browser message happen before the next
  message is even dispatched: the browser gets the events in order, with the state a
  ``press`` would have had at each.
- Chromium (CDP ``Input.dispatchKeyEvent``) and Camoufox (Juggler
  ``Page.dispatchKeyEvent``, sent on to the content process without an await) process
  key events in the order they arrive (Camoufox read from Juggler's source only: no
  binary on the machine this was measured on; the e2e chord test runs on it where one is
  installed). Exception: Chromium's keydown of ``Escape`` first awaits the cancel of a
  drag in progress, so ``Escape`` keeps ``keyboard.press``.
- Firefox over WebDriver BiDi keeps ``keyboard.press``: every event is one
  ``input.performActions``, the modifier state is Firefox's own (per input source), the
  spec's queue of concurrent actions is not something this driver can rely on, and
  Firefox answers concurrent commands more slowly (the chord: median 9.4 ms at once
  against 7.6 ms in one press, p75 46 ms against 9 ms; headless Firefox ESR 153).

A key Playwright's US layout does not have makes ``press`` fail before it sends anything;
pipelined, the valid keys of the chord would still be sent. So any key string with a name
outside :data:`LAYOUT_KEYS` keeps ``keyboard.press`` and its error.

Errors: every call of a pipelined press is awaited whatever happens to the others (no
orphan task, no unretrieved exception); the first error in sending order is raised, a
Playwright error as it came (the verb's ``map_playwright_errors`` maps it as before).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from string import ascii_uppercase
from typing import Protocol

from playwright.async_api import Page


class _Keyboard(Protocol):
    async def press(self, key: str) -> None: ...
    async def down(self, key: str) -> None: ...
    async def up(self, key: str) -> None: ...


PIPELINE = True
"""False: every press is one ``keyboard.press`` (the former path); the comparison arm of
scripts/bench_keys.py sets it."""

LAYOUT_KEYS: frozenset[str] = frozenset({
    *(chr(c) for c in range(0x20, 0x7F)), "\n", "\r",
    *(f"F{i}" for i in range(1, 13)), *(f"Digit{i}" for i in range(10)),
    *(f"Key{c}" for c in ascii_uppercase), *(f"Numpad{i}" for i in range(10)),
    "Escape", "Backquote", "Minus", "Equal", "Backslash", "Backspace", "Tab", "BracketLeft",
    "BracketRight", "CapsLock", "Semicolon", "Quote", "Enter", "Comma", "Period", "Slash",
    "Space", "Shift", "ShiftLeft", "ShiftRight", "Control", "ControlLeft", "ControlRight",
    "ControlOrMeta", "Meta", "MetaLeft", "MetaRight", "Alt", "AltLeft", "AltRight",
    "AltGraph", "ContextMenu", "PrintScreen", "ScrollLock", "Pause", "PageUp", "PageDown",
    "Insert", "Delete", "Home", "End", "ArrowLeft", "ArrowUp", "ArrowRight", "ArrowDown",
    "AudioVolumeMute", "AudioVolumeDown", "AudioVolumeUp", "MediaTrackNext",
    "MediaTrackPrevious", "MediaPlayPause", "NumLock", "NumpadDivide", "NumpadMultiply",
    "NumpadSubtract", "NumpadAdd", "NumpadDecimal", "NumpadEnter",
})
"""Every name Playwright's keyboard takes (its US layout, server/usKeyboardLayout.ts, and
``buildLayoutClosure`` in server/input.ts): each code, the aliases Shift / Control / Alt /
Meta and ``\\n`` / ``\\r``, each key's character and shifted character (all printable
ASCII), and ``ControlOrMeta``. tests/supervisor/test_keys_layout.py presses each in a real
browser. Any other name (``é``, ``€``) is refused by Playwright as "Unknown key"."""


def split(key: str) -> list[str]:
    """The keys of a key string, as Playwright's ``Keyboard.press`` splits it: at each
    ``+`` that follows a key name, so ``"+"`` and ``"Control++"`` end in the key ``+``."""
    keys: list[str] = []
    building = ""
    for char in key:
        if char == "+" and building:
            keys.append(building)
            building = ""
        else:
            building += char
    keys.append(building)
    return keys


def pipelinable(keys: str | Sequence[str]) -> bool:
    """Whether :func:`press_keys` sends the events of ``keys`` (one key string, or several
    pressed one after the other) at once on a non-BiDi browser: two keys or more in all
    (a chord, or a sequence), every name in :data:`LAYOUT_KEYS`, none ``Escape``.

    Measured with scripts/bench_keys.py (driver act through the bridge, headless Chromium,
    arms alternated, 40 to 100 rounds, 2 shared cores): a chord's four events gain (fill's
    ControlOrMeta+A: -0.3 to -1.4 ms in nine runs, median -1.0 ms of 11), and so do a
    popup's keys (select, 11 keys: -15 to -16 ms of 51); a single key does not gain
    consistently (select's type-ahead key as two messages: -0.6 to +1.8 ms in nine runs,
    median 0; two arms running the same code differed by up to 0.5 ms), so it keeps its one
    ``keyboard.press`` message.
    """
    names = [n for key in ([keys] if isinstance(keys, str) else keys) for n in split(key)]
    return len(names) >= 2 and all(n in LAYOUT_KEYS for n in names) \
        and "Escape" not in names


async def press(page: Page, key: str, *, bidi: bool) -> None:
    """Press ``key`` (a key or a chord, Playwright's names) with trusted input, as
    ``page.keyboard.press(key)`` does; its down and up events are sent at once unless
    ``bidi`` (see the module docstring), :data:`PIPELINE` is off, or the key is not
    :func:`pipelinable`.

    Raises:
        playwright.async_api.Error: as ``keyboard.press`` would (the first in sending
            order when several calls failed).
    """
    await press_on(page.keyboard, [key], pipelined=PIPELINE and not bidi)


async def press_keys(page: Page, keys: Sequence[str], *, bidi: bool) -> None:
    """Press each of ``keys`` in turn, as ``page.keyboard.press`` of one after the other
    does; the events of all of them are sent at once under the rules of :func:`press`.

    Only for keys between which no page script needs to run: sent at once, the browser
    takes the next key's events right behind the last one's instead of a round trip later
    (the caller's case: keys in Chromium's open select popup, which page script does not
    see).

    Raises:
        playwright.async_api.Error: as ``keyboard.press`` would.
    """
    await press_on(page.keyboard, keys, pipelined=PIPELINE and not bidi)


async def press_on(keyboard: _Keyboard, keys: str | Sequence[str], *,
                   pipelined: bool) -> None:
    """:func:`press_keys` on a keyboard; ``pipelined``: send the events at once when the
    keys allow it (:func:`pipelinable`)."""
    keys = [keys] if isinstance(keys, str) else list(keys)
    if not (pipelined and pipelinable(keys)):
        for key in keys:
            await keyboard.press(key)
        return
    calls = []
    for key in keys:
        names = split(key)
        calls += [keyboard.down(n) for n in names] + [keyboard.up(n) for n in reversed(names)]
    # return_exceptions: a failed call does not cancel the others; each is awaited.
    results = await asyncio.gather(*calls, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
