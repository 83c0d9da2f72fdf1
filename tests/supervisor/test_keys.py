"""supervisor/keys.py: Playwright's split of a key string, which key strings are sent at
once, the order they are sent in, and what a failure of one of them does; and select's
type-ahead keys, which must be keys Playwright's layout has. No browser (a fake keyboard
that records when each call starts and lets the test answer it)."""

from __future__ import annotations

import asyncio
import gc

import pytest

from trustbridge.supervisor import keys
from trustbridge.supervisor.keys import LAYOUT_KEYS, pipelinable, press, press_on, split
from trustbridge.supervisor.select import _type_ahead_key, select_commit_keys


class Refused(Exception):
    """What the fake keyboard raises for a call it was told to fail."""


class FakeKeyboard:
    """Records each call when it starts; every call waits until the test releases it, so
    a test sees which calls were sent before any was answered."""

    def __init__(self, fail: dict[str, Exception] | None = None) -> None:
        self.sent: list[str] = []
        self.finished: list[str] = []
        self.fail = fail or {}
        self.release = asyncio.Event()

    async def _call(self, what: str) -> None:
        self.sent.append(what)
        await self.release.wait()
        self.finished.append(what)
        if what in self.fail:
            raise self.fail[what]

    async def press(self, key: str) -> None:
        await self._call(f"press {key}")

    async def down(self, key: str) -> None:
        await self._call(f"down {key}")

    async def up(self, key: str) -> None:
        await self._call(f"up {key}")


class FakePage:
    def __init__(self, keyboard: FakeKeyboard) -> None:
        self.keyboard = keyboard


@pytest.mark.parametrize(("key", "names"), [
    ("a", ["a"]),
    ("+", ["+"]),
    ("ControlOrMeta+A", ["ControlOrMeta", "A"]),
    ("Control+Shift+ArrowLeft", ["Control", "Shift", "ArrowLeft"]),
    ("Control++", ["Control", "+"]),
    ("a+", ["a", ""]),
    ("", [""]),
])
def test_split_is_playwrights(key: str, names: list[str]) -> None:
    """Keyboard.press's split (server/input.ts): a '+' after a name separates, any other
    '+' is a key."""
    assert split(key) == names


@pytest.mark.parametrize(("key", "expected"), [
    ("ControlOrMeta+A", True),
    ("Alt+ArrowDown", True),
    ("Control+Shift+ArrowLeft", True),
    ("Control++", True),
    ("b", False),  # one key: one keyboard.press message is cheaper
    ("Enter", False),
    ("Shift+Escape", False),  # Chromium's Escape keydown awaits a drag cancel first
    ("Control+é", False),  # not a Playwright key: press refuses it before sending anything
    ("Foo+a", False),
    ("a+", False),
])
def test_which_keys_are_sent_at_once(key: str, expected: bool) -> None:
    assert pipelinable(key) is expected


async def test_a_chord_is_sent_whole_before_any_answer_in_press_order() -> None:
    """Downs in order, ups in reverse, all four sent before the first one is answered."""
    kb = FakeKeyboard()
    task = asyncio.ensure_future(press_on(kb, "ControlOrMeta+A", pipelined=True))
    for _ in range(5):
        await asyncio.sleep(0)
    assert kb.sent == ["down ControlOrMeta", "down A", "up A", "up ControlOrMeta"]
    assert kb.finished == []
    kb.release.set()
    await task
    assert sorted(kb.finished) == sorted(kb.sent)


@pytest.mark.parametrize("key", ["b", "Shift+Escape", "Control+é"])
async def test_other_keys_are_one_press(key: str) -> None:
    kb = FakeKeyboard()
    kb.release.set()
    await press_on(kb, key, pipelined=True)
    assert kb.sent == [f"press {key}"]


async def test_bidi_and_the_switch_keep_one_press(monkeypatch: pytest.MonkeyPatch) -> None:
    kb = FakeKeyboard()
    kb.release.set()
    await press(FakePage(kb), "ControlOrMeta+A", bidi=True)  # type: ignore[arg-type]
    monkeypatch.setattr(keys, "PIPELINE", False)
    await press(FakePage(kb), "ControlOrMeta+A", bidi=False)  # type: ignore[arg-type]
    assert kb.sent == ["press ControlOrMeta+A"] * 2


