"""DUE's shard bounds on one redis-server: the scripts keep a lower bound of each shard's
earliest due time and first inactive score, and DUE reads only the shards that may hold
something due or first in line. Its answer must be the answer of a read of every shard."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from support.redis_servers import RedisServer

from crawler.frontier.redis import redis_conn
from crawler.frontier.redis.redis_leases import (
    CLAIM_DUE,
    CLAIM_INACTIVE,
    DueRead,
    Lease,
    finish_args,
)
from crawler.frontier.redis.redis_store import RedisQueueStore, RedisQueueStoreParams

pytestmark = pytest.mark.timeout(60)

SHARDS = 16


@pytest.fixture
def store(redis_server: RedisServer) -> Iterator[RedisQueueStore]:
    st = RedisQueueStore(
        RedisQueueStoreParams(
            url=redis_server.url, namespace="b1:", worker_id="w1", lease_s=30.0, shards=SHARDS
        )
    )
    st.open(None)  # type: ignore[arg-type]
    yield st
    st.close()


def _both_reads(st: RedisQueueStore, per_shard: int, inactive: int) -> tuple[DueRead, DueRead]:
    """DUE over the bounds and DUE as a Cluster runs it (no bound sets, every shard read), in
    one round trip; repeated until both ran in the same Redis millisecond."""
    keys = [k for s in range(st.shards) for k in st.due_keys(s)]
    args = [per_shard, st.worker, 0, 0, st.precedence_args[2], inactive, -2, st.lease_ms]
    full_call = (st.script("DUE"), keys, args)
    for _ in range(50):
        bounded_calls = st.leases._due_calls(per_shard, 0, 0, inactive, -2)
        rows = redis_conn.run_calls(st.client, [*bounded_calls, full_call])
        bounded, full = st.leases._parse_due(rows[:1]), st.leases._parse_due(rows[1:])
        if bounded.now_ms == full.now_ms:
            return bounded, full
    raise AssertionError("no two reads in the same millisecond")


def _member(n: int, uri: str) -> bytes:
    return n.to_bytes(8, "big") + uri.encode()


def _schedule(st: RedisQueueStore, server: str, n: int) -> tuple[int, str, bytes]:
    """A URI in one of ``server``'s two queues: (shard, queue id, member)."""
    qid = f"{server}#{n % 2}\t{server}"
    member = _member(n, f"http://{server}/{n}")
    st.schedule_many({st.shard_of(server): [(qid, 0, member)]})
    return st.shard_of(server), qid, member


def _same(bounded: DueRead, full: DueRead) -> None:
    assert sorted(bounded.queues) == sorted(full.queues)
    assert bounded.inactive == full.inactive
    assert bounded.active == full.active
    # a skipped shard reports its bound: never later than the next due queue
    if full.wait_ms >= 0:
        assert 0 <= bounded.wait_ms <= full.wait_ms
    else:
        assert bounded.wait_ms >= -1


def test_bounded_reads_answer_as_full_reads(store: RedisQueueStore) -> None:
    """Random schedules and take-backs, activations, claims (one connection per server: a
    second queue parks), finishes with politeness delays and retries, expired leases reaped:
    after each step DUE over the bounds names the same due and inactive queues (and counts the
    same active ones) as a read of every shard."""
    rng = random.Random(7)
    store.lease_ms = 400  # leases expire while the test runs: REAP hands them back
    servers = [f"s{i}.example" for i in range(40)]
    leased: dict[str, tuple[int, str, Lease]] = {}
    n = 0
    scheduled: list[tuple[int, str, bytes]] = []
    for _ in range(10):
        for s in rng.sample(servers, 8):
            n += 1
            _schedule(store, s, n)
    for step in range(120):
        want = rng.choice([0, 1, 4, 12, 40])
        bounded, full = _both_reads(store, 8, want)
        _same(bounded, full)
        op = rng.random()
        if op < 0.2:
            servers.append(f"n{step}.example")  # a new queue, last in line
            for s in [servers[-1], *rng.sample(servers, 2)]:
                n += 1
                scheduled.append(_schedule(store, s, n))
        elif op < 0.25 and scheduled:
            store.unschedule_many([scheduled.pop(rng.randrange(len(scheduled)))])
        elif op < 0.3:
            store.leases.reap(1)
        elif op < 0.55:
            picks = bounded.inactive[:6] + bounded.queues[:3]
            claims = [
                (c.shard, c.qid, c.qid.split("\t")[1], CLAIM_INACTIVE if c.inactive else CLAIM_DUE)
                for c in picks
                if c.qid not in leased
            ]
            _, got, _ = store.leases.exchange([], claims, 1, 0, 0)
            for (shard, qid, _server, _how), lease in zip(claims, got, strict=True):
                if lease is not None:
                    leased[qid] = (shard, qid, lease)
        elif leased:
            finishes: list[tuple[int, str, str, list[Any]]] = []
            for qid in rng.sample(sorted(leased), min(len(leased), 3)):
                shard, _, lease = leased.pop(qid)
                if rng.random() < 0.3:
                    n += 1
                    args = finish_args(
                        lease.member,
                        "r",
                        new_member=_member(n, "http://retry/"),
                        delay_ms=20,
                        max_conn=1,
                    )
                else:
                    args = finish_args(
                        lease.member, "succeeded", delay_ms=rng.choice([0, 5, 40]), max_conn=1
                    )
                finishes.append((shard, qid, qid.split("\t")[1], args))
            store.leases.exchange(finishes, [], 0, 0, 0)  # a lease may have expired
        if step % 10 == 0:
            time.sleep(0.03)  # queues waiting out their delays come due


def test_a_read_skips_shards_with_nothing_due(store: RedisQueueStore) -> None:
    """Fifteen shards hold queues due only in a minute, one a queue due now: after one read has
    set the bounds, a read queries the ready set of that one shard only, and still finds it."""
    st = store
    # one queue per shard, leased and finished with a 60 s politeness delay
    servers: dict[int, str] = {}
    i = 0
    while len(servers) < SHARDS:
        servers.setdefault(st.shard_of(f"h{i}.example"), f"h{i}.example")
        i += 1
    for n, server in enumerate(servers.values()):
        _schedule(st, server, 4 * n)  # two URIs in one queue
        _schedule(st, server, 4 * n + 2)
    heads = st.leases.candidates(4, inactive=SHARDS).inactive
    claims = [(c.shard, c.qid, servers[c.shard], CLAIM_INACTIVE) for c in heads]
    _, got, _ = st.leases.exchange([], claims, 0, 0, 0)
    assert all(got)
    late = [
        (c.shard, c.qid, servers[c.shard], finish_args(lease.member, "succeeded", delay_ms=60_000))
        for c, lease in zip(heads, got, strict=True)
        if lease is not None
    ]
    st.leases.exchange(late[1:], [], 0, 0, 0)
    first = late[0]
    st.leases.exchange([(*first[:3], finish_args(got[0].member, "succeeded"))], [], 0, 0, 0)  # type: ignore[union-attr]
    st.leases.candidates(4)  # sets the bounds
    client = redis.Redis.from_url(st.params.url)
    client.config_resetstat()
    read = st.leases.candidates(4)
    stats = client.info("commandstats")
    client.close()
    assert [q.qid for q in read.queues] == [first[1]]
    assert 50_000 < read.wait_ms <= 60_000
    # the due queue's shard: its due queues and (none due later) its next; no other shard
    assert stats["cmdstat_zrangebyscore"]["calls"] == 2
