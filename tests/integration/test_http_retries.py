"""HTTP retries and the adaptive pace in whole crawls (LevelDB frontier) of real local servers.

One crawl of :mod:`retry_site` serves the retry tests: a 500 then 200, a 429 with Retry-After
then 200, a 503 for ever, a 404. Another crawls a rate-limited site (token bucket, 429 above
R = 20/s) with politeness off and four queues for its one host.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.crawllog_parser import CrawlLogLine, parse_file
from support.retry_site import RETRY_AFTER_S, RetrySite
from warcio.archiveiterator import ArchiveIterator

from crawler.control.controller import CrawlController
from crawler.demo.rate_limited_server import RateLimitedSite
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def crawl_sets(seed: str, *extra: str) -> list[str]:
    return [
        f"seeds.urls={json.dumps([seed])}",
        "seeds.file=null",
        "toe_threads=4",
        "frontier.politeness.delay_factor=0",
        "frontier.politeness.min_delay_ms=0",
        "frontier.politeness.max_delay_ms=0",
        "frontier.retries.http_backoff_s=0.2",
        # One server answers all the cases: its refusals would slow it for the others for long.
        "frontier.pace.max_gap_ms=200",
        "logging.console=false",
        "limits.max_time_s=60",
        *extra,
    ]


def run_crawl(run_dir: Path, sets: list[str]) -> list[CrawlLogLine]:
    controller = CrawlController(load_order(EXAMPLE, sets), run_dir, install_signals=False)
    assert controller.run() == 0
    assert controller.exit_status == "Finished"
    return parse_file(run_dir / "logs" / "crawl.log")


@dataclass
class RetryCrawl:
    site: RetrySite
    lines: list[CrawlLogLine]
    run_dir: Path

    def line(self, path: str) -> CrawlLogLine:
        found = [line for line in self.lines if line.uri == self.site.url(path)]
        assert len(found) == 1, f"{path} logged {len(found)} times"
        return found[0]

    def tries(self, line: CrawlLogLine) -> int:
        marks = [a for a in line.annotations if a.endswith("t") and a[:-1].isdigit()]
        return int(marks[0][:-1]) if marks else 1


@pytest.fixture(scope="module")
def retry_crawl(tmp_path_factory: pytest.TempPathFactory) -> RetryCrawl:
    run_dir = tmp_path_factory.mktemp("retries") / "run"
    with RetrySite() as site:
        lines = run_crawl(run_dir, crawl_sets(site.url("/")))
    return RetryCrawl(site, lines, run_dir)


def test_a_500_then_200_ends_200_after_two_tries(retry_crawl: RetryCrawl) -> None:
    line = retry_crawl.line("/flaky-500.html")
    assert line.status == 200
    assert "2t" in line.annotations
    assert len(retry_crawl.site.times("/flaky-500.html")) == 2


def test_a_429_with_retry_after_waits_then_ends_200(retry_crawl: RetryCrawl) -> None:
    line = retry_crawl.line("/busy-429.html")
    assert line.status == 200
    assert "2t" in line.annotations
    first, second = retry_crawl.site.times("/busy-429.html")
    assert second - first >= RETRY_AFTER_S - 0.05


def test_a_server_that_stays_down_ends_503_after_max_tries(retry_crawl: RetryCrawl) -> None:
    line = retry_crawl.line("/down-503.html")
    assert line.status == 503
    assert "4t" in line.annotations  # frontier.retries.http_max_tries
    assert len(retry_crawl.site.times("/down-503.html")) == 4


def test_the_warc_holds_only_the_final_answer(retry_crawl: RetryCrawl) -> None:
    statuses: dict[str, list[str]] = {}
    for path in (retry_crawl.run_dir / "warcs").glob("*.warc.gz"):
        with path.open("rb") as fh:
            for record in ArchiveIterator(fh):
                if record.rec_type in ("response", "revisit"):
                    uri = record.rec_headers.get_header("WARC-Target-URI")
                    statuses.setdefault(uri, []).append(record.http_headers.get_statuscode())
    site = retry_crawl.site
    assert statuses[site.url("/flaky-500.html")] == ["200"]
    assert statuses[site.url("/busy-429.html")] == ["200"]
    assert statuses[site.url("/down-503.html")] == ["503"]  # the last of its four answers


def test_a_404_is_not_retried(retry_crawl: RetryCrawl) -> None:
    line = retry_crawl.line("/gone-404.html")
    assert line.status == 404
    assert retry_crawl.tries(line) == 1
    assert len(retry_crawl.site.times("/gone-404.html")) == 1


def test_each_uri_is_logged_once_with_its_final_outcome(retry_crawl: RetryCrawl) -> None:
    uris = [line.uri for line in retry_crawl.lines]
    assert len(uris) == len(set(uris))
    assert retry_crawl.line("/fine.html").status == 200


def test_retries_can_be_turned_off(tmp_path: Path) -> None:
    with RetrySite() as site:
        lines = run_crawl(
            tmp_path / "run", crawl_sets(site.url("/"), "frontier.retries.http_statuses=[]")
        )
        crawl = RetryCrawl(site, lines, tmp_path / "run")
        assert crawl.line("/flaky-500.html").status == 500
        assert crawl.line("/down-503.html").status == 503
        assert len(site.times("/down-503.html")) == 1


def test_a_rate_limited_host_over_four_queues_loses_no_page(tmp_path: Path) -> None:
    """Politeness off and four queues for one host: the server's 429s set the pace."""
    with RateLimitedSite(pages=150, rate_per_s=20, burst=5) as site:
        sets = crawl_sets(
            site.base_url + "/",
            'frontier.queue_assignment.params={"parallel_queues": 4}',
            "toe_threads=8",
        )
        lines = run_crawl(tmp_path / "run", sets)
        final = {line.uri: line.status for line in lines}
        lost = [url for url in site.page_urls if final.get(url) != 200]
        assert lost == []
        assert site.statuses[429] < len(site.page_urls)
