"""Pytest fixtures of real redis-servers, imported by ``tests/conftest.py`` so every suite has them.

``redis_server`` is a fresh standalone server per test (AOF on, ``appendfsync always``, so
:meth:`~support.redis_servers.RedisServer.restart` keeps every write); ``redis_cluster`` is one
3-master Redis Cluster per test session (per pytest-xdist worker), shared by every test that asks
for it: such tests keep to a namespace of their own. Both skip the test when redis-server is not
installed, and listen on free loopback ports with their files under pytest's temporary directory.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from support.redis_servers import REDIS_CLI, REDIS_SERVER, RedisClusterServers, RedisServer


def require_redis(*, cluster: bool = False) -> None:
    """Skip the calling test if redis-server (or, for a cluster, redis-cli) is missing."""
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed (make test installs it)")
    if cluster and REDIS_CLI is None:
        pytest.skip("redis-cli is not installed (make test installs it)")


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A fresh standalone redis-server, stopped after the test."""
    require_redis()
    server = RedisServer(tmp_path / "redis").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisClusterServers]:
    """A 3-master Redis Cluster for the session, stopped at its end."""
    require_redis(cluster=True)
    cluster = RedisClusterServers(tmp_path_factory.mktemp("cluster")).start()
    try:
        yield cluster
    finally:
        cluster.stop()
