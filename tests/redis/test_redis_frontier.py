"""RedisFrontier + RedisQueueStore against a real redis-server: two "workers" (two frontiers in
one process, different worker ids) share queues, politeness, leases and the end of the crawl."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.redis_servers import RedisServer, free_port

from crawler.curi import CrawlURI, FetchStatus, Hop
from crawler.frontier.assignment import HostnameQueueAssignmentPolicy
from crawler.frontier.frontier import FrontierStateError
from crawler.frontier.redis.redis_exchange import RECLAIM_ARG
from crawler.frontier.redis.redis_frontier import RedisFrontier
from crawler.frontier.redis.redis_leases import finish_args
from crawler.frontier.redis.redis_store import RedisQueueStore, RedisQueueStoreParams
from crawler.frontier.retry.retry_policy import DEFERRALS_KEY
from crawler.order.schema import FrontierConfig, PolitenessConfig, RetriesConfig
from crawler.uniq.redis_uniq import RedisUriUniqFilter, RedisUriUniqFilterParams


class Worker:
    """One worker's frontier over the shared Redis, recording its final dispositions."""

    def __init__(self, url: str, wid: str, ns: str = "c1:", **config: Any) -> None:
        config.setdefault(
            "politeness",
            PolitenessConfig(
                delay_factor=0, min_delay_ms=0, max_delay_ms=0, host_max_connections=0
            ),
        )
        lease_s = config.pop("lease_s", 30.0)
        self.finals: list[CrawlURI] = []
        store = RedisQueueStore(
            RedisQueueStoreParams(url=url, namespace=ns, worker_id=wid, lease_s=lease_s, shards=4)
        )
        uniq = RedisUriUniqFilter(RedisUriUniqFilterParams(url=url, namespace=ns))
        self.frontier = RedisFrontier(
            store,
            HostnameQueueAssignmentPolicy(),
            uniq,
            FrontierConfig(**config),
            on_final=self.finals.append,
        )
        self.frontier.open(Path("."))

    def add(self, uri: str, **fields: Any) -> bool:
        return self.frontier.schedule(CrawlURI(uri, **fields))

    def take(self, timeout_s: float = 0.0) -> CrawlURI | None:
        return self.frontier.next(timeout_s)

    def done(self, curi: CrawlURI, status: int = 200, **fields: Any) -> bool:
        curi.status = status
        curi.fetch_duration_ms = 1
        for name, value in fields.items():
            setattr(curi, name, value)
        final = self.frontier.finished(curi)
        assert self.frontier.flush(5.0)
        return final


@pytest.fixture
def workers(redis_server: RedisServer) -> Iterator[list[Worker]]:
    made: list[Worker] = []
    yield made
    for w in made:
        w.frontier.close()


def _two(redis_server: RedisServer, made: list[Worker], **config: Any) -> tuple[Worker, Worker]:
    a = Worker(redis_server.url, "wa", **config)
    b = Worker(redis_server.url, "wb", **config)
    made += [a, b]
    return a, b


def test_a_queue_is_fifo_and_handed_to_one_worker_at_a_time(
    redis_server: RedisServer, workers: list[Worker]
) -> None:
    a, b = _two(redis_server, workers)
    for i in range(3):
        assert a.add(f"http://h.example/{i}")
    assert not b.add("http://h.example/1")
    first = a.take()
    assert first is not None and first.uri == "http://h.example/0"
    assert b.take() is None  # the queue's one URI is in flight at a
    assert a.done(first)
    got = [b.take(timeout_s=30.0), a.take()]
    assert [c.uri if c else None for c in got] == ["http://h.example/1", None]
    assert b.done(got[0])  # type: ignore[arg-type]
    third = a.take(timeout_s=30.0)
    assert third is not None and third.uri == "http://h.example/2"
    assert not a.frontier.is_empty()
    assert a.done(third)
    assert a.frontier.is_empty() and b.frontier.is_empty()
    snap = b.frontier.snapshot()
    assert (snap.succeeded, snap.queued, snap.discovered) == (3, 0, 3)


def test_politeness_delay_is_shared_by_all_workers(
    redis_server: RedisServer, workers: list[Worker]
) -> None:
    a, b = _two(
        redis_server,
        workers,
        politeness=PolitenessConfig(
            delay_factor=0, min_delay_ms=400, max_delay_ms=400, host_max_connections=0
        ),
    )
    a.add("http://h.example/1")
    a.add("http://h.example/2")
    first = a.take()
    assert first is not None
    a.done(first, politeness_delay_ms=400)
    started = time.monotonic()
    assert b.take() is None
    second = b.take(timeout_s=30.0)
    assert second is not None
    assert time.monotonic() - started >= 0.35


