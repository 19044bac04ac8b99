"""The shared frontier's inactive queues per precedence, as every worker's status shows them
each second: counted in Redis, over every shard, on one server and on a Cluster, without
reading the queues. The counts must be those of a read of every queue."""

from __future__ import annotations

import random
import uuid
from collections import Counter
from collections.abc import Iterator

import pytest
from support.redis_servers import RedisClusterServers, RedisServer

from crawler.frontier.policy.eligible_order import (
    ELIGIBLE_SCORE_LUA,
    eligible_score,
    score_precedence,
)
from crawler.frontier.redis.redis_store import RedisQueueStore, RedisQueueStoreParams

pytestmark = pytest.mark.timeout(60)

SHARDS = 8
NOW_MS = 1_795_000_000_000


@pytest.fixture(params=["redis", "redis-cluster"])
def store(request: pytest.FixtureRequest) -> Iterator[RedisQueueStore]:
    if request.param == "redis":
        server: RedisServer = request.getfixturevalue("redis_server")
        url = server.url
    else:
        cluster: RedisClusterServers = request.getfixturevalue("redis_cluster")
        url = cluster.url
    st = RedisQueueStore(
        RedisQueueStoreParams(
            url=url, namespace=f"p{uuid.uuid4().hex[:8]}:", worker_id="w1", shards=SHARDS
        )
    )
    st.open(None)  # type: ignore[arg-type]
    yield st
    st.close()


def _read_every_queue(st: RedisQueueStore) -> dict[int, int]:
    """The counts from every member's score (what a status read did before)."""
    counts: Counter[int] = Counter()
    for shard in range(st.shards):
        for _, score in st.client.zrange(f"{st.tag(shard)}i", 0, -1, withscores=True):
            counts[int(score)] += 1
        for _, score in st.client.zrange(f"{st.tag(shard)}n", 0, -1, withscores=True):
            counts[score_precedence(int(score))] += 1
    return dict(sorted(counts.items()))


def test_no_inactive_queue_counts_nothing(store: RedisQueueStore) -> None:
    assert store.inactive_by_precedence() == {}


def test_inactive_and_ineligible_queues_are_counted_per_precedence_over_every_shard(
    store: RedisQueueStore,
) -> None:
    rng = random.Random(5)
    inactive = {0: 7, 1: 900, 2: 40, 3: 1, 899: 2}  # precedence: queues waiting their turn
    ineligible = {4: 25, 5: 3, 40: 1}  # at or past a floor of 4
    for prec, n in inactive.items():
        for q in range(n):
            since = NOW_MS + rng.randrange(-86_400_000, 86_400_000)
            key = f"{store.tag(rng.randrange(SHARDS))}n"
            store.client.zadd(key, {f"h{prec}-{q}.test\t": eligible_score(prec, since)})
    for prec, n in ineligible.items():
        for q in range(n):
            key = f"{store.tag(rng.randrange(SHARDS))}i"
            store.client.zadd(key, {f"x{prec}-{q}.test\t": prec})
    # a precedence both waiting below the floor and parked past it is one row
    store.client.zadd(f"{store.tag(0)}n", {"both.test\t": eligible_score(4, NOW_MS)})

    counts = store.inactive_by_precedence()

    assert counts == {0: 7, 1: 900, 2: 40, 3: 1, 4: 26, 5: 3, 40: 1, 899: 2}
    assert counts == _read_every_queue(store)
    assert list(counts) == sorted(counts)


def test_the_scripts_score_rules_are_the_python_ones(store: RedisQueueStore) -> None:
    # the scripts' eligible_score and score_precedence are translated from Python: same numbers
    cases = [(0, 0), (1, NOW_MS), (3, NOW_MS + 86_400_000), (40, 1), (899, NOW_MS)]
    script = ELIGIBLE_SCORE_LUA + (
        "local s = eligible_score(tonumber(ARGV[1]), tonumber(ARGV[2]))\n"
        "return {string.format('%.17g', s), score_precedence(s)}"
    )
    key = f"{store.tag(0)}n"
    for precedence, since_ms in cases:
        score, back = store.client.eval(script, 1, key, precedence, since_ms)
        assert int(score) == eligible_score(precedence, since_ms)
        assert back == score_precedence(eligible_score(precedence, since_ms)) == precedence
