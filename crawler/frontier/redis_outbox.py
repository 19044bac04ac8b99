"""FinishOutbox: a worker's FINISH transitions, sent to Redis in pipelined batches by one thread.

``RedisFrontier.finished`` writes crawl.log first, then puts the URI's FINISH here and returns:
one thread sends whatever has accumulated as one pipeline (one round trip per Redis node), so a
busy worker pays a fraction of a round trip per URI instead of a whole one. Until its FINISH is
sent a URI's queue stays leased (no other worker can take the queue's next URI, politeness
holds); a worker killed meanwhile loses only leases, which the reaper hands back.

``on_sent`` runs after each batch (the frontier wakes a waiting thread: the queues just released
are likely ready). Thread-safety: ``put``/``pending``/``close`` from any thread; sending happens
on the outbox's own thread (and on the caller's in ``close``).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from crawler.frontier.redis_conn import RedisUnavailableError

if TYPE_CHECKING:
    from collections.abc import Callable

    from crawler.frontier.redis_store import RedisQueueStore

MAX_BATCH = 512

FinishItem = tuple[int, str, str, list[Any], str]
"""(shard, queue id, server, FINISH args after ``qid, worker``, URI for the log)."""


class FinishOutbox:
    """Batches FINISH script calls of one worker (see the module docstring)."""

    def __init__(
        self, store: RedisQueueStore, logger: Any, on_sent: Callable[[], None] | None = None
    ) -> None:
        self._store = store
        self._logger = logger
        self._on_sent = on_sent
        self._cond = threading.Condition()
        self._items: list[FinishItem] = []
        self._sending = 0
        self._closed = False
        self.lost_leases = 0
        self._thread = threading.Thread(target=self._run, name="finish-outbox", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def put(self, item: FinishItem) -> None:
        with self._cond:
            self._items.append(item)
            self._cond.notify_all()

    def pending(self) -> int:
        """FINISHes not yet acknowledged by Redis."""
        with self._cond:
            return len(self._items) + self._sending

    def wait_idle(self, timeout_s: float) -> bool:
        """Wait until everything put so far was sent; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._items and not self._sending, timeout_s)

    def close(self) -> None:
        """Send what is left, stop the thread. Idempotent."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout=30)
        with self._cond:
            rest, self._items = self._items, []
        if rest:
            self._send(rest)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._items and not self._closed:
                    self._cond.wait()
                if not self._items:
                    return
                batch = self._items[:MAX_BATCH]
                del self._items[:MAX_BATCH]
                self._sending = len(batch)
            try:
                self._send(batch)
                if self._on_sent is not None:
                    self._on_sent()
            finally:
                with self._cond:
                    self._sending = 0
                    self._cond.notify_all()

    def _send(self, batch: list[FinishItem]) -> None:
        try:
            held = self._store.finish_many([(s, q, srv, args) for s, q, srv, args, _ in batch])
        except RedisUnavailableError as exc:
            # Past the outage timeout: the leases expire and the URIs are crawled again.
            self._logger.error("finish_lost_redis_unavailable", uris=len(batch), error=str(exc))
            return
        except Exception:
            self._logger.exception("finish_failed", uris=len(batch))
            return
        for ok, item in zip(held, batch, strict=True):
            if not ok:
                self.lost_leases += 1
                self._logger.warning("lease_lost", uri=item[4], queue=item[1])