async def test_a_failure_awaits_every_call_and_raises_the_first_in_sending_order() -> None:
    """Two calls fail: all four are still awaited (no orphan task, nothing left
    unretrieved) and the error of the earlier-sent one is raised."""
    first, second = Refused("down A refused"), Refused("up A refused")
    kb = FakeKeyboard(fail={"down A": first, "up A": second})
    unretrieved: list[dict] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: unretrieved.append(context))
    try:
        task = asyncio.ensure_future(press_on(kb, "ControlOrMeta+A", pipelined=True))
        await asyncio.sleep(0)
        kb.release.set()
        with pytest.raises(Refused) as raised:
            await task
        assert raised.value is first
        assert sorted(kb.finished) == sorted(kb.sent) and len(kb.sent) == 4
        gc.collect()
        await asyncio.sleep(0)
        assert unretrieved == []
        assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []
    finally:
        loop.set_exception_handler(None)


async def test_cancelling_a_pipelined_press_cancels_and_awaits_its_calls() -> None:
    kb = FakeKeyboard()
    task = asyncio.ensure_future(press_on(kb, "Alt+ArrowDown", pipelined=True))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0)
    assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []


async def test_a_sequence_is_sent_whole_key_after_key() -> None:
    """press_keys' several keys: each key's downs then ups, key after key, all sent before
    the first answer; not pipelined: one press per key, each after the last answered."""
    assert pipelinable(["End", "ArrowUp", "Enter"]) and not pipelinable(["Enter"])
    assert not pipelinable(["ArrowUp", "Escape"]) and not pipelinable(["ArrowUp", "é"])
    kb = FakeKeyboard()
    task = asyncio.ensure_future(press_on(kb, ["End", "Shift+ArrowUp", "Enter"], pipelined=True))
    for _ in range(5):
        await asyncio.sleep(0)
    assert kb.sent == ["down End", "up End", "down Shift", "down ArrowUp", "up ArrowUp",
                       "up Shift", "down Enter", "up Enter"]
    kb.release.set()
    await task
    kb = FakeKeyboard()
    task = asyncio.ensure_future(press_on(kb, ["End", "Enter"], pipelined=False))
    for _ in range(5):
        await asyncio.sleep(0)
    assert kb.sent == ["press End"]
    kb.release.set()
    await task
    assert kb.sent == ["press End", "press Enter"]


def test_layout_keys_are_printable_ascii_and_named_keys() -> None:
    """The characters of the layout are exactly printable ASCII (and the two line
    breaks); non-ASCII characters are not keys."""
    chars = {k for k in LAYOUT_KEYS if len(k) == 1}
    assert chars == {chr(c) for c in range(0x20, 0x7F)} | {"\n", "\r"}
    assert {"ControlOrMeta", "KeyA", "Numpad0", "F12", "ArrowDown"} <= LAYOUT_KEYS
    assert not {"é", "€", "中", "Ctrl", "Esc"} & LAYOUT_KEYS


@pytest.mark.parametrize(("label", "key"), [
    ("Éclair", None), ("中文", None), ("  ñandú", None), ("Apple", "a"), ("#3", "#"),
    ("+1", None), ("", None),
])
def test_type_ahead_keys_are_layout_keys(label: str, key: str | None) -> None:
    """A label that starts with a character Playwright has no key for gives no type-ahead
    key (pressing it would fail with "Unknown key")."""
    assert _type_ahead_key(label) == key


def test_an_accented_label_is_reached_by_arrows() -> None:
    """Apple, Banana, Éclair, Date: from Apple to Éclair no layout key types 'é', so the
    route takes two moves (Chromium's popup commits them as one change); before, it was
    the one key 'é', which Playwright refuses."""
    route = select_commit_keys(["Apple", "Banana", "Éclair", "Date"], 0, 2)
    assert len(route) == 2 and all(k in LAYOUT_KEYS for k in route), route
