"""Queue budgets on both frontiers: the same cases run against the single-process
WorkQueueFrontier (memory store) and the RedisFrontier (real redis-server, and a Redis Cluster),
so the shared frontier keeps the single-process one's total budget, cost policy and error
penalty."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest
from support.redis_servers import RedisClusterServers, RedisServer

from crawler.clock import ManualClock
from crawler.curi import CrawlURI, FetchStatus
from crawler.frontier import (
    HostnameQueueAssignmentPolicy,
    MemoryQueueStore,
    WorkQueueFrontier,
    frontier_summary_report,
)
from crawler.frontier.frontier import FrontierSnapshot
from crawler.frontier.redis.redis_frontier import RedisFrontier
from crawler.frontier.redis.redis_store import RedisQueueStore, RedisQueueStoreParams
from crawler.order.schema import FrontierConfig, PolitenessConfig
from crawler.uniq import MemoryUriUniqFilter
from crawler.uniq.redis_uniq import RedisUriUniqFilter, RedisUriUniqFilterParams

pytestmark = pytest.mark.timeout(60)

_namespaces = itertools.count()


class AnyFrontier(Protocol):
    def schedule(self, curi: CrawlURI) -> bool: ...
    def next(self, timeout_s: float) -> CrawlURI | None: ...
    def finished(self, curi: CrawlURI) -> bool: ...
    def snapshot(self) -> FrontierSnapshot: ...
    def is_empty(self) -> bool: ...
    def close(self) -> None: ...


Make = Any  # (tmp: Path, **config) -> AnyFrontier


def _config(config: dict[str, Any]) -> FrontierConfig:
    config.setdefault(
        "politeness",
        PolitenessConfig(delay_factor=0, min_delay_ms=0, max_delay_ms=0, host_max_connections=0),
    )
    return FrontierConfig(**config)


def _redis_maker(url: str, made: list[AnyFrontier]) -> Make:
    def make(tmp: Path, **config: Any) -> AnyFrontier:
        ns = f"b{next(_namespaces)}:"
        store = RedisQueueStore(
            RedisQueueStoreParams(url=url, namespace=ns, worker_id="w1", shards=4)
        )
        uniq = RedisUriUniqFilter(RedisUriUniqFilterParams(url=url, namespace=ns))
        f = RedisFrontier(store, HostnameQueueAssignmentPolicy(), uniq, _config(config))
        f.open(tmp)
        made.append(f)
        return f

    return make


@pytest.fixture(params=["workqueue", "redis", "redis_cluster"])
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Make]:
    """A maker of frontiers of the kind under test."""
    made: list[AnyFrontier] = []
    if request.param == "workqueue":

        def make_local(tmp: Path, **config: Any) -> AnyFrontier:
            f = WorkQueueFrontier(
                MemoryQueueStore(),
                HostnameQueueAssignmentPolicy(),
                MemoryUriUniqFilter(),
                _config(config),
                clock=ManualClock(),
            )
            f.open(tmp)
            made.append(f)
            return f

        yield make_local
    elif request.param == "redis":
        server: RedisServer = request.getfixturevalue("redis_server")
        yield _redis_maker(server.url, made)
    else:
        cluster: RedisClusterServers = request.getfixturevalue("redis_cluster")
        yield _redis_maker(cluster.url, made)
    for f in made:
        f.close()


def drain(f: AnyFrontier, status: int = 200) -> list[str]:
    """Take and finish URIs with ``status`` until none is left to hand out."""
    out = []
    while (curi := f.next(0)) is not None:
        out.append(curi.uri)
        curi.status = status
        f.finished(curi)
        if isinstance(f, RedisFrontier):
            assert f.flush(5.0)
    return out


def test_queue_over_total_budget_is_retired(make: Make, tmp_path: Path) -> None:
    f = make(tmp_path, queue_total_budget=2)
    for i in range(5):
        f.schedule(CrawlURI(f"http://a.test/{i}"))
    f.schedule(CrawlURI("http://b.test/0"))
    crawled = drain(f)
    assert sorted(u for u in crawled if "a.test" in u) == ["http://a.test/0", "http://a.test/1"]
    assert "http://b.test/0" in crawled  # another queue is not affected
    snap = f.snapshot()
    # the retired queue keeps its 3 URIs, which stop counting as queued: the crawl can end
    assert snap.queues["retired"] == 1 and snap.queued == 0
    assert snap.total_queues >= 1
    assert f.is_empty()
    # a URI found later for the retired queue joins it, is not crawled, and is not queued
    assert f.schedule(CrawlURI("http://a.test/late"))
    assert f.next(0) is None
    assert f.snapshot().queued == 0 and f.is_empty()


def test_zero_cost_never_exhausts_a_budget(make: Make, tmp_path: Path) -> None:
    f = make(tmp_path, cost_policy="zero", queue_total_budget=1)
    for i in range(3):
        f.schedule(CrawlURI(f"http://a.test/{i}"))
    assert len(drain(f)) == 3
    g = make(tmp_path / "g", cost_policy="zero", queue_total_budget=1)
    for i in range(3):
        g.schedule(CrawlURI(f"http://a.test/{i}"))
    # a failure still pays the error penalty (Heritrix adds it whatever the cost policy)
    assert len(drain(g, status=FetchStatus.TIMEOUT)) == 1
    assert g.snapshot().queues["retired"] == 1


def test_error_penalty_is_charged_only_to_failures(make: Make, tmp_path: Path) -> None:
    f = make(tmp_path, queue_total_budget=4, error_penalty_amount=2)
    for i in range(6):
        f.schedule(CrawlURI(f"http://a.test/{i}"))
    first = f.next(0)
    assert first is not None
    first.status = FetchStatus.TIMEOUT  # a failure, not retried
    f.finished(first)  # cost 1 + penalty 2 = 3 spent
    if isinstance(f, RedisFrontier):
        assert f.flush(5.0)
    # one success more reaches 4: the queue is retired after it
    assert len(drain(f)) == 1
    assert f.snapshot().queues["retired"] == 1


def test_disregarded_uris_are_not_charged(make: Make, tmp_path: Path) -> None:
    f = make(tmp_path, queue_total_budget=1)
    for i in range(3):
        f.schedule(CrawlURI(f"http://a.test/{i}"))
    assert len(drain(f, status=FetchStatus.OUT_OF_SCOPE)) == 3
    snap = f.snapshot()
    assert snap.queues["retired"] == 0 and snap.disregarded == 3


def test_wag_cost_charges_queries_more(make: Make, tmp_path: Path) -> None:
    f = make(tmp_path, cost_policy="wag", queue_total_budget=4)
    for i in range(3):
        f.schedule(CrawlURI(f"http://a.test/search?q={i}", via="http://a.test/"))
    # each query costs 2: two fit in the budget of 4
    assert len(drain(f)) == 2
    assert f.snapshot().queues["retired"] == 1


def _detail_of(f: AnyFrontier, host: str) -> Any:
    details = [d for d in f.queue_details() if d.key.split("\t")[0] == host]  # type: ignore[attr-defined]
    assert len(details) == 1, details
    return details[0]


def test_queue_detail_shows_state_budget_and_uris(make: Make, tmp_path: Path) -> None:
    f = make(tmp_path, queue_total_budget=3, error_penalty_amount=1)
    for i in range(5):
        f.schedule(CrawlURI(f"http://a.test/{i}"))
    f.schedule(CrawlURI("http://b.test/0"))
    out = []
    while (curi := f.next(0)) is not None:
        host = curi.uri.split("/")[2]
        d = _detail_of(f, host)
        assert (d.state, d.last_peeked) == ("in_process", curi.uri)
        out.append(curi.uri)
        curi.status = FetchStatus.TIMEOUT if curi.uri == "http://a.test/1" else 200
        f.finished(curi)
        if isinstance(f, RedisFrontier):
            assert f.flush(5.0)
    assert sorted(out) == ["http://a.test/0", "http://a.test/1", "http://b.test/0"]
    # a.test spent 1 (success) + 1 + 1 (failure and its penalty) = its budget: retired
    a = _detail_of(f, "a.test")
    assert (a.state, a.size, a.total_spent, a.total_budget) == ("retired", 3, 3, 3)
    assert (a.succeeded, a.failed, a.last_cost, a.total_enqueues) == (1, 1, 2, 5)
    assert a.last_queued == "http://a.test/4"
    # b.test is exhausted: not listed
    assert [d for d in f.queue_details() if d.key.startswith("b.test")] == []  # type: ignore[attr-defined]
    report = frontier_summary_report(f, "budgets", 0.0)  # type: ignore[arg-type]
    assert "a.test" in report and "retired" in report.lower()


def test_queues_at_the_precedence_floor_are_never_crawled(make: Make, tmp_path: Path) -> None:
    f = make(tmp_path, base_queue_precedence=5, precedence_floor=5)
    f.schedule(CrawlURI("http://a.test/"))
    assert f.next(0) is None
    snap = f.snapshot()
    assert snap.ineligible == 1 and snap.inactive_by_precedence == {5: 1}
    assert snap.queued == 1
    assert not f.is_empty()  # still queued: an operator could lower the precedence
    d = _detail_of(f, "a.test")
    assert (d.state, d.precedence, d.size) == ("inactive", 5, 1)


def test_highest_uri_precedence_makes_a_queue_eligible(make: Make, tmp_path: Path) -> None:
    f = make(
        tmp_path,
        queue_precedence_policy="highest_uri",
        uri_precedence_policy="preset",
        precedence_floor=10,
    )
    f.schedule(CrawlURI("http://late.test/", precedence=9))  # 3 + 9: ineligible
    f.schedule(CrawlURI("http://soon.test/", precedence=1))  # 3 + 1
    assert f.snapshot().ineligible == 1
    assert drain(f) == ["http://soon.test/"]
    f.schedule(CrawlURI("http://late.test/urgent", precedence=2))  # 3 + 2: now eligible
    assert f.snapshot().ineligible == 0
    assert sorted(drain(f)) == ["http://late.test/", "http://late.test/urgent"]
    assert f.is_empty()


def _finish_wanting_more(f: RedisFrontier, curi: CrawlURI) -> bytes | None:
    """FINISH ``curi`` (a success) as a worker whose threads wait for more (reclaim asked):
    the member of its queue's next URI when the queue was leased to it again, else None."""
    entry = f._in_flight.pop(curi.uri)
    args = [entry.member, "succeeded", b"", 0, 0, 0, 0, 0, 1, 0, -1, -1, -1, 1, *f._budgets]
    done, _, _ = f._store.exchange([(entry.shard, entry.qid, entry.server, args)], [], 0, 0, 0)
    state, member = done[0]
    assert state == 1
    if member is not None:  # leased again: hand it to this worker as the exchange would
        with f._lock:
            f._leased([(entry.shard, entry.qid, entry.server, member)])
    return member


