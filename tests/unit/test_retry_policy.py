"""RetryPolicy: which statuses are tried again, how often, and how long an HTTP retry waits."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler.frontier import RetryPolicy
from crawler.order.errors import OrderError
from crawler.order.schema import RetriesConfig

pytestmark = pytest.mark.timeout(10)


def test_http_statuses_get_four_tries_by_default() -> None:
    policy = RetryPolicy(RetriesConfig())
    for status in (408, 429, 500, 502, 503, 504):
        assert policy.retries(status, 1) and policy.retries(status, 3)
        assert not policy.retries(status, 4)
    for status in (200, 301, 404, 403, 501):
        assert not policy.retries(status, 1)


def test_crawler_failures_keep_their_own_budget() -> None:
    policy = RetryPolicy(RetriesConfig(max_retries=5))
    assert policy.retries(-2, 4)
    assert not policy.retries(-2, 5)


def test_the_status_list_and_tries_are_the_order_s() -> None:
    policy = RetryPolicy(RetriesConfig(http_statuses=[500], http_max_tries=5))
    assert policy.retries(500, 4) and not policy.retries(500, 5)
    assert not policy.retries(503, 1)
    assert not RetryPolicy(RetriesConfig(http_statuses=[])).retries(500, 1)


def test_backoff_doubles_up_to_its_cap() -> None:
    policy = RetryPolicy(RetriesConfig(http_backoff_s=0.5, http_backoff_max_s=3))
    assert [policy.http_backoff_s(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert RetryPolicy(RetriesConfig()).http_backoff_s(10_000) == 60.0


def test_a_non_http_status_in_the_list_is_an_order_error(tmp_path: Path) -> None:
    from crawler.order.loader import load_order

    order = tmp_path / "order.yaml"
    order.write_text("name: t\nfrontier: {retries: {http_statuses: [500, 42]}}\n")
    with pytest.raises(OrderError) as err:
        load_order(order)
    assert "frontier.retries.http_statuses" in str(err.value)


def test_http_tries_are_counted_apart_from_deferrals() -> None:
    from crawler.curi import CrawlURI

    policy = RetryPolicy(RetriesConfig(http_max_tries=2))
    curi = CrawlURI("http://h.example/", status=-50, fetch_attempts=1)
    assert policy.take(curi)  # deferred for its robots.txt: not an HTTP try
    curi.status, curi.fetch_attempts = 503, 2
    assert policy.will_retry(curi) and policy.take(curi)
    curi.status, curi.fetch_attempts = 503, 3
    assert not policy.will_retry(curi) and not policy.take(curi)
    assert "frontier.http_tries" not in curi.data  # gone once final
