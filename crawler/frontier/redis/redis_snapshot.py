"""Crawl-wide views of the shared frontier, read from every shard's counters in Redis.

* :func:`redis_snapshot`: the counts of all workers together for progress lines and reports
  (discovered from the uniq filter; retired queues and ineligible ones, as inactive, counted;
  no exhausted ones).
  Redis unreachable: an empty snapshot, so a progress line never stops the crawl.
* :func:`shared_frontier_empty`: two reads of every shard's counters that agree (no operation
  in between) with nothing queued or in process. Redis unreachable: not empty. The frontier
  checks its own local state (in flight, prerequisites, unsent FINISHes) before asking.

The Redis counterpart of :mod:`crawler.frontier.frontier_report`'s snapshot. Thread-safe: each
call only reads Redis (the store's connections are thread-safe) and holds no local state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crawler.frontier.frontier import FrontierSnapshot
from crawler.frontier.redis.redis_conn import RedisUnavailableError

if TYPE_CHECKING:
    from crawler.frontier.redis.redis_store import RedisQueueStore
    from crawler.uniq.uniq_filter import UriUniqFilter


def redis_snapshot(store: RedisQueueStore, uniq: UriUniqFilter[Any]) -> FrontierSnapshot:
    """Crawl-wide counts (all workers), from every shard's counters."""
    try:
        states = store.shard_states()
    except RedisUnavailableError:
        return FrontierSnapshot()
    total = {k: sum(s[k] for s in states) for k in states[0]} if states else {}
    queues = {
        "ready": total.get("ready", 0),
        "in_process": total.get("in_process", 0),
        "snoozed": total.get("snoozed", 0),
        "inactive": total.get("ineligible", 0) + total.get("inactive", 0),
        "retired": total.get("retired", 0),
        "exhausted": 0,
    }
    ineligible = total.get("ineligible", 0)
    by_precedence: dict[int, int] = {}
    if queues["inactive"]:
        try:
            by_precedence = store.inactive_by_precedence()
        except RedisUnavailableError:
            by_precedence = {}
    active = queues["ready"] + queues["in_process"] + queues["snoozed"]
    busy = queues["in_process"] + queues["snoozed"]
    return FrontierSnapshot(
        discovered=uniq.count(),
        queued=total.get("queued", 0),
        in_process=queues["in_process"],
        succeeded=total.get("succeeded", 0),
        failed=total.get("failed", 0),
        disregarded=total.get("disregarded", 0),
        queues=queues,
        total_queues=active + queues["inactive"] + queues["retired"],
        congestion=active / busy if busy else 0.0,
        inactive_by_precedence=by_precedence,
        ineligible=ineligible,
    )


def shared_frontier_empty(store: RedisQueueStore) -> bool:
    """Nothing queued or in process in any shard, by two agreeing reads (module docstring)."""
    try:
        first = store.shard_states()
        if any(s["queued"] or s["in_process"] for s in first):
            return False
        second = store.shard_states()
    except RedisUnavailableError:
        return False
    return all(
        a["ops"] == b["ops"] and not b["queued"] and not b["in_process"]
        for a, b in zip(first, second, strict=True)
    )
