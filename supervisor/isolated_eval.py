"""``driver.evaluate`` in an isolated world: the page's DOM, none of its JavaScript.

Playwright's Python API (1.62) evaluates scripts only in the page's main world
(``Frame.evaluate``, ``Locator.evaluate``, ``ElementHandle.evaluate``), where page script can
replace ``Object.keys``, ``Array.isArray``, ``JSON.stringify``, DOM getters or add getters to
``Object.prototype`` and so forge what a script returns without touching the DOM (issue 13,
item 8). What it does run in an isolated world is a selector engine registered with
``content_script=True`` (Chromium: a CDP isolated world; Firefox over WebDriver BiDi: a
sandbox). :data:`ENGINE_SCRIPT` is such an engine: its "query" runs the agent's function
with the scope element (or nothing, at the document) and answers by throwing
``tbeval-<kind>=<JSON>;tbeval-end``, which comes back in Playwright's error message, as
the unique selector's count does (supervisor/locator_engine.py). The value is serialised
with the isolated world's own ``JSON.stringify``.

A promise cannot be awaited inside a selector engine: the engine keeps it in a map of the
isolated world's global (invisible to the page) and answers ``pending``; the driver polls
with ``tbeval=poll:<id>`` every :data:`POLL_S` until it settles. A document that goes away
meanwhile loses the promise: BROWSER_OPERATION_UNCERTAIN.

Cost (measured, headless Chromium, local page): ~2 ms per call after the first in a
document (~25 ms, the engine's set-up), about what ``Frame.evaluate`` costs.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import secrets
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Locator

from trustbridge.bridge.protocol import errors as E
from trustbridge.bridge.protocol.limits import RESULT_CAP_BYTES, too_large

ENGINE = "tbeval"
"""Selector engine name: ``tbeval=run:<id>:<cap bytes>:<base64 UTF-8 source>`` or
``tbeval=poll:<id>``
(base64, so Playwright's selector parser never splits the source at ``>>``)."""

NARROW_EVALUATE = ("Return less: a slice (value.slice(0, 100000)), a count or the fields "
                   "you need; or read the page with a snapshot.")
"""The next step of an evaluate whose value is over the cap."""

POLL_S = 0.01
"""Interval between two polls of a pending promise, s."""

ENGINE_SCRIPT = r"""
({
  query(root, body) {
    const store = globalThis.__tbEval || (globalThis.__tbEval = new Map());
    const answer = (kind, payload) => {
      throw new Error('tbeval-' + kind + '=' + JSON.stringify(payload) + ';tbeval-end');
    };
    const [op, id, capText, src64] = body.split(':');
    const cap = Number(capText);
    // issue 32 item 3: a value over the cap is measured here and never sent on; the
    // answer is its size in UTF-8 bytes (the wrapper {"v":...} is 6 of them).
    const serialise = v => {
      const out = JSON.stringify({v: v === undefined ? null : v});
      if (out.length - 6 > cap || (out.length - 6) * 3 > cap) {
        const size = new TextEncoder().encode(out).length - 6;
        if (size > cap) return {big: size};
      }
      return out;
    };
    const message = e => String(e && e.message !== undefined ? e.message : e);
    if (op === 'poll') {
      const entry = store.get(id);
      if (!entry) answer('lost', null);
      if (entry.state === 'pending') answer('pending', null);
      store.delete(id);
      answer(entry.state, entry.payload);
    }
    let value;
    try {
      const bytes = Uint8Array.from(atob(src64), c => c.charCodeAt(0));
      const src = new TextDecoder().decode(bytes);
      try {
        value = (0, eval)('(' + src + '\n)');
      } catch (e) {
        if (!(e instanceof SyntaxError)) throw e;
        value = (0, eval)(src);  // statements, not an expression
      }
      if (typeof value === 'function') value = value(root.nodeType === 9 ? undefined : root);
    } catch (e) {
      answer('err', message(e));
    }
    if (value && typeof value.then === 'function') {
      store.set(id, {state: 'pending'});
      Promise.resolve(value).then(
        v => { try { const out = serialise(v);
                     store.set(id, typeof out === 'string' ? {state: 'ok', payload: out}
                                                           : {state: 'big', payload: out.big}); }
               catch (e) { store.set(id, {state: 'err', payload: message(e)}); } },
        e => store.set(id, {state: 'err', payload: message(e)}));
      answer('pending', null);
    }
    let out;
    try { out = serialise(value); } catch (e) { answer('err', message(e)); }
    if (typeof out !== 'string') answer('big', out.big);
    answer('ok', out);
  },
  queryAll(root, body) {
    const el = this.query(root, body);
    return el ? [el] : [];
  },
})
"""

_ANSWER = re.compile(r"tbeval-(ok|err|pending|lost|big)=(.*);tbeval-end", re.DOTALL)


def _read(exc: PlaywrightError) -> tuple[str, Any] | None:
    """``(kind, payload)`` the engine threw, or None for any other error."""
    m = _ANSWER.search(str(exc))
    return (m.group(1), json.loads(m.group(2))) if m else None


async def _ask(locator: Locator) -> tuple[str, Any]:
    try:
        await locator.count()
    except PlaywrightError as exc:
        if (got := _read(exc)) is not None:
            return got
        raise
    # The engine answers by throwing, in whatever document it runs in; a count that
    # returns means no document ran it: the frame's document was being replaced.
    raise E.BrowserDocumentChanged(
        "The frame's document changed while the driver read it (no answer came).",
        {"reason": "replaced during an isolated-world read"})


async def evaluate_isolated(frame: Frame, scope: str | None, expression: str,
                            timeout_s: float, cap_bytes: int = RESULT_CAP_BYTES) -> Any:
    """Run ``expression`` (a function is called with the scope element, or with nothing)
    in the frame's isolated world; return its JSON value (undefined → None).

    Args:
        frame: the Playwright frame.
        scope: the driver's unique selector of the element passed as argument, or None.
        expression: JavaScript function or expression (a promise is awaited).
        timeout_s: how long a promise may take to settle, s.
        cap_bytes: the largest value returned, bytes of its UTF-8 JSON; measured in the
            isolated world, so a larger one never leaves the page (issue 32 item 3).

    Raises:
        ResultTooLarge: the value is over ``cap_bytes`` (``details.bytes``).
        BadRequest: the script threw, or its value is not JSON-serialisable (message: the
            script's error, first 300 characters).
        Timeout: the promise did not settle within ``timeout_s``.
        BrowserOperationUncertain: the document went away before the promise settled.
        PlaywrightError: anything else (the unique selector's count, a closed frame), for
            the caller's map_playwright_errors.
    """
    run_id = secrets.token_hex(8)
    body = f"run:{run_id}:{int(cap_bytes)}:{base64.b64encode(expression.encode()).decode()}"
    engine = f"{ENGINE}={body}"
    locator = frame.locator(scope).locator(engine) if scope else frame.locator(engine)
    kind, payload = await _ask(locator)
    deadline = asyncio.get_running_loop().time() + timeout_s
    while kind == "pending":
        if asyncio.get_running_loop().time() > deadline:
            raise E.Timeout(f"The script's promise did not settle within {timeout_s:g} s.")
        await asyncio.sleep(POLL_S)
        kind, payload = await _ask(frame.locator(f"{ENGINE}=poll:{run_id}"))
    if kind == "lost":
        raise E.BrowserOperationUncertain(
            "The document went away before the script's promise settled; it may have "
            "partly run.")
    if kind == "big":
        raise too_large(int(payload), "The script's value", NARROW_EVALUATE, cap_bytes)
    if kind == "err":
        raise E.BadRequest(f"The script failed in the page: {str(payload)[:300]}")
    return json.loads(payload).get("v")