@pytest.mark.parametrize("balance", [0, 2])
def test_a_queue_that_spent_its_session_budget_goes_to_the_back_of_the_line(
    redis_server: RedisServer, tmp_path: Path, balance: int
) -> None:
    store = RedisQueueStore(
        RedisQueueStoreParams(url=redis_server.url, namespace="s:", worker_id="w1", shards=1)
    )
    uniq = RedisUriUniqFilter(RedisUriUniqFilterParams(url=redis_server.url, namespace="s:"))
    f = RedisFrontier(
        store,
        HostnameQueueAssignmentPolicy(),
        uniq,
        _config({"balance_replenish_amount": balance}),
    )
    f.open(tmp_path)
    try:
        for i in range(4):
            f.schedule(CrawlURI(f"http://a.test/{i}"))
        first = f.next(0)
        assert first is not None and first.uri == "http://a.test/0"
        f.schedule(CrawlURI("http://b.test/0"))  # now waits in line
        assert _finish_wanting_more(f, first) is not None  # a.test spent 1 of 2: kept
        second = f.next(0)
        assert second is not None and second.uri == "http://a.test/1"
        kept = _finish_wanting_more(f, second)
        if balance:
            # a.test spent its session budget and b.test waits: a.test goes behind it
            assert kept is None
            # (the due queues, earliest first; a.test may be due again by now, behind b.test)
            due, _ = f._store.candidates(10)
            assert [qid.split("\t")[0] for _, qid in due][:1] == ["b.test"]
            assert _detail_of(f, "a.test").session_spent == 0
        else:
            assert kept is not None  # no session budget: the worker keeps its queue
    finally:
        f.close()


def test_success_counts_precedence_reaches_the_floor(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    # Redis re-evaluates a queue's success-counts precedence at each success (the single-process
    # frontier when the queue next waits its turn): after 100 successes a.test has precedence 4
    made: list[AnyFrontier] = []
    f = _redis_maker(redis_server.url, made)(
        tmp_path, queue_precedence_policy="success_counts", precedence_floor=4
    )
    try:
        for i in range(103):
            f.schedule(CrawlURI(f"http://a.test/{i}"))
        assert len(drain(f)) == 100
        snap = f.snapshot()
        assert snap.ineligible == 1 and snap.inactive_by_precedence == {4: 1}
        assert snap.queued == 3 and not f.is_empty()
        f.schedule(CrawlURI("http://a.test/more"))  # stays ineligible: precedence is kept
        assert f.next(0) is None
    finally:
        for g in made:
            g.close()
