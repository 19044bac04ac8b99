"""Metrics of the workers of a distributed crawl, from their heartbeats in Redis.

:func:`worker_families` turns :meth:`CrawlRegistry.workers
<crawler.frontier.redis.redis_registry.CrawlRegistry.workers>` (each worker's last heartbeat:
time, state, downloaded, busy threads) into ``crawler_worker_heartbeat_age_seconds``,
``crawler_worker_alive``, ``crawler_worker_downloaded`` and ``crawler_worker_busy_threads``,
labelled by worker id (one per worker: bounded). Every worker serves them for all, so one scrape
target left is enough to see a lost worker. Pure function: thread-safe.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from prometheus_client.core import GaugeMetricFamily


def worker_families(
    workers: Mapping[str, Mapping[str, Any]], now_s: float | None = None
) -> list[Any]:
    """The families of ``workers`` (worker id → last heartbeat document) at ``now_s``."""
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
    return [age, alive, downloaded, busy]
