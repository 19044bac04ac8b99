"""RetryPolicy: which statuses are tried again, how often, and how long an HTTP retry waits."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler.curi import CrawlURI
from crawler.frontier import RetryPolicy, note_protocol_error
from crawler.frontier.retry.retry_policy import DEFERRALS_KEY, FINAL, PROTOCOL, RETRY, WAIT
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


def deferred(uri: str = "http://h.example/") -> CrawlURI:
    """A URI deferred (-50) for its robots.txt, as the PreconditionEnforcer leaves it."""
    curi = CrawlURI(uri, status=-50)
    curi.prerequisite = curi.create_child("http://h.example/robots.txt", "P")
    return curi


def test_a_deferral_is_no_try_even_with_max_retries_0() -> None:
    policy = RetryPolicy(RetriesConfig(max_retries=0))
    curi = deferred()
    assert policy.take(curi)  # back in its queue, behind its prerequisite
    assert curi.fetch_attempts == 0 and curi.data[DEFERRALS_KEY] == 1
    curi.reset_for_retry()
    curi.status = -2  # its one real try fails: max_retries 0 means no retry
    assert not policy.take(curi)
    assert curi.fetch_attempts == 1 and DEFERRALS_KEY not in curi.data


def test_deferrals_have_their_own_cap_then_the_uri_ends_minus_50() -> None:
    policy = RetryPolicy(RetriesConfig(max_retries=30, max_deferrals=3))
    curi = deferred()
    assert policy.take(curi) and policy.take(curi) and policy.take(curi)
    assert policy.verdict(curi) == FINAL and not policy.will_retry(curi)
    assert not policy.take(curi)  # a prerequisite that keeps deferring cannot loop for ever
    assert curi.status == -50 and curi.fetch_attempts == 0


def test_waiting_for_another_queue_s_prerequisite_counts_nothing() -> None:
    policy = RetryPolicy(RetriesConfig(max_retries=1, max_deferrals=1))
    curi = CrawlURI("http://h.example/", status=-50)  # no prerequisite of its own
    for _ in range(5):
        assert policy.take(curi) == WAIT
    assert curi.fetch_attempts == 0 and not curi.data


def test_http_tries_are_counted_apart_from_deferrals() -> None:
    policy = RetryPolicy(RetriesConfig(http_max_tries=2))
    curi = deferred()
    assert policy.take(curi)  # deferred for its robots.txt: not an HTTP try
    curi.reset_for_retry()
    curi.status = 503
    assert policy.will_retry(curi) and policy.take(curi)
    assert curi.fetch_attempts == 1
    curi.status = 503
    assert not policy.will_retry(curi) and not policy.take(curi)
    assert curi.fetch_attempts == 2
    assert "frontier.http_tries" not in curi.data  # gone once final


def protocol_failure(curi: CrawlURI, error: str) -> CrawlURI:
    curi.status = -3
    curi.annotate("err=RemoteProtocolError")
    note_protocol_error(curi, error)
    return curi


def test_the_same_malformed_response_twice_ends_the_uri() -> None:
    policy = RetryPolicy(RetriesConfig(max_retries=30, protocol_max_tries=3))
    curi = protocol_failure(CrawlURI("http://h.example/"), "RemoteProtocolError: bad status")
    assert policy.retry_delay_s(curi, 900) == 60  # protocol_retry_delay_s, not retry_delay_s
    assert policy.take(curi) == PROTOCOL
    curi.reset_for_retry()
    protocol_failure(curi, "RemoteProtocolError: bad status")
    assert not policy.will_retry(curi) and not policy.take(curi)
    assert curi.fetch_attempts == 2 and "protocolError" in curi.annotations
    assert not any(key.startswith(("frontier.", "fetch.")) for key in curi.data)


def test_changing_malformed_responses_get_protocol_max_tries() -> None:
    policy = RetryPolicy(RetriesConfig(max_retries=30, protocol_max_tries=3))
    curi = CrawlURI("http://h.example/")
    for n in (1, 2):
        assert policy.take(protocol_failure(curi, f"received {n} bytes, expected 9"))
        curi.reset_for_retry()
    assert not policy.take(protocol_failure(curi, "received 3 bytes, expected 9"))
    assert curi.fetch_attempts == 3


def test_timeouts_and_connection_failures_keep_max_retries() -> None:
    policy = RetryPolicy(RetriesConfig(max_retries=5, protocol_max_tries=2))
    curi = CrawlURI("http://h.example/")
    for _ in range(4):
        curi.status = -2
        assert policy.retry_delay_s(curi, 900) == 900
        assert policy.take(curi) == RETRY
    curi.status = -2
    assert not policy.take(curi) and curi.fetch_attempts == 5
