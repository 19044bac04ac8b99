"""Links read from a 304's stored payload meet the same decisions as in the first crawl: hop
limits, the trap budget and URI quotas cut the recrawl at exactly the same URIs (one thread, so
the order of fetches, hence of quota decisions, is the same)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from recrawl_support import not_modified
from support.crawllog_parser import parse_file
from validator_site import Answer, ValidatorSite

from crawler.control.controller import CrawlController
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def page(*links: str) -> Answer:
    anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
    return 200, {"Content-Type": "text/html"}, f"<html><body>{anchors}</body></html>".encode()


def table() -> dict[str, Answer]:
    pages = {"/": page("/cal/1", "/deep/a", *(f"/p/{n}.html" for n in range(10)))}
    for n in range(1, 60):
        pages[f"/cal/{n}"] = page(f"/cal/{n + 1}")  # an endless calendar, cut by the trap budget
    letters = "abcdefghijk"  # no digits: not a series for the trap budget
    for this, after in itertools.pairwise(letters):
        pages[f"/deep/{this}"] = page(f"/deep/{after}")  # cut by max_hops
    # Found last (4 hops down, after the trap and hop cuts), so the URI quota cuts among these.
    pages["/deep/d"] = page("/deep/e", *(f"/q/{n}.html" for n in range(30)))
    for n in range(10):
        pages[f"/p/{n}.html"] = page()
    for n in range(30):
        pages[f"/q/{n}.html"] = page()
    return pages


def crawl(site: ValidatorSite, run: Path, *extra: str) -> list[tuple[str, int, str, str]]:
    order = load_order(
        EXAMPLE,
        [
            f"seeds.urls=['{site.origin}/']",
            "seeds.file=null",
            "toe_threads=1",
            "logging.console=false",
            "robots.policy=ignore",
            "frontier.politeness.delay_factor=0",
            "frontier.politeness.min_delay_ms=0",
            "frontier.politeness.max_delay_ms=0",
            "scope.2.params.max_hops=5",
            "scope.8.params.max_series_length=2",
            "chains.pre.quota_enforcer.params.host_max_urls=30",
            *extra,
        ],
    )
    assert CrawlController(order, run, install_signals=False).run() == 0
    lines = parse_file(run / "logs" / "crawl.log")
    return [(ln.uri, ln.status, ln.hops, ",".join(ln.annotations)) for ln in lines]


def test_hops_trap_budget_and_quota_cut_the_recrawl_where_they_cut_the_first(
    tmp_path: Path,
) -> None:
    with ValidatorSite(table()) as site:
        first_lines = crawl(site, tmp_path / "first")
        second_lines = crawl(site, tmp_path / "second", f"history.import_from='{tmp_path}/first'")
    first = {uri: (status, hops) for uri, status, hops, _ in first_lines}
    # A 304 stands for the 200 of the first crawl; every other outcome is the same.
    second = {uri: (200 if s == 304 else s, hops) for uri, s, hops, _ in second_lines}
    assert second == first
    blocked = {uri for uri, (status, _) in first.items() if status == -5003}
    fetched = {uri for uri, (status, _) in first.items() if status == 200}
    assert blocked  # the quota cut the first crawl...
    assert any("/q/" in uri for uri in blocked) and any("/q/" in uri for uri in fetched)
    assert not_modified(tmp_path / "second") == fetched  # ...and the recrawl, through 304s
    for name in ("first", "second"):
        scope_log = (tmp_path / name / "logs" / "scope.log").read_text()
        assert "trap:" in scope_log, name
    cal = {int(uri.rsplit("/", 1)[1]) for uri in first if "/cal/" in uri}
    deep = {uri.rsplit("/", 1)[1] for uri in first if "/deep/" in uri}
    assert cal == {1, 2, 3} and deep == set("abcde")
