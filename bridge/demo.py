"""``trustbridge demo``: the main job end to end, printed as an agent would see it.

Brings up the embedded default on a free loopback port (``sdk.Browser.launch``), serves
a small page on another loopback port, opens it, takes a snapshot, types into the name
field key by key and clicks the button by ref (``Tab.type`` / ``Tab.click``), then takes a
second snapshot in which the page reports what it received (``event.isTrusted`` of the
click and how many of the key events were trusted). Everything binds 127.0.0.1 and stops
at the end.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .protocol import errors as E
from .sdk import Browser

NAME = "Ada"
EXPECTED = f"Hello, {NAME}! click isTrusted=true; {len(NAME)} of {len(NAME)} key events trusted"
"""What the page says once it saw the click and every typed key as trusted input."""

DEMO_PAGE = b"""<!doctype html>
<html><head><meta charset="utf-8"><title>trustbridge demo</title></head>
<body>
<h1>Say hello</h1>
<label>Your name <input id="name" autocomplete="off"></label>
<button id="greet">Greet</button>
<p id="status" role="status">waiting for input</p>
<script>
  const seen = {keys: 0, trustedKeys: 0};
  const name = document.getElementById('name');
  name.addEventListener('keydown', (e) => { seen.keys++; if (e.isTrusted) seen.trustedKeys++; });
  document.getElementById('greet').addEventListener('click', (e) => {
    document.getElementById('status').textContent =
      `Hello, ${name.value}! click isTrusted=${e.isTrusted}; ` +
      `${seen.trustedKeys} of ${seen.keys} key events trusted`;
  });
</script>
</body></html>"""


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server API
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(DEMO_PAGE)

    def log_message(self, *args: object) -> None:
        pass


def _ref(snapshot: str, role: str, name: str) -> str:
    m = re.search(rf'- {role} "{re.escape(name)}"[^\n]*\[ref=([a-z0-9]+)\]', snapshot)
    if not m:
        raise E.RefNotFound(f"No {role} named {name!r} in the snapshot.")
    return m.group(1)


async def run_demo(json_out: bool = False, progress: Callable[[str], None] = print) -> int:
    """Run the demo; returns 0 when the page saw trusted input, 1 otherwise.

    Raises:
        TrustbridgeError: the browser did not start, or an action failed.
    """
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    page_url = f"http://127.0.0.1:{httpd.server_address[1]}/"
    report: dict[str, object] = {}
    ok = False
    try:
        async with await Browser.launch(progress=progress) as browser:
            tab = await browser.tab()
            nav = await tab.goto(page_url)
            progress(f"opened {nav['url']}")
            snap = await tab.snapshot()
            _print("snapshot", snap, json_out)
            field_ref = _ref(snap, "textbox", "Your name")
            button_ref = _ref(snap, "button", "Greet")
            typed = await tab.type(field_ref, NAME)
            _print(f"type {field_ref} {NAME!r}", json.dumps(typed), json_out)
            clicked = await tab.click(button_ref)
            _print(f"click {button_ref}", json.dumps(clicked), json_out)
            after = await tab.snapshot()
            _print("snapshot after", after, json_out)
            report = {"typed": typed, "clicked": clicked}
            ok = EXPECTED in after and clicked["inputPath"] == "trusted"
    finally:
        httpd.shutdown()
        httpd.server_close()  # its listening socket too (a failed start leaked it)
    progress("the page saw trusted input" if ok else "the page did NOT see trusted input")
    if json_out:
        print(json.dumps({"ok": ok, **report}))
    return 0 if ok else 1


def _print(title: str, body: str, json_out: bool) -> None:
    if not json_out:
        print(f"\n== {title}\n{body}", flush=True)
