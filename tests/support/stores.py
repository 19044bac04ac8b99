"""The frontier's stores for the contract tests (``tests/contracts/``): memory, LevelDB, Redis and a
Redis Cluster, each behind the same small maker.

:data:`STORE_PARAMS` parametrises a fixture over the four (the Redis ones carry the ``redis``
marker on their own parameter, so ``-m "not redis"`` still runs the memory and LevelDB cases);
:class:`FrontierMaker` builds frontiers on one of them: a
:class:`~crawler.frontier.WorkQueueFrontier` over the memory or LevelDB store, a
:class:`~crawler.frontier.redis.redis_frontier.RedisFrontier` over a real redis-server (or
cluster) for the Redis ones, each with its own state directory or Redis namespace. Every frontier
uses the real clock (Redis keeps time by its own), so a contract test waits real, short delays.
:class:`FrontierHarness` wraps one frontier with the calls tests make: ``add``, ``take``, ``done``
(which, on Redis, waits until the finish reached Redis, so the next call sees it) and records
final dispositions and URI errors.

Not thread-safe: a maker and its harnesses belong to one test (the frontiers themselves are).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest

from crawler.curi import CrawlURI
from crawler.frontier import (
    HostnameQueueAssignmentPolicy,
    LevelDBQueueStore,
    MemoryQueueStore,
    QueueStore,
    WorkQueueFrontier,
)
from crawler.frontier.frontier import FrontierSnapshot
from crawler.frontier.redis.redis_frontier import RedisFrontier
from crawler.frontier.redis.redis_store import RedisQueueStore, RedisQueueStoreParams
from crawler.order.schema import FrontierConfig, PolitenessConfig
from crawler.uniq import LevelDBUriUniqFilter, MemoryUriUniqFilter
from crawler.uniq.redis_uniq import RedisUriUniqFilter, RedisUriUniqFilterParams

MEMORY, LEVELDB, REDIS, REDIS_CLUSTER = "memory", "leveldb", "redis", "redis-cluster"
STORE_PARAMS = [
    MEMORY,
    LEVELDB,
    pytest.param(REDIS, marks=pytest.mark.redis),
    pytest.param(REDIS_CLUSTER, marks=pytest.mark.redis),
]
"""Every store, for ``@pytest.fixture(params=STORE_PARAMS)``."""
PERSISTENT_STORE_PARAMS = STORE_PARAMS[1:]
"""The stores whose state outlives the frontier (all but memory)."""

NO_DELAY = PolitenessConfig(delay_factor=0, min_delay_ms=0, max_delay_ms=0, host_max_connections=0)
"""Politeness off (and no per-server cap): the default of :meth:`FrontierMaker.frontier`."""

_namespaces = itertools.count()


class AnyFrontier(Protocol):
    """What the contract tests call on every frontier."""

    def schedule(self, curi: CrawlURI) -> bool: ...
    def schedule_many(self, curis: list[CrawlURI]) -> list[bool]: ...
    def next(self, timeout_s: float) -> CrawlURI | None: ...
    def finished(self, curi: CrawlURI) -> bool: ...
    def snapshot(self) -> FrontierSnapshot: ...
    def is_empty(self) -> bool: ...
    def close(self) -> None: ...


class FrontierHarness:
    """One frontier under test, recording its final dispositions and URI errors."""

    def __init__(self, maker: FrontierMaker, state: str, **config: Any) -> None:
        self.finals: list[CrawlURI] = []
        self.listener: Callable[[CrawlURI], None] | None = None
        """Called after a final disposition is recorded (the frontier's ``on_final``)."""
        self.uri_errors: list[tuple[str | None, str, str]] = []
        self.frontier: AnyFrontier = maker.build(state, self, **config)

    def on_final(self, curi: CrawlURI) -> None:
        self.finals.append(curi)
        if self.listener is not None:
            self.listener(curi)

    def add(self, uri: str, **fields: Any) -> bool:
        return self.frontier.schedule(CrawlURI(uri, **fields))

    def take(self, timeout_s: float = 0.0) -> CrawlURI | None:
        return self.frontier.next(timeout_s)

    def done(self, curi: CrawlURI, status: int = 200, **fields: Any) -> bool:
        """Finish ``curi`` with ``status`` (and ``fields`` set on it); True if final."""
        curi.status = status
        for name, value in fields.items():
            setattr(curi, name, value)
        final = self.frontier.finished(curi)
        self.flush()
        return final

    def flush(self) -> None:
        """Wait until every finish so far reached the store (a no-op but on Redis)."""
        if isinstance(self.frontier, RedisFrontier):
            assert self.frontier.flush(10.0), "finishes did not reach Redis in 10 s"

    def drain(self, status: int = 200) -> list[str]:
        """Take and finish URIs with ``status`` until none is due; the URIs in order taken."""
        out = []
        while (curi := self.take()) is not None:
            out.append(curi.uri)
            self.done(curi, status)
        return out

    def close(self) -> None:
        self.frontier.close()


class FrontierMaker:
    """Frontiers (and bare queue stores) on one kind of store; closes them all at :meth:`close`.

    ``state`` names a frontier's state (a directory under ``tmp``, a Redis namespace): a second
    frontier made with the same ``state`` after the first closed resumes it."""

    def __init__(self, kind: str, tmp: Path, redis_url: str | None = None) -> None:
        self.kind = kind
        self.tmp = tmp
        self.redis_url = redis_url
        self._made: list[Any] = []
        self._prefix = f"ct{os.getpid()}x{next(_namespaces)}"

    @property
    def persists(self) -> bool:
        return self.kind != MEMORY

    @property
    def is_redis(self) -> bool:
        return self.redis_url is not None

    def frontier(self, state: str = "f", **config: Any) -> FrontierHarness:
        """A new frontier on this store (politeness off unless ``politeness`` is given);
        ``lease_s`` (Redis only) is how long a URI handed out stays leased to it; ``policy``
        a queue assignment policy (default: one queue per host)."""
        harness = FrontierHarness(self, state, **config)
        self._made.append(harness.frontier)
        return harness

    def build(self, state: str, harness: FrontierHarness, **config: Any) -> AnyFrontier:
        lease_s = config.pop("lease_s", 30.0)
        policy = config.pop("policy", None) or HostnameQueueAssignmentPolicy()
        config.setdefault("politeness", NO_DELAY)
        frontier_config = FrontierConfig(**config)
        parts: dict[str, Any] = {
            "on_final": harness.on_final,
            "uri_error": lambda base, msg, raw: harness.uri_errors.append((base, msg, raw)),
        }
        directory = self.tmp / state
        directory.mkdir(parents=True, exist_ok=True)
        frontier: AnyFrontier
        if self.redis_url is not None:
            ns = f"{self._prefix}{state}:"
            store = RedisQueueStore(
                RedisQueueStoreParams(
                    url=self.redis_url, namespace=ns, worker_id="w1", shards=4, lease_s=lease_s
                )
            )
            uniq = RedisUriUniqFilter(RedisUriUniqFilterParams(url=self.redis_url, namespace=ns))
            frontier = RedisFrontier(store, policy, uniq, frontier_config, **parts)
            frontier.open(directory)
        elif self.kind == LEVELDB:
            frontier = WorkQueueFrontier(
                LevelDBQueueStore(), policy, LevelDBUriUniqFilter(), frontier_config, **parts
            )
            frontier.open(directory)
        else:
            frontier = WorkQueueFrontier(
                MemoryQueueStore(), policy, MemoryUriUniqFilter(), frontier_config, **parts
            )
            frontier.open(directory)
        return frontier

    def queue_store(self, state: str = "s") -> QueueStore:
        """A bare, opened queue store (``state`` as for :meth:`frontier`)."""
        store: QueueStore
        if self.redis_url is not None:
            ns = f"{self._prefix}{state}:"
            store = RedisQueueStore(RedisQueueStoreParams(url=self.redis_url, namespace=ns))
        elif self.kind == LEVELDB:
            store = LevelDBQueueStore()
        else:
            store = MemoryQueueStore()
        directory = self.tmp / state
        directory.mkdir(parents=True, exist_ok=True)
        store.open(directory)
        self._made.append(store)
        return store

    def close(self) -> None:
        """Close everything made (closing twice is harmless)."""
        for made in reversed(self._made):
            made.close()
        self._made.clear()


def frontier_maker(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FrontierMaker]:
    """The body of a store fixture parametrised with :data:`STORE_PARAMS` (or
    :data:`PERSISTENT_STORE_PARAMS`): starts or joins the Redis servers the kind needs."""
    kind: str = request.param
    url = None
    if kind == REDIS:
        url = request.getfixturevalue("redis_server").url
    elif kind == REDIS_CLUSTER:
        url = request.getfixturevalue("redis_cluster").url
    maker = FrontierMaker(kind, tmp_path, url)
    try:
        yield maker
    finally:
        maker.close()
