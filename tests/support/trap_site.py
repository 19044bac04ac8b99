"""The trap site: a local HTTP site of crawler traps and of sites that are not traps, for the trap
budget's crawl tests (tests/integration/test_trap_budget_crawl.py, tests/redis/).

``/`` links an endless calendar (each month: the previous and next month, its first day's
events), endless day-by-day events and a 25-page list; ``/?site=grid`` a calendar whose months
link the previous and next month *and year*; ``/?site=numbered`` the first of 20 lists of a
numbered site of 1,000 pages (each list links every list and its 50 pages, each page the
previous and next page). :class:`TrapSite` serves it and records every path requested.
Thread-safe (the request log is appended under the GIL, read after the crawl).
"""

from __future__ import annotations

import datetime
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import parse_qs, urlsplit

LIST_PAGES = 25
NUMBERED = 1000  # pages of the numbered site
PER_INDEX = 50  # pages each of its lists links


def _page(links: list[str]) -> bytes:
    anchors = "".join(f'<a href="{href}">{href}</a> ' for href in links)
    return f"<html><body>{anchors}</body></html>".encode()


def _month(year: int, month: int, step: int) -> str:
    index = year * 12 + month - 1 + step
    return f"/calendar/{index // 12}/{index % 12 + 1:02d}"


def route(path: str, query: str) -> bytes | None:
    """The site: a start page, an endless calendar, endless events, a 25-page list; a calendar
    linking months and years; a numbered site of 1,000 pages and its 20 lists."""
    parts = path.strip("/").split("/")
    if path == "/" and query == "site=grid":  # the seed of the 2-D calendar
        return _page(["/grid/2026/01"])
    if path == "/" and query == "site=numbered":  # the seed of the numbered site
        return _page(["/index/1"])
    if path == "/":
        return _page(["/calendar/2026/01", "/list?page=1", "/about.html"])
    if path == "/about.html":
        return _page([])
    if parts[0] == "calendar" and len(parts) == 3 and all(p.isdigit() for p in parts[1:]):
        year, month = int(parts[1]), int(parts[2])
        day = f"{year:04d}-{month:02d}-01"
        return _page([_month(year, month, -1), _month(year, month, 1), f"/events?date={day}"])
    if path == "/events":
        date = datetime.date.fromisoformat(parse_qs(query)["date"][0])
        return _page([f"/events?date={date + datetime.timedelta(days=1)}"])
    if path == "/list":
        return _page([f"/list?page={n}" for n in range(1, LIST_PAGES + 1)])
    if parts[0] == "grid" and len(parts) == 3 and all(p.isdigit() for p in parts[1:]):
        year, month = int(parts[1]), int(parts[2])
        links = [_month(year, month, step) for step in (-1, 1, -12, 12)]
        return _page([link.replace("/calendar/", "/grid/") for link in links])
    indexes = NUMBERED // PER_INDEX
    if parts[0] == "index" and len(parts) == 2 and parts[1].isdigit():
        k = int(parts[1])
        if not 1 <= k <= indexes:
            return None
        pager = [f"/index/{j}" for j in (k - 1, k + 1, *range(1, indexes + 1)) if j >= 1]
        pages = [f"/p/{n}" for n in range((k - 1) * PER_INDEX + 1, k * PER_INDEX + 1)]
        return _page([j for j in pager if int(j.rsplit("/", 1)[1]) <= indexes] + pages)
    if parts[0] == "p" and len(parts) == 2 and parts[1].isdigit():
        n = int(parts[1])
        if not 1 <= n <= NUMBERED:
            return None
        return _page(
            [f"/p/{j}" for j in (n - 1, n + 1) if 1 <= j <= NUMBERED] + ["/?site=numbered"]
        )
    return None


class TrapSite:
    """Serves :func:`route` on 127.0.0.1; ``requested`` lists every path (with query) asked.
    Each ``/grid/`` page answers ``grid_delay_s`` late (a crawl stopped by a limit then stops
    within a few of them)."""

    def __init__(self, grid_delay_s: float = 0.0) -> None:
        self.requested: list[str] = []
        requested = self.requested

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                requested.append(self.path)
                if grid_delay_s and self.path.startswith("/grid/"):
                    time.sleep(grid_delay_s)
                url = urlsplit(self.path)
                body = route(url.path, url.query)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Type", "text/html")
                body = body if body is not None else b"not found"
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> TrapSite:
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
