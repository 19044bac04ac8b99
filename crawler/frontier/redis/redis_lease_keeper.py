"""LeaseKeeper: keeps this worker's Redis leases alive and hands back those of dead workers.

A URI leased to this worker (:class:`InFlight`: its shard, queue id, server and stored member)
stays in the frontier's in-flight map from the exchange's CLAIM until ``finished`` sends its
FINISH. The keeper's background thread, every ``lease_s / 4``:

* renews the lease of every queue this worker holds a URI of (one round trip per shard group);
* reaps any worker's expired leases (a killed worker's URIs go back to the head of their
  queues) and, when it found some, pokes the exchange so waiting threads look for them now.

A Redis outage is logged and waited out. :meth:`release` builds, at close, the FINISH items that
give back URIs leased ahead and never handed out, so they return to their queues at once rather
than when their lease expires.

Heritrix has no counterpart (one process owns its frontier). Thread-safety: reads the in-flight
map under the frontier's lock; the thread ends when the frontier's ``closed`` event is set.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from crawler.frontier.redis.redis_conn import RedisUnavailableError
from crawler.frontier.redis.redis_leases import Lease, finish_args

if TYPE_CHECKING:
    from crawler.curi import CrawlURI
    from crawler.frontier.redis.redis_exchange import FinishItem, RedisExchange
    from crawler.frontier.redis.redis_store import RedisQueueStore


class InFlight:
    """Where the lease of a URI leased to this worker is (see the module docstring)."""

    __slots__ = ("lease", "leased_s", "leased_wall_s", "member", "qid", "server", "shard")

    def __init__(
        self,
        shard: int,
        qid: str,
        server: str,
        member: bytes,
        leased_s: float = 0.0,
        lease: Lease | None = None,
        leased_wall_s: float = 0.0,
    ) -> None:
        self.shard = shard
        self.qid = qid
        self.server = server
        self.member = member
        self.leased_s = leased_s
        """When the worker got the lease (its frontier clock's monotonic seconds)."""
        self.lease = lease
        """The lease as Redis gave it (due time and politeness delay, for the lateness guard)."""
        self.leased_wall_s = leased_wall_s
        """When the worker got the lease (its frontier clock's wall-clock seconds)."""


class LeaseKeeper:
    """Renews this worker's leases and reaps expired ones (see the module docstring)."""

    def __init__(
        self,
        store: RedisQueueStore,
        exchange: RedisExchange,
        lock: threading.Lock,
        in_flight: dict[str, InFlight],
        closed: threading.Event,
        logger: Any,
        *,
        max_conn: int,
    ) -> None:
        self._store = store
        self._exchange = exchange
        self._lock = lock
        self._in_flight = in_flight
        self._closed = closed
        self._logger = logger
        self._max_conn = max_conn
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the background thread (once, when the frontier opens)."""
        self._thread = threading.Thread(target=self._run, name="lease-keeper", daemon=True)
        self._thread.start()

    def join(self, timeout_s: float) -> None:
        """Wait for the thread to end (after ``closed`` is set); no-op if never started."""
        if self._thread is not None:
            self._thread.join(timeout=timeout_s)

    def release(self, unused: Iterable[CrawlURI]) -> list[FinishItem]:
        """FINISH items that put ``unused`` (leased, never handed out) back at the head of their
        queues; each leaves the in-flight map."""
        releases: list[FinishItem] = []
        for curi in unused:
            entry = self._in_flight.pop(curi.uri)
            args = finish_args(entry.member, "r", new_member=entry.member)
            releases.append((entry.shard, entry.qid, entry.server, args, curi.uri))
        return releases

    def _run(self) -> None:
        period_s = max(0.05, self._store.params.lease_s / 4)
        while not self._closed.wait(period_s):
            with self._lock:
                held: dict[int, list[str]] = {}
                for entry in self._in_flight.values():
                    held.setdefault(entry.shard, []).append(entry.qid)
            try:
                if held:
                    self._store.leases.renew(held)
                reaped = self._store.leases.reap(self._max_conn)
                if reaped:
                    self._logger.warning("expired_leases_reaped", queues=reaped)
                    with self._lock:
                        self._exchange.poke(fresh=True)
            except RedisUnavailableError as exc:
                self._logger.error("lease_keeper_redis_unavailable", error=str(exc))
            except Exception:
                if self._closed.is_set():
                    return
                self._logger.exception("lease_keeper_failed")
