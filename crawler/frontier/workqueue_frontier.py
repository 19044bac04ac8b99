"""WorkQueueFrontier: Heritrix's work-queue frontier over a pluggable QueueStore.

One work queue per queue key (QueueAssignmentPolicy); each queue hands out one URI at a time and
is snoozed for the URI's politeness delay after it finishes. URIs live in the QueueStore, sorted
per queue by directive, precedence, then FIFO; the in-memory queue objects (states, counters,
ready FIFO, snooze heap, inactive FIFO) can be rebuilt from the store's metadata on ``open``.

Flow (heritrix.md §5):

* ``schedule(curi)``: canonicalize (``curi.canonical``) -> uniq filter (``force_fetch`` records
  without asking) -> queue key (a ``P`` hop joins the queue of its in-flight via, one directive
  higher so it sorts first) -> ordinal (``curi.ordinal``) -> store. A new or exhausted queue
  becomes *inactive*; inactive queues are activated only when no queue is ready ("hold queues").
* ``next(timeout_s)``: wake due snoozed queues, take the first ready (else activate an inactive)
  queue, retire it if over ``queue_total_budget``, send it to the back of the inactive FIFO if it
  spent ``balance_replenish_amount`` this session and others wait; hand out its head.
* ``finished(curi)``: ``fetch_attempts += 1``; a retryable status with attempts left stays at the
  head (``reset_for_retry()``) and the queue snoozes ``curi.retry_delay_s``; otherwise the URI is
  removed, counted, the queue snoozes ``curi.politeness_delay_ms`` (``min_delay_ms`` if unset)
  and ``on_final(curi)`` runs (crawl.log, stats) outside the lock.

Reads/writes on the CrawlURI: reads uri, via, hop_path, force_fetch, directive, precedence, status,
retry_delay_s, politeness_delay_ms; writes canonical, queue_key, ordinal, fetch_attempts (and
directive/precedence of a prerequisite). Thread-safe: one Condition; store I/O stays under it,
canonicalization, the uniq check and serialization do not.
"""

from __future__ import annotations

import heapq
import itertools
import json
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog

from crawler.clock import Clock, SystemClock
from crawler.curi import RETRYABLE_STATUSES, CrawlURI, FetchStatus
from crawler.frontier.assignment import QueueAssignmentPolicy, split_authority
from crawler.frontier.frontier import FrontierSnapshot
from crawler.frontier.queue_store import QueueStore, StoreBatch, sort_key
from crawler.frontier.workqueue import (
    EXHAUSTED,
    IN_PROCESS,
    INACTIVE,
    META_PREFIX,
    READY,
    RETIRED,
    SNOOZED,
    STATES,
    WorkQueue,
)
from crawler.order.schema import FrontierConfig
from crawler.uniq.uniq_filter import UriUniqFilter
from crawler.urls import canonicalize

FRONTIER_META = "frontier"
ORDINAL_BLOCK = 4096
"""Ordinals are reserved in the store this many at a time (gaps after a restart are harmless)."""
_NEEDS_HOST = frozenset({"http", "https", "ftp", "dns"})
URI_COST = 1
"""Unit cost per URI (Heritrix's default UnitCostAssignmentPolicy)."""


