"""Metrics of the workers of a distributed crawl, from their heartbeats in Redis.

:func:`worker_families` turns :meth:`CrawlRegistry.workers
<crawler.frontier.redis.redis_registry.CrawlRegistry.workers>` (each worker's last heartbeat:
time, state, downloaded, busy threads) into ``crawler_worker_heartbeat_age_seconds``,
``crawler_worker_alive``, ``crawler_worker_downloaded`` and ``crawler_worker_busy_threads``, and
the leases each holds in the shared frontier (:meth:`RedisFrontier.worker_leases
<crawler.frontier.redis.redis_frontier.RedisFrontier.worker_leases>`) into
``crawler_worker_leases`` and ``crawler_worker_lease_age_seconds`` (seconds since the worker
took or renewed its stalest lease; 0 with none), labelled by worker id (one per worker:
bounded). Every worker serves them for all, so one scrape target left is enough to see a lost
worker. Pure function: thread-safe.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from prometheus_client.core import GaugeMetricFamily

if TYPE_CHECKING:
    from crawler.frontier.redis.redis_metrics_view import WorkerLeases


def worker_families(
    workers: Mapping[str, Mapping[str, Any]],
    now_s: float | None = None,
    leases: Mapping[str, WorkerLeases] | None = None,
) -> list[Any]:
    """The families of ``workers`` (worker id → last heartbeat document) at ``now_s``, with
    ``leases`` (worker id → its leases; None: not read, no lease families)."""
    now = time.time() if now_s is None else now_s
    age = GaugeMetricFamily(
        "crawler_worker_heartbeat_age_seconds",
        "seconds since each worker's last heartbeat",
        labels=["worker"],
    )
    alive = GaugeMetricFamily(
        "crawler_worker_alive", "1 while a worker beats and has not finished", labels=["worker"]
    )
    downloaded = GaugeMetricFamily(
        "crawler_worker_downloaded", "URIs each worker downloaded", labels=["worker"]
    )
    busy = GaugeMetricFamily(
        "crawler_worker_busy_threads", "fetches in flight per worker", labels=["worker"]
    )
    for wid, doc in sorted(workers.items()):
        age.add_metric([wid], max(0.0, now - float(doc.get("time", 0) or 0)))
        alive.add_metric([wid], 1 if doc.get("alive") else 0)
        downloaded.add_metric([wid], float(doc.get("downloaded", 0) or 0))
        busy.add_metric([wid], float(doc.get("busy_threads", 0) or 0))
    families = [age, alive, downloaded, busy]
    if leases is not None:
        held = GaugeMetricFamily(
            "crawler_worker_leases", "queues each worker holds a lease on", labels=["worker"]
        )
        lease_age = GaugeMetricFamily(
            "crawler_worker_lease_age_seconds",
            "seconds since each worker took or renewed its stalest lease (0: none)",
            labels=["worker"],
        )
        for wid in sorted(set(workers) | set(leases)):
            mine = leases.get(wid)
            held.add_metric([wid], mine.leases if mine is not None else 0)
            lease_age.add_metric([wid], mine.age_s if mine is not None else 0.0)
        families += [held, lease_age]
    return families
