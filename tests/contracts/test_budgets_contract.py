"""Queue budgets and queue precedence on every store: a queue whose spent reaches
``queue_total_budget`` is retired (its URIs kept, not crawled, not counted as queued), the cost
policy decides what a URI costs (a failure pays ``error_penalty_amount`` more, a disregarded URI
nothing), and a queue at or past ``precedence_floor`` waits, ineligible."""

from __future__ import annotations

from typing import Any

import pytest
from support.stores import FrontierHarness, FrontierMaker

from crawler.curi import CrawlURI, FetchStatus
from crawler.frontier import frontier_summary_report
from crawler.frontier.frontier_abilities import FrontierAbilities

pytestmark = pytest.mark.timeout(60)


def _detail_of(h: FrontierHarness, host: str) -> Any:
    details = [d for d in h.frontier.queue_details() if d.key.split("\t")[0] == host]  # type: ignore[attr-defined]
    assert len(details) == 1, details
    return details[0]


def test_queue_over_total_budget_is_retired(stores: FrontierMaker) -> None:
    h = stores.frontier(queue_total_budget=2)
    for i in range(5):
        h.add(f"http://a.test/{i}")
    h.add("http://b.test/0")
    crawled = h.drain()
    assert sorted(u for u in crawled if "a.test" in u) == ["http://a.test/0", "http://a.test/1"]
    assert "http://b.test/0" in crawled  # another queue is not affected
    snap = h.frontier.snapshot()
    # the retired queue keeps its 3 URIs, which stop counting as queued: the crawl can end
    assert snap.queues["retired"] == 1 and snap.queued == 0
    assert snap.total_queues >= 1
    assert h.frontier.is_empty()
    # a URI found later for the retired queue joins it, is not crawled, and is not queued
    assert h.add("http://a.test/late")
    assert h.take() is None
    assert h.frontier.snapshot().queued == 0 and h.frontier.is_empty()


def test_zero_cost_never_exhausts_a_budget(stores: FrontierMaker) -> None:
    f = stores.frontier("f", cost_policy="zero", queue_total_budget=1)
    for i in range(3):
        f.add(f"http://a.test/{i}")
    assert len(f.drain()) == 3
    g = stores.frontier("g", cost_policy="zero", queue_total_budget=1)
    for i in range(3):
        g.add(f"http://a.test/{i}")
    # a failure still pays the error penalty (Heritrix adds it whatever the cost policy)
    assert len(g.drain(status=FetchStatus.TIMEOUT)) == 1
    assert g.frontier.snapshot().queues["retired"] == 1


def test_error_penalty_is_charged_only_to_failures(stores: FrontierMaker) -> None:
    h = stores.frontier(queue_total_budget=4, error_penalty_amount=2)
    for i in range(6):
        h.add(f"http://a.test/{i}")
    first = h.take()
    assert first is not None
    h.done(first, FetchStatus.TIMEOUT)  # a failure, not retried: cost 1 + penalty 2 = 3 spent
    # one success more reaches 4: the queue is retired after it
    assert len(h.drain()) == 1
    assert h.frontier.snapshot().queues["retired"] == 1


def test_disregarded_uris_are_not_charged(stores: FrontierMaker) -> None:
    h = stores.frontier(queue_total_budget=1)
    for i in range(3):
        h.add(f"http://a.test/{i}")
    assert len(h.drain(status=FetchStatus.OUT_OF_SCOPE)) == 3
    snap = h.frontier.snapshot()
    assert snap.queues["retired"] == 0 and snap.disregarded == 3


def test_wag_cost_charges_queries_more(stores: FrontierMaker) -> None:
    h = stores.frontier(cost_policy="wag", queue_total_budget=4)
    for i in range(3):
        h.frontier.schedule(CrawlURI(f"http://a.test/search?q={i}", via="http://a.test/"))
    # each query costs 2: two fit in the budget of 4
    assert len(h.drain()) == 2
    assert h.frontier.snapshot().queues["retired"] == 1


def test_queue_detail_shows_state_budget_and_uris(stores: FrontierMaker) -> None:
    h = stores.frontier(queue_total_budget=3, error_penalty_amount=1)
    for i in range(5):
        h.add(f"http://a.test/{i}")
    h.add("http://b.test/0")
    out = []
    while (curi := h.take()) is not None:
        host = curi.uri.split("/")[2]
        d = _detail_of(h, host)
        assert (d.state, d.last_peeked) == ("in_process", curi.uri)
        out.append(curi.uri)
        h.done(curi, FetchStatus.TIMEOUT if curi.uri == "http://a.test/1" else 200)
    assert sorted(out) == ["http://a.test/0", "http://a.test/1", "http://b.test/0"]
    # a.test spent 1 (success) + 1 + 1 (failure and its penalty) = its budget: retired
    a = _detail_of(h, "a.test")
    assert (a.state, a.size, a.total_spent, a.total_budget) == ("retired", 3, 3, 3)
    assert (a.succeeded, a.failed, a.last_cost, a.total_enqueues) == (1, 1, 2, 5)
    assert a.last_queued == "http://a.test/4"
    # b.test is exhausted: not listed
    assert [d for d in h.frontier.queue_details() if d.key.startswith("b.test")] == []  # type: ignore[attr-defined]
    report = frontier_summary_report(FrontierAbilities.of(h.frontier), "budgets", 0.0)
    assert "a.test" in report and "retired" in report.lower()


def test_queues_at_the_precedence_floor_are_never_crawled(stores: FrontierMaker) -> None:
    h = stores.frontier(base_queue_precedence=5, precedence_floor=5)
    h.add("http://a.test/")
    assert h.take() is None
    snap = h.frontier.snapshot()
    assert snap.ineligible == 1 and snap.inactive_by_precedence == {5: 1}
    assert snap.queued == 1
    assert not h.frontier.is_empty()  # still queued: an operator could lower the precedence
    d = _detail_of(h, "a.test")
    assert (d.state, d.precedence, d.size) == ("inactive", 5, 1)


def test_highest_uri_precedence_makes_a_queue_eligible(stores: FrontierMaker) -> None:
    h = stores.frontier(
        queue_precedence_policy="highest_uri",
        uri_precedence_policy="preset",
        precedence_floor=10,
    )
    h.add("http://late.test/", precedence=9)  # 3 + 9: ineligible
    h.add("http://soon.test/", precedence=1)  # 3 + 1
    assert h.frontier.snapshot().ineligible == 1
    assert h.drain() == ["http://soon.test/"]
    h.add("http://late.test/urgent", precedence=2)  # 3 + 2: now eligible
    assert h.frontier.snapshot().ineligible == 0
    assert sorted(h.drain()) == ["http://late.test/", "http://late.test/urgent"]
    assert h.frontier.is_empty()
