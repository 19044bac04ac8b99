"""A small site on 127.0.0.1 whose pages fail the way HTTP retries are for.

``/`` links to:

* ``/flaky-500.html`` — 500 on the first request, 200 after;
* ``/busy-429.html`` — 429 with ``Retry-After: 1`` on the first request, 200 after;
* ``/down-503.html`` — 503 on every request (no Retry-After);
* ``/gone-404.html`` — 404 on every request (never retried);
* ``/fine.html`` — 200.

The request log (path, monotonic time) may be read while serving. Thread-safe.
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

RETRY_AFTER_S = 1
PATHS = ("/flaky-500.html", "/busy-429.html", "/down-503.html", "/gone-404.html", "/fine.html")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = -1
    disable_nagle_algorithm = True
    server: _Server

    def do_GET(self) -> None:
        site = self.server.site
        hits = site.record(self.path)
        path = self.path
        headers = {"Content-Type": "text/html"}
        status, body = 200, b"<html><body>fine</body></html>"
        if path == "/":
            body = "".join(f'<a href="{p}">{p}</a>\n' for p in PATHS).encode()
        elif path == "/robots.txt":
            status, body = 404, b"none"
        elif path == "/flaky-500.html" and hits == 1:
            status, body = 500, b"oops"
        elif path == "/busy-429.html" and hits == 1:
            status, body = 429, b"slow down"
            headers["Retry-After"] = str(RETRY_AFTER_S)
        elif path == "/down-503.html":
            status, body = 503, b"down"
        elif path == "/gone-404.html" or path not in PATHS:
            status, body = 404, b"not here"
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, site: RetrySite) -> None:
        self.site = site
        super().__init__(("127.0.0.1", 0), _Handler)


class RetrySite:
    """Serves the site in a thread while used as a context manager."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.log: list[tuple[str, float]] = []
        self._server = _Server(self)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def record(self, path: str) -> int:
        """Log a request; how many requests ``path`` has had, this one included."""
        with self._lock:
            self.log.append((path, time.monotonic()))
            return sum(1 for p, _ in self.log if p == path)

    def times(self, path: str) -> list[float]:
        with self._lock:
            return [t for p, t in self.log if p == path]

    def url(self, path: str) -> str:
        return self.base_url + path

    def __enter__(self) -> RetrySite:
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
        self._thread.join(timeout=5)
