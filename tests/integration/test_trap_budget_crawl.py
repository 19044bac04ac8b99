"""A crawl of a site with an endless calendar and an endless day-by-day events list ends by
itself: each trap's template is fetched exactly as many times as its budget, the rejections are
in scope.log and the processors report, and a paginated list shorter than the budget is crawled
whole. A calendar linking the next and previous month and year ends under 100 fetches, also
across a resume; a numbered site of 1,000 pages with next/previous links and lists is crawled
whole."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.crawllog_parser import parse_file
from support.trap_site import LIST_PAGES, NUMBERED, PER_INDEX, TrapSite

from crawler.control.controller import CrawlController
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
BUDGET = 30  # the default TrapBudgetDecideRule's max_series_length
AREA = 1 + 24 + 60  # a 2-D calendar: its first month, 24 within 3 steps, max_series_uris more

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]


@pytest.fixture
def origin() -> Iterator[tuple[str, list[str]]]:
    with TrapSite() as site:
        yield site.base, site.requested


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
def test_the_area_of_a_series_holds_across_a_resume(tmp_path: Path) -> None:
    run = tmp_path / "run"
    # Slow months and two threads: the documents limit stops the crawl within a few months.
    with TrapSite(grid_delay_s=0.05) as site:
        _crawl(site.base, run, "/?site=grid", "limits.max_documents=40", "toe_threads=2")
        first = {p for p in site.requested if p.startswith("/grid/")}
        assert 25 < len(first) < AREA  # stopped while the series was spending its budget
        _crawl(site.base, run, "/?site=grid", resume=True)
        grid = [p for p in site.requested if p.startswith("/grid/")]
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
