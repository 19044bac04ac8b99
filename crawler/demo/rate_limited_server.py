"""``RateLimitedSite``: a generated site behind a token bucket that answers 429 above its rate.

A server of ``pages`` HTML pages on 127.0.0.1 that allows ``rate_per_s`` requests per second
with a burst of ``burst`` (a token bucket: it holds at most ``burst`` tokens, gains
``rate_per_s`` a second, and each request takes one), and answers ``429 Too Many Requests``
to a request that finds no token — with a ``Retry-After`` (whole seconds until a token, at least
1) when ``retry_after`` is set. Every request counts, robots.txt included, so a crawler that
keeps under the rate never sees a 429.

The site: ``/`` links to ``/p/0.html``; page *i* links to pages 2i+1, 2i+2 (a binary tree, so
every page is at most log2(pages) + 2 hops from ``/``) and to (7i + 3) mod ``pages``. The
ground truth (:attr:`RateLimitedSite.page_urls`) is ``/`` and every page, each answering 200
once the bucket allows. ``/robots.txt`` allows everything.

Shared by the tests and ``bench/ratelimit.py``; ``python -m crawler.demo.rate_limited_server
--rate 25`` serves it alone. Thread-safe: the bucket and the counters are under one lock.
"""

from __future__ import annotations

import argparse
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

ROBOTS = b"User-agent: *\nDisallow:\n"
_FILLER = (
    b"<p>A page of the rate-limited test site. Its server allows so many requests a second "
    b"and refuses the rest with 429 Too Many Requests.</p>\n"
) * 4


class TokenBucket:
    """``rate_per_s`` tokens a second, at most ``burst`` held; starts full. Thread-safe."""

    def __init__(
        self, rate_per_s: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if rate_per_s <= 0 or burst < 1:
            raise ValueError("a token bucket needs rate_per_s > 0 and burst >= 1")
        self.rate_per_s = rate_per_s
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._at = clock()
        self._lock = threading.Lock()

    def take(self) -> float:
        """Take a token: 0.0 if one was there, else the seconds until one will be."""
        with self._lock:
            now = self._clock()
            tokens = min(float(self.burst), self._tokens + (now - self._at) * self.rate_per_s)
            self._at = now
            if tokens >= 1.0:
                self._tokens = tokens - 1.0
                return 0.0
            self._tokens = tokens
            return (1.0 - tokens) / self.rate_per_s


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, site: RateLimitedSite, port: int) -> None:
        self.site = site
        super().__init__(("127.0.0.1", port), _Handler)

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that hangs up is not an error worth a traceback."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # One buffered write per response, flushed by the base class after each request, and no
    # Nagle delay: headers and body in separate small segments would wait for delayed ACKs.
    wbufsize = -1
    disable_nagle_algorithm = True
    server: _Server

    def do_GET(self) -> None:
        site = self.server.site
        wait_s = site.bucket.take()
        if wait_s > 0:
            headers = {"Content-Type": "text/plain"}
            if site.retry_after:
                headers["Retry-After"] = str(max(1, math.ceil(wait_s)))
            self._send(429, b"too many requests\n", headers)
            return
        body = site.body(self.path)
        if body is None:
            self._send(404, b"not found\n", {"Content-Type": "text/plain"})
        elif self.path == "/robots.txt":
            self._send(200, body, {"Content-Type": "text/plain"})
        else:
            self._send(200, body, {"Content-Type": "text/html; charset=utf-8"})

    def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.server.site.count(self.path, status)
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the counters are the log."""


class RateLimitedSite:
    """The site and its server (see the module docstring). Use as a context manager."""

    def __init__(
        self,
        pages: int = 200,
        rate_per_s: float = 20.0,
        burst: int = 5,
        *,
        retry_after: bool = False,
        port: int = 0,
    ) -> None:
        if pages < 1:
            raise ValueError("pages must be at least 1")
        self.pages = pages
        self.bucket = TokenBucket(rate_per_s, burst)
        self.retry_after = retry_after
        self._port = port
        self._lock = threading.Lock()
        self.statuses: Counter[int] = Counter()
        """Answers given, by status (every request, robots.txt included)."""
        self.hits: Counter[str] = Counter()
        """Requests per path."""
        self.log: list[tuple[float, int]] = []
        """(monotonic time, status) of every answer, in order."""
        self._first_s = self._last_s = -1.0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.base_url = ""

    # ------------------------------------------------------------ content
    def page_path(self, i: int) -> str:
        return f"/p/{i}.html"

    @property
    def page_urls(self) -> list[str]:
        """The ground truth: every URL of the site a crawl must end with 200 (robots.txt aside)."""
        return [self.base_url + "/"] + [
            self.base_url + self.page_path(i) for i in range(self.pages)
        ]

    def body(self, path: str) -> bytes | None:
        """What ``path`` serves when the bucket allows, or None (404)."""
        if path == "/robots.txt":
            return ROBOTS
        if path == "/":
            return self._html("Home", [0])
        if path.startswith("/p/") and path.endswith(".html"):
            number = path[3:-5]
            if number.isdigit() and int(number) < self.pages:
                i = int(number)
                return self._html(f"Page {i}", [2 * i + 1, 2 * i + 2, (7 * i + 3) % self.pages])
        return None

    def _html(self, title: str, targets: list[int]) -> bytes:
        links = "".join(
            f'<li><a href="{self.page_path(j)}">page {j}</a></li>\n'
            for j in targets
            if j < self.pages
        )
        return (
            (
                f"<!DOCTYPE html>\n<html><head><title>{title}</title></head><body>\n"
                f"<h1>{title}</h1>\n<ul>\n{links}</ul>\n"
            ).encode()
            + _FILLER
            + b"</body></html>\n"
        )

    # ------------------------------------------------------------ counters
    def count(self, path: str, status: int) -> None:
        now = time.monotonic()
        with self._lock:
            self.statuses[status] += 1
            self.hits[path] += 1
            if self._first_s < 0:
                self._first_s = now
            self._last_s = now
            self.log.append((now, status))

    def first_last(self) -> tuple[float, float]:
        """Monotonic times of the first and last request answered (-1 before any)."""
        with self._lock:
            return self._first_s, self._last_s

    @property
    def requests(self) -> int:
        """Requests answered so far."""
        with self._lock:
            return sum(self.statuses.values())

    # ------------------------------------------------------------ lifecycle
    def start(self) -> str:
        """Serve in a background thread; returns the base URL ``http://127.0.0.1:PORT``."""
        self._server = _Server(self, self._port)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="rate-limited-site", daemon=True
        )
        self._thread.start()
        return self.base_url

    def stop(self) -> None:
        """Stop serving (idempotent)."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> RateLimitedSite:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=25.0, help="requests per second allowed")
    parser.add_argument("--burst", type=int, default=5)
    parser.add_argument("--retry-after", action="store_true", help="send Retry-After with 429")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    site = RateLimitedSite(
        args.pages, args.rate, args.burst, retry_after=args.retry_after, port=args.port
    )
    print(site.start(), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        site.stop()
        print(dict(site.statuses))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
