"""SCHEDULE updates a queue's own state once per call, not once per URI: a page's batch must
leave every queue as scheduling its URIs one by one does (count, last URI, precedence, and the
set it waits in), on a real redis-server and on a Cluster, in each queue precedence mode."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.frontier.policy.eligible_order import score_precedence
from crawler.frontier.redis.redis_store import RedisQueueStore, RedisQueueStoreParams
from crawler.frontier.store.queue_store import sort_key

FLOOR = 8
BASE = 3

# (queue, URI precedence) in the order a page gives them: queues whose URIs bring better
# precedences later, one that crosses the floor both ways, one that stays past it, one with
# a precedence recorded before the batch, one retired, one URI twice.
BATCH = [
    ("x.example:80", 7),
    ("y.example:80", 6),
    ("x.example:80", 3),
    ("z.example:80", 4),
    ("w.example:80", 4),
    ("z.example:80", 2),
    ("r.example:80", 1),
    ("y.example:80", 9),
    ("z.example:80", 4),
    ("x.example:80", 8),
]


@pytest.fixture(params=["redis", "redis-cluster"])
def two_stores(request: pytest.FixtureRequest) -> Iterator[tuple[RedisQueueStore, ...]]:
    """Two stores of one shard in their own namespaces on one server (or one Cluster)."""
    if request.param == "redis":
        url = request.getfixturevalue("redis_server").url
    else:
        url = request.getfixturevalue("redis_cluster").url
    made = []
    for _ in range(2):
        ns = f"b{uuid.uuid4().hex[:8]}:"
        store = RedisQueueStore(RedisQueueStoreParams(url=url, namespace=ns, shards=1))
        store.open(Path("."))
        made.append(store)
    yield tuple(made)
    for store in made:
        store.close()


def _entries() -> list[tuple[str, int, bytes]]:
    out = []
    for ordinal, (qid, precedence) in enumerate(BATCH, 1):
        skey = sort_key(0, precedence, ordinal if ordinal != 9 else 4)  # the 9th repeats the 4th
        uri = f"http://{qid.partition(':')[0]}/{ordinal if ordinal != 9 else 4}"
        out.append((f"{qid}\t{qid}", skey >> 48, skey.to_bytes(8, "big") + uri.encode()))
    return out


def _prepare(store: RedisQueueStore) -> None:
    """State from before the batch: w's queue has precedence 1 already, r's queue is retired."""
    store.schedule(0, [("w.example:80\tw.example:80", 1, b"\x00" * 8 + b"http://w.example/0")])
    store.client.zadd(f"{store.tag(0)}x", {"r.example:80\tr.example:80": 1})


def _state(store: RedisQueueStore) -> dict[str, Any]:
    """Every key of the store's shard, the namespace taken out; the inactive set's scores as
    precedences (their other part is the time of the call); the stats without the call count."""
    ns, client = store.ns, store.client
    out: dict[str, Any] = {}
    for key in client.scan_iter(match=f"*{ns}*"):
        name = key.decode().replace(ns, "")
        kind = client.type(key).decode()
        if kind == "zset":
            pairs = client.zrange(key, 0, -1, withscores=True)
            if name.endswith("}n") or name == "fbound:n":
                out[name] = {m: score_precedence(int(s)) for m, s in pairs}
            else:
                out[name] = dict(pairs)
        elif kind == "hash":
            fields = client.hgetall(key)
            fields.pop(b"ops", None)
            out[name] = fields
        elif kind == "string":
            out[name] = client.get(key)
    return out


@pytest.mark.parametrize("mode", [0, 1, 2], ids=["base", "highest_uri", "success_counts"])
def test_a_batch_leaves_the_queues_as_one_by_one_does(
    two_stores: tuple[RedisQueueStore, RedisQueueStore], mode: int
) -> None:
    batch, single = two_stores
    batch.precedence_args = single.precedence_args = [FLOOR, BASE, mode]
    _prepare(batch)
    _prepare(single)
    entries = _entries()

    added = batch.schedule_many({0: entries})[0]
    one_by_one = [single.schedule(0, [entry]) == 1 for entry in entries]

    assert added == one_by_one
    assert added.count(False) == 1  # the repeated URI
    got, want = _state(batch), _state(single)
    assert got == want
    tag = "{f0}"
    assert got[f"{tag}s"][b"queued"] == b"9"  # r's URI is in a retired queue: not counted
    queues = got[f"{tag}b"]
    assert queues[b"x.example:80\tx.example:80\ne"] == b"3"
    # the last URI queued is the batch's last for that queue
    assert queues[b"x.example:80\tx.example:80\nq"].endswith(b"http://x.example/10")
    if mode == 1:  # the best URI precedence wins (the base plus the URI's)
        # x went past the floor (3 + 7) and back below it (3 + 3): it waits, eligible
        assert queues[b"x.example:80\tx.example:80\np"] == b"6"
        assert got[f"{tag}n"][b"x.example:80\tx.example:80"] == 6
        # y stays past the floor (3 + 6, 3 + 9): never handed out
        assert got[f"{tag}i"][b"y.example:80\ty.example:80"] == 9
        assert b"y.example:80\ty.example:80" not in got[f"{tag}n"]
        # w had a better precedence before the batch (3 + 1): kept
        assert queues[b"w.example:80\tw.example:80\np"] == b"4"
