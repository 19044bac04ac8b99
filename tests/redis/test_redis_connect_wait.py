"""Connecting to Redis at start: a first check fails at once with the URL in the message, while a
process joining a running crawl (a worker the launcher started) waits out a Redis restart."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from support.redis_servers import RedisServer

from crawler.frontier.redis import redis_conn
from crawler.frontier.redis.redis_registry import CrawlRegistry

pytestmark = [pytest.mark.timeout(60)]


def test_a_first_check_names_the_url_and_does_not_wait(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis")  # never started: nothing listens on its port
    with pytest.raises(redis_conn.RedisUnavailableError) as caught:
        redis_conn.connect(server.url)
    assert f"127.0.0.1:{server.port}" in str(caught.value)
    assert "is redis-server running there" in str(caught.value)


def test_a_joining_worker_waits_for_a_restarting_redis(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis").start()
    server.stop()  # down while the worker starts
    joined: list[CrawlRegistry] = []
    failed: list[redis_conn.RedisUnavailableError] = []

    def join() -> None:
        try:
            joined.append(CrawlRegistry(server.url, outage_timeout_s=30))
        except redis_conn.RedisUnavailableError as exc:  # reported below
            failed.append(exc)

    worker = threading.Thread(target=join, daemon=True)
    worker.start()
    time.sleep(0.5)
    assert worker.is_alive() and not failed, failed  # still waiting, not failed
    server.start()
    try:
        worker.join(30)
        assert not failed, failed
        assert joined and joined[0].client.ping()
        joined[0].close()
    finally:
        server.stop()
    # and past its wait it gives up with the same clear error
    with pytest.raises(redis_conn.RedisUnavailableError, match="is redis-server running"):
        redis_conn.connect(server.url, outage_timeout_s=0.3)


def test_a_workers_uniq_filter_waits_for_redis_when_told_to(tmp_path: Path) -> None:
    """``start_wait_s`` (set on every worker that joined a crawl through the registry)."""
    from crawler.uniq.redis_uniq import RedisUriUniqFilter, RedisUriUniqFilterParams

    server = RedisServer(tmp_path / "redis")
    uniq = RedisUriUniqFilter(
        RedisUriUniqFilterParams(url=server.url, namespace="c1:", start_wait_s=30)
    )
    opened: list[bool] = []
    opening = threading.Thread(target=lambda: opened.append(uniq.open(tmp_path) is None))
    opening.start()
    time.sleep(0.5)
    assert opening.is_alive()  # waiting, not failed
    server.start()
    try:
        opening.join(30)
        assert opened == [True]
        assert uniq.add_many(["http://a.example/"]) is not None
        uniq.close()
    finally:
        server.stop()


def test_worker_overrides_tell_the_shared_components_to_wait() -> None:
    from crawler.distributed.overrides import worker_overrides
    from crawler.order.loader import load_order

    root = Path(__file__).resolve().parents[2]
    order = load_order(root / "jobs" / "example" / "order.yaml", [])
    sets = worker_overrides(order, "redis://127.0.0.1:1/0", "ns:", "w1")
    assert "frontier.store.params.start_wait_s=600.0" in sets
    assert any("start_wait_s" in s and "uniq_filter" in s for s in sets)
