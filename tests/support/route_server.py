"""A local HTTP server for crawl tests whose answers come from a function of (host, path).

``RouteServer(route)`` listens on 127.0.0.1 (any free port; ``bind="0.0.0.0"`` for containers
on this machine); ``route(host, path)`` returns
``(status, headers, body)`` where ``host`` is the Host header without the port (so one server
can play ``127.0.0.1`` and ``localhost``). ``hits`` counts the requests per ``host + path``.
Use it as a context manager: the server stops on exit.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

Answer = tuple[int, dict[str, str], bytes]
Route = Callable[[str, str], Answer]


class RouteServer:
    """See the module docstring."""

    def __init__(self, route: Route, bind: str = "127.0.0.1") -> None:
        self.hits: Counter[str] = Counter()
        lock = threading.Lock()
        hits = self.hits

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
                with lock:
                    hits[host + self.path] += 1
                status, headers, body = route(host, self.path)
                self.send_response(status)
                headers = {"Content-Type": "text/html", **headers}
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer((bind, 0), Handler)
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def origin(self, host: str = "127.0.0.1") -> str:
        """``http://host:port`` of this server."""
        return f"http://{host}:{self.port}"

    def __enter__(self) -> RouteServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()


def page(*links: str) -> Answer:
    """A 200 HTML page linking to ``links``."""
    anchors = "".join(f'<a href="{link}">{link}</a>\n' for link in links)
    return 200, {}, f"<html><body>{anchors}</body></html>".encode()


def redirect(location: str, status: int = 302) -> Answer:
    """A redirect to ``location``."""
    return status, {"Location": location}, b""


NOT_FOUND: Answer = (404, {"Content-Type": "text/plain"}, b"not found")
