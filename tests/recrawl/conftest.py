"""Fixtures of the recrawl tests: a fresh redis-server (the Redis tests' own) for --workers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.redis.redis_servers import REDIS_SERVER, RedisServer


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A fresh standalone redis-server, stopped after the test (skips if none is installed)."""
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed (make test installs it)")
    server = RedisServer(tmp_path / "redis").start()
    try:
        yield server
    finally:
        server.stop()
