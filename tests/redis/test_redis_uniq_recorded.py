"""RedisUriUniqFilter.recorded: the cache while it holds all this process recorded; one round
trip for a page's unknown links once it does not; the schedule's check does not ask again."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis
from support.redis_servers import RedisClusterServers, RedisServer

from crawler.uniq import redis_uniq
from crawler.uniq.redis_uniq import RedisUriUniqFilter, RedisUriUniqFilterParams


def _filter(url: str, cache_size: int = 10) -> RedisUriUniqFilter:
    f = RedisUriUniqFilter(
        RedisUriUniqFilterParams(url=url, namespace="r1:", cache_size=cache_size)
    )
    f.open(Path("."))
    f.ask_ahead = True  # as the frontier sets it on one redis-server
    return f


@contextmanager
def _two_workers(url: str) -> Iterator[tuple[RedisUriUniqFilter, RedisUriUniqFilter]]:
    """Two workers' filters on one crawl's Redis (``b`` the one under test), closed after."""
    a, b = _filter(url), _filter(url)
    try:
        yield a, b
    finally:
        a.close()
        b.close()


def _scripts_run(url: str) -> int:
    """EVAL/EVALSHA calls the server has run so far."""
    stats = redis.Redis.from_url(url).info("commandstats")
    return sum(int(stats.get(f"cmdstat_{c}", {}).get("calls", 0)) for c in ("eval", "evalsha"))


def _aged(f: RedisUriUniqFilter, n: int = 25) -> None:
    """Record ``n`` URIs of this filter's own: more than its cache holds, so it drops keys;
    then check one URI, so the server has loaded the check's script (a first call of a
    script is two)."""
    assert all(f.add_many([f"http://own.example/{id(f)}/{i}" for i in range(n)]))
    assert f.contains_many(["http://warm.example/"]) == [False]


@pytest.mark.parametrize(
    ("ask_ahead", "aged"),
    [(True, False), (False, True)],
    ids=["a young cache", "no ask_ahead (a Cluster's frontier)"],
)
def test_the_cache_answers_alone_without_a_round_trip(
    redis_server: RedisServer, ask_ahead: bool, aged: bool
) -> None:
    with _two_workers(redis_server.url) as (a, b):
        b.ask_ahead = ask_ahead
        others = [f"http://a.example/{i}" for i in range(9)]
        assert all(a.add_many(others))
        if aged:
            _aged(b)
        before = _scripts_run(redis_server.url)
        assert b.recorded(others) == [False] * 9
        assert _scripts_run(redis_server.url) == before


def test_an_aged_cache_asks_redis_once_for_a_page(redis_server: RedisServer) -> None:
    with _two_workers(redis_server.url) as (a, b):
        others = [f"http://a.example/{i}" for i in range(9)]
        assert all(a.add_many(others))
        _aged(b)
        new = ["http://a.example/new", "http://a.example/new"]
        before = _scripts_run(redis_server.url)
        assert b.recorded([*others, *new]) == [True] * 9 + [False, False]
        assert _scripts_run(redis_server.url) == before + 1
        # what it learned is in its cache now: no round trip for the same links
        assert b.recorded(others) == [True] * 9
        assert _scripts_run(redis_server.url) == before + 1


def test_fewer_unknown_links_than_a_round_trip_is_worth_are_not_asked(
    redis_server: RedisServer,
) -> None:
    with _two_workers(redis_server.url) as (a, b):
        few = [f"http://a.example/{i}" for i in range(redis_uniq.ASK_AT_LEAST - 1)]
        assert all(a.add_many(few))
        _aged(b)
        before = _scripts_run(redis_server.url)
        assert b.recorded(few) == [False] * len(few)
        assert _scripts_run(redis_server.url) == before


def test_the_schedule_check_trusts_a_fresh_absent_for_a_while(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _two_workers(redis_server.url) as (a, b):
        _aged(b)
        page = [f"http://c.example/{i}" for i in range(10)]
        assert b.recorded(page) == [False] * 10
        assert a.add(page[0])  # another worker records one in between
        before = _scripts_run(redis_server.url)
        assert b.contains_many(page, trust_absent=True) == [False] * 10  # not asked again
        assert b.contains_many(page[:3], trust_absent=True) == [False] * 3  # another page's
        assert _scripts_run(redis_server.url) == before
        assert b.contains_many(page) == [True] + [False] * 9  # asked without the trust
        assert _scripts_run(redis_server.url) == before + 1
        monkeypatch.setattr(redis_uniq, "ABSENT_TRUSTED_S", 0.0)  # a while later
        assert b.contains_many(page[1:], trust_absent=True) == [False] * 9
        assert _scripts_run(redis_server.url) == before + 2
        assert b.add_many(page) == [False] + [True] * 9


def test_an_outage_answers_from_the_cache(redis_server: RedisServer) -> None:
    b = _filter(redis_server.url)
    try:
        _aged(b)
        redis_server.stop()
        page = [f"http://d.example/{i}" for i in range(10)]
        assert b.recorded(page) == [False] * 10
    finally:
        redis_server.start()
        b.close()


def test_a_cluster_answers_per_shard(redis_cluster: RedisClusterServers) -> None:
    with _two_workers(redis_cluster.url) as (a, b):
        others = [f"http://h{i}.example/{i}" for i in range(40)]
        assert all(a.add_many(others))
        _aged(b)
        assert b.recorded([*others, "http://h1.example/new"]) == [True] * 40 + [False]
