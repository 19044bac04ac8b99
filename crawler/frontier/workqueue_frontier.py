"""WorkQueueFrontier: Heritrix's work-queue frontier over a pluggable QueueStore.

One work queue per queue key (QueueAssignmentPolicy); each queue hands out one URI at a time and
is snoozed for the URI's politeness delay after it finishes. URIs live in the QueueStore, sorted
per queue by directive, precedence, then FIFO; queue states live in a
:class:`~crawler.frontier.scheduler.QueueScheduler` rebuilt from the store on ``open``.

Flow (heritrix.md §5):

* ``schedule(curi)``: canonical key (:class:`~crawler.frontier.preparer.FrontierPreparer`; a URI
  that cannot be canonicalized goes to uri-errors.log) -> uniq filter (``force_fetch`` records
  without asking) -> precedence and queue key (preparer) -> ordinal -> store. A new or exhausted
  queue becomes *inactive*; inactive queues are activated only when no queue is ready.
* ``next(timeout_s)``: wake due snoozed queues, take the first ready (else activate the most
  urgent inactive) queue, retire it if over ``queue_total_budget``, deactivate it if it spent
  ``balance_replenish_amount`` this session and others wait; then the server cap
  (:class:`~crawler.frontier.server_gate.ServerGate`) must admit its head, else the queue is
  parked on that server until a slot or its time comes.
* ``finished(curi)``: ``fetch_attempts += 1``; -1/-2/-3/-50 with attempts left (``max_retries``)
  stay at the head and the queue snoozes ``curi.retry_delay_s``; otherwise the URI is removed,
  counted (failures cost ``error_penalty_amount`` more), the queue snoozes its politeness delay
  (``min_delay_ms`` if unset) or a Retry-After back-off, whichever is longer, and ``on_final``
  (crawl.log, stats) runs outside the lock.

Crash safety: see :mod:`crawler.frontier.recovery`. Reads/writes on the CrawlURI: reads uri,
via, hop_path, force_fetch, directive, status, retry_delay_s, politeness_delay_ms,
content_size and the back-off hints in ``curi.data`` (removed); writes canonical, queue_key,
ordinal, precedence, fetch_attempts (and directive of a prerequisite). Thread-safe: one
Condition; store I/O stays under it, canonicalization, the uniq check and serialization do not.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import structlog

from crawler.clock import Clock, SystemClock
from crawler.curi import RETRYABLE_STATUSES, CrawlURI, FetchStatus
from crawler.frontier import recovery as rec
from crawler.frontier.assignment import QueueAssignmentPolicy
from crawler.frontier.frontier import FrontierSnapshot, FrontierStateError
from crawler.frontier.frontier_report import QueueDetail, queue_details, snapshot_of
from crawler.frontier.politeness import BACKOFF_MS_KEY, SERVER_HOLD_MS_KEY
from crawler.frontier.precedence import queue_precedence_function
from crawler.frontier.preparer import FrontierPreparer
from crawler.frontier.queue_store import QueueStore, StoreBatch, sort_key
from crawler.frontier.scheduler import QueueScheduler
from crawler.frontier.server_gate import ServerGate
from crawler.frontier.workqueue import (
    EXHAUSTED,
    IN_PROCESS,
    INACTIVE,
    RETIRED,
    WorkQueue,
)
from crawler.frontier.write_behind_store import WriteBehindStore
from crawler.order.schema import FrontierConfig
from crawler.uniq.uniq_filter import UriUniqFilter

ORDINAL_BLOCK = 4096
"""Ordinals are reserved in the store this many at a time (gaps after a restart are harmless)."""


class WorkQueueFrontier:
    """The Frontier protocol over a QueueStore. Build with the parts unopened, then :meth:`open`.

    ``crawl_log`` is the crawl.log that ``on_final`` writes (default: ``<state_dir>/../logs/
    crawl.log``, the run layout); recovery reads its end after a crash.
    """

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
        crawl_log: Path | None = None,
    ) -> None:
        # Store I/O happens outside self._cond: see WriteBehindStore.
        self._store = WriteBehindStore(store)
        self._policy = policy
        self._uniq = uniq
        self._config = config
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._on_final = on_final
        self._logger: Any = logger if logger is not None else structlog.get_logger("frontier")
        self._uri_error = uri_error
        self._crawl_log = crawl_log
        self._prepare = FrontierPreparer(config, policy)
        self._canonicalize = self._prepare.canonicalize
        self._cost = self._prepare.cost
        self._max_retries = config.retries.max_retries
        self._min_delay_ms = config.politeness.min_delay_ms
        self._balance = config.balance_replenish_amount
        self._total_budget = config.queue_total_budget
        self._penalty = config.error_penalty_amount

        self._cond = threading.Condition(threading.Lock())
        pol = config.politeness
        self.gate: ServerGate[WorkQueue] = ServerGate(
            pol.host_max_connections, pol.host_min_interval_ms / 1000.0
        )
        self.sched = QueueScheduler(
            self.gate,
            queue_precedence_function(config),
            config.precedence_floor,
            self._notify,
        )
        # While a thread is in finished() it will call next() right after: the first queue its
        # finish makes ready is left for it (no wake-up, no thread hand-off); others wake waiters.
        self._quiet = False
        self._suppressed = 0
        self._in_flight: dict[str, WorkQueue] = {}
        self._log = rec.RecoveryLog(self._store)
        self._ordinal = 0
        self._ordinal_reserved = 0
        self._queued = 0
        self._finishing = 0
        self._finishing_lock = threading.Lock()  # finished() leaves without the frontier's lock
        # While URIs recovered from a crash are re-scheduling their links: canonicals another
        # thread is adding to the uniq filter right now (not yet marked as queued), so a
        # recovered URI re-finding one does not take it for a link lost in the crash.
        self._adding: Counter[str] = Counter()
        self.totals = {"succeeded": 0, "failed": 0, "disregarded": 0}
        self._opened = False
        self._closed = False

    # ------------------------------------------------------------ lifecycle
    def open(self, state_dir: Path) -> None:
        """Open the store and uniq filter under ``state_dir``, rebuild the queues, recover.

        Raises :class:`FrontierStateError` for an incompatible, corrupt or locked state.
        """
        with self._cond:
            if self._opened:
                return
            self._store.open(state_dir)
            try:
                self._uniq.open(state_dir)
            except Exception as exc:
                self._store.close()
                raise FrontierStateError(
                    f"cannot open the already-seen filter in {state_dir}: {exc}"
                ) from exc
            try:
                restored = rec.restore(self._store, self.sched, state_dir, self._crawl_log)
            except (ValueError, FrontierStateError) as exc:
                self._store.close()
                self._uniq.close()
                if isinstance(exc, FrontierStateError):
                    raise
                raise FrontierStateError(
                    f"frontier state in {state_dir} is corrupt: {exc}"
                ) from exc
            self._ordinal = self._ordinal_reserved = restored.ordinal_reserved
            self._queued = restored.queued
            self.totals = restored.totals
            self._store.write(StoreBatch(meta={rec.FRONTIER_META: self._counters_meta()}))
            self._opened = True
        self._store.sync()
        if self.sched.queues:
            self._logger.info(
                "frontier_reopened",
                queues=len(self.sched.queues),
                queued=restored.queued,
                recovered_in_flight=restored.recovered_in_flight,
                requeued_unlogged=restored.requeued_unlogged,
            )

    def close(self) -> None:
        """Save counters, wake blocked ``next()`` callers (they get None), close the parts."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            if self._opened:
                batch = self._log.batch()
                batch.meta[rec.FRONTIER_META] = self._counters_meta()
                self._store.write(batch)
            self._cond.notify_all()
        self._store.close()
        self._uniq.close()

    def _counters_meta(self) -> bytes:
        # Success/failure totals are sums over the queue records: nothing else to keep.
        saved = {"version": rec.FORMAT_VERSION, "ordinal_reserved": self._ordinal_reserved}
        return json.dumps(saved).encode()

    # ------------------------------------------------------------ schedule
    def schedule(self, curi: CrawlURI) -> bool:
        """Queue ``curi`` unless already seen (see the module docstring). True if queued."""
        if self._closed:
            return False
        uri = curi.uri
        try:
            canonical = self._prepare.canonical(uri)
        except ValueError as exc:
            if self._uri_error is not None:
                self._uri_error(curi.via, str(exc), uri)
            return False
        curi.canonical = canonical
        if curi.force_fetch:
            self._uniq.add_force(canonical)
            return self._enqueue(curi)
        via_q = self._in_flight.get(curi.via) if curi.via else None
        if via_q is not None and not via_q.marked:
            # Durable before the uniq check: after a crash this URI's links are re-checked.
            with self._cond:
                self._log.mark_in_flight(via_q)
            self._store.sync()
        if not self._log.recovered:
            if not self._uniq.add(canonical):
                return False
            return self._enqueue(curi)
        with self._cond:
            self._adding[canonical] += 1
        try:
            if not self._uniq.add(canonical):
                if curi.via not in self._log.recovered:
                    return False
                with self._cond:
                    self._adding[canonical] -= 1
                    while self._adding[canonical] > 0 and not self._closed:
                        self._cond.wait(0.5)  # another thread is queuing it: not lost
                    self._adding[canonical] += 1
                    if not self._log.was_lost(canonical):
                        return False
                self._logger.info("lost_uri_requeued", uri=uri)
            return self._enqueue(curi)
        finally:
            with self._cond:
                self._adding[canonical] -= 1
                if self._adding[canonical] <= 0:
                    del self._adding[canonical]
                    self._cond.notify_all()

    def schedule_many(self, curis: Sequence[CrawlURI]) -> list[bool]:
        """:meth:`schedule` each of ``curis`` in order, sharing the work: one uniq-filter call,
        one lock hold and one store write for the lot."""
        if self._closed:
            return [False] * len(curis)
        if self._log.recovered:
            return [self.schedule(curi) for curi in curis]  # crash recovery: the careful path
        out = [False] * len(curis)
        canonical_of = self._prepare.canonical
        forced: list[int] = []
        checked: list[int] = []
        for i, curi in enumerate(curis):
            try:
                curi.canonical = canonical_of(curi.uri)
            except ValueError as exc:
                if self._uri_error is not None:
                    self._uri_error(curi.via, str(exc), curi.uri)
                continue
            (forced if curi.force_fetch else checked).append(i)
        if checked:
            # Links recorded lately are answered without I/O; only the rest need the via's
            # in-flight marker and the filter's check-and-add.
            maybe = self._uniq.maybe_new([curis[i].canonical for i in checked])
            checked = [i for i, new in zip(checked, maybe, strict=True) if new]
        if checked:
            self._mark_vias_in_flight({curis[i].via for i in checked})
            added = self._uniq.add_many([curis[i].canonical for i in checked])
            checked = [i for i, new in zip(checked, added, strict=True) if new]
        for i in forced:
            self._uniq.add_force(curis[i].canonical)
        chosen = sorted(forced + checked) if forced else checked
        queued = self._enqueue_many([curis[i] for i in chosen])
        for i, ok in zip(chosen, queued, strict=True):
            out[i] = ok
        return out

    def seen_recently(self, uris: Sequence[str]) -> list[bool]:
        """True for each URI the uniq filter recorded lately (answered without I/O or lock).

        A True is final (the URI was scheduled); a False only means "not known cheaply". Lets
        a caller skip the per-link work (scope rules) for the links of a page seen already.
        """
        canonical_of = self._prepare.canonical
        canonicals: list[str] = []
        for uri in uris:
            try:
                canonicals.append(canonical_of(uri))
            except ValueError:
                canonicals.append("")
        return [not new for new in self._uniq.maybe_new(canonicals)]

    def _mark_vias_in_flight(self, vias: set[str | None]) -> None:
        """Durable before the uniq check: after a crash these URIs' links are re-checked."""
        marks = [q for via in vias if via and (q := self._in_flight.get(via)) and not q.marked]
        if marks:
            with self._cond:
                for q in marks:
                    self._log.mark_in_flight(q)
            self._store.sync()

    def _enqueue(self, curi: CrawlURI) -> bool:
        return self._enqueue_many([curi])[0]

    def _enqueue_many(self, curis: list[CrawlURI]) -> list[bool]:
        """Queue ``curis`` (already past the uniq filter) with one store write."""
        out = [False] * len(curis)
        entries: list[tuple[int, CrawlURI, bytes, str]] = []
        for i, curi in enumerate(curis):
            # A via in flight is on the calling thread, so its entry cannot change under us.
            via_q = self._in_flight.get(curi.via) if curi.via else None
            try:
                key = self._prepare.queue_key(
                    curi, (via_q.key, via_q.current_key) if via_q is not None else None
                )
            except ValueError as exc:
                if self._uri_error is not None:
                    self._uri_error(curi.via, str(exc), curi.uri)
                continue
            curi.queue_key = key
            entries.append((i, curi, curi.to_bytes(), rec.mark_name(curi.canonical)))
        if not entries:
            return out
        with self._cond:
            if self._closed:
                return out
            batch = self._log.batch()
            touched: dict[str, WorkQueue] = {}
            for i, curi, value, mark in entries:
                q = self._add_locked(curi)
                touched[q.key] = q
                skey = sort_key(curi.directive, curi.precedence, curi.ordinal)
                batch.puts.append((q.key, skey, value))
                batch.meta[mark] = b""
                out[i] = True
            for q in touched.values():
                batch.meta[q.meta_name] = q.to_meta()
            if self._ordinal >= self._ordinal_reserved:
                self._ordinal_reserved = self._ordinal + ORDINAL_BLOCK
                batch.meta[rec.FRONTIER_META] = self._counters_meta()
            self._store.write(batch)
        self._store.sync()
        return out

    def _add_locked(self, curi: CrawlURI) -> WorkQueue:
        """Give ``curi`` its ordinal and count it in its queue (lock held)."""
        self._ordinal += 1
        curi.ordinal = self._ordinal
        q = self.sched.get_or_add(curi.queue_key)
        q.size += 1
        q.total_enqueues += 1
        q.last_queued = curi.uri
        if q.state == EXHAUSTED:
            q.best_uri_precedence = curi.precedence
            self.sched.deactivate(q)
        elif curi.precedence < q.best_uri_precedence:
            q.best_uri_precedence = curi.precedence
            if q.state == INACTIVE and self.sched.precedence_of(q) < q.precedence:
                self.sched.deactivate(q)  # to the FIFO of its better precedence
        if q.state != RETIRED:
            self._queued += 1
        return q

    # ---------------------------------------------------------------- next
    def next(self, timeout_s: float) -> CrawlURI | None:
        """The head of a queue that may be fetched now; blocks up to ``timeout_s`` for one."""
        deadline = time.monotonic() + max(0.0, timeout_s)
        with self._cond:
            while not self._closed:
                curi = self._next_locked()
                if curi is not None:
                    if self.sched.has_ready():
                        self._cond.notify()
                    return curi
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                wake_s = self.sched.next_wake_s()
                if wake_s is not None:
                    remaining = min(remaining, max(wake_s - self._clock.monotonic(), 0.001))
                self._cond.wait(remaining)
        return None

    def _next_locked(self) -> CrawlURI | None:
        now = self._clock.monotonic()
        sched, gate = self.sched, self.gate
        for server in sched.due(now):
            self.sched.service(server, now)
        retried: list[str] = []
        try:
            while (q := sched.candidate()) is not None:
                if q.woken_by is not None:
                    gate.woken_attempted(q.woken_by)
                    retried.append(q.woken_by)
                    q.woken_by = None
                if q.size <= 0:
                    sched.set_state(q, EXHAUSTED)
                elif 0 <= self._total_budget <= q.total_spent:
                    self._retire(q)
                elif 0 < self._balance <= q.session_spent and sched.others_waiting():
                    sched.deactivate(q)
                elif (curi := self._hand_out(q, now)) is not None:
                    return curi
            return None
        finally:
            for server in retried:
                self.sched.service(server, now)

    def _hand_out(self, q: WorkQueue, now: float) -> CrawlURI | None:
        head = self._store.head(q.key)
        if head is None:
            self._logger.warning("queue_store_mismatch", queue=q.key, size=q.size)
            self._queued -= q.size
            q.size = 0
            self.sched.set_state(q, EXHAUSTED)
            return None
        skey, value = head
        curi = CrawlURI.from_bytes(value)
        uri = curi.uri
        if not self.sched.admit(q, uri, now):
            return None
        q.current_key, q.current_value = skey, value
        curi.queue_key = q.key
        q.current = curi
        q.last_peeked = uri
        if q.recovering and skey in q.recovering:
            self._log.recovered.add(uri)
        self._in_flight[uri] = q
        self.sched.set_state(q, IN_PROCESS)
        return curi

    # ------------------------------------------------------------ finished
    def finished(self, curi: CrawlURI) -> bool:
        """Retry ``curi`` (False) or record its final disposition and call ``on_final`` (True)."""
        curi.fetch_attempts += 1
        status = curi.status
        backoff_s = hold_s = 0.0
        data = curi.data
        if data:
            backoff_s = float(data.pop(BACKOFF_MS_KEY, 0) or 0) / 1000.0
            hold_s = float(data.pop(SERVER_HOLD_MS_KEY, 0) or 0) / 1000.0
        if status in RETRYABLE_STATUSES and curi.fetch_attempts < self._max_retries:
            delay_s = max(0.0, curi.retry_delay_s, backoff_s)
            curi.reset_for_retry()
            value = curi.to_bytes()
            with self._cond:
                q = self._owner(curi)
                if status != FetchStatus.DEFERRED:
                    self._charge(q, self._cost(curi))
                self._quietly(True)
                now = self._release(q, curi, backoff_s, hold_s)
                self.sched.snooze(q, now + delay_s, now)
                self._quietly(False)
                batch = self._log.batch()
                batch.puts.append((q.key, q.current_key, value))
                batch.meta[q.meta_name] = q.to_meta()
                self._store.write(batch)
            self._store.sync()
            return False
        delay_ms = curi.politeness_delay_ms
        if delay_ms < 0:
            delay_ms = self._min_delay_ms
        with self._cond:
            q = self._owner(curi)
            batch = self._log.batch()
            batch.deletes.append((q.key, q.current_key))
            q.size -= 1
            self._queued -= 1
            if curi.is_disregarded:
                q.disregarded += 1
                kind, total = rec.KIND_DISREGARDED, "disregarded"
            elif curi.is_success:
                q.succeeded += 1
                kind, total = rec.KIND_SUCCEEDED, "succeeded"
                self._charge(q, self._cost(curi))
            else:
                q.failed += 1
                q.errors += 1
                kind, total = rec.KIND_FAILED, "failed"
                self._charge(q, self._cost(curi) + self._penalty)
            self.totals[total] += 1
            self._log.recovered.discard(curi.uri)
            journal = self._log.final(q, kind, batch)
            self._quietly(True)
            now = self._release(q, curi, backoff_s, hold_s)
            self.sched.snooze(q, now + max(delay_ms / 1000.0, backoff_s), now)
            self._quietly(False)
            batch.meta[q.meta_name] = q.to_meta()
            self._store.write(batch)
            with self._finishing_lock:
                self._finishing += 1
        try:
            # Durable before crawl.log has the line: a crash cannot log a URI twice.
            self._store.sync()
            if self._on_final is not None:
                self._on_final(curi)
        except Exception:
            self._logger.exception("frontier_on_final_failed", uri=curi.uri)
        finally:
            self._log.logged(journal)
            with self._finishing_lock:
                self._finishing -= 1
                idle = not self._finishing
            if idle and not self._queued:
                with self._cond:
                    self._cond.notify_all()
        return True

    def _notify(self) -> None:
        """Wake one thread blocked in ``next()`` (called with the lock held)."""
        if self._quiet:
            self._suppressed += 1
        else:
            self._cond.notify()

    def _quietly(self, begin: bool) -> None:
        """Bracket finished()'s scheduling: all but one wake-up go out at the end."""
        if begin:
            self._quiet, self._suppressed = True, 0
            return
        self._quiet = False
        if self._suppressed > 1:
            self._cond.notify(self._suppressed - 1)
        self._suppressed = 0

    def _charge(self, q: WorkQueue, cost: int) -> None:
        q.last_cost = cost
        q.total_spent += cost
        q.session_spent += cost

    def _owner(self, curi: CrawlURI) -> WorkQueue:
        q = self.sched.queues.get(curi.queue_key)
        if q is None or q.current is not curi:
            raise ValueError(f"{curi!r} was not handed out by this frontier or is already finished")
        return q

    def _release(self, q: WorkQueue, curi: CrawlURI, backoff_s: float, hold_s: float) -> float:
        """Free the queue and its server slot, apply server holds. Returns now (monotonic)."""
        now = self._clock.monotonic()
        q.current = None
        q.current_value = b""
        q.last_dequeue_s = self._clock.time()
        if self._in_flight.get(curi.uri) is q:
            del self._in_flight[curi.uri]
        self.sched.release_server(q, curi.uri, now, backoff_s, hold_s)
        return now

    def _retire(self, q: WorkQueue) -> None:
        self._queued -= q.size
        self.sched.retire(q)
        # Made durable by the next sync of any thread; lost in a crash, the queue is simply
        # retired again when it is next handed out over budget.
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
            return snapshot_of(self.sched, self._queued, self.totals, self._uniq.count())

    def queue_details(self, limit: int = 2000) -> list[QueueDetail]:
        """Per-queue detail of the ``limit`` longest non-exhausted queues, longest first."""
        with self._cond:
            return queue_details(self.sched, self._config, self._clock.monotonic(), limit)

    def busy_servers(self, limit: int = 20) -> list[tuple[str, int, int]]:
        """``(server, fetches in progress, parked queues)`` of the busiest servers."""
        with self._cond:
            return self.gate.busiest(limit)

    @property
    def config(self) -> FrontierConfig:
        """The frontier section of the order this frontier runs with."""
        return self._config
