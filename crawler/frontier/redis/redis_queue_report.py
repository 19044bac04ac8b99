"""Per-queue detail of the shared frontier for reports, read from Redis.

:func:`redis_queue_details` gives the :class:`~crawler.frontier.frontier_report.QueueDetail` rows
of the work-queue frontier's report from the Redis keys (see
:mod:`crawler.frontier.redis.redis_scripts`): QUEUE_LIST per shard names the queues that are ready
or snoozed (the ready set), in process (the lease set) or retired; the queues parked on a busy
server are read from the park sets each shard's held set names (no scan, so on a Cluster too).
QUEUE_DETAIL then reads each queue's size, head and counters, one call per shard
group. Two or three round trips per report, none on the crawl's hot path.

Differences from the single-process rows: a queue id is ``<queue key>\\t<server>`` (a queue
spanning servers is one row per server); ``last_peeked`` is the URI at the queue's head (the
one out, for a queue in process); inactive queues are those of the inactive set and the
ineligible ones; ``precedence`` is the queue's as SCHEDULE keeps it; ``session_spent`` is the
cost spent since the queue last went to the back of the line; ``last_fetch_s`` is wall-clock
seconds of the queue's last finished URI.

Thread-safe: only reads Redis through the store's thread-safe connections.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from crawler.curi import CrawlURI
from crawler.frontier.frontier_report import QueueDetail
from crawler.frontier.redis import redis_conn
from crawler.frontier.workqueue import IN_PROCESS, INACTIVE, READY, RETIRED, SNOOZED

if TYPE_CHECKING:
    from crawler.frontier.redis.redis_store import RedisQueueStore
    from crawler.order.schema import FrontierConfig


def _text(raw: Any) -> str:
    return bytes(raw).decode("utf-8", "surrogateescape")


def _uri_of(member: Any) -> str:
    """The URI of a queue member (8-byte sort key + serialized CrawlURI); '' if none."""
    raw = bytes(member)
    if len(raw) <= 8:
        return ""
    try:
        return CrawlURI.from_bytes(raw[8:]).uri
    except ValueError:
        return ""


def _listed(store: RedisQueueStore) -> dict[int, dict[str, tuple[str, float, str | None]]]:
    """Per shard: qid -> (state, wake in s, parked on) of every queue not exhausted."""
    script = store.script("QUEUE_LIST")
    shards = range(store.shards)
    calls: list[tuple[Any, list[str], list[Any]]] = [
        (script, [f"{store.tag(s)}{k}" for k in ("r", "l", "x", "i", "n")], []) for s in shards
    ]
    rows = redis_conn.run_calls(store.client, calls)
    out: dict[int, dict[str, tuple[str, float, str | None]]] = {}
    for shard, row in zip(shards, rows, strict=True):
        now_ms, ready, leased, retired, ineligible, inactive = row
        now = int(now_ms)
        found: dict[str, tuple[str, float, str | None]] = {}
        for i in range(0, len(ready), 2):
            due_ms = float(ready[i + 1])
            wait_s = max(0.0, (due_ms - now) / 1000.0)
            found[_text(ready[i])] = (SNOOZED if wait_s > 0 else READY, wait_s, None)
        for qid in leased:
            found[_text(qid)] = (IN_PROCESS, 0.0, None)
        for qid in retired:
            found[_text(qid)] = (RETIRED, 0.0, None)
        for i in range(0, len(ineligible), 2):
            found[_text(ineligible[i])] = (INACTIVE, 0.0, None)
        for qid in inactive:
            found[_text(qid)] = (INACTIVE, 0.0, None)
        out[shard] = found
    # Parked queues: each shard's held set (``T k``) names its servers' park sets.
    client = store.client
    pipe = client.pipeline(transaction=False)
    for shard in shards:
        pipe.zrange(f"{store.tag(shard)}k", 0, -1)
    held = zip(shards, pipe.execute(), strict=True)
    parks = [(shard, key) for shard, keys in held for key in keys]
    if parks:
        pipe = client.pipeline(transaction=False)
        for _, key in parks:
            pipe.zrange(key, 0, -1)
        for (shard, key), qids in zip(parks, pipe.execute(), strict=True):
            server = _text(key).split("p:", 1)[1]
            for qid in qids:
                out[shard].setdefault(_text(qid), (SNOOZED, math.inf, server))
    return out


def redis_queue_details(
    store: RedisQueueStore, config: FrontierConfig, limit: int
) -> list[QueueDetail]:
    """The ``limit`` longest queues not exhausted, longest first (module docstring)."""
    listed = _listed(store)
    script = store.script("QUEUE_DETAIL")
    calls: list[tuple[Any, list[str], list[Any]]] = []
    order: list[list[tuple[str, tuple[str, float, str | None]]]] = []
    for shard, queues in listed.items():
        if not queues:
            continue
        t = store.tag(shard)
        items = sorted(queues.items())
        keys = [k for qid, _ in items for k in (f"{t}q:{qid}", f"{t}b")]
        calls.append((script, keys, [qid for qid, _ in items]))
        order.append(items)
    results = redis_conn.run_calls(store.client, calls) if calls else []
    details: list[QueueDetail] = []
    for items, rows in zip(order, results, strict=True):
        for (qid, listing), row in zip(items, rows, strict=True):
            state, wake_s, parked = listing
            size, head, spent, ok, failed, disregarded, cost, last_ms, enq, last_q, prec, sess = row
            details.append(
                QueueDetail(
                    key=qid,
                    state=state,
                    size=int(size),
                    precedence=int(prec) if int(prec) >= 0 else config.base_queue_precedence,
                    wake_in_s=wake_s,
                    session_spent=int(sess),
                    session_budget=config.balance_replenish_amount,
                    total_spent=int(spent),
                    total_budget=config.queue_total_budget,
                    succeeded=int(ok),
                    failed=int(failed),
                    disregarded=int(disregarded),
                    total_enqueues=int(enq),
                    last_cost=int(cost),
                    last_fetch_s=int(last_ms) / 1000.0,
                    last_queued=_uri_of(last_q),
                    last_peeked=_uri_of(head),
                    parked_on=parked,
                )
            )
    details.sort(key=lambda d: (-d.size, d.key))
    return details[:limit]
