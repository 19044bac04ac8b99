"""A crawl of a site with an endless calendar and an endless day-by-day events list ends by
itself: each trap's template is fetched exactly as many times as its budget, the rejections are
in scope.log and the processors report, and a paginated list shorter than the budget is crawled
whole. A calendar linking the next and previous month and year ends under 100 fetches, also
across a resume; a numbered site of 1,000 pages with next/previous links and lists is crawled
whole."""

from __future__ import annotations

import datetime
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from crawllog_parser import parse_file

from crawler.control.controller import CrawlController
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
BUDGET = 30  # the default TrapBudgetDecideRule's max_series_length
LIST_PAGES = 25
NUMBERED = 1000  # pages of the numbered site
PER_INDEX = 50  # pages each of its lists links
AREA = 1 + 24 + 60  # a 2-D calendar: its first month, 24 within 3 steps, max_series_uris more

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]


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
        return _page([f"/p/{j}" for j in (n - 1, n + 1) if 1 <= j <= NUMBERED] + ["/?site=numbered"])
    return None


@pytest.fixture
def origin() -> Iterator[tuple[str, list[str]]]:
    requested: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requested.append(self.path)
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

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", requested
    server.shutdown()
    server.server_close()


def test_endless_calendar_ends_at_its_trap_budget(
    origin: tuple[str, list[str]], tmp_path: Path
) -> None:
    base, requested = origin
    order = load_order(
        EXAMPLE,
        [
            f"seeds.urls=['{base}/']",
            "seeds.file=null",
            "toe_threads=4",
            "logging.console=false",
            "scope.2.params.max_hops=100000",  # the trap budget alone must end the traps
            "limits.max_time_s=80",  # a safety net: the crawl must finish well before
        ],
    )
    run = tmp_path / "run"
    controller = CrawlController(order, run, install_signals=False)
    assert controller.run() == 0
    assert controller.exit_status == "Finished"

    calendar = [p for p in requested if p.startswith("/calendar/")]
    events = [p for p in requested if p.startswith("/events?")]
    lists = [p for p in requested if p.startswith("/list?")]
    # The calendar is entered from the home page (month 0 of its series), then each month links
    # the months on either side: 30 more each way. Each month links its first day's events, and
    # each day the next: series of at most 31 days from each month fetched.
    assert len(calendar) == len(set(calendar)) == 2 * BUDGET + 1
    assert len(events) == len(set(events)) <= len(calendar) * (BUDGET + 1)
    assert sorted(lists) == sorted(f"/list?page={n}" for n in range(1, LIST_PAGES + 1))
    statuses = {line.uri: line.status for line in parse_file(run / "logs" / "crawl.log")}
    assert statuses[f"{base}/about.html"] == 200
    assert all(statuses[base + p] == 200 for p in calendar + events + lists)

    scope_log = (run / "logs" / "scope.log").read_text().splitlines()
    calendar_template = f"trap:{base}/calendar/{{n}}/{{n}}"
    events_template = f"trap:{base}/events?date={{n}}-{{n}}-{{n}}"
    rejected = [line.split(" ")[4] for line in scope_log]
    assert all(" TrapBudgetDecideRule REJECT " in line for line in scope_log)
    assert all('{"status":-5000,"annotations":"trap:' in line for line in scope_log)
    assert any(calendar_template + '"}' in line for line in scope_log)
    assert any(events_template + '"}' in line for line in scope_log)
    assert not set(rejected) & {base + p for p in calendar + events}
    report = (run / "reports" / "processors-report.txt").read_text()
    assert f"candidates over a trap budget: {len(scope_log)} (2 templates)" in report
    # The rule's state (its rejections; templates only with a hard cap) is kept for resume.
    saved = json.loads((run / "state" / "trap-budgets.json").read_text())
    assert saved["8"]["rejected"] == len(scope_log)


def _crawl(base: str, run: Path, seed: str, *sets: str, resume: bool = False) -> CrawlController:
    order = load_order(
        EXAMPLE,
        [
            f"seeds.urls=['{base}{seed}']",
            "seeds.file=null",
            "toe_threads=4",
            "logging.console=false",
            "scope.2.params.max_hops=100000",  # the trap budget alone must end the traps
            "limits.max_time_s=100",  # a safety net: the crawl must finish well before
            *sets,
        ],
    )
    controller = CrawlController(order, run, install_signals=False, resume=resume)
    assert controller.run() == 0
    return controller


@pytest.mark.timeout(120)
def test_a_calendar_in_two_dimensions_ends_under_100_fetches(
    origin: tuple[str, list[str]], tmp_path: Path
) -> None:
    base, requested = origin
    controller = _crawl(base, tmp_path / "run", "/?site=grid")
    assert controller.exit_status == "Finished"
    grid = [p for p in requested if p.startswith("/grid/")]
    assert len(grid) == len(set(grid))
    # Within 3 steps of the first month every month is free (24), then 60 more at most; the
    # order of a crawl may count some of the 24 among the 60, never more.
    assert 60 < len(grid) <= AREA < 100, requested[:20]
    scope_log = (tmp_path / "run" / "logs" / "scope.log").read_text()
    assert f"trap:{base}/grid/{{n}}/{{n}}" in scope_log


@pytest.mark.timeout(120)
def test_the_area_of_a_series_holds_across_a_resume(
    origin: tuple[str, list[str]], tmp_path: Path
) -> None:
    base, requested = origin
    run = tmp_path / "run"
    _crawl(base, run, "/?site=grid", "limits.max_documents=45")
    first = {p for p in requested if p.startswith("/grid/")}
    assert 25 < len(first) < AREA  # stopped while the series was spending its budget
    _crawl(base, run, "/?site=grid", resume=True)
    grid = [p for p in requested if p.startswith("/grid/")]
    assert len(grid) == len(set(grid))
    assert len(first) < len(grid) <= AREA  # without the saved members 60 more would pass


@pytest.mark.timeout(180)
def test_a_numbered_site_with_lists_is_crawled_whole(
    origin: tuple[str, list[str]], tmp_path: Path
) -> None:
    base, requested = origin
    controller = _crawl(base, tmp_path / "run", "/?site=numbered", "toe_threads=8")
    assert controller.exit_status == "Finished"
    pages = {p for p in requested if p.startswith("/p/")}
    assert pages == {f"/p/{n}" for n in range(1, NUMBERED + 1)}
    indexes = {p for p in requested if p.startswith("/index/")}
    assert indexes == {f"/index/{k}" for k in range(1, NUMBERED // PER_INDEX + 1)}
    statuses = {
        line.uri: line.status for line in parse_file(tmp_path / "run" / "logs" / "crawl.log")
    }
    assert all(statuses[base + p] == 200 for p in pages | indexes)
