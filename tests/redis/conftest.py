"""The Redis tests (real redis-servers on free loopback ports: the ``redis_server`` and
``redis_cluster`` fixtures of :mod:`support.redis_fixtures`) are marked ``redis`` automatically."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.redis_servers import RedisClusterServers, RedisServer

from crawler.continuity.redis_digest_index import RedisDigestIndex


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.redis)


@pytest.fixture(params=["redis", "redis-cluster"])
def digest_url_prefix(request: pytest.FixtureRequest) -> tuple[str, str]:
    """A Redis server's (or Cluster's) URL and a fresh namespace for a shared digest index."""
    if request.param == "redis":
        server: RedisServer = request.getfixturevalue("redis_server")
        return server.url, f"t{uuid.uuid4().hex[:12]}:"
    cluster: RedisClusterServers = request.getfixturevalue("redis_cluster")
    return cluster.url, f"t{uuid.uuid4().hex[:12]}:"


@pytest.fixture
def two_workers(
    digest_url_prefix: tuple[str, str],
) -> Iterator[tuple[RedisDigestIndex, RedisDigestIndex]]:
    """Two workers' connections to one shared digest index, closed after the test."""
    url, prefix = digest_url_prefix
    one, two = RedisDigestIndex.connect(url, prefix), RedisDigestIndex.connect(url, prefix)
    try:
        yield one, two
    finally:
        one.close()
        two.close()
