"""Queue budgets of the Redis frontier alone: the session budget that sends a queue to the back
of the line and the success-counts precedence FINISH keeps. The budget behaviour every store
shares is in ``tests/contracts/test_budgets_contract.py``."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Protocol

import pytest
from support.redis_servers import RedisServer

from crawler.curi import CrawlURI
from crawler.frontier import (
    HostnameQueueAssignmentPolicy,
)
from crawler.frontier.frontier import FrontierSnapshot
from crawler.frontier.redis.redis_exchange import RECLAIM_ARG
from crawler.frontier.redis.redis_frontier import RedisFrontier
from crawler.frontier.redis.redis_leases import finish_args
from crawler.frontier.redis.redis_store import RedisQueueStore, RedisQueueStoreParams
from crawler.order.schema import FrontierConfig, PolitenessConfig
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


def drain(f: AnyFrontier, status: int = 200, limit: int = 1_000_000) -> list[str]:
    """Take and finish URIs with ``status`` until none is left to hand out (at most ``limit``)."""
    out: list[str] = []
    while len(out) < limit and (curi := f.next(0)) is not None:
        out.append(curi.uri)
        curi.status = status
        f.finished(curi)
        if isinstance(f, RedisFrontier):
            assert f.flush(5.0)
    return out


def _detail_of(f: AnyFrontier, host: str) -> Any:
    details = [d for d in f.queue_details() if d.key.split("\t")[0] == host]  # type: ignore[attr-defined]
    assert len(details) == 1, details
    return details[0]


def _finish_wanting_more(f: RedisFrontier, curi: CrawlURI) -> bytes | None:
    """FINISH ``curi`` (a success) as a worker whose threads wait for more (reclaim asked):
    the member of its queue's next URI when the queue was leased to it again, else None."""
    entry = f._in_flight.pop(curi.uri)
    args = finish_args(entry.member, "succeeded", cost=1, budgets=f._budgets)
    args[RECLAIM_ARG] = 1
    done, _, _ = f._store.leases.exchange(
        [(entry.shard, entry.qid, entry.server, args)], [], 0, 0, 0
    )
    state, lease = done[0]
    assert state == 1
    if lease is None:
        return None
    with f._lock:  # leased again: hand it to this worker as the exchange would
        f._leased([(entry.shard, entry.qid, entry.server, lease)])
    return lease.member


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
            # (both inactive now: in line, b.test first)
            line = f._store.leases.candidates(10, inactive=2).inactive
            assert [c.qid.split("\t")[0] for c in line] == ["b.test", "a.test"]
            assert drain(f, limit=1) == ["http://b.test/0"]
            third = f.next(0)
            assert third is not None and third.uri == "http://a.test/2"
            # activated again, a.test starts a new session
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
