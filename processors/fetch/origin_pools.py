"""OriginPools: an httpx transport keeping one connection pool per origin.

httpcore's pool walks every connection it holds on each request and on each response close,
checking expiry and asking the socket whether the server hung up (a ``poll`` system call per
idle connection, each one a release of the GIL). One pool for a crawl's many hosts makes that
walk as long as the crawl is wide; one pool per origin (scheme, host, port) keeps it to the
origin's own few connections, and spreads the pool locks so ToeThreads fetching different
hosts never wait for each other. Connection reuse is unchanged: an origin's connections are
only ever useful to that origin.

Pools are made on first use by ``factory`` (an ``httpx.HTTPTransport`` with the fetcher's
limits, TLS context and socket backend). When more than ``max_origins`` pools exist, those
with no request in flight that were used longest ago are closed (their idle keep-alive
connections go), down to three quarters of the cap.

Thread-safety: ``handle_request`` takes no lock on the common path (a dict read); pool
creation and eviction run under one lock. A response keeps its pool's connection until it is
closed, and a pool with a connection in use is never evicted.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import httpx


class OriginPools(httpx.BaseTransport):
    """Dispatches each request to its origin's own ``httpx.HTTPTransport``."""

    def __init__(self, factory: Callable[[], httpx.HTTPTransport], max_origins: int = 1024):
        self._factory = factory
        self._max_origins = max(1, max_origins)
        self._pools: dict[tuple[bytes, bytes, int | None], httpx.HTTPTransport] = {}
        self._used: dict[tuple[bytes, bytes, int | None], float] = {}
        self._lock = threading.Lock()
        self._closed = False

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        origin = (url.raw_scheme, url.raw_host, url.port)
        pool = self._pools.get(origin)
        if pool is None:
            pool = self._add(origin)
        self._used[origin] = time.monotonic()
        return pool.handle_request(request)

    def _add(self, origin: tuple[bytes, bytes, int | None]) -> httpx.HTTPTransport:
        with self._lock:
            if self._closed:
                raise httpx.TransportError("the fetcher is closed")
            pool = self._pools.get(origin)
            if pool is None:
                if len(self._pools) >= self._max_origins:
                    self._evict_locked()
                pool = self._pools[origin] = self._factory()
            return pool

    def _evict_locked(self) -> None:
        """Close the least recently used pools with nothing in flight (lock held)."""
        keep = self._max_origins * 3 // 4
        by_age = sorted(self._pools, key=lambda o: self._used.get(o, 0.0))
        for origin in by_age:
            if len(self._pools) <= keep:
                break
            pool = self._pools[origin]
            if _busy(pool):
                continue
            del self._pools[origin]
            self._used.pop(origin, None)
            pool.close()

    def pool_count(self) -> int:
        """How many origins have a pool now."""
        return len(self._pools)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            pools, self._pools = list(self._pools.values()), {}
            self._used.clear()
        for pool in pools:
            pool.close()


def _busy(transport: httpx.HTTPTransport) -> bool:
    """Whether a connection of ``transport``'s pool is serving a request now."""
    pool: Any = getattr(transport, "_pool", None)
    connections = getattr(pool, "connections", ())
    return any(not (c.is_idle() or c.is_closed()) for c in connections)
