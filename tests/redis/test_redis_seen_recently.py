"""A Redis worker's ``seen_recently``: the candidates step skips the scope for the links of a
page this worker saw Redis confirm as recorded, as the single process does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.redis_servers import RedisServer

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
