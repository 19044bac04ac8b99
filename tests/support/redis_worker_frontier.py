"""``worker_frontier``: one worker's RedisFrontier on a real redis-server, politeness off.

For tests that play several workers of one crawl in one process: each call with the same
``namespace`` and another ``worker_id`` is another worker sharing the frontier and the uniq
filter. URIs reported unusable are collected in the frontier's ``errors`` list.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crawler.frontier.assignment import HostnameQueueAssignmentPolicy
from crawler.frontier.redis.redis_frontier import RedisFrontier
from crawler.frontier.redis.redis_store import RedisQueueStore, RedisQueueStoreParams
from crawler.order.schema import FrontierConfig, PolitenessConfig
from crawler.uniq.redis_uniq import RedisUriUniqFilter, RedisUriUniqFilterParams


def worker_frontier(
    url: str,
    worker_id: str,
    namespace: str,
    uniq_class: type[RedisUriUniqFilter] = RedisUriUniqFilter,
) -> Any:
    """An open RedisFrontier of worker ``worker_id`` (4 shards, no politeness delay)."""
    errors: list[str] = []
    pol = PolitenessConfig(delay_factor=0, min_delay_ms=0, max_delay_ms=0, host_max_connections=0)
    store = RedisQueueStoreParams(url=url, namespace=namespace, worker_id=worker_id, shards=4)
    frontier = RedisFrontier(
        RedisQueueStore(store),
        HostnameQueueAssignmentPolicy(),
        uniq_class(RedisUriUniqFilterParams(url=url, namespace=namespace)),
        FrontierConfig(politeness=pol),
        uri_error=lambda via, message, uri: errors.append(uri),
    )
    frontier.open(Path("."))
    frontier.errors = errors  # type: ignore[attr-defined]
    return frontier
