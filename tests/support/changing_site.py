"""A site on 127.0.0.1 whose pages change between crawls, with validators: each page answers
with an ``ETag`` (a hash of its body) and a ``Last-Modified`` (when it was last set), and a
request whose ``If-None-Match`` names the current ETag gets ``304 Not Modified``. A path with
no page gets 404; ``/robots.txt`` is always the same 200 body, without validators.

:meth:`ChangingSite.set` / :meth:`ChangingSite.remove` change pages while serving; the request
log (path, status) may be read at any time. Thread-safe.
"""

from __future__ import annotations

import email.utils
import hashlib
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

ROBOTS = b"User-agent: *\nDisallow:\n"


def links_page(title: str, *paths: str) -> str:
    """An HTML page titled ``title`` linking to ``paths``."""
    links = "".join(f'<a href="{p}">{p}</a>\n' for p in paths)
    return f"<html><head><title>{title}</title></head><body>{links}</body></html>"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_GET(self) -> None:
        site = self.server.site
        path = self.path
        headers = {"Content-Type": "text/html"}
        if path == "/robots.txt":
            status, body = 200, ROBOTS
            headers["Content-Type"] = "text/plain"
        else:
            page = site.page(path)
            if page is None:
                status, body = 404, b"<html><body>not here</body></html>"
            else:
                body, modified_s = page
                etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
                headers["ETag"] = etag
                headers["Last-Modified"] = email.utils.formatdate(modified_s, usegmt=True)
                status = 304 if self.headers.get("If-None-Match") == etag else 200
                if status == 304:
                    body = b""
        site.note(path, status)
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if status != 304:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    site: ChangingSite


class ChangingSite:
    """The site (see the module docstring); a context manager that serves it."""

    def __init__(self) -> None:
        self._pages: dict[str, tuple[bytes, float]] = {}
        self._lock = threading.Lock()
        self.requests: list[tuple[str, int]] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``, no trailing slash."""
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def base_urls(self) -> list[str]:
        """The seed: the home page."""
        return [self.url + "/"]

    def set(self, path: str, html: str) -> None:
        """Serve ``html`` at ``path`` from now on (Last-Modified: now, if it changed)."""
        body = html.encode()
        with self._lock:
            old = self._pages.get(path)
            if old is None or old[0] != body:
                self._pages[path] = (body, time.time())

    def remove(self, path: str) -> None:
        """Answer 404 at ``path`` from now on."""
        with self._lock:
            self._pages.pop(path, None)

    def page(self, path: str) -> tuple[bytes, float] | None:
        with self._lock:
            return self._pages.get(path)

    def note(self, path: str, status: int) -> None:
        with self._lock:
            self.requests.append((path, status))

    def __enter__(self) -> ChangingSite:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.site = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
