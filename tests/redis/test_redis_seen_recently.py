"""A Redis worker's ``seen_recently``: the candidates step skips the scope for the links of a
page this worker saw Redis confirm as recorded, as the single process does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.redis_servers import RedisClusterServers, RedisServer

from crawler.curi import CrawlURI
from crawler.frontier.assignment import HostnameQueueAssignmentPolicy
from crawler.frontier.frontier_abilities import FrontierAbilities
from crawler.frontier.redis.redis_frontier import RedisFrontier
from crawler.frontier.redis.redis_store import RedisQueueStore, RedisQueueStoreParams
from crawler.order.schema import FrontierConfig
from crawler.uniq.redis_uniq import RedisUriUniqFilter, RedisUriUniqFilterParams

pytestmark = pytest.mark.timeout(60)


def _worker(url: str, wid: str) -> RedisFrontier:
    store = RedisQueueStore(
        RedisQueueStoreParams(url=url, namespace="s1:", worker_id=wid, shards=4)
    )
    uniq = RedisUriUniqFilter(RedisUriUniqFilterParams(url=url, namespace="s1:"))
    frontier = RedisFrontier(store, HostnameQueueAssignmentPolicy(), uniq, FrontierConfig())
    frontier.open(Path("."))
    return frontier


@pytest.fixture
def two(redis_server: RedisServer) -> Iterator[tuple[RedisFrontier, RedisFrontier]]:
    a, b = _worker(redis_server.url, "wa"), _worker(redis_server.url, "wb")
    yield a, b
    a.close()
    b.close()


def test_links_a_worker_saw_recorded_are_known_without_asking(
    two: tuple[RedisFrontier, RedisFrontier],
) -> None:
    a, b = two
    assert FrontierAbilities.of(a).seen is a  # the candidates step gets it
    assert a.schedule(CrawlURI("http://a.example/x"))
    links = ["http://a.example/x", "http://a.example/y", "::bad"]
    assert a.seen_recently(links) == [True, False, False]
    # another worker does not know it cheaply until Redis told it so
    assert b.seen_recently(links[:1]) == [False]
    assert not b.schedule(CrawlURI("http://a.example/x"))
    assert b.seen_recently(links[:1]) == [True]


def _small_worker(url: str, wid: str, cache_size: int) -> RedisFrontier:
    store = RedisQueueStore(
        RedisQueueStoreParams(url=url, namespace="s1:", worker_id=wid, shards=4)
    )
    uniq = RedisUriUniqFilter(
        RedisUriUniqFilterParams(url=url, namespace="s1:", cache_size=cache_size)
    )
    frontier = RedisFrontier(store, HostnameQueueAssignmentPolicy(), uniq, FrontierConfig())
    frontier.open(Path("."))
    return frontier


def test_a_crawl_larger_than_the_cache_knows_links_seen_long_ago(
    redis_server: RedisServer,
) -> None:
    a = _worker(redis_server.url, "wa")
    b = _small_worker(redis_server.url, "wb", cache_size=10)
    try:
        old = [f"http://a.example/old{i}" for i in range(12)]
        assert a.schedule_many([CrawlURI(u) for u in old]) == [True] * 12
        # young: b's cache still holds all it recorded, so it does not ask Redis
        assert b.seen_recently(old) == [False] * 12
        # b records more than its cache holds: links seen long ago are then asked about
        own = [CrawlURI(f"http://b.example/p{i}") for i in range(25)]
        assert b.schedule_many(own) == [True] * 25
        page = [*old, "http://a.example/new1", "http://a.example/new2"]
        assert b.seen_recently(page) == [True] * 12 + [False, False]
        # ... and its own links that fell out of its cache too
        assert b.seen_recently([c.uri for c in own[:10]]) == [True] * 10
        # the new ones are queued once, even if another worker records one in between
        assert a.schedule(CrawlURI("http://a.example/new2"))
        assert b.schedule_many([CrawlURI(u) for u in page[-2:]]) == [True, False]
    finally:
        a.close()
        b.close()


def test_the_frontier_lets_the_filter_ask_ahead_only_where_one_script_records_and_queues(
    redis_server: RedisServer, redis_cluster: RedisClusterServers
) -> None:
    one = _worker(redis_server.url, "wa")
    cluster = _worker(redis_cluster.url, "wc")
    try:
        assert isinstance(one._uniq, RedisUriUniqFilter) and one._uniq.ask_ahead
        assert isinstance(cluster._uniq, RedisUriUniqFilter) and not cluster._uniq.ask_ahead
    finally:
        one.close()
        cluster.close()