class WorkQueueFrontier:
    """The Frontier protocol over a QueueStore. Build with the parts unopened, then :meth:`open`."""

    def __init__(
        self,
        store: QueueStore,
        policy: QueueAssignmentPolicy[Any],
        uniq: UriUniqFilter[Any],
        config: FrontierConfig,
        *,
        clock: Clock | None = None,
        on_final: Callable[[CrawlURI], None] | None = None,
        logger: Any = None,
        uri_error: Callable[[str | None, str, str], None] | None = None,
    ) -> None:
        self._store = store
        self._policy = policy
        self._uniq = uniq
        self._config = config
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._on_final = on_final
        self._logger: Any = logger if logger is not None else structlog.get_logger("frontier")
        self._uri_error = uri_error
        self._max_retries = config.retries.max_retries
        self._min_delay_ms = config.politeness.min_delay_ms
        self._balance = config.balance_replenish_amount
        self._total_budget = config.queue_total_budget
        self._penalty = config.error_penalty_amount

        self._cond = threading.Condition(threading.Lock())
        self._queues: dict[str, WorkQueue] = {}
        self._ready: deque[WorkQueue] = deque()
        self._inactive: deque[WorkQueue] = deque()
        self._snoozed: list[tuple[float, int, WorkQueue]] = []
        self._snooze_seq = itertools.count()
        self._in_flight: dict[str, WorkQueue] = {}
        self._state_counts = dict.fromkeys(STATES, 0)
        self._ordinals = itertools.count(1)
        self._ordinal_reserved = 0
        self._queued = 0
        self._finishing = 0
        self._succeeded = 0
        self._failed = 0
        self._disregarded = 0
        self._opened = False
        self._closed = False

    # ------------------------------------------------------------ lifecycle
    def open(self, state_dir: Path) -> None:
        """Open the store and uniq filter under ``state_dir`` and rebuild queues from the store."""
        with self._cond:
            if self._opened:
                return
            self._store.open(state_dir)
            self._uniq.open(state_dir)
            raw = self._store.get_meta(FRONTIER_META)
            if raw:
                saved = json.loads(raw)
                self._ordinal_reserved = int(saved["ordinal_reserved"])
                self._ordinals = itertools.count(max(1, self._ordinal_reserved))
                self._succeeded = int(saved["succeeded"])
                self._failed = int(saved["failed"])
                self._disregarded = int(saved["disregarded"])
            for name, value in self._store.scan_meta(META_PREFIX):
                q = WorkQueue.from_meta(name[len(META_PREFIX) :], value)
                self._queues[q.key] = q
                self._state_counts[q.state] += 1
                if q.state == READY:
                    self._ready.append(q)
                elif q.state == INACTIVE:
                    self._inactive.append(q)
                if q.state != RETIRED:
                    self._queued += q.size
            self._opened = True
            if self._queues:
                self._logger.info(
                    "frontier_reopened", queues=len(self._queues), queued=self._queued
                )

    def close(self) -> None:
        """Save counters, wake blocked ``next()`` callers (they get None), close the parts."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            if self._opened:
                self._store.write(StoreBatch(meta={FRONTIER_META: self._counters_meta()}))
            self._cond.notify_all()
        self._store.close()
        self._uniq.close()

    def _counters_meta(self) -> bytes:
        return json.dumps(
            {
                "ordinal_reserved": self._ordinal_reserved,
                "succeeded": self._succeeded,
                "failed": self._failed,
                "disregarded": self._disregarded,
            }
        ).encode()

    # ------------------------------------------------------------ schedule
    def schedule(self, curi: CrawlURI) -> bool:
        """Queue ``curi`` unless already seen (see the module docstring). True if queued."""
        if self._closed:
            return False
        uri = curi.uri
        try:
            canonical = canonicalize(uri)
            scheme, authority, _ = split_authority(canonical)
            if not scheme or (not authority and scheme in _NEEDS_HOST):
                raise ValueError(f"no {'host' if scheme else 'scheme'} in {uri[:200]!r}")
        except ValueError as exc:
            if self._uri_error is not None:
                self._uri_error(curi.via, str(exc), uri)
            return False
        curi.canonical = canonical
        if curi.force_fetch:
            self._uniq.add_force(canonical)
        elif not self._uniq.add(canonical):
            return False
        return self._enqueue(curi)

    def _enqueue(self, curi: CrawlURI) -> bool:
        key = curi.queue_key
        if curi.via and curi.hop_path.endswith("P"):
            # The via is in flight on the calling thread, so its entry cannot change under us.
            via_q = self._in_flight.get(curi.via)
            if via_q is not None:
                key = via_q.key
                _sort_ahead_of(curi, via_q.current_key)
        if not key:
            key = self._policy.key(curi)
        curi.queue_key = key
        ordinal = next(self._ordinals)
        curi.ordinal = ordinal
        skey = sort_key(curi.directive, curi.precedence, ordinal)
        value = curi.to_bytes()
        with self._cond:
            if self._closed:
                return False
            q = self._queues.get(key)
            if q is None:
                q = self._queues[key] = WorkQueue(key)
                self._state_counts[EXHAUSTED] += 1
            q.size += 1
            if q.state == EXHAUSTED:
                self._set_state(q, INACTIVE)
                self._inactive.append(q)
                self._cond.notify()
            if q.state != RETIRED:
                self._queued += 1
            batch = StoreBatch(puts=[(key, skey, value)], meta={q.meta_name: q.to_meta()})
            if ordinal >= self._ordinal_reserved:
                self._ordinal_reserved = ordinal + ORDINAL_BLOCK
                batch.meta[FRONTIER_META] = self._counters_meta()
            self._store.write(batch)
        return True

    # ---------------------------------------------------------------- next
    def next(self, timeout_s: float) -> CrawlURI | None:
        """The head of a queue that may be fetched now; blocks up to ``timeout_s`` for one."""
        deadline = time.monotonic() + max(0.0, timeout_s)
        with self._cond:
            while not self._closed:
                curi = self._next_locked()
                if curi is not None:
                    if self._ready:
                        self._cond.notify()
                    return curi
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                if self._snoozed:
                    until_wake = self._snoozed[0][0] - self._clock.monotonic()
                    remaining = min(remaining, max(until_wake, 0.001))
                self._cond.wait(remaining)
        return None

    def _next_locked(self) -> CrawlURI | None:
        now = self._clock.monotonic()
        snoozed = self._snoozed
        while snoozed and snoozed[0][0] <= now:
            wake_s, _, q = heapq.heappop(snoozed)
            if q.state == SNOOZED and q.wake_s == wake_s:
                self._wake(q)
        ready, inactive = self._ready, self._inactive
        while True:
            if ready:
                q = ready.popleft()
                if q.state != READY:
                    continue
            elif inactive:
                q = inactive.popleft()
                if q.state != INACTIVE:
                    continue
                q.session_spent = 0
                self._set_state(q, READY)
            else:
                return None
            if q.size <= 0:
                self._set_state(q, EXHAUSTED)
                continue
            if 0 <= self._total_budget <= q.total_spent:
                self._retire(q)
                continue
            if 0 < self._balance <= q.session_spent and inactive:
                self._set_state(q, INACTIVE)
                inactive.append(q)
                continue
            head = self._store.head(q.key)
            if head is None:
                self._logger.warning("queue_store_mismatch", queue=q.key, size=q.size)
                self._queued -= q.size
                q.size = 0
                self._set_state(q, EXHAUSTED)
                continue
            q.current_key, value = head
            curi = CrawlURI.from_bytes(value)
            curi.queue_key = q.key
            q.current = curi
            self._in_flight[curi.uri] = q
            self._set_state(q, IN_PROCESS)
            return curi

    # ------------------------------------------------------------ finished
    def finished(self, curi: CrawlURI) -> bool:
        """Retry ``curi`` (False) or record its final disposition and call ``on_final`` (True)."""
        curi.fetch_attempts += 1
        status = curi.status
        if status in RETRYABLE_STATUSES and curi.fetch_attempts < self._max_retries:
            delay_s = max(0.0, curi.retry_delay_s)
            curi.reset_for_retry()
            value = curi.to_bytes()
            with self._cond:
                q = self._owner(curi)
                if status != FetchStatus.DEFERRED:
                    q.total_spent += URI_COST
                    q.session_spent += URI_COST
                self._release(q, curi)
                self._snooze(q, delay_s)
                self._store.write(
                    StoreBatch(
                        puts=[(q.key, q.current_key, value)], meta={q.meta_name: q.to_meta()}
                    )
                )
            return False
        delay_ms = curi.politeness_delay_ms
        if delay_ms < 0:
            delay_ms = self._min_delay_ms
        with self._cond:
            q = self._owner(curi)
            batch = StoreBatch(deletes=[(q.key, q.current_key)])
            q.size -= 1
            self._queued -= 1
            if curi.is_disregarded:
                q.disregarded += 1
                self._disregarded += 1
            else:
                cost = URI_COST
                if curi.is_success:
                    q.succeeded += 1
                    self._succeeded += 1
                else:
                    q.failed += 1
                    self._failed += 1
                    cost += self._penalty
                q.total_spent += cost
                q.session_spent += cost
            self._release(q, curi)
            self._snooze(q, delay_ms / 1000.0)
            batch.meta[q.meta_name] = q.to_meta()
            batch.meta[FRONTIER_META] = self._counters_meta()
            self._store.write(batch)
            self._finishing += 1
        try:
            if self._on_final is not None:
                self._on_final(curi)
        except Exception:
            self._logger.exception("frontier_on_final_failed", uri=curi.uri)
        finally:
            with self._cond:
                self._finishing -= 1
                if not self._finishing and not self._queued:
                    self._cond.notify_all()
        return True

    def _owner(self, curi: CrawlURI) -> WorkQueue:
        q = self._queues.get(curi.queue_key)
        if q is None or q.current is not curi:
            raise ValueError(f"{curi!r} was not handed out by this frontier or is already finished")
        return q

    def _release(self, q: WorkQueue, curi: CrawlURI) -> None:
        q.current = None
        if self._in_flight.get(curi.uri) is q:
            del self._in_flight[curi.uri]

    # -------------------------------------------------------- queue states
    def _set_state(self, q: WorkQueue, state: str) -> None:
        counts = self._state_counts
        counts[q.state] -= 1
        counts[state] += 1
        q.state = state

    def _snooze(self, q: WorkQueue, delay_s: float) -> None:
        if delay_s <= 0:
            self._wake(q)
            return
        q.wake_s = self._clock.monotonic() + delay_s
        self._set_state(q, SNOOZED)
        heapq.heappush(self._snoozed, (q.wake_s, next(self._snooze_seq), q))
        # A waiter may be sleeping until a later wake time; let one recompute its wait.
        self._cond.notify()

    def _wake(self, q: WorkQueue) -> None:
        if q.size > 0:
            self._set_state(q, READY)
            self._ready.append(q)
            self._cond.notify()
        else:
            self._set_state(q, EXHAUSTED)

    def _retire(self, q: WorkQueue) -> None:
        self._queued -= q.size
        self._set_state(q, RETIRED)
        self._store.write(StoreBatch(meta={q.meta_name: q.to_meta()}))
        self._logger.info("queue_retired", queue=q.key, queued=q.size, spent=q.total_spent)

    # ------------------------------------------------------------- reports
    def is_empty(self) -> bool:
        """Nothing queued (outside retired queues), nothing in process or being finished."""
        with self._cond:
            return not self._queued and not self._finishing

    def snapshot(self) -> FrontierSnapshot:
        """Counts for progress-statistics.log and reports (congestion as heritrix.md §3)."""
        with self._cond:
            counts = dict(self._state_counts)
            queued = self._queued
            succeeded, failed, disregarded = self._succeeded, self._failed, self._disregarded
            queues = list(self._queues.values())
        discovered = self._uniq.count()
        depths = [(q.key, q.size) for q in queues if q.state != EXHAUSTED and q.state != RETIRED]
        busy = counts[IN_PROCESS] + counts[SNOOZED]
        eligible = busy + counts[READY] + counts[INACTIVE]
        congestion = eligible / busy if busy else (math.inf if eligible else math.nan)
        return FrontierSnapshot(
            discovered=discovered,
            queued=queued,
            in_process=counts[IN_PROCESS],
            succeeded=succeeded,
            failed=failed,
            disregarded=disregarded,
            queues=counts,
            total_queues=len(queues),
            max_depth=max((size for _, size in depths), default=-1),
            avg_depth=queued / len(depths) if depths else 0.0,
            congestion=congestion,
            longest=tuple(heapq.nlargest(10, depths, key=lambda kv: kv[1])),
        )


def _sort_ahead_of(curi: CrawlURI, via_key: int) -> None:
    """Give a prerequisite the directive one above its via's so it sorts ahead of it.

    A via already at HIGHEST (0) leaves only the precedence byte to win with.
    """
    via_directive = via_key >> 56
    curi.directive = min(curi.directive, max(0, via_directive - 1))
    if curi.directive >= via_directive:
        via_precedence = (via_key >> 48) & 0xFF
        curi.precedence = min(curi.precedence, max(0, via_precedence - 1))
