"""RedisUriUniqFilter against a real redis-server (and a 3-master Cluster): exact, shared,
namespaced, persistent, compact."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis
from support.redis_servers import RedisClusterServers, RedisServer

from crawler.uniq.redis_uniq import RedisUriUniqFilter, RedisUriUniqFilterParams
from crawler.uniq.uniq_filter import UniqStateError


def _filter(url: str, namespace: str = "c1:", **params: object) -> RedisUriUniqFilter:
    f = RedisUriUniqFilter(RedisUriUniqFilterParams(url=url, namespace=namespace, **params))  # type: ignore[arg-type]
    f.open(Path("."))
    return f


def test_each_uri_is_new_exactly_once_across_two_workers(redis_server: RedisServer) -> None:
    a, b = _filter(redis_server.url), _filter(redis_server.url)
    uris = [f"http://h{i % 7}.example/p/{i}" for i in range(2000)]
    first = a.add_many(uris[:1500])
    second = b.add_many(uris[1000:])
    assert all(first)
    assert second == [False] * 500 + [True] * 500
    assert not a.add(uris[1999]) and not b.add(uris[0])
    assert a.add("http://h1.example/new") and not b.add("http://h1.example/new")
    assert b.count() == 2001
    a.close()
    b.close()


def test_duplicates_inside_one_batch_count_once(redis_server: RedisServer) -> None:
    f = _filter(redis_server.url, cache_size=0)
    assert f.add_many(["http://a/x", "http://a/x", "http://a/y"]) == [True, False, True]
    assert f.add_many(["http://a/x", "http://a/z"]) == [False, True]
    assert f.count() == 3
    f.close()


def test_namespaces_keep_crawls_apart_and_state_survives_reopen(redis_server: RedisServer) -> None:
    one = _filter(redis_server.url, "c1:")
    assert one.add("http://a.example/")
    one.close()
    other = _filter(redis_server.url, "c2:")
    assert other.add("http://a.example/")
    other.close()
    again = _filter(redis_server.url, "c1:")
    assert not again.add("http://a.example/")
    assert again.count() == 1
    again.close()


def test_survives_a_redis_restart(redis_server: RedisServer) -> None:
    f = _filter(redis_server.url, cache_size=0)
    assert f.add_many([f"http://a/{i}" for i in range(100)]) == [True] * 100
    redis_server.restart()
    assert f.add_many([f"http://a/{i}" for i in range(50, 150)]) == [False] * 50 + [True] * 50
    f.close()


def test_a_different_layout_is_refused(redis_server: RedisServer) -> None:
    _filter(redis_server.url).close()
    with pytest.raises(UniqStateError, match="created with"):
        _filter(redis_server.url, fingerprint="md5")


def test_unreachable_redis_is_a_clear_error(tmp_path: Path) -> None:
    from support.redis_servers import free_port

    f = RedisUriUniqFilter(
        RedisUriUniqFilterParams(url=f"redis://127.0.0.1:{free_port()}/0", namespace="c1:")
    )
    with pytest.raises(UniqStateError, match="cannot reach Redis"):
        f.open(tmp_path)


def test_members_cost_six_bytes_in_fixed_width_buckets(redis_server: RedisServer) -> None:
    f = _filter(redis_server.url, cache_size=0)
    f.add_many([f"http://b.example/{i}" for i in range(5000)])
    client = redis.Redis(port=redis_server.port)
    keys = [k for k in client.scan_iter(match="{c1:u*}*") if not k.endswith(b"n")]
    assert sum(client.strlen(k) for k in keys) == 5000 * 6
    f.close()


@pytest.mark.slow
def test_cluster_shards_the_set_over_three_masters(redis_cluster: RedisClusterServers) -> None:
    f = _filter(redis_cluster.url, "c9:", cache_size=0)
    uris = [f"http://h{i % 5}.example/{i}" for i in range(3000)]
    assert all(f.add_many(uris))
    assert not any(f.add_many(uris[::7]))
    assert f.count() == 3000
    # this filter's keys only: the session's cluster holds other tests' namespaces too
    per_node = [
        sum(1 for _ in redis.Redis(port=n.port).scan_iter(match="{c9:*"))
        for n in redis_cluster.nodes
    ]
    assert all(n > 50 for n in per_node), per_node
    f.close()


def test_add_many_announced_names_the_new_ones_before_recording(redis_server: RedisServer) -> None:
    f = _filter(redis_server.url, "c9:", cache_size=0)
    other = _filter(redis_server.url, "c9:", cache_size=0)
    f.add("http://a/old")
    seen_by_other: list[list[bool]] = []

    def announce(new: list[str]) -> None:
        # announced before the add: another worker does not see them yet
        seen_by_other.append(other.contains_many(new))
        calls.append(sorted(new))

    calls: list[list[str]] = []
    batch = ["http://a/old", "http://a/x", "http://a/x", "http://a/y"]
    assert f.add_many_announced(batch, announce) == [False, True, False, True]
    assert calls == [["http://a/x", "http://a/y"]] and seen_by_other == [[False, False]]
    assert other.contains_many(["http://a/x", "http://a/y"]) == [True, True]
    f.close()
    other.close()
