"""RedisMetricsView: what the metrics read from the shared frontier in Redis, crawl-wide.

* :meth:`RedisMetricsView.held_servers`: the servers the server cap holds (queues parked on them
  for want of a free connection: the ``T p:<srv>`` sets of :mod:`~crawler.frontier.redis.
  redis_scripts`) and how many queues are parked: each shard's held set (``T k``, kept by the
  scripts), one pipelined read, on one redis-server or a Cluster.
* :meth:`RedisMetricsView.worker_leases`: per worker, the leases it holds (``T l`` and ``T c``
  of every shard) and the age of its stalest one: the seconds since the worker took or last
  renewed it. A live worker's keeper renews every ``lease_s / 4``, so the age stays under about
  that; a worker whose keeper stopped sees it grow until ``lease_s``, when the lease expires and
  another worker reaps it. The age assumes every worker runs with this worker's ``lease_s``
  (they share one order).

Both run off the crawl's hot path (a scrape, the status every few seconds) and cost one or two
round trips. Neither waits out a Redis outage: the error goes to the caller (a scrape skips
the reading).
Thread-safe: only reads Redis through the store's thread-safe connections.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from crawler.frontier.redis.redis_store import RedisQueueStore


class WorkerLeases(NamedTuple):
    """One worker's leases: how many, and seconds since its stalest was taken or renewed."""

    leases: int
    age_s: float


class RedisMetricsView:
    """Crawl-wide readings of ``store`` for metrics (see the module docstring)."""

    def __init__(self, store: RedisQueueStore) -> None:
        self._store = store

    def held_servers(self) -> tuple[int, int] | None:
        """``(servers with queues parked for a free connection, queues parked)``."""
        st = self._store
        pipe = st.client.pipeline(transaction=False)
        for n in range(st.shards):
            pipe.zrange(f"{st.tag(n)}k", 0, -1, withscores=True)
        rows = pipe.execute()
        servers = sum(len(r) for r in rows)
        queues = sum(int(score) for r in rows for _, score in r)
        return servers, queues

    def worker_leases(self) -> dict[str, WorkerLeases]:
        """Worker id -> its :class:`WorkerLeases`, for every worker holding a lease now."""
        st = self._store
        client = st.client
        lease_s = st.lease_ms / 1000.0

        def read() -> dict[str, WorkerLeases]:
            pipe = client.pipeline(transaction=False)
            for n in range(st.shards):
                tag = st.tag(n)
                pipe.zrange(f"{tag}l", 0, -1, withscores=True)
                pipe.hgetall(f"{tag}c")
            rows = pipe.execute()
            now_s = _redis_now_s(client) if st.one_node else time.time()
            count: dict[str, int] = {}
            stalest: dict[str, float] = {}
            for n in range(0, len(rows), 2):
                expiries: list[tuple[Any, float]] = rows[n]
                holders: dict[Any, Any] = rows[n + 1]
                for qid, expiry_ms in expiries:
                    holder = holders.get(qid)
                    if holder is None:
                        continue
                    worker = bytes(holder).split(b"\n", 1)[0].decode("utf-8", "replace")
                    age = max(0.0, lease_s - (float(expiry_ms) / 1000.0 - now_s))
                    count[worker] = count.get(worker, 0) + 1
                    stalest[worker] = max(stalest.get(worker, 0.0), age)
            return {w: WorkerLeases(count[w], stalest[w]) for w in sorted(count)}

        return read()


def _redis_now_s(client: Any) -> float:
    """Redis's clock (the one leases are set by), in seconds."""
    secs, micros = client.time()
    return float(secs) + float(micros) / 1e6
