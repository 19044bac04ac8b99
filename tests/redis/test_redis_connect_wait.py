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
