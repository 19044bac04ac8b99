"""Every worker's heartbeat age in the metrics: what a Prometheus alert on a lost worker reads."""

from __future__ import annotations

import json
import time

import pytest
from support.redis_servers import RedisServer

from crawler.frontier.redis.redis_registry import CrawlRegistry
from crawler.metrics.worker_metrics import worker_families

pytestmark = pytest.mark.timeout(30)


def test_heartbeats_become_per_worker_ages(redis_server: RedisServer) -> None:
    registry = CrawlRegistry(redis_server.url)
    entry = registry.start("metrics-crawl")
    ns = entry.namespace
    registry.heartbeat(ns, "w1", {"state": "RUNNING", "downloaded": 41, "busy_threads": 3})
    registry.heartbeat(ns, "w2", {"state": "RUNNING", "downloaded": 7, "busy_threads": 0})
    # w2 stopped beating two minutes ago (its process was killed)
    stale = json.loads(registry.client.hget(f"{ns}workers", "w2"))
    stale["time"] = time.time() - 120
    registry.client.hset(f"{ns}workers", "w2", json.dumps(stale))

    families = {f.name: f for f in worker_families(registry.workers(ns))}
    samples = {
        (name, s.labels["worker"]): s.value for name, f in families.items() for s in f.samples
    }
    assert samples[("crawler_worker_heartbeat_age_seconds", "w1")] < 10
    assert samples[("crawler_worker_heartbeat_age_seconds", "w2")] >= 119
    assert samples[("crawler_worker_alive", "w1")] == 1
    assert samples[("crawler_worker_alive", "w2")] == 0
    assert samples[("crawler_worker_downloaded", "w1")] == 41
    assert samples[("crawler_worker_busy_threads", "w1")] == 3
