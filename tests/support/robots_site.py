"""``robots_site``: a local HTTP server with a robots.txt, for the robots.txt prerequisite tests.

``/robots.txt`` answers ``site.robots`` (status, body; settable while serving), every other path
200 ``page``; ``site.paths`` lists the paths asked, in order. Thread-safe enough for tests: the
handler threads only append to ``paths``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DISALLOW_PRIVATE = b"User-agent: *\nDisallow: /private\n"


class RobotsSite(ThreadingHTTPServer):
    """The server; ``base`` is ``http://127.0.0.1:PORT``."""

    daemon_threads = True
    robots: tuple[int, bytes]
    paths: list[str]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: RobotsSite

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.server.paths.append(self.path)
        status, body = self.server.robots if self.path == "/robots.txt" else (200, b"page")
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def robots_site(robots: bytes = DISALLOW_PRIVATE, status: int = 200) -> Iterator[RobotsSite]:
    """A started :class:`RobotsSite` whose robots.txt is ``status`` ``robots``; stopped after."""
    server = RobotsSite(("127.0.0.1", 0), _Handler)
    server.robots = (status, robots)
    server.paths = []
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
