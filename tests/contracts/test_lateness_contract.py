"""One lateness guard over every store: the same fetches teach it the same number of hosts in
rotation (threads x (hold + wait) / hold), and every store activates no more queues than it
allows; on Redis the cap is the sum of the workers' capacities, and a worker gone stops
counting. Real, short delays: Redis keeps time by its own clock."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs
from support.redis_servers import RedisServer
from support.stores import FrontierMaker

from crawler.curi import CrawlURI
from crawler.frontier import HostnameQueueAssignmentPolicy
from crawler.frontier.policy.lateness_guard import WINDOW_URIS, LatenessGuard
from crawler.frontier.redis.redis_frontier import RedisFrontier
from crawler.frontier.redis.redis_store import RedisQueueStore, RedisQueueStoreParams
from crawler.order.schema import FrontierConfig, PolitenessConfig
from crawler.uniq.redis_uniq import RedisUriUniqFilter, RedisUriUniqFilterParams

pytestmark = pytest.mark.timeout(60)

DELAY_MS = 300
POLITE = PolitenessConfig(
    delay_factor=0, min_delay_ms=DELAY_MS, max_delay_ms=DELAY_MS, host_max_connections=0
)


def guard_of(frontier: Any) -> LatenessGuard:
    guard: LatenessGuard = (
        frontier.guard if isinstance(frontier, RedisFrontier) else (frontier.sched.guard)
    )
    return guard


def test_every_store_learns_the_same_hosts_in_rotation(stores: FrontierMaker) -> None:
    h = stores.frontier(politeness=POLITE, lateness_tolerance=0.05)
    hosts = WINDOW_URIS + 10
    for i in range(hosts):
        h.add(f"http://h{i}.test/")
    threads, hold_s = 10, 0.05
    inner: list[float] = []  # from the last take of a batch to the call finishing each URI
    outer: list[float] = []  # from before its first take to the call's return
    while len(inner) < hosts:
        asked = time.monotonic()
        batch = [c for _ in range(threads) if (c := h.take(1.0)) is not None]
        assert batch
        taken = time.monotonic()
        time.sleep(hold_s)  # ten threads fetching at once
        for curi in batch:
            finishing = time.monotonic()
            h.done(curi)
            inner.append(finishing - taken)
            outer.append(time.monotonic() - asked)
    guard = guard_of(h.frontier)
    assert guard.windows == 1

    def model(held: list[float]) -> float:
        mean_hold = sum(held[:WINDOW_URIS]) / WINDOW_URIS
        return threads * (mean_hold + DELAY_MS / 1000) / mean_hold

    # the guard's hold runs from the hand-out (or the lease) to the finish: between the two
    assert 0.9 * model(outer) <= guard.model <= 1.1 * model(inner)
    # no URI was fetched, so no fetch could start late, however loaded the machine: the guard
    # keeps the whole model
    assert guard.late_s == 0.0 and not guard.saturated and guard.rotated == 0
    assert guard.capacity == int(guard.model)
    # slow start: the cap is the model within twice the threads (or the queues active); which
    # of the two is lower depends on the holds measured (a loaded machine lengthens them)
    assert guard.ceiling >= 2 * threads
    assert guard.cap == min(guard.capacity, guard.ceiling)


def test_every_store_activates_no_more_queues_than_the_cap(stores: FrontierMaker) -> None:
    h = stores.frontier(politeness=POLITE, lateness_tolerance=0.05)
    guard = guard_of(h.frontier)
    guard.capacity = 3.0  # as if learned
    for i in range(6):
        h.add(f"http://h{i}.test/1")
        h.add(f"http://h{i}.test/2")
    first = drain(h.take, 1.0)  # (a wait a loaded machine's round trips fit in)
    assert len(first) == 3  # threads beyond the cap are held back
    # the hosts in rotation the fetcher's idle pool is sized from: the three active, not six
    assert h.frontier.in_rotation() == 3
    for curi in first:
        h.done(curi)
    again = [c for _ in range(3) if (c := h.take(2.0)) is not None]
    assert h.take(0.3) is None
    served = {c.uri.split("/")[2] for c in first}
    assert {c.uri.split("/")[2] for c in again} == served  # the same hosts, on their turn
    assert guard.cap == 3
    for curi in again:
        h.done(curi)
    guard.capacity = 6.0
    rest = [c for _ in range(3) if (c := h.take(2.0)) is not None]
    assert h.take(0.3) is None
    assert len(rest) == 3 and not served & {c.uri.split("/")[2] for c in rest}
    assert h.frontier.in_rotation() == 3  # the first three ran empty and left rotation


def drain(take: Any, timeout_s: float) -> list[CrawlURI]:
    """What ``take`` hands out until it hands out nothing within ``timeout_s``."""
    out = []
    while (curi := take(timeout_s)) is not None:
        out.append(curi)
    return out


def _worker(server: RedisServer, tmp: Path, worker: str, capacity: float) -> RedisFrontier:
    """A worker whose guard has learned ``capacity`` (leases of 1 s)."""
    ns = "lateness:"
    store = RedisQueueStore(
        RedisQueueStoreParams(url=server.url, namespace=ns, worker_id=worker, shards=4, lease_s=1.0)
    )
    uniq = RedisUriUniqFilter(RedisUriUniqFilterParams(url=server.url, namespace=ns))
    config = FrontierConfig(politeness=POLITE, lateness_tolerance=0.05)
    frontier = RedisFrontier(store, HostnameQueueAssignmentPolicy(), uniq, config)
    frontier.guard.capacity = capacity
    frontier.open(tmp / worker)
    return frontier


@pytest.mark.redis
def test_redis_caps_the_crawl_at_the_sum_of_the_workers_capacities(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    w1 = _worker(redis_server, tmp_path, "w1", 2.0)
    w2 = _worker(redis_server, tmp_path, "w2", 3.0)
    w3 = _worker(redis_server, tmp_path, "w3", math.inf)  # has learned nothing: not counted
    try:
        for i in range(10):
            w1.schedule(CrawlURI(f"http://h{i}.test/"))
        out = drain(w1.next, 1.0) + drain(w2.next, 1.0)
        assert len(out) == 5  # 2 + 3 queues active crawl-wide
        assert w1.next(0.2) is None  # its read brings the sum back
        assert w1.guard.crawl_cap == 5 and w2.guard.crawl_cap == 5
        w2.close()
        # w2's capacity is not sent again within a lease time (1 s): it stops counting
        deadline = time.monotonic() + 10.0
        while w1.guard.crawl_cap != 2 and time.monotonic() < deadline:
            w1.next(0.2)
        assert w1.guard.crawl_cap == 2
    finally:
        w1.close()
        w2.close()
        w3.close()


def test_every_store_logs_the_queues_its_guard_rotates_out(stores: FrontierMaker) -> None:
    """A queue the guard rotates out (due after its politeness wait, while the guard trims the
    active set) is logged with its key and wall-clock time, on every frontier: a reader of
    crawler.jsonl tells a host's return after a rotation from lateness in rotation."""
    polite = PolitenessConfig(
        delay_factor=0, min_delay_ms=100, max_delay_ms=100, host_max_connections=0
    )
    h = stores.frontier(politeness=polite, lateness_tolerance=0.05)
    h.add("http://a.test/1")
    h.add("http://a.test/2")
    first = h.take(1.0)
    assert first is not None
    h.done(first)  # a.test waits its politeness delay
    guard = guard_of(h.frontier)
    guard.to_rotate = 1  # a trim under way: the next queue due after a wait goes out
    before_ms = time.time() * 1000
    with capture_logs() as logs:
        second = h.take(3.0)  # rotated out, then activated again from the inactive line
        after_ms = time.time() * 1000
    assert second is not None and second.uri == "http://a.test/2"
    assert guard.rotated == 1
    events = [e for e in logs if e["event"] == "queues_rotated_late"]
    assert len(events) == 1
    event = events[0]
    assert event["rotated"] == 1 and event["cap"] == guard.cap
    [[key, at_ms]] = event["queues"]
    assert key == "a.test"  # the queue key: the host, as bench/web/politeness.py reads it
    assert before_ms - 50 <= at_ms <= after_ms + 50  # Redis's clock, on loopback
    h.done(second)