@pytest.mark.parametrize("where", ["server", "cluster"])
def test_server_cap_holds_across_queues_and_workers(
    where: str, request: pytest.FixtureRequest, workers: list[Worker]
) -> None:
    """The cap holds a second queue of a busy server, for every worker; the held-servers
    reading (status, ``crawler_held_servers``) counts it while parked, on a Cluster too."""
    if where == "server":
        url, ns = request.getfixturevalue("redis_server").url, "c1:"
    else:  # the session's cluster is shared: a fresh namespace
        url, ns = request.getfixturevalue("redis_cluster").url, f"t{uuid.uuid4().hex[:12]}:"
    pol = PolitenessConfig(delay_factor=0, min_delay_ms=0, max_delay_ms=0, host_max_connections=1)
    a, b = (Worker(url, wid, ns, politeness=pol) for wid in ("wa", "wb"))
    workers += [a, b]
    assert a.frontier.held_servers() == (0, 0)
    a.add("http://h.example/1", queue_key="q1")
    a.add("http://h.example/2", queue_key="q2")
    a.add("http://other.example/1")
    got = [a.take(), a.take()]
    assert all(c is not None for c in got)
    first, other = sorted(got, key=lambda c: "other" in c.uri)  # type: ignore[union-attr]
    assert first is not None and first.uri.startswith("http://h.example/")
    assert other is not None and other.uri == "http://other.example/1"
    assert b.take() is None and a.take() is None  # q2 is parked on the busy server
    assert b.frontier.held_servers() == (1, 1)
    a.done(other)
    assert b.frontier.held_servers() == (1, 1)
    a.done(first)
    assert b.frontier.held_servers() == (0, 0)  # the finish woke q2
    second = b.take(timeout_s=30.0)
    assert second is not None and second.uri != first.uri


def _finish_wanting_more(w: Worker, curi: CrawlURI, held: int) -> tuple[int, bytes | None]:
    """FINISH ``curi`` as a worker whose threads wait for more (reclaim requested), holding
    ``held`` other URIs: (2, None) when its queue was left to a hungry worker, (1, member of the
    queue's next URI) when reclaimed."""
    entry = w.frontier._in_flight.pop(curi.uri)
    args = finish_args(entry.member, "succeeded", cost=1)
    args[RECLAIM_ARG] = 1
    done, _, _ = w.frontier._store.leases.exchange(
        [(entry.shard, entry.qid, entry.server, args)], [], 0, 0, 0, held=held
    )
    state, lease = done[0]
    return state, lease.member if lease is not None else None


def test_a_queue_goes_to_a_hungry_worker_only_if_it_holds_two_fewer(
    redis_server: RedisServer, workers: list[Worker]
) -> None:
    a, b = _two(redis_server, workers)
    for q in ("q1", "q2", "q3"):
        for i in (1, 2):
            assert a.add(f"http://h.example/{q}/{i}", queue_key=q)
    held = [a.take() for _ in range(3)]
    assert all(c is not None for c in held)
    assert b.take() is None  # every queue is leased to a: b is hungry, holding nothing
    first, second, _ = held
    assert first is not None and second is not None
    # a still holds 2 URIs, b none: a's queue goes to b instead of to a's waiting thread.
    assert _finish_wanting_more(a, first, held=2) == (2, None)
    moved = b.take(timeout_s=30.0)
    assert moved is not None and moved.uri == f"{first.uri[:-1]}2"
    assert b.take() is None  # hungry again, now holding one
    # a holds 1, b 1: a keeps its queue (no ping-pong through the ready set).
    state, member = _finish_wanting_more(a, second, held=1)
    assert state == 1 and member is not None and f"{second.uri[:-1]}2".encode() in member


def test_retry_keeps_the_uri_at_the_head_and_counts_once(
    redis_server: RedisServer, workers: list[Worker]
) -> None:
    a, b = _two(redis_server, workers, retries=RetriesConfig(max_retries=3, retry_delay_s=0))
    a.add("http://h.example/1")
    a.add("http://h.example/2")
    curi = a.take()
    assert curi is not None
    assert a.done(curi, status=FetchStatus.CONNECT_FAILED) is False
    again = b.take(timeout_s=30.0)
    assert again is not None and again.uri == "http://h.example/1" and again.fetch_attempts == 1
    assert b.done(again)
    assert b.frontier.snapshot().succeeded == 1


def test_a_prerequisite_is_fetched_first_by_the_worker_that_needs_it(
    redis_server: RedisServer, workers: list[Worker]
) -> None:
    a, b = _two(redis_server, workers)
    a.add("http://h.example/page")
    via = a.take()
    assert via is not None
    robots = CrawlURI("http://h.example/robots.txt", via=via.uri, hop_path=Hop.PREREQ)
    robots.force_fetch = True
    assert a.frontier.schedule(robots)
    via.prerequisite = robots
    assert a.done(via, status=FetchStatus.DEFERRED) is False
    assert b.take() is None  # the page's queue stays leased to a meanwhile
    nxt = a.take()
    assert nxt is not None and nxt.uri == "http://h.example/robots.txt"
    assert not a.frontier.is_empty()
    assert a.done(nxt) is True
    again = a.take()
    assert again is not None and again.uri == "http://h.example/page"
    # A deferral is no fetch attempt; it is counted apart.
    assert again.fetch_attempts == 0 and again.data[DEFERRALS_KEY] == 1
    assert a.done(again) is True
    assert [c.uri for c in a.finals] == ["http://h.example/robots.txt", "http://h.example/page"]
    assert a.frontier.is_empty()


