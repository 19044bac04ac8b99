"""A one-host test site for the papers' experiment: slow answers, concurrency recorded.

``python bench/frontier_site.py --pages 20000 --latency-s 0.05`` serves on 127.0.0.1 (port on
the first stdout line, ``PORT <n>``) until killed. Page ``i`` lives at
``/s<i % sections>/p<i>.html`` (so ``parallel_queues`` has many first path segments to split on)
and links to the next three pages and seven pseudo-random others; ``/`` links to the first pages;
``/robots.txt`` allows all. Every answer is held ``latency_s`` (in its own thread, as a slow
application server would).

The site records, per run: the completion time of every request, the most requests in progress
at once (``max_active``: what a server politeness cap bounds) and the most open connections.
``GET /__reset`` starts a new run; ``GET /__stats`` returns the run's figures as JSON. Both are
answered at once, outside the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LINKS_RANDOM = 7
LINKS_NEXT = 3


class Site:
    """Page generator and run statistics (thread-safe)."""

    def __init__(self, pages: int, sections: int, latency_s: float) -> None:
        self.pages, self.sections, self.latency_s = pages, sections, latency_s
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self.lock:
            self.t0 = time.monotonic()
            self.active = self.max_active = 0
            self.max_open = self.open = getattr(self, "open", 0)
            self.done: list[float] = []
            self.paths: list[str] = []

    def path(self, i: int) -> str:
        return f"/s{i % self.sections}/p{i}.html"

    def page(self, path: str) -> bytes | None:
        if path == "/":
            targets = list(range(min(self.pages, 20)))
        else:
            try:
                i = int(path.rsplit("/p", 1)[1].removesuffix(".html"))
            except (IndexError, ValueError):
                return None
            if not 0 <= i < self.pages or path != self.path(i):
                return None
            n = self.pages
            targets = [(i + d) % n for d in range(1, LINKS_NEXT + 1)]
            targets += [(i * 7919 + j * 104_729 + 13) % n for j in range(LINKS_RANDOM)]
        links = "".join(f'<li><a href="{self.path(t)}">page {t}</a></li>' for t in targets)
        filler = "<p>" + "lorem ipsum dolor sit amet " * 40 + "</p>"
        html = f"<!doctype html><html><head><title>{path}</title></head><body><ul>{links}</ul>"
        return (html + filler + "</body></html>").encode()

    def stats(self) -> dict[str, Any]:
        with self.lock:
            return {
                "max_active": self.max_active,
                "max_open": self.max_open,
                "done_s": [round(t, 4) for t in self.done],
                "paths": self.paths,
            }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "frontier-bench-site/1.0"
    disable_nagle_algorithm = True
    site: Site

    def setup(self) -> None:
        super().setup()
        site = self.site
        with site.lock:
            site.open += 1
            site.max_open = max(site.max_open, site.open)

    def finish(self) -> None:
        site = self.site
        with site.lock:
            site.open -= 1
        super().finish()

    def do_GET(self) -> None:
        site = self.site
        if self.path.startswith("/__"):
            if self.path == "/__reset":
                site.reset()
            body = json.dumps(site.stats()).encode()
            self._send(200, "application/json", body)
            return
        with site.lock:
            site.active += 1
            site.max_active = max(site.max_active, site.active)
        try:
            time.sleep(site.latency_s)
            if self.path == "/robots.txt":
                self._send(200, "text/plain", b"User-agent: *\nDisallow:\n")
            else:
                body = site.page(self.path)
                if body is None:
                    self._send(404, "text/plain", b"not found\n")
                else:
                    self._send(200, "text/html; charset=utf-8", body)
        finally:
            with site.lock:
                site.active -= 1
                site.done.append(time.monotonic() - site.t0)
                site.paths.append(self.path)

    def _send(self, status: int, ctype: str, body: bytes) -> None:
        reason = {200: "OK", 404: "Not Found"}[status]
        head = (
            f"HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        self.wfile.write(head.encode() + body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=20_000)
    parser.add_argument("--sections", type=int, default=200)
    parser.add_argument("--latency-s", type=float, default=0.05)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    Handler.site = Site(args.pages, args.sections, args.latency_s)
    server = Server(("127.0.0.1", args.port), Handler)
    print(f"PORT {server.server_address[1]}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever(poll_interval=0.1)
    server.server_close()
    sys.exit(0)


if __name__ == "__main__":
    main()
