"""``RateLimitedSite``: a generated site behind a rate limiter that answers 429 above its rate.

A server of ``pages`` HTML pages on 127.0.0.1 that allows ``rate_per_s`` requests per second
and answers ``429 Too Many Requests`` to a request its limiter refuses. The limiter has one of
the :data:`SHAPES` of real servers' limiters:

* ``bucket`` — a token bucket (nginx ``limit_req`` with ``burst``, most API gateways): holds at
  most ``burst`` tokens, gains ``rate_per_s`` a second, each request takes one;
* ``bucket-small`` — the same with a burst of 2 (nginx ``limit_req`` with ``burst=1``: a
  request may come early only if the one before it was late);
* ``fixed`` — a fixed window: at most ``rate_per_s`` requests per whole second of the clock;
* ``sliding`` — a sliding window (a log of the last second): at most ``rate_per_s`` requests
  in any second, *refused requests counted too*, so a client above the rate is refused until
  it has slowed down for a whole second.

``retry_after`` says what a 429 carries: ``None`` no ``Retry-After``, ``"auto"`` the whole
seconds until the limiter would allow a request (at least 1), or a fixed number of seconds
(``"1"``, ``"0"``). Every request counts, robots.txt included, so a crawler that keeps under
the rate never sees a 429.

The site: ``/`` links to ``/p/0.html`` (to every page with ``wide``: the crawl has the whole
site queued at once, as with a sitemap); page *i* links to pages 2i+1, 2i+2 (a binary tree, so
every page is at most log2(pages) + 2 hops from ``/``) and to (7i + 3) mod ``pages``. The
ground truth (:attr:`RateLimitedSite.page_urls`) is ``/`` and every page, each answering 200
once the limiter allows. ``/robots.txt`` allows everything.

Shared by the tests (the limiters take a clock, so the pace's unit tests run them on a fake
one) and ``bench/ratelimit.py``; ``python -m crawler.demo.rate_limited_server --rate 25
--shape fixed`` serves it alone. Thread-safe: each limiter and the counters are under a lock.
"""

from __future__ import annotations

import argparse
import math
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Protocol

ROBOTS = b"User-agent: *\nDisallow:\n"
_FILLER = (
    b"<p>A page of the rate-limited test site. Its server allows so many requests a second "
    b"and refuses the rest with 429 Too Many Requests.</p>\n"
) * 4


class Limiter(Protocol):
    """A server's rate limiter: :meth:`take` for every request, in arrival order."""

    rate_per_s: float

    def take(self) -> float:
        """Let a request through (0.0) or refuse it: the seconds until one would pass (> 0)."""
        ...


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


class FixedWindow:
    """At most ``rate_per_s`` requests (rounded down, at least 1) in each whole second of the
    clock; the count starts again at each second. Thread-safe."""

    def __init__(self, rate_per_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        if rate_per_s <= 0:
            raise ValueError("a fixed window needs rate_per_s > 0")
        self.rate_per_s = rate_per_s
        self._limit = max(1, int(rate_per_s))
        self._clock = clock
        self._window = -1
        self._count = 0
        self._lock = threading.Lock()

    def take(self) -> float:
        with self._lock:
            now = self._clock()
            window = math.floor(now)
            if window != self._window:
                self._window, self._count = window, 0
            if self._count < self._limit:
                self._count += 1
                return 0.0
            return window + 1 - now


class SlidingWindow:
    """At most ``rate_per_s`` requests (rounded down, at least 1) in any second: a log of the
    last second's requests, refused ones included (a client that keeps asking above the rate
    keeps being refused). Thread-safe."""

    def __init__(self, rate_per_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        if rate_per_s <= 0:
            raise ValueError("a sliding window needs rate_per_s > 0")
        self.rate_per_s = rate_per_s
        self._limit = max(1, int(rate_per_s))
        self._clock = clock
        self._log: deque[float] = deque()
        self._lock = threading.Lock()

    def take(self) -> float:
        with self._lock:
            now = self._clock()
            log = self._log
            while log and log[0] <= now - 1.0:
                log.popleft()
            full = len(log) >= self._limit
            log.append(now)
            if len(log) > 4 * self._limit:  # bounded memory whatever the client does
                log.popleft()
            if not full:
                return 0.0
            return max(log[len(log) - self._limit] + 1.0 - now, 1e-3)


SHAPES = ("bucket", "bucket-small", "fixed", "sliding")
SMALL_BURST = 2
"""The limiter shapes :func:`make_limiter` builds (see the module docstring)."""


def make_limiter(
    shape: str, rate_per_s: float, burst: int = 5, clock: Callable[[], float] = time.monotonic
) -> Limiter:
    """The limiter of ``shape`` (one of :data:`SHAPES`; ``burst`` is the bucket's)."""
    if shape == "bucket":
        return TokenBucket(rate_per_s, burst, clock)
    if shape == "bucket-small":
        return TokenBucket(rate_per_s, SMALL_BURST, clock)
    if shape == "fixed":
        return FixedWindow(rate_per_s, clock)
    if shape == "sliding":
        return SlidingWindow(rate_per_s, clock)
    raise ValueError(f"unknown limiter shape {shape!r} (one of {', '.join(SHAPES)})")


def retry_after_value(retry_after: str | None, wait_s: float) -> str | None:
    """The ``Retry-After`` of a 429 refused for ``wait_s``: None (not sent), ``"auto"`` (whole
    seconds until a request would pass, at least 1) or a fixed value given as it is."""
    if retry_after is None:
        return None
    if retry_after == "auto":
        return str(max(1, math.ceil(wait_s)))
    return retry_after


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
        wait_s = site.limiter.take()
        if wait_s > 0:
            headers = {"Content-Type": "text/plain"}
            value = retry_after_value(site.retry_after, wait_s)
            if value is not None:
                headers["Retry-After"] = value
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
        retry_after: str | None = None,
        shape: str = "bucket",
        wide: bool = False,
        port: int = 0,
    ) -> None:
        if pages < 1:
            raise ValueError("pages must be at least 1")
        if retry_after not in (None, "auto") and not (retry_after or "").isdigit():
            raise ValueError(f"retry_after must be None, 'auto' or whole seconds: {retry_after!r}")
        self.pages = pages
        self.limiter = make_limiter(shape, rate_per_s, burst)
        self.shape = shape
        self.wide = wide
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
            return self._html("Home", list(range(self.pages)) if self.wide else [0])
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
    parser.add_argument("--burst", type=int, default=5, help="the bucket's burst")
    parser.add_argument("--shape", choices=SHAPES, default="bucket", help="the limiter")
    parser.add_argument(
        "--retry-after", default=None, help="Retry-After of a 429: auto, or whole seconds"
    )
    parser.add_argument("--wide", action="store_true", help="the home page links every page")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        site = RateLimitedSite(
            args.pages,
            args.rate,
            args.burst,
            retry_after=args.retry_after,
            shape=args.shape,
            wide=args.wide,
            port=args.port,
        )
    except ValueError as exc:
        parser.error(str(exc))
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
