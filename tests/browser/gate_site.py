"""A page on one loopback host whose script asks for many images at once from a second host
(and a few from its own), served slowly, with every request's host, path, status and time kept
and the requests in progress counted per host — for the tests of the server gate of a browser
page's sub-resources.

``GateSite`` serves the page host on 127.0.0.1 and the asset host on 127.0.0.2 (Linux routes
all of 127/8 to the loopback), one port each, from one handler. ``/`` is the page: its script
inserts ``assets`` images from the asset host (``/a/<n>.png``) and ``own_assets`` from its own
(``/o/<n>.png``) at once. Each image answer waits ``delay_s`` so requests overlap if the crawler
lets them. ``refuse`` makes the asset host's first image request answer 429 with that
``Retry-After`` (seconds). robots.txt is 404. Thread-safe: read ``peak``, ``log`` while serving.
"""

from __future__ import annotations

import base64
import threading
import time
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

PAGE_HOST, ASSET_HOST = "127.0.0.1", "127.0.0.2"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@dataclass(frozen=True, slots=True)
class Request:
    """One request as the site saw it: when it came in and when its answer went out."""

    host: str
    path: str
    status: int
    start_s: float
    end_s: float


class GateSite:
    """See the module docstring."""

    def __init__(
        self, assets: int = 12, own_assets: int = 4, delay_s: float = 0.15, refuse: int = 0
    ) -> None:
        self.assets, self.own_assets, self.delay_s, self.refuse = (
            assets,
            own_assets,
            delay_s,
            refuse,
        )
        self.peak: Counter[str] = Counter()
        self.log: list[Request] = []
        self._inflight: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._refused = False
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                host = str(self.server.server_address[0])  # type: ignore[index]
                status, headers, body = site.answer(host, self.path)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self._servers = [ThreadingHTTPServer((h, 0), Handler) for h in (PAGE_HOST, ASSET_HOST)]
        self._threads = [
            threading.Thread(target=s.serve_forever, daemon=True) for s in self._servers
        ]

    def origin(self, host: str) -> str:
        """``http://host:port`` of the page host or the asset host."""
        server = self._servers[0 if host == PAGE_HOST else 1]
        return f"http://{host}:{server.server_address[1]}"

    def server(self, host: str) -> str:
        """The crawler's server key (host:port) of a host of the site."""
        return self.origin(host).removeprefix("http://")

    def asset_uris(self) -> list[str]:
        """Every image the page asks for."""
        return [f"{self.origin(ASSET_HOST)}/a/{n}.png" for n in range(self.assets)] + [
            f"{self.origin(PAGE_HOST)}/o/{n}.png" for n in range(self.own_assets)
        ]

    def page(self) -> bytes:
        urls = ", ".join(f"'{u}'" for u in self.asset_uris())
        return (
            "<!doctype html><html><head><title>gate</title></head><body><div id='app'></div>"
            f"<script>for (const u of [{urls}]) {{ const i = new Image(); i.src = u; "
            "document.getElementById('app').appendChild(i); }</script></body></html>"
        ).encode()

    def answer(self, host: str, path: str) -> tuple[int, dict[str, str], bytes]:
        start = time.monotonic()
        with self._lock:
            self._inflight[host] += 1
            self.peak[host] = max(self.peak[host], self._inflight[host])
        status, headers, body = 200, {"Content-Type": "image/png"}, PNG
        try:
            if path == "/" and host == PAGE_HOST:
                headers["Content-Type"] = "text/html"
                body = self.page()
            elif path.startswith(("/a/", "/o/")):
                with self._lock:
                    refuse = self.refuse and host == ASSET_HOST and not self._refused
                    self._refused = self._refused or bool(refuse)
                if refuse:
                    status, body = 429, b"slow down"
                    headers = {"Content-Type": "text/plain", "Retry-After": str(self.refuse)}
                else:
                    time.sleep(self.delay_s)
            else:
                status, headers, body = 404, {"Content-Type": "text/plain"}, b"not found"
        finally:
            # Counted out before the answer is sent: the crawler cannot start its next request
            # while this one still counts.
            with self._lock:
                self._inflight[host] -= 1
                self.log.append(Request(host, path, status, start, time.monotonic()))
        return status, headers, body

    def requests(self, host: str, prefix: str = "/") -> list[Request]:
        """The requests to ``host`` whose path starts with ``prefix``, in arrival order."""
        with self._lock:
            return sorted(
                (r for r in self.log if r.host == host and r.path.startswith(prefix)),
                key=lambda r: r.start_s,
            )

    def __enter__(self) -> GateSite:
        for t in self._threads:
            t.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for s in self._servers:
            s.shutdown()
            s.server_close()
