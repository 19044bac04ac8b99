"""Every store retries a URI that failed with -1/-2/-3 at the head of its queue after the retry
delay, up to ``max_retries`` tries, then records it as failed; other failures are final at once;
a URI deferred for a prerequisite (-50) comes back after it, with no fetch attempt counted."""

from __future__ import annotations

import time

import pytest
from support.stores import FrontierMaker

from crawler.curi import FetchStatus, Hop, SchedulingDirective
from crawler.frontier.retry.retry_policy import DEFERRALS_KEY
from crawler.order.schema import RetriesConfig

pytestmark = pytest.mark.timeout(60)

RETRY_DELAY_S = 0.4


def test_retries_up_to_max_retries_then_final(stores: FrontierMaker) -> None:
    h = stores.frontier(retries=RetriesConfig(max_retries=3, retry_delay_s=RETRY_DELAY_S))
    h.add("http://a.test/flaky")
    h.add("http://a.test/later")
    failed_at = 0.0
    for attempt in (1, 2, 3):
        curi = h.take(timeout_s=20.0)
        assert curi is not None and curi.uri == "http://a.test/flaky"
        assert curi.fetch_attempts == attempt - 1
        # the queue waited out the retry delay: its next URI did not jump the queue
        assert time.monotonic() - failed_at >= RETRY_DELAY_S - 0.05
        failed_at = time.monotonic()
        final = h.done(curi, FetchStatus.CONNECT_FAILED, retry_delay_s=RETRY_DELAY_S)
        assert final is (attempt == 3)
        assert len(h.finals) == (attempt == 3)
    assert [(c.uri, c.status, c.fetch_attempts) for c in h.finals] == [
        ("http://a.test/flaky", FetchStatus.CONNECT_FAILED, 3)
    ]
    assert h.frontier.snapshot().failed == 1
    nxt = h.take(timeout_s=20.0)
    assert nxt is not None and nxt.uri == "http://a.test/later"


def test_non_retryable_failure_is_final_at_once(stores: FrontierMaker) -> None:
    h = stores.frontier()
    h.add("http://a.test/")
    curi = h.take()
    assert curi is not None
    assert h.done(curi, FetchStatus.TIMEOUT) is True
    assert h.frontier.snapshot().failed == 1
    assert h.frontier.is_empty()


def test_prerequisite_is_fetched_first_then_the_deferred_uri(stores: FrontierMaker) -> None:
    h = stores.frontier()
    h.add("https://a.test:8443/page", directive=SchedulingDirective.MEDIUM)
    h.add("https://a.test:8443/other", directive=SchedulingDirective.HIGH)
    curi = h.take()
    assert curi is not None and curi.uri == "https://a.test:8443/other"
    h.done(curi)
    curi = h.take()
    assert curi is not None and curi.uri == "https://a.test:8443/page"
    prereq = curi.create_child("dns:a.test", Hop.PREREQ)
    prereq.force_fetch = True
    assert h.frontier.schedule(prereq)
    curi.prerequisite = prereq
    assert h.done(curi, FetchStatus.DEFERRED) is False  # -50: retried with no delay
    first = h.take()
    assert first is not None and first.uri == "dns:a.test"
    assert not h.frontier.is_empty()
    assert h.done(first, FetchStatus.DNS_SUCCESS) is True
    again = h.take()
    assert again is not None and again.uri == "https://a.test:8443/page"
    # A deferral is no fetch attempt; it is counted apart.
    assert again.fetch_attempts == 0 and again.data[DEFERRALS_KEY] == 1
    assert h.done(again) is True
    assert [c.uri for c in h.finals] == [
        "https://a.test:8443/other",
        "dns:a.test",
        "https://a.test:8443/page",
    ]
    assert h.frontier.is_empty()


def test_prerequisite_of_a_highest_directive_uri_still_comes_first(stores: FrontierMaker) -> None:
    h = stores.frontier()
    h.add("http://a.test/", directive=SchedulingDirective.HIGHEST, precedence=3)
    h.add("http://a.test/next")
    curi = h.take()
    assert curi is not None
    robots = curi.create_child("http://a.test/robots.txt", Hop.PREREQ)
    assert h.frontier.schedule(robots)
    curi.prerequisite = robots
    h.done(curi, FetchStatus.DEFERRED)
    assert h.drain() == ["http://a.test/robots.txt", "http://a.test/", "http://a.test/next"]
