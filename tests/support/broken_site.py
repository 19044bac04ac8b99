"""A local server on 127.0.0.1 that breaks HTTP the way real broken servers do.

``/`` links to:

* ``/bad-status.html`` — a malformed status line (``HTTP/1.1 OK``), every time;
* ``/bad-chunks.html`` — ``Transfer-Encoding: chunked`` with a chunk size that is not hex;
* ``/short-body.html`` — ``Content-Length: 100000`` and a short body, then the connection closed;
* ``/short-changing.html`` — the same, but the body is one byte longer on each request (the error
  text changes: a cut connection rather than a broken server);
* ``/fine.html`` — 200.

``/robots.txt`` is 404. Each connection serves one request (``Connection: close``). The request
log (per target) may be read while serving. Thread-safe.
"""

from __future__ import annotations

import threading
from types import TracebackType

from crawler.demo.hostile_server import Exchange, RawHTTPServer, RequestLog

BROKEN = ("/bad-status.html", "/bad-chunks.html", "/short-body.html", "/short-changing.html")


def _page(text: str) -> bytes:
    return f"<html><body>{text}</body></html>".encode()


def _answer(ex: Exchange) -> None:
    path = ex.path
    html = "Content-Type: text/html"
    if path == "/":
        links = "".join(f'<a href="{p}">{p}</a>\n' for p in (*BROKEN, "/fine.html"))
        ex.respond(200, _page(links), html)
    elif path == "/fine.html":
        ex.respond(200, _page("fine"), html)
    elif path == "/bad-status.html":
        ex.conn.sendall(b"HTTP/1.1 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
    elif path == "/bad-chunks.html":
        head = ex.head(200, html, "Transfer-Encoding: chunked")
        ex.conn.sendall(head + b"zz\r\nhello\r\n0\r\n\r\n")
    elif path == "/short-body.html":
        ex.conn.sendall(ex.head(200, html, "Content-Length: 100000") + _page("cut"))
    elif path == "/short-changing.html":
        ex.conn.sendall(ex.head(200, html, "Content-Length: 100000") + _page("c" * ex.hits))
    else:
        ex.respond(404, b"not here", html)


class BrokenSite:
    """See the module docstring. A context manager: serving inside ``with``."""

    def __init__(self) -> None:
        self.log = RequestLog()
        self._closing = threading.Event()
        self._server = RawHTTPServer("broken", _answer, self.log, self._closing)

    def __enter__(self) -> BrokenSite:
        self._server.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.close()

    def url(self, path: str) -> str:
        return self._server.base + path

    def hits(self, path: str) -> int:
        """How many times ``path`` was requested."""
        return self.log.hits("broken", path)
