"""A local site for the behaviour, screenshot and text tests.

On 127.0.0.1 (any free port):
- ``/plain.html``: a plain HTML page (no script; HTTP only) whose text speaks of herons;
- ``/spa.html``: an empty app root (the browser's ``auto`` rule sends it to the browser) and
  ``/app.js``, which renders text about kingfishers and: a ``<video preload=none>`` of
  ``/media/clip.webm`` (requested only when played); a closed ``details`` whose ``toggle``
  inserts a link to ``/hidden/details.html``; an ``aria-expanded=false`` button whose click
  inserts ``/hidden/accordion.html``; a ``role=tab`` whose click inserts ``/hidden/tab.html``; a
  link to ``/elsewhere.html`` marked ``aria-expanded=false`` (to be left alone); and, when the
  page's localStorage holds ``greeting``, a request to ``/ls/<greeting>``;
- anything else under ``/hidden/``, ``/custom/``, ``/ls/``: a small page.

``hits`` counts the requests per path (query included). Thread-safe (one lock).
"""

from __future__ import annotations

import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

PLAIN = (
    b"<!doctype html><html><head><title>Plain page</title></head><body>"
    b"<h1>Herons</h1><p>Herons wade in shallow water, waiting for fish.</p>"
    b'<a href="/spa.html">the app</a> <a href="/hidden/one.html">one</a> '
    b'<a href="/hidden/two.html">two</a></body></html>'
)
SPA = (
    b"<!doctype html><html><head><title>The app</title></head><body>"
    b'<div id="app"></div><script src="/app.js"></script></body></html>'
)
APP_JS = b"""
const app = document.getElementById('app');
app.innerHTML = '<h1>Kingfishers</h1><p>Rendered by script: kingfishers dive for fish.</p>' +
  '<video preload="none" src="/media/clip.webm"></video>' +
  '<details id="more"><summary>More</summary><div id="more-body"></div></details>' +
  '<button id="acc" aria-expanded="false">Section</button><div id="acc-body"></div>' +
  '<div role="tablist"><span role="tab" aria-selected="true">A</span>' +
  '<span role="tab" id="tab-b" aria-selected="false">B</span></div><div id="tab-body"></div>' +
  '<a href="/elsewhere.html" aria-expanded="false">elsewhere</a>';
document.getElementById('more').addEventListener('toggle', () => {
  document.getElementById('more-body').innerHTML = '<a href="/hidden/details.html">d</a>';
});
document.getElementById('acc').addEventListener('click', (e) => {
  e.target.setAttribute('aria-expanded', 'true');
  document.getElementById('acc-body').innerHTML = '<a href="/hidden/accordion.html">a</a>';
});
document.getElementById('tab-b').addEventListener('click', (e) => {
  e.target.setAttribute('aria-selected', 'true');
  document.getElementById('tab-body').innerHTML = '<a href="/hidden/tab.html">t</a>';
});
const greeting = localStorage.getItem('greeting');
if (greeting) fetch('/ls/' + greeting);
"""


class BehaveSite:
    """See the module docstring."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.hits: Counter[str] = Counter()
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site._answer(self)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return self.base + path

    def __enter__(self) -> BehaveSite:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _answer(self, h: BaseHTTPRequestHandler) -> None:
        path = h.path
        with self.lock:
            self.hits[path] += 1
        kind = "text/html; charset=utf-8"
        if path == "/plain.html":
            body = PLAIN
        elif path == "/spa.html":
            body = SPA
        elif path == "/app.js":
            body, kind = APP_JS, "application/javascript"
        elif path == "/media/clip.webm":
            body, kind = b"\x1a\x45\xdf\xa3" + bytes(2048), "video/webm"
        elif path.startswith(("/hidden/", "/custom/", "/ls/")) or path == "/elsewhere.html":
            body = f"<html><body><p>page {path}</p></body></html>".encode()
        else:
            h.send_response(404)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        h.send_response(200)
        h.send_header("Content-Type", kind)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)
