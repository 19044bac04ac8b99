"""Every worker's heartbeat age and lease age in the metrics: what a Prometheus alert on a lost
worker reads."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import redis
from support.redis_servers import RedisServer

from crawler.curi import CrawlURI
from crawler.frontier import HostnameQueueAssignmentPolicy
from crawler.frontier.redis.redis_frontier import RedisFrontier
from crawler.frontier.redis.redis_registry import CrawlRegistry
from crawler.frontier.redis.redis_store import RedisQueueStore, RedisQueueStoreParams
from crawler.metrics.worker_metrics import worker_families
from crawler.order.schema import FrontierConfig, PolitenessConfig
from crawler.uniq.redis_uniq import RedisUriUniqFilter, RedisUriUniqFilterParams

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


def _worker_frontier(url: str, ns: str, worker: str, tmp_path: Path) -> RedisFrontier:
    store = RedisQueueStore(
        RedisQueueStoreParams(url=url, namespace=ns, worker_id=worker, shards=4, lease_s=60)
    )
    uniq = RedisUriUniqFilter(RedisUriUniqFilterParams(url=url, namespace=ns))
    config = FrontierConfig(
        politeness=PolitenessConfig(delay_factor=0, min_delay_ms=0, max_delay_ms=0)
    )
    frontier = RedisFrontier(store, HostnameQueueAssignmentPolicy(), uniq, config)
    frontier.open(tmp_path / worker)
    return frontier


def test_each_workers_leases_and_their_age(redis_server: RedisServer, tmp_path: Path) -> None:
    ns = "lease-metrics:"
    w1 = _worker_frontier(redis_server.url, ns, "w1", tmp_path)
    w2 = _worker_frontier(redis_server.url, ns, "w2", tmp_path)
    try:
        for host in ("a", "b", "c"):
            w1.schedule(CrawlURI(f"http://{host}.test/"))
        first = w1.next(5.0)
        second = w2.next(5.0)
        assert first is not None and second is not None

        leases = w1.worker_leases()
        seen_by_w2 = w2.worker_leases()  # crawl-wide, whoever reads
        assert {w: n for w, (n, _) in leases.items()} == {w: n for w, (n, _) in seen_by_w2.items()}
        assert leases["w1"].leases >= 1 and leases["w2"].leases >= 1
        assert all(mine.age_s < 5 for mine in leases.values())

        # w2's keeper stopped 40 s ago: its leases were last renewed then.
        client = redis.Redis.from_url(redis_server.url)
        now_ms = int(time.time() * 1000)
        for key in client.scan_iter(match=f"{{{ns}f*}}l"):
            for qid, _ in client.zrange(key, 0, -1, withscores=True):
                holder = client.hget(key[:-1] + b"c", qid)
                if holder.startswith(b"w2\n"):
                    client.zadd(key, {qid: now_ms + 20_000})
        samples = {
            (f.name, s.labels["worker"]): s.value
            for f in worker_families({}, leases=w1.worker_leases())
            for s in f.samples
        }
        assert 39 <= samples[("crawler_worker_lease_age_seconds", "w2")] < 45
        assert samples[("crawler_worker_lease_age_seconds", "w1")] < 5
        assert samples[("crawler_worker_leases", "w1")] == leases["w1"].leases
    finally:
        w2.close()
        w1.close()
