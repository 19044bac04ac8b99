"""HTTP retries and the adaptive pace on the Redis frontier: the pace lives in the server's Redis
hash, so one worker's 429s hold the server back for every worker; whole crawls with two worker
processes end as on one."""

from __future__ import annotations

import io
import json
import time
from collections import Counter
from pathlib import Path

import pytest
import redis
from support.crawllog_parser import CrawlLogLine, parse_file
from support.redis_servers import RedisServer
from support.retry_site import RETRY_AFTER_S, RetrySite

from crawler.curi import CrawlURI
from crawler.demo.rate_limited_server import RateLimitedSite
from crawler.distributed import run_workers
from crawler.frontier.assignment import HostnameQueueAssignmentPolicy
from crawler.frontier.politeness.server_pace import MIN_FIRST_GAP_S
from crawler.frontier.redis.redis_frontier import RedisFrontier
from crawler.frontier.redis.redis_store import RedisQueueStore, RedisQueueStoreParams
from crawler.order.schema import FrontierConfig, PaceConfig, PolitenessConfig, RetriesConfig
from crawler.uniq.redis_uniq import RedisUriUniqFilter, RedisUriUniqFilterParams

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
STORE = "crawler.frontier.redis.redis_store.RedisQueueStore"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def frontier(url: str, wid: str) -> RedisFrontier:
    store = RedisQueueStore(
        RedisQueueStoreParams(url=url, namespace="p1:", worker_id=wid, shards=2)
    )
    f = RedisFrontier(
        store,
        HostnameQueueAssignmentPolicy(),
        RedisUriUniqFilter(RedisUriUniqFilterParams(url=url, namespace="p1:")),
        FrontierConfig(
            politeness=PolitenessConfig(
                delay_factor=0, min_delay_ms=0, max_delay_ms=0, host_max_connections=0
            ),
            retries=RetriesConfig(http_max_tries=50),
            pace=PaceConfig(max_gap_ms=60_000),
        ),
    )
    f.open(Path("."))
    return f


def server_gap_ms(url: str, server: str) -> float:
    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=f"*v:{server}"))
        assert len(keys) == 1
        return float(client.hget(keys[0], "g") or 0)
    finally:
        client.close()


def test_refusals_seen_by_one_worker_pace_the_server_for_all(redis_server: RedisServer) -> None:
    a, b = frontier(redis_server.url, "wa"), frontier(redis_server.url, "wb")
    try:
        a.schedule(CrawlURI("http://h.example/busy"))
        gap_s = MIN_FIRST_GAP_S
        for _ in range(6):  # each refusal of a fetch started after the last increase: x4
            curi = a.next(gap_s * 4 + 2.0)
            assert curi is not None and curi.uri == "http://h.example/busy"
            curi.status = 429
            curi.fetch_start_ms = int(time.time() * 1000)
            curi.fetch_duration_ms = 1
            assert a.finished(curi) is False  # retried
            assert a.flush(5.0)
            gap_s = server_gap_ms(redis_server.url, "h.example:80") / 1000
        assert gap_s >= MIN_FIRST_GAP_S * 4**5  # ten seconds and more
        b.schedule(CrawlURI("http://h.example/other"))  # the same queue, so the same server
        assert b.next(0.3) is None  # b waits for the pace a's answers set
        assert a.next(0.3) is None
        assert b.paced_servers() == [("h.example:80", pytest.approx(gap_s))]
    finally:
        a.close()
        b.close()


def tries(line: CrawlLogLine) -> int:
    marks = [a for a in line.annotations if a.endswith("t") and a[:-1].isdigit()]
    return int(marks[0][:-1]) if marks else 1


def _crawl(run_dir: Path, url: str, seed: str, *extra: str) -> list[CrawlLogLine]:
    store = {"class": STORE, "params": {"url": url, "shards": 4}}
    sets = [
        f"seeds.urls={json.dumps([seed])}",
        "seeds.file=null",
        "name=retry-test",
        "toe_threads=4",
        "logging.console=false",
        f"frontier.store={json.dumps(store)}",
        "frontier.politeness.delay_factor=0",
        "frontier.politeness.min_delay_ms=0",
        "frontier.politeness.max_delay_ms=0",
        "frontier.retries.http_backoff_s=0.2",
        # One server answers all the cases: its refusals would slow it for the others for long.
        "frontier.pace.max_gap_ms=200",
        "limits.max_time_s=90",
        *extra,
    ]
    err = io.StringIO()
    code = run_workers(EXAMPLE, sets, 2, io.StringIO(), err, run_dir=run_dir)
    assert code == 0, err.getvalue()
    return [line for p in run_dir.glob("workers/*/logs/crawl.log") for line in parse_file(p)]


def test_http_retries_end_the_same_with_two_workers(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    with RetrySite() as site:
        lines = _crawl(tmp_path / "run", redis_server.url, site.url("/"))
        by_uri = {line.uri: line for line in lines}
        # Each worker looks up the host and reads robots.txt for itself; every other URI once.
        shared = [
            x.uri for x in lines if not x.uri.startswith("dns:") and "/robots.txt" not in x.uri
        ]
        twice = {uri for uri, n in Counter(shared).items() if n > 1}
        assert not twice, [line for line in lines if line.uri in twice]
        # Nt counts fetch attempts only, not a deferral for the worker's own robots.txt.
        flaky = by_uri[site.url("/flaky-500.html")]
        assert (flaky.status, tries(flaky)) == (200, 2)
        assert len(site.times("/flaky-500.html")) == 2
        busy = by_uri[site.url("/busy-429.html")]
        assert (busy.status, tries(busy)) == (200, 2)
        first, second = site.times("/busy-429.html")
        assert second - first >= RETRY_AFTER_S - 0.05
        down = by_uri[site.url("/down-503.html")]
        assert (down.status, tries(down)) == (503, 4)
        assert len(site.times("/down-503.html")) == 4
        assert by_uri[site.url("/gone-404.html")].status == 404


def test_a_rate_limited_host_loses_no_page_with_two_workers(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    with RateLimitedSite(pages=150, rate_per_s=20, burst=5) as site:
        lines = _crawl(
            tmp_path / "run",
            redis_server.url,
            site.base_url + "/",
            'frontier.queue_assignment.params={"parallel_queues": 4}',
        )
        final = {line.uri: line.status for line in lines}
        assert [url for url in site.page_urls if final.get(url) != 200] == []
        assert site.statuses[429] < len(site.page_urls)