def test_an_expired_lease_returns_the_uri_to_the_head_of_its_queue(
    redis_server: RedisServer, workers: list[Worker]
) -> None:
    dead = Worker(redis_server.url, "dead", lease_s=0.4)
    # live's own leases must outlast a loaded machine's pauses; it reaps every lease_s / 4
    live = Worker(redis_server.url, "live", lease_s=2.0)
    workers += [live]
    dead.add("http://h.example/1")
    dead.add("http://h.example/2")
    lost = dead.take()
    assert lost is not None
    dead.frontier._closed.set()  # the dead worker's lease keeper stops renewing
    assert live.take() is None
    back = live.take(timeout_s=30.0)
    assert back is not None and back.uri == "http://h.example/1"
    assert live.done(back)
    assert dead.done(lost) is True  # its late report is refused, not counted twice
    assert dead.frontier.lost_leases == 1
    assert live.frontier.snapshot().succeeded == 1


def test_a_renewed_lease_outlives_its_term(
    redis_server: RedisServer, workers: list[Worker]
) -> None:
    # renewed every lease_s / 4: a loaded machine (load average 40 on 2 cores seen) may delay a
    # renewal by more than a second, by less than a term of 2 s
    slow = Worker(redis_server.url, "slow", lease_s=2.0)
    other = Worker(redis_server.url, "other", lease_s=2.0)
    workers += [slow, other]
    slow.add("http://h.example/1")
    curi = slow.take()
    assert curi is not None
    assert other.take(timeout_s=5.0) is None  # two and a half terms: renewed, never reaped
    assert slow.done(curi) and slow.frontier.lost_leases == 0


def test_workers_wait_through_a_redis_restart(
    redis_server: RedisServer, workers: list[Worker]
) -> None:
    a, b = _two(redis_server, workers)
    for i in range(5):
        a.add(f"http://h{i}.example/")
    curi = a.take()
    assert curi is not None
    redis_server.restart()
    assert a.done(curi)
    left = {f"http://h{i}.example/" for i in range(5)} - {curi.uri}
    got = []
    while len(got) < len(left):
        c = b.take(timeout_s=30.0)
        assert c is not None, got
        got.append(c.uri)
        b.done(c)
    assert sorted(got) == sorted(left)
    assert b.frontier.is_empty()


def test_a_second_namespace_cannot_touch_the_first(
    redis_server: RedisServer, workers: list[Worker]
) -> None:
    first = Worker(redis_server.url, "w1", ns="c1:")
    second = Worker(redis_server.url, "w1", ns="c2:")
    workers += [first, second]
    first.add("http://h.example/a")
    assert second.add("http://h.example/a")
    taken = second.take()
    assert taken is not None
    second.done(taken)
    assert second.frontier.is_empty()
    assert first.frontier.snapshot().queued == 1
    mine = first.take()
    assert mine is not None and mine.uri == "http://h.example/a"


def test_unreachable_redis_at_start_is_a_clear_error() -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    with pytest.raises(FrontierStateError, match=r"cannot reach Redis at redis://127\.0\.0\.1"):
        Worker(url, "w1")


def test_finishes_from_many_threads_all_reach_redis_without_a_lost_wake_up(
    redis_server: RedisServer, workers: list[Worker]
) -> None:
    """The exchange thread is woken only by the first FINISH waiting (or a round's end): URIs
    finished from many threads at once, while others wait for URIs, are all sent and every queue
    is released (a lone FINISH with no thread waiting: the first test's ``done``)."""
    a, b = _two(redis_server, workers)
    uris = [f"http://h{i % 8}.example/{i}" for i in range(48)]
    for uri in uris:
        assert a.add(uri)
    fetched: list[str] = []
    errors: list[BaseException] = []

    def toe(w: Worker) -> None:
        try:
            while True:
                curi = w.take(timeout_s=0.3)
                if curi is None:
                    if w.frontier.is_empty():
                        return
                    continue
                curi.status, curi.fetch_duration_ms = 200, 1
                w.frontier.finished(curi)
                fetched.append(curi.uri)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=toe, args=(w,)) for w in (a, b) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
    assert not errors and not any(t.is_alive() for t in threads)
    assert a.frontier.flush(2.0) and b.frontier.flush(2.0)
    assert sorted(fetched) == sorted(uris)
    assert b.frontier.snapshot().succeeded == len(uris)
