"""Fixtures of the Redis tests: real redis-servers on free loopback ports.

``redis_server`` is a fresh standalone server per test (AOF on, ``appendfsync always``, so
:meth:`RedisServer.restart` keeps every write); ``redis_cluster`` is a 3-master Redis Cluster
shared by the tests of one module. Tests here are marked ``redis`` automatically.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from redis_servers import REDIS_SERVER, RedisClusterServers, RedisServer


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.redis)


def _require_redis() -> None:
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed (make test installs it)")


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A fresh standalone redis-server, stopped after the test."""
    _require_redis()
    server = RedisServer(tmp_path / "redis").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisClusterServers]:
    """A 3-master Redis Cluster for the module's tests, stopped afterwards."""
    _require_redis()
    cluster = RedisClusterServers(tmp_path_factory.mktemp("cluster")).start()
    try:
        yield cluster
    finally:
        cluster.stop()
