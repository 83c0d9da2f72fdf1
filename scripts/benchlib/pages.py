"""The local pages the benchmarks act on, served from 127.0.0.1 by a thread.

- ``/form``: the B1 task: a search box, an Owner select, an "Active only" checkbox and a
  submit button; 120 ms after submit a result line names the three values
  (:func:`expected_result`), so waiting for it also checks every step landed.
- ``/clicks``: a "Query" field and a "Go" button; trusted clicks on Go are counted in
  ``#n`` (``event.isTrusted`` only), focus changes in ``#f`` (B2, B4, B5); a "Slow" button
  inside a box running a transform animation that never moves it (the fast path refuses
  it as ``moving``, Playwright's stable check passes: the fallback's cost), its trusted
  clicks counted in ``#s``.
- ``/clicks-still``: the same without that animation (nothing on it moves: B5).
- ``/n<N>``: an application-like page with exactly N interactive elements (B3), from
  ``scripts/bench_snapshot.py``.
"""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlparse

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_snapshot import count_interactive_html, generate_page

RESULT_DELAY_MS = 120
"""How long after submit the result line appears, ms."""

QUERY, OWNER = "invoice", "Bob"

FORM = f"""<!doctype html><html><head><meta charset="utf-8"><title>Find invoices</title>
</head><body><h1>Invoices</h1>
<form id="f">
  <input id="q" type="text" aria-label="Search" placeholder="Search">
  <label>Owner <select id="owner"><option value="">Anyone</option><option>Ann</option>
    <option>Bob</option><option>Cyd</option></select></label>
  <label><input id="active" type="checkbox"> Active only</label>
  <button type="submit">Search</button>
</form>
<p id="result" role="status"></p>
<script>
document.getElementById('f').addEventListener('submit', (e) => {{
  e.preventDefault();
  const q = document.getElementById('q').value;
  const owner = document.getElementById('owner').value || 'anyone';
  const active = document.getElementById('active').checked;
  setTimeout(() => {{
    document.getElementById('result').textContent =
      `Found 3 results for ${{q}} owned by ${{owner}}${{active ? ', active only' : ''}}`;
  }}, {RESULT_DELAY_MS});
}});
</script></body></html>"""

CLICKS = """<!doctype html><html><head><meta charset="utf-8"><title>Clicks</title></head>
<style>@keyframes still { from { transform: none; } to { transform: none; } }
#slowbox { animation: still 1s linear infinite; }</style>
<body><h1>Latency</h1><input aria-label="Query"><button id="go">Go</button><p id="n">0</p>
<p id="f">0</p><div id="slowbox"><button id="slow">Slow</button></div><p id="s">0</p>
<script>let n = 0; document.getElementById('go').addEventListener('click', (e) => {
  if (e.isTrusted) document.getElementById('n').textContent = String(++n); });
let s = 0; document.getElementById('slow').addEventListener('click', (e) => {
  if (e.isTrusted) document.getElementById('s').textContent = String(++s); });
let f = 0; document.addEventListener('focusin', () => {
  document.getElementById('f').textContent = String(++f); });</script>
</body></html>"""


CLICKS_STILL = CLICKS.replace("#slowbox { animation: still 1s linear infinite; }", "")
"""``/clicks-still``: ``/clicks`` without the Slow button's endless animation (B5: every
visible window would render it 60 times a second, CPU the clicks compete with)."""
assert CLICKS_STILL != CLICKS


def expected_result(query: str = QUERY, owner: str = OWNER) -> str:
    """The result line the form page shows after a correct submit (active only checked)."""
    return f"Found 3 results for {query} owned by {owner}, active only"


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        path = urlparse(self.path).path.strip("/")
        if path == "form":
            body = FORM
        elif path == "clicks":
            body = CLICKS
        elif path == "clicks-still":
            body = CLICKS_STILL
        elif path.startswith("n") and path[1:].isdigit():
            body = generate_page(int(path[1:]))
        else:
            self.send_error(404)
            return
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *a: object) -> None:
        pass


class PageServer:
    """``with PageServer() as pages: pages.url("form")`` serves the pages on 127.0.0.1."""

    def __init__(self) -> None:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.base = f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def url(self, path: str, **query: object) -> str:
        q = "&".join(f"{k}={v}" for k, v in query.items())
        return f"{self.base}/{path}" + (f"?{q}" if q else "")

    def __enter__(self) -> PageServer:
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


__all__ = [
    "OWNER",
    "QUERY",
    "RESULT_DELAY_MS",
    "PageServer",
    "count_interactive_html",
    "expected_result",
    "generate_page",
]
