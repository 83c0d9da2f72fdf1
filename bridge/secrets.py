"""Values the agent typed into sensitive fields, masked wherever they reappear in page text
(issue 13, item 7, the bridge's part; docs/bridge.md "Typed secrets"; no I/O).

The extension masks a sensitive field's value and scrubs it from the same document's
text while the field holds it (extension/src/page/sensitive.js). A page can still echo a
typed secret after the field let go of it: a confirmation step that prints the card
number and clears the field, the next page, the title. The bridge remembers what the
agent typed or filled (``type`` ``text``, ``fill`` ``value``, at least MIN_CHARS
characters after trimming) and into which ref of which tab, and masks a value in every
later snapshot of the device once it knows the field was sensitive:

- the field's line in a snapshot shows the extension's mask (``: ••••••``), which the
  extension prints for sensitive fields only, or
- the ``page.resolveTarget`` that routed the input said ``sensitive: true``.

Neither is a guess about the value itself: a value typed into a field never seen masked
is not masked here. Memory is bounded (the last MAX_PER_DEVICE values per device), kept
in this process only and never logged.
"""

from __future__ import annotations

import re
import urllib.parse
from collections import deque
from dataclasses import dataclass
from typing import Any

MASK = "••••••"
"""The extension's mask (extension/src/page/aria.js ``MASK``)."""
MIN_CHARS = 4
"""Shorter values are not remembered: they would mask unrelated text."""
MAX_PER_DEVICE = 16
"""Values remembered per device, newest kept."""
TYPING_KINDS = {"type": "text", "fill": "value"}
"""Action kind → the field holding what it types."""


@dataclass(eq=False)
class Typed:
    """One remembered value: where it was typed and whether that field is sensitive."""

    tab: int | None
    ref: str | None
    value: str
    sensitive: bool = False


class TypedSecrets:
    """The typed values of each device and the masking of snapshot results."""

    def __init__(self, per_device: int = MAX_PER_DEVICE) -> None:
        self._by_device: dict[str, deque[Typed]] = {}
        self._per_device = per_device

    def __repr__(self) -> str:  # never the values, even in a traceback
        return f"<TypedSecrets devices={len(self._by_device)}>"

    def typed(self, device: str, tab: int | None, ref: str | None, action: Any,
              sensitive: bool = False) -> None:
        """Remember what a ``type`` / ``fill`` action typed (other actions: nothing).

        Args:
            action: the action model or dict (``kind`` and ``text`` / ``value``).
            sensitive: the routing step already knew the field is sensitive.
        """
        kind = _get(action, "kind")
        field = TYPING_KINDS.get(kind) if isinstance(kind, str) else None
        value = _get(action, field) if field else None
        if not isinstance(value, str) or len(value.strip()) < MIN_CHARS:
            return
        values = self._by_device.setdefault(device, deque(maxlen=self._per_device))
        for old in list(values):
            if old.value == value:
                values.remove(old)
                sensitive = sensitive or old.sensitive
        values.append(Typed(tab, ref, value, sensitive))

    def learn(self, device: str, tab: int | None, snapshot: str) -> None:
        """Mark the values whose field's line in this snapshot of ``tab`` shows the mask."""
        for item in self._by_device.get(device, ()):
            if item.sensitive or item.ref is None or (item.tab is not None and item.tab != tab):
                continue
            line = _line_of(snapshot, item.ref)
            if line is not None and MASK in line:
                item.sensitive = True

    def mask(self, device: str, text: str) -> str:
        """``text`` with every form of every sensitive value of ``device`` masked."""
        forms = sorted({f for item in self._by_device.get(device, ()) if item.sensitive
                        for f in _forms(item.value)}, key=len, reverse=True)
        for form in forms:
            if form in text:
                text = text.replace(form, MASK)
        return text

    def scrub_snapshot(self, device: str, result: dict[str, Any]) -> dict[str, Any]:
        """Learn from a ``page.snapshot`` result, then mask its text, URL and title
        (``chars`` follows the text). Returns the same dict."""
        text = result.get("snapshot")
        if not isinstance(text, str) or device not in self._by_device:
            return result
        self.learn(device, result.get("tabId"), text)
        masked = self.mask(device, text)
        if masked != text:
            if isinstance(result.get("chars"), int):
                result["chars"] = max(0, result["chars"] + len(masked) - len(text))
            result["snapshot"] = masked
        for key in ("url", "title"):
            if isinstance(result.get(key), str):
                result[key] = self.mask(device, result[key])
        return result

    def scrub_find(self, device: str, result: dict[str, Any]) -> dict[str, Any]:
        """Mask a ``page.find`` result: its outline ``text``, each match's ``line`` and
        ``ancestry``, URL and title (a page that echoes a typed secret would otherwise
        show it in a find result). Returns the same dict."""
        if device not in self._by_device:
            return result
        for key in ("text", "url", "title"):
            if isinstance(result.get(key), str):
                result[key] = self.mask(device, result[key])
        for match in result.get("matches") or []:
            if not isinstance(match, dict):
                continue
            if isinstance(match.get("line"), str):
                match["line"] = self.mask(device, match["line"])
            if isinstance(match.get("ancestry"), list):
                match["ancestry"] = [self.mask(device, a) if isinstance(a, str) else a
                                     for a in match["ancestry"]]
        return result

    def scrub_tabs(self, device: str, result: dict[str, Any]) -> dict[str, Any]:
        """Mask the URL and title of any other result that names pages: the result's own
        (``page.navigate``, ``tabs.new`` …) and each tab of its ``tabs`` and ``newTabs``
        (a page that copies a typed key into its title or query shows it in tab lists
        too). Returns the same dict."""
        if device not in self._by_device:
            return result
        for holder in [result, *(t for key in ("tabs", "newTabs")
                                  for t in (result.get(key) or []) if isinstance(t, dict))]:
            for key in ("url", "title"):
                if isinstance(holder.get(key), str):
                    holder[key] = self.mask(device, holder[key])
        return result

    def forget_device(self, device: str) -> None:
        self._by_device.pop(device, None)


def _get(action: Any, name: str | None) -> Any:
    if name is None:
        return None
    return action.get(name) if isinstance(action, dict) else getattr(action, name, None)


def _line_of(snapshot: str, ref: str) -> str | None:
    """The snapshot line that carries ``[ref=<ref>]``, or None."""
    match = re.search(rf"^.*\[ref={re.escape(ref)}\].*$", snapshot, flags=re.MULTILINE)
    return match.group(0) if match else None


def _forms(value: str) -> set[str]:
    """How a page may print ``value``: as typed, whitespace-collapsed (as a text line
    prints it), URI-encoded (a link or URL), and its visible part when it was trimmed."""
    collapsed = " ".join(value.split())
    forms = {value, collapsed, urllib.parse.quote(collapsed, safe="-_.!~*'()"),
             urllib.parse.quote_plus(collapsed)}
    return {f for f in forms if len(f) >= MIN_CHARS}
