"""politeness_delay_ms: the per-queue wait after a fetch, Heritrix's DispositionProcessor math."""

from __future__ import annotations

from crawler.frontier import bandwidth_delay_ms, politeness_delay_ms
from crawler.order.schema import PolitenessConfig

DEFAULT = PolitenessConfig()


def test_delay_is_factor_times_duration_clamped() -> None:
    assert politeness_delay_ms(1000, DEFAULT) == 5000
    assert politeness_delay_ms(100, DEFAULT) == 3000
    assert politeness_delay_ms(60_000, DEFAULT) == 30_000


def test_no_fetch_timing_means_no_delay() -> None:
    assert politeness_delay_ms(-1, DEFAULT) == 0


def test_robots_crawl_delay_raises_the_delay_up_to_the_cap() -> None:
    assert politeness_delay_ms(100, DEFAULT, crawl_delay_s=10) == 10_000
    assert politeness_delay_ms(100, DEFAULT, crawl_delay_s=10_000) == 300_000
    assert politeness_delay_ms(1000, DEFAULT, crawl_delay_s=1) == 5000


def test_all_zero_politeness_for_own_sites() -> None:
    zero = PolitenessConfig(delay_factor=0, min_delay_ms=0, max_delay_ms=0)
    assert politeness_delay_ms(5000, zero) == 0


def test_bandwidth_limit() -> None:
    assert bandwidth_delay_ms(1_024_000, DEFAULT) == 0
    limited = PolitenessConfig(max_per_host_bandwidth_kbps=100)
    assert bandwidth_delay_ms(102_400, limited) == 1000
