"""Threads blocked in a Redis worker's ``next()`` are not woken as a herd.

While nothing is due the worker polls Redis (every ~50 ms): one waiting thread sleeps until each
poll (the timer) and the others until a round leases URIs for them or their own deadline, so the
wake-ups of the waiting threads grow with the polls and the URIs handed out, not with polls x
threads. ``RedisFrontier.timer.wakeups`` counts every return of a waiting thread from its wait.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.redis_servers import RedisServer
from support.stores import REDIS, FrontierHarness, FrontierMaker

from crawler.curi import CrawlURI
from crawler.frontier.redis.redis_frontier import RedisFrontier

pytestmark = pytest.mark.timeout(60)

THREADS = 50


@pytest.fixture
def harness(redis_server: RedisServer, tmp_path: Path) -> Iterator[FrontierHarness]:
    maker = FrontierMaker(REDIS, tmp_path, redis_server.url)
    try:
        yield maker.frontier()
    finally:
        maker.close()


def _block(frontier: RedisFrontier, got: list[CrawlURI | None]) -> list[threading.Thread]:
    """THREADS threads, each blocked in ``next(5.0)`` once; what they return goes to ``got``."""
    threads = [
        threading.Thread(target=lambda: got.append(frontier.next(5.0))) for _ in range(THREADS)
    ]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 10
    while frontier.timer.waiting < THREADS and time.monotonic() < deadline:
        time.sleep(0.01)
    assert frontier.timer.waiting == THREADS
    return threads


def test_polls_of_an_empty_frontier_wake_one_waiting_thread_each(
    harness: FrontierHarness,
) -> None:
    frontier = harness.frontier
    assert isinstance(frontier, RedisFrontier)
    got: list[CrawlURI | None] = []
    threads = _block(frontier, got)
    timer, exchange = frontier.timer, frontier._exchange
    wakeups, rounds = timer.wakeups, exchange.rounds
    time.sleep(1.0)
    woken, polled = timer.wakeups - wakeups, exchange.rounds - rounds
    frontier.wake_waiters()
    for t in threads:
        t.join(10)
    assert got == [None] * THREADS
    assert polled >= 5, polled  # the worker kept polling Redis for its waiting threads
    # a herd wakes every waiting thread at each poll: ~THREADS x polled (1,000 here)
    assert woken <= polled + THREADS, (woken, polled)


def test_uris_leased_for_waiting_threads_wake_about_one_thread_each(
    harness: FrontierHarness,
) -> None:
    frontier = harness.frontier
    assert isinstance(frontier, RedisFrontier)
    got: list[CrawlURI | None] = []
    threads = _block(frontier, got)
    timer, exchange = frontier.timer, frontier._exchange
    wakeups, rounds = timer.wakeups, exchange.rounds
    hosts = 20
    assert all(frontier.schedule_many([CrawlURI(f"http://h{i}.test/") for i in range(hosts)]))
    deadline = time.monotonic() + 10
    while len(got) < hosts and time.monotonic() < deadline:
        time.sleep(0.01)
    woken, polled = timer.wakeups - wakeups, exchange.rounds - rounds
    frontier.wake_waiters()
    for t in threads:
        t.join(10)
    handed = sorted(c.uri for c in got if c is not None)
    assert handed == sorted(f"http://h{i}.test/" for i in range(hosts))
    assert woken <= hosts + 2 * polled + 5, (woken, polled)
