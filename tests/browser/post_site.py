"""A search page on 127.0.0.1 whose results come from ``POST /api/search`` (JSON bodies), for the
browser's POST-capture and block-rule tests.

``/`` loads ``/ads/tracker.js`` and a pixel from ``www.google-analytics.com`` (both for block
rules to refuse), then its script posts ``{"q": "owl", "page": 1}`` to ``/api/search`` (which
wants the header ``X-Api-Key: k1`` the script sends, else 403) and
writes the results into ``<ul id="results">``, posts the same body again, then
``{"q": "cat", "page": 1}`` (into ``#other``), a form body to ``/api/form`` (into ``#form``), and
a ``DELETE /api/item/1`` (which an archival crawler must not send), and a POST to
``localhost`` (another host: out of the crawl's scope). The server counts every
request it receives by method, path and body (``seen``). Thread-safe: ``seen`` may be read
while serving.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl

PAGE = """<!doctype html><html><head><title>Search</title>
<script src="/ads/tracker.js"></script></head>
<body><h1>Search</h1><ul id="results"></ul><p id="other"></p><p id="form"></p>
<img src="http://www.google-analytics.com/collect?v=1" alt="">
<script>
async function search(q) {
  const r = await fetch('/api/search', {method: 'POST',
    headers: {'Content-Type': 'application/json', 'X-Api-Key': 'k1'},
    body: JSON.stringify({q: q, page: 1})});
  return (await r.json()).results;
}
async function run() {
  const owls = await search('owl');
  document.getElementById('results').innerHTML = owls.map(t => '<li>' + t + '</li>').join('');
  await search('owl');
  document.getElementById('other').textContent = (await search('cat')).join(' ');
  const form = await fetch('/api/form', {method: 'POST',
    headers: {'Content-Type': 'application/x-www-form-urlencoded'}, body: 'q=owl+eyes&n=2'});
  document.getElementById('form').textContent = await form.text();
  fetch('/api/item/1', {method: 'DELETE'}).catch(() => null);
  const elsewhere = location.href.replace('127.0.0.1', 'localhost') + 'api/search';
  fetch(elsewhere, {method: 'POST', body: 'elsewhere'}).catch(() => null);
}
run();
</script></body></html>"""


def results(q: str) -> list[str]:
    """What ``/api/search`` answers for ``q``."""
    return [f"{q} result {n}" for n in (1, 2, 3)]


class PostSite:
    """Serves the search page on 127.0.0.1 (see the module docstring); a context manager."""

    def __init__(self) -> None:
        self.seen: Counter[tuple[str, str, bytes]] = Counter()
        self._lock = threading.Lock()
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with site._lock:
                    site.seen[(self.command, self.path, body)] += 1
                if self.path == "/api/search" and self.headers.get("X-Api-Key") != "k1":
                    status, ctype, out = 403, "text/plain", b"no API key"
                else:
                    status, ctype, out = site.answer(self.command, self.path, body)
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def do_GET(self) -> None:
                self._answer()

            def do_POST(self) -> None:
                self._answer()

            def do_DELETE(self) -> None:
                self._answer()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,))
        self._thread.daemon = True

    def answer(self, method: str, path: str, body: bytes) -> tuple[int, str, bytes]:
        """Status, Content-Type and body for a request."""
        if path == "/" and method == "GET":
            return 200, "text/html; charset=utf-8", PAGE.encode()
        if path == "/api/search" and method == "POST":
            q = str(json.loads(body or b"{}").get("q", ""))
            return 200, "application/json", json.dumps({"results": results(q)}).encode()
        if path == "/api/form" and method == "POST":
            fields = dict(parse_qsl(body.decode()))
            return 200, "text/plain", f"form got {fields.get('q', '')}".encode()
        if path == "/ads/tracker.js":
            return 200, "application/javascript", b"window.tracked = true;"
        return 404, "text/plain", b"not found"

    def requests(self, method: str, path: str) -> int:
        """How many ``method`` requests for ``path`` arrived (any body)."""
        with self._lock:
            return sum(n for (m, p, _b), n in self.seen.items() if m == method and p == path)

    def __enter__(self) -> PostSite:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
