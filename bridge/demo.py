"""``trustbridge demo``: the main job end to end, printed as an agent would see it.

Brings up the embedded default on a free loopback port, serves a small page on another
loopback port, opens it, takes a snapshot, types into the name field and clicks the
button by ref, then takes a second snapshot in which the page reports what it received
(including ``event.isTrusted``). Everything binds 127.0.0.1 and stops at the end.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .client import BridgeClient
from .embedded import Embedded
from .protocol import errors as E

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
    """Run the demo; returns 0 when the page saw trusted input, 1 otherwise."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    page_url = f"http://127.0.0.1:{httpd.server_address[1]}/"
    emb = Embedded(port=0, progress=progress)
    report: dict[str, object] = {}
    try:
        await emb.start()
        async with await BridgeClient.connect(emb.url, emb.token) as client:
            nav = await client.call("page.navigate", {"url": page_url})
            progress(f"opened {nav['url']}")
            snap = await client.call("page.snapshot", {})
            _print("snapshot", snap["snapshot"], json_out)
            field_ref = _ref(snap["snapshot"], "textbox", "Your name")
            button_ref = _ref(snap["snapshot"], "button", "Greet")
            typed = await client.call("page.act", {"ref": field_ref,
                                                   "action": {"kind": "type", "text": "Ada"}})
            _print(f"type {field_ref} 'Ada'", json.dumps(typed), json_out)
            clicked = await client.call("page.act", {"ref": button_ref,
                                                     "action": {"kind": "click"}})
            _print(f"click {button_ref}", json.dumps(clicked), json_out)
            after = await client.call("page.snapshot", {})
            _print("snapshot after", after["snapshot"], json_out)
            report = {"typed": typed, "clicked": clicked}
            ok = "click isTrusted=true" in after["snapshot"] and clicked["inputPath"] == "trusted"
    finally:
        await emb.stop()
        httpd.shutdown()
    progress("the page saw trusted input" if ok else "the page did NOT see trusted input")
    if json_out:
        print(json.dumps({"ok": ok, **report}))
    return 0 if ok else 1


def _print(title: str, body: str, json_out: bool) -> None:
    if not json_out:
        print(f"\n== {title}\n{body}", flush=True)
