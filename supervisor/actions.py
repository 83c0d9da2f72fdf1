"""Input verbs on one element, through Playwright's real mouse and keyboard.

Each verb receives an ``ElementHandle`` the driver has already proven unique (DESIGN §4)
and uses input the browser itself generates, so pages see ``event.isTrusted === true``.
Playwright's actionability checks (attached, visible, stable, enabled, receives the
pointer) run before any mouse input; they wait up to ``timeout_ms`` and, when they fail,
nothing has been dispatched.

Coordinates are CSS px in the top-level viewport (Playwright's ``bounding_box``).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from playwright.async_api import ElementHandle, Error as PlaywrightError, Page

from bridge.protocol import errors as E
from bridge.protocol.models import (
    CheckAction,
    ClickAction,
    DragAction,
    FillAction,
    FocusAction,
    HoverAction,
    PressAction,
    ScrollAction,
    SelectAction,
    TypeAction,
    UploadAction,
)


async def click(handle: ElementHandle, a: ClickAction, timeout_ms: int) -> dict[str, Any]:
    """Press and release ``a.button`` ``a.clickCount`` times at the centre or ``a.position``."""
    await handle.click(
        button=a.button,
        click_count=a.clickCount,
        modifiers=a.modifiers or None,
        position={"x": a.position.x, "y": a.position.y} if a.position else None,
        timeout=timeout_ms,
    )
    return {}


async def hover(handle: ElementHandle, _a: HoverAction, timeout_ms: int) -> dict[str, Any]:
    await handle.hover(timeout=timeout_ms)
    return {}


async def focus(handle: ElementHandle, _a: FocusAction, _timeout_ms: int) -> dict[str, Any]:
    await handle.focus()
    return {}


async def _require_editable(handle: ElementHandle) -> None:
    try:
        editable = await handle.is_editable()
    except PlaywrightError as exc:  # "Element is not an <input>, <textarea> or <select>"
        if "not an <input>" not in str(exc):
            raise
        editable = False
    if not editable:
        raise E.ElementNotEditable(
            "The target does not accept text (readonly, disabled or not a text field); "
            "nothing was typed.")


async def type_text(handle: ElementHandle, a: TypeAction, timeout_ms: int) -> dict[str, Any]:
    """Focus, then one trusted key event sequence per character; Enter if ``submit``."""
    await _require_editable(handle)
    await handle.type(a.text, timeout=timeout_ms)
    if a.submit:
        await handle.press("Enter", timeout=timeout_ms)
    return {}


async def fill(handle: ElementHandle, page: Page, a: FillAction, timeout_ms: int) -> dict[str, Any]:
    """Replace the field's content through the keyboard: Select-All, then type ``a.value``
    over the selection (its first key replaces it), or Delete when ``a.value`` is empty.

    Never sets ``.value`` from script, and never empties the field as a separate edit:
    masked inputs parse every intermediate value and an empty one can corrupt them
    (shared/cases/14). Playwright's own ``fill`` would fire an untrusted ``input`` event in
    Firefox (DESIGN §9). A native ``<input type=date>`` takes ``YYYY-MM-DD`` and is typed
    segment by segment in the page locale's order.
    """
    await _require_editable(handle)
    await handle.focus()
    kind = await handle.evaluate("el => el instanceof HTMLInputElement ? el.type : ''")
    if kind == "date" and a.value:
        return await _fill_date(handle, page, a.value)
    await page.keyboard.press("ControlOrMeta+A")
    if a.value:
        await page.keyboard.type(a.value)
    else:
        await page.keyboard.press("Delete")
    return {}


# Order of the year/month/day segments of a native date input in the page's locale.
_DATE_ORDER_JS = """() => new Intl.DateTimeFormat(navigator.language)
  .formatToParts(new Date(2023, 2, 23)).filter(p => p.type !== 'literal').map(p => p.type)"""


async def _fill_date(handle: ElementHandle, page: Page, value: str) -> dict[str, Any]:
    try:
        year, month, day = value.split("-")
        int(year), int(month), int(day)
    except ValueError as exc:
        raise E.BadRequest("A date field takes YYYY-MM-DD.", {"value": "(not shown)"}) from exc
    order = await page.evaluate(_DATE_ORDER_JS)
    parts = {"year": year.zfill(4), "month": month.zfill(2), "day": day.zfill(2)}
    # Focus puts the caret in the first segment; each segment's digits overwrite it and
    # the field moves on to the next segment by itself.
    await handle.focus()
    for segment in order:
        if segment in parts:
            await page.keyboard.type(parts[segment])
    got = await handle.evaluate("el => el.value")
    if got != value:
        raise E.BrowserOperationUncertain(
            f"Typed the date segments but the field holds {got!r}; take a new snapshot.",
            {"order": order})
    return {}


async def press_key(page: Page, key: str) -> None:
    """``keyboard.press`` that never leaves modifiers held: Playwright presses a chord's
    modifiers before it validates the last key, so a refused key is followed by releasing
    them.

    Raises:
        BadRequest: unknown key name.
    """
    try:
        await page.keyboard.press(key)
    except PlaywrightError as exc:
        for modifier in ("Alt", "Control", "Meta", "Shift"):
            with contextlib.suppress(PlaywrightError):
                await page.keyboard.up(modifier)
        if "Unknown key" in str(exc):
            raise E.BadRequest(f"Unknown key in {key!r}; use names like Enter, Control+A.") from exc
        raise


async def press(handle: ElementHandle, page: Page, a: PressAction, timeout_ms: int) -> dict[str, Any]:
    """Focus the target, then press the key or chord."""
    await handle.focus()
    await press_key(page, a.key)
    return {}


async def set_checked(handle: ElementHandle, a: CheckAction, timeout_ms: int) -> dict[str, Any]:
    """Click only if the state differs; Playwright verifies the state after the click and
    understands native and ARIA checkbox/radio/switch roles."""
    before = await handle.evaluate(_CHECKED_JS)
    if before is None:
        raise E.BadRequest("The target is not a checkbox, radio or switch.")
    if before == a.checked:
        return {"changed": False, "checked": before}
    try:
        await handle.set_checked(a.checked, timeout=timeout_ms)
    except PlaywrightError as exc:
        if "did not change its state" in str(exc):
            raise E.BrowserOperationUncertain(
                "The trusted click landed but the control did not change state; the page may "
                "have refused it. Take a new snapshot.", {"wanted": a.checked}) from exc
        raise
    return {"changed": True, "checked": a.checked}


_CHECKED_JS = """el => {
  if (el instanceof HTMLInputElement && (el.type === 'checkbox' || el.type === 'radio')) return el.checked;
  const v = el.getAttribute('aria-checked');
  if (v === 'true') return true;
  if (v === 'false' || v === 'mixed') return false;
  return null;
}"""

# Index of each wanted option among the enabled options, and the current one.
_SELECT_PLAN_JS = """(el, wanted) => {
  if (!(el instanceof HTMLSelectElement)) return {error: 'not-select'};
  const enabled = Array.from(el.options).filter(o => !o.disabled);
  const pick = w => enabled.findIndex(o => o.value === w) >= 0
      ? enabled.findIndex(o => o.value === w)
      : enabled.findIndex(o => o.label.trim() === w || o.textContent.trim() === w);
  return {multiple: el.multiple, current: enabled.indexOf(el.options[el.selectedIndex]),
          targets: wanted.map(pick), size: el.size};
}"""


async def select(handle: ElementHandle, page: Page, a: SelectAction,
                 timeout_ms: int) -> dict[str, Any]:
    """Choose options of a native ``<select>`` through the keyboard (single) or
    Control-clicks on the options (multiple), so change handlers see trusted input.

    Raises:
        BadRequest: not a select, or an option that does not exist or is disabled.
    """
    plan = await handle.evaluate(_SELECT_PLAN_JS, a.values)
    if plan.get("error"):
        raise E.BadRequest("The target is not a native <select>; click its options instead.")
    missing = [v for v, i in zip(a.values, plan["targets"]) if i < 0]
    if missing:
        raise E.BadRequest(f"No enabled option with value or label {missing!r}.",
                           {"missing": missing[:5]})
    if not plan["multiple"]:
        if len(a.values) != 1:
            raise E.BadRequest("A single-choice <select> takes exactly one value.")
        await handle.focus()
        delta = plan["targets"][0] - plan["current"]
        if plan["current"] < 0:
            await page.keyboard.press("Home")
            delta = plan["targets"][0]
        key = "ArrowDown" if delta > 0 else "ArrowUp"
        for _ in range(abs(delta)):
            await page.keyboard.press(key)
    else:
        options = await handle.query_selector_all("option:not([disabled])")
        for n, idx in enumerate(plan["targets"]):
            await options[idx].click(modifiers=["ControlOrMeta"] if n else None,
                                     timeout=timeout_ms)
    selected = await handle.evaluate(
        "el => Array.from(el.selectedOptions).map(o => o.value)")
    return {"selected": selected}


async def drag(source: ElementHandle, target: ElementHandle, page: Page, a: DragAction,
               timeout_ms: int) -> dict[str, Any]:
    """Real pointer path: move to the source, press, small move (starts HTML5 drag),
    ``a.steps`` moves to the target's centre, release."""
    await source.scroll_into_view_if_needed(timeout=timeout_ms)
    await source.hover(timeout=timeout_ms)  # actionability of the source
    src = await source.bounding_box()
    dst = await target.bounding_box()
    if src is None or dst is None:
        raise E.ElementTargetDetached("The drag source or target has no box (hidden?).")
    sx, sy = src["x"] + src["width"] / 2, src["y"] + src["height"] / 2
    tx, ty = dst["x"] + dst["width"] / 2, dst["y"] + dst["height"] / 2
    await page.mouse.move(sx, sy)
    await page.mouse.down()
    await page.mouse.move(sx + 4, sy + 4, steps=2)
    await page.mouse.move(tx, ty, steps=a.steps)
    await asyncio.sleep(0.03)  # let dragover handlers run before the drop
    await page.mouse.move(tx + 1, ty + 1)
    await page.mouse.up()
    return {}


async def scroll(handle: ElementHandle, page: Page, a: ScrollAction,
                 timeout_ms: int) -> dict[str, Any]:
    """Wheel over the container's visible centre; returns its scroll offsets after."""
    await handle.hover(timeout=timeout_ms, force=True)
    await page.mouse.wheel(a.dx, a.dy)
    await asyncio.sleep(0.05)  # wheel scrolling is applied asynchronously
    return await handle.evaluate("el => ({scrollLeft: el.scrollLeft, scrollTop: el.scrollTop})")


async def upload(handle: ElementHandle, page: Page, a: UploadAction,
                 timeout_ms: int) -> dict[str, Any]:
    """A file input takes the files directly; any other control is clicked with trusted
    input and the file chooser it opens receives them."""
    is_file_input = await handle.evaluate(
        "el => el instanceof HTMLInputElement && el.type === 'file'")
    if is_file_input:
        await handle.set_input_files(a.files, timeout=timeout_ms)
        return {"via": "input"}
    async with page.expect_file_chooser(timeout=timeout_ms) as chooser_info:
        await handle.click(timeout=timeout_ms)
    chooser = await chooser_info.value
    await chooser.set_files(a.files, timeout=timeout_ms)
    return {"via": "file-chooser"}
