"""DispositionProcessor: politeness delay after a fetch and the delay before a retry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.processor_context import make_context

from crawler import CrawlURI
from crawler.frontier import BACKOFF_MS_KEY, SERVER_HOLD_MS_KEY
from crawler.frontier.retry.retry_policy import HTTP_TRIES_KEY
from crawler.servers import ServerCache
from processors.postprocess import DispositionParams, DispositionProcessor


def processor(
    params: DispositionParams | None = None,
    robots_txt: bytes | None = None,
    **order: Any,
) -> DispositionProcessor:
    servers = ServerCache()
    if robots_txt is not None:
        servers.update_robots("site.example:80", 200, robots_txt, 0.0)
    ctx = make_context(Path("."), servers=servers, **order)
    proc = DispositionProcessor("disposition", params)
    proc.start(ctx)
    return proc


def finished(duration_ms: int = 100, status: int = 200, size: int = 1000) -> CrawlURI:
    return CrawlURI(
        "http://site.example/page",
        status=status,
        fetch_start_ms=1_700_000_000_000,
        fetch_duration_ms=duration_ms,
        content_size=size,
    )


def delay_of(proc: DispositionProcessor, curi: CrawlURI) -> int:
    proc.process(curi)
    return curi.politeness_delay_ms


@pytest.mark.parametrize(
    ("duration_ms", "expected_ms"), [(100, 3000), (1000, 5000), (10_000, 30_000)]
)
def test_default_politeness_is_five_times_the_fetch_clamped(
    duration_ms: int, expected_ms: int
) -> None:
    assert delay_of(processor(), finished(duration_ms)) == expected_ms


def test_all_zero_politeness_gives_no_delay() -> None:
    zero = {"delay_factor": 0, "min_delay_ms": 0, "max_delay_ms": 0}
    proc = processor(frontier={"politeness": zero})
    assert delay_of(proc, finished(2000)) == 0
    assert delay_of(processor(DispositionParams(**zero)), finished(2000)) == 0


def test_no_fetch_means_no_delay() -> None:
    curi = CrawlURI("http://site.example/x", status=-50)
    assert delay_of(processor(), curi) == 0


def test_robots_crawl_delay_raises_the_delay_up_to_the_cap() -> None:
    robots = b"User-agent: *\nCrawl-delay: 20\n"
    assert delay_of(processor(robots_txt=robots), finished()) == 20_000
    capped = processor(DispositionParams(respect_crawl_delay_up_to_s=10), robots_txt=robots)
    assert delay_of(capped, finished()) == 10_000
    ignoring = processor(robots_txt=robots, robots={"policy": "ignore"})
    assert delay_of(ignoring, finished()) == 3000


def test_bandwidth_cap_becomes_a_server_hold_for_the_frontier() -> None:
    zero = DispositionParams(
        delay_factor=0, min_delay_ms=0, max_delay_ms=0, max_per_host_bandwidth_kbps=100
    )
    curi = finished(size=1_024_000)
    assert delay_of(processor(zero), curi) == 0
    # 1,024,000 bytes at 100 KB/s (x1.024 per ms): the server's next fetch starts ~10 s later.
    assert curi.data[SERVER_HOLD_MS_KEY] == pytest.approx(10_000)
    unlimited = finished(size=1_024_000)
    processor().process(unlimited)
    assert SERVER_HOLD_MS_KEY not in unlimited.data


def with_retry_after(status: int, value: str) -> CrawlURI:
    curi = finished(status=status)
    curi.response_headers = [("Retry-After", value)]
    return curi


@pytest.mark.parametrize(
    ("status", "value", "expected_ms"),
    [
        (503, "120", 120_000),
        (429, "7", 7000),
        (503, "Tue, 14 Nov 2023 22:15:00 GMT", 100_000),  # ManualClock is at 22:13:20 GMT
        (503, "100000", 300_000),  # capped at respect_retry_after_up_to_s (300 s)
        (503, "soon", None),
        (503, "Tue, 14 Nov 2023 22:00:00 GMT", None),  # in the past
        (200, "120", None),
    ],
)
def test_retry_after_becomes_a_back_off(status: int, value: str, expected_ms: int | None) -> None:
    curi = with_retry_after(status, value)
    processor().process(curi)
    assert curi.data.get(BACKOFF_MS_KEY) == expected_ms


def test_retry_after_cap_zero_ignores_the_header() -> None:
    curi = with_retry_after(503, "120")
    processor(DispositionParams(respect_retry_after_up_to_s=0)).process(curi)
    assert BACKOFF_MS_KEY not in curi.data
    order_cap = {"politeness": {"respect_retry_after_up_to_s": 60}}
    curi = with_retry_after(503, "120")
    processor(frontier=order_cap).process(curi)
    assert curi.data[BACKOFF_MS_KEY] == 60_000


@pytest.mark.parametrize(
    ("status", "expected_s"), [(-1, 900.0), (-2, 900.0), (-3, 900.0), (-50, 0.0), (200, 0.0)]
)
def test_retry_delay_follows_the_order(status: int, expected_s: float) -> None:
    curi = finished(status=status)
    processor().process(curi)
    assert curi.retry_delay_s == expected_s


def test_retry_delay_parameter_overrides_the_order() -> None:
    curi = finished(status=-2)
    processor(DispositionParams(retry_delay_s=5)).process(curi)
    assert curi.retry_delay_s == 5.0


@pytest.mark.parametrize(
    ("status", "attempts_before", "expected_s"),
    [
        (500, 0, 1.0),  # first retry: http_backoff_s
        (502, 1, 2.0),  # doubled
        (504, 6, 60.0),  # capped at http_backoff_max_s
        (408, 0, 1.0),
        (429, 0, 0.0),  # first retry of a pace signal: the server's pace spaces it
        (503, 1, 1.0),  # later ones back off
        (404, 0, 0.0),  # not retried
    ],
)
def test_http_retries_back_off_exponentially(
    status: int, attempts_before: int, expected_s: float
) -> None:
    curi = finished(status=status)
    if attempts_before:
        curi.data[HTTP_TRIES_KEY] = attempts_before
    processor().process(curi)
    assert curi.retry_delay_s == expected_s


def test_without_the_pace_a_429_backs_off_like_a_500() -> None:
    curi = finished(status=429)
    processor(frontier={"pace": {"enabled": False}}).process(curi)
    assert curi.retry_delay_s == 1.0
