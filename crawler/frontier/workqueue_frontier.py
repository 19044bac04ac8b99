"""WorkQueueFrontier: Heritrix's work-queue frontier over a pluggable QueueStore.

One work queue per queue key (QueueAssignmentPolicy); each queue hands out one URI at a time and
is snoozed for the URI's politeness delay after it finishes. URIs live in the QueueStore, sorted
per queue by directive, precedence, then FIFO; queue states live in a
:class:`~crawler.frontier.rotation.scheduler.QueueScheduler` rebuilt from the store on ``open``
(:func:`~crawler.frontier.store.recovery.open_state`).

Flow (that of Heritrix's work-queue frontier):

* ``schedule(curi)``: :class:`~crawler.frontier.intake.intake.FrontierIntake` — canonical key, uniq
  filter (``force_fetch`` records without asking), precedence and queue key, ordinal, store. A
  new or exhausted queue becomes *inactive*; inactive queues are activated only when no queue
  is ready, and while the active ones are fewer than the lateness guard's cap
  (``lateness_tolerance``; :mod:`~crawler.frontier.policy.lateness_guard`).
* ``next(timeout_s)``: wake due snoozed queues, take the first ready (else activate the most
  urgent inactive) queue — while the guard trims the active set, a due one is rotated out to
  the inactive queues instead —, retire it if over ``queue_total_budget``, deactivate it if it
  spent ``balance_replenish_amount`` this session and others wait; then the server cap
  (:class:`~crawler.frontier.politeness.server_gate.ServerGate`) must admit its head, else the queue
  is parked on that server until a slot or its time comes.
* ``finished(curi)``: :meth:`FinishPolicy.settle
  <crawler.frontier.policy.finish_policy.FinishPolicy.settle>` (shared with the Redis frontier),
  through :meth:`RetryPolicy.take <crawler.frontier.retry.retry_policy.RetryPolicy.take>`, counts
  the attempt (a deferral for a prerequisite is none) and decides: -50 with deferrals left
  (``max_deferrals``), -1/-2/-3 with attempts left (``max_retries``; fewer after malformed
  responses) and retried HTTP statuses (408/429/5xx, ``http_max_tries``) stay at the head and the
  queue snoozes ``curi.retry_delay_s`` (or a longer Retry-After), a failed try noted in
  ``retry_watch`` (:mod:`~crawler.frontier.retry.retry_watch`); the fetch's answer feeds its
  server's adaptive pace (:mod:`~crawler.frontier.politeness.server_pace`); otherwise the URI is
  removed, counted (failures cost ``error_penalty_amount`` more), the queue snoozes until its
  politeness delay (``min_delay_ms`` if unset) has passed since the end of the fetch, or a
  Retry-After back-off since now, whichever is later (at once if both are past)
  (:class:`~crawler.frontier.rotation.queue_release.QueueRelease`), and ``on_final`` (crawl.log,
  stats) runs outside the lock.

Fetches outside the frontier (a browser page's sub-resources) are marked seen by ``claim`` and
pass the server cap, pace and holds through ``inline_gate``
(:class:`~crawler.frontier.politeness.inline_gate.LocalInlineGate`, under the same lock);
``finished()`` is not involved.

Crash safety: see :mod:`crawler.frontier.store.recovery`. Reads/writes on the CrawlURI: reads uri,
via, hop_path, force_fetch, directive, status, retry_delay_s, politeness_delay_ms,
fetch_start_ms, fetch_duration_ms, content_size and the back-off hints in ``curi.data``
(removed); writes canonical, queue_key, ordinal, precedence, fetch_attempts (and directive of a
prerequisite). Thread-safe: one Condition, shared with the intake and the queue release; store
writes are made under it (the WriteBehindStore does their I/O after), canonicalization, the uniq
check and serialization not.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import structlog

from crawler.clock import Clock, SystemClock
from crawler.curi import CrawlURI
from crawler.frontier.assignment import QueueAssignmentPolicy
from crawler.frontier.frontier import FrontierSnapshot
from crawler.frontier.frontier_report import QueueDetail, queue_details, snapshot_of
from crawler.frontier.intake.intake import FrontierIntake
from crawler.frontier.intake.precedence import queue_precedence_function
from crawler.frontier.intake.preparer import FrontierPreparer
from crawler.frontier.policy.finish_policy import DISREGARDED, SUCCEEDED, FinishPolicy
from crawler.frontier.policy.queue_budgets import over_total_budget, session_spent_out
from crawler.frontier.politeness.inline_gate import LocalInlineGate
from crawler.frontier.politeness.server_gate import ServerGate
from crawler.frontier.politeness.server_pace import ServerPace
from crawler.frontier.retry.retry_watch import RetriesWaiting, RetryWatch
from crawler.frontier.rotation.queue_release import QueueRelease, fetch_end_ms
from crawler.frontier.rotation.rotation_log import RotationLog
from crawler.frontier.rotation.scheduler import QueueScheduler
from crawler.frontier.rotation.wait_timer import WaitTimer
from crawler.frontier.store import recovery as rec
from crawler.frontier.store.queue_store import QueueStore
from crawler.frontier.store.write_behind_store import WriteBehindStore
from crawler.frontier.workqueue import EXHAUSTED, IN_PROCESS, WorkQueue
from crawler.order.schema import FrontierConfig
from crawler.uniq.uniq_filter import UriUniqFilter


class WorkQueueFrontier:
    """The Frontier protocol over a QueueStore. Build with the parts unopened, then :meth:`open`.

    ``crawl_log`` is the crawl.log that ``on_final`` writes (default: ``<state_dir>/../logs/
    crawl.log``, the run layout); recovery reads its end after a crash.
    """

    shared: ClassVar[bool] = False

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
        self._uniq = uniq
        self._config = config
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._on_final = on_final
        self._logger: Any = logger if logger is not None else structlog.get_logger("frontier")
        self._crawl_log = crawl_log
        prepare = FrontierPreparer(config, policy)
        self._canonicalize = prepare.canonicalize
        self._finish = FinishPolicy(config, prepare.cost)
        self.retry_watch = RetryWatch()
        """The URIs waiting for a retry after a failed try (status, report)."""
        self._balance = config.balance_replenish_amount
        self._total_budget = config.queue_total_budget

        lock = threading.Lock()
        self._cond = threading.Condition(lock)
        self._timer = WaitTimer()
        """Which thread blocked in ``next()`` sleeps until the next snoozed queue's wake time
        (scheduler's monotonic clock): the *timer*; the others wait to be notified (or for
        their own timeout), so a wake time wakes one thread, not every one that waits (300
        threads, ~250 wake times a second: most of the wake-ups found nothing)."""
        self._wakes = 0
        """Bumped by :meth:`wake_waiters`: a ``next()`` that sees it change returns None."""
        pol = config.politeness
        self.gate: ServerGate[WorkQueue] = ServerGate(
            pol.host_max_connections, pol.host_min_interval_ms / 1000.0, ServerPace(config.pace)
        )
        self._in_flight: dict[str, WorkQueue] = {}
        release = QueueRelease(self._cond, self._clock, self._in_flight)
        self.sched = release.sched = QueueScheduler(
            self.gate,
            queue_precedence_function(config),
            config.precedence_floor,
            release.notify,
            config.lateness_tolerance,
            store=self._store,
            cached_queues=config.cached_queues,
        )
        self._owner = release.owner
        self._release = release.release
        self.inline_gate = LocalInlineGate(lock, self.sched, self._clock, pol, self._page_server)
        """The server gate for fetches made outside the frontier (browser sub-resources)."""
        self._log = rec.RecoveryLog(self._store, self._cond)
        self._intake = FrontierIntake(
            self._store,
            uniq,
            prepare,
            self._cond,
            self.sched,
            self._log,
            self._in_flight,
            on_queued=self._count_queued,
            uri_error=uri_error,
            logger=self._logger,
        )
        self._queued = 0
        self._finishing = 0
        self._finishing_lock = threading.Lock()  # finished() leaves without the frontier's lock
        self.totals = {"succeeded": 0, "failed": 0, "disregarded": 0}
        self._opened = False
        self._closed = False
        self._rotation_log = RotationLog(self._logger)

    # ------------------------------------------------------------ lifecycle
    def open(self, state_dir: Path) -> None:
        """Open the store and uniq filter under ``state_dir``, rebuild the queues, recover.

        Raises :class:`FrontierStateError` for an incompatible, corrupt or locked state.
        """
        with self._cond:
            if self._opened:
                return
            restored = rec.open_state(
                self._store, self._uniq, self.sched, state_dir, self._crawl_log
            )
            self._intake.restore(restored.ordinal_reserved)
            self._log.lost = restored.lost
            self._queued, self.totals = restored.queued, restored.totals
            self._opened = True
        self._store.sync()
        if total := self.sched.total_queues():
            self._logger.info("frontier_reopened", queues=total, **restored.summary())

    def close(self) -> None:
        """Save counters, wake blocked ``next()`` callers (they get None), close the parts."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._intake.close(save=self._opened)
            self._cond.notify_all()
        self.inline_gate.close()
        self._store.close()
        self._uniq.close()

    # ------------------------------------------------------------ schedule
    def schedule(self, curi: CrawlURI) -> bool:
        """Queue ``curi`` unless already seen (see the module docstring). True if queued."""
        return self._intake.schedule(curi)

    def schedule_many(self, curis: Sequence[CrawlURI]) -> list[bool]:
        """:meth:`schedule` each of ``curis`` in order, sharing the work: one uniq-filter call,
        one lock hold and one store write for the lot."""
        return self._intake.schedule_many(curis)

    def claim(self, curi: CrawlURI) -> bool:
        """Mark ``curi`` (fetched outside the frontier) as seen without queueing it; True if new."""
        return self._intake.claim(curi)

    def _page_server(self, page: CrawlURI) -> str | None:
        """The server whose slot ``page`` (handed out, in process) holds; under the lock."""
        q = self.sched.queues.get(page.queue_key)
        return q.server if q is not None and q.current is page else None

    def seen_recently(self, uris: Sequence[str]) -> list[bool]:
        """True for each URI the uniq filter surely recorded (no frontier lock): a True is
        final, a False only means "new, or not known" (``FrontierIntake.seen_recently``)."""
        return self._intake.seen_recently(uris)

    def _count_queued(self, n: int) -> None:
        self._queued += n

    # ---------------------------------------------------------------- next
    def next(self, timeout_s: float) -> CrawlURI | None:
        """The head of a queue that may be fetched now; blocks up to ``timeout_s`` for one."""
        deadline = time.monotonic() + max(0.0, timeout_s)
        with self._cond:
            wakes = self._wakes
            while not self._closed and self._wakes == wakes:
                curi = self._next_locked()
                if curi is not None:
                    if self.sched.has_ready():
                        self._cond.notify()
                    self._hand_timer_on()
                    return curi
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self._hand_timer_on()
                    return None
                self._wait(remaining)
            self._hand_timer_on()
        return None

    def wake_waiters(self) -> None:
        """Make every ``next()`` blocked now return None at once (the toe pool pausing or
        stopping: idle threads wait long, see :data:`crawler.control.toepool.IDLE_WAIT_S`)."""
        with self._cond:
            self._wakes += 1
            self._cond.notify_all()

    def _wait(self, remaining_s: float) -> None:
        """Block (lock held) until notified, ``remaining_s`` passes, or — for the one thread
        that becomes the timer — the next wake time (:class:`~crawler.frontier.rotation.
        wait_timer.WaitTimer`). A thread that snoozes a queue for less time than the timer
        waits takes the earlier time itself when it next calls ``next()``."""
        wake_s = self.sched.next_wake_s()
        self.sched.waiting += 1  # a thread the lateness guard counts
        try:
            self._timer.wait(
                self._cond,
                remaining_s,
                math.inf if wake_s is None else wake_s,
                self._clock.monotonic(),
            )
        finally:
            self.sched.waiting -= 1

    def _hand_timer_on(self) -> None:
        """On leaving ``next()`` (lock held): with no timer while threads wait and a wake time
        is pending, wake one waiter to become the timer."""
        if self._timer.hand_on(self.sched.next_wake_s() is not None):
            self._cond.notify()

    def _next_locked(self) -> CrawlURI | None:
        now = self._clock.monotonic()
        sched, gate = self.sched, self.gate
        for server in sched.due(now):
            self.sched.service(server, now)
        retried: list[str] = []
        try:
            while (q := sched.candidate(now)) is not None:
                if q.woken_by is not None:
                    gate.woken_attempted(q.woken_by)
                    retried.append(q.woken_by)
                    q.woken_by = None
                if q.size <= 0:
                    sched.set_state(q, EXHAUSTED)
                elif over_total_budget(q.total_spent, self._total_budget):
                    self._retire(q)
                elif session_spent_out(q.session_spent, self._balance) and sched.others_waiting():
                    sched.deactivate(q)
                elif (curi := self._hand_out(q, now)) is not None:
                    return curi
            return None
        finally:
            for server in retried:
                self.sched.service(server, now)
            sched.trim()
            if self._rotation_log.due(sched.guard, now):
                self._rotation_log.log(sched.guard, sched.active(), now, self._clock.time())

    def _hand_out(self, q: WorkQueue, now: float) -> CrawlURI | None:
        head = self._store.head(q.key)
        if head is None:
            self._logger.warning("queue_store_mismatch", queue=q.key, size=q.size)
            self._queued -= q.size
            q.size = 0
            self.sched.set_state(q, EXHAUSTED)
            self.sched.write_record(q)
            return None
        skey, value = head
        curi = CrawlURI.from_bytes(value)
        uri = curi.uri
        if not self.sched.admit(q, uri, now):
            return None
        q.current_key, q.current_value = skey, value
        curi.queue_key = q.key
        q.current = curi
        self.sched.uris.peeked(q.key, uri)
        self._in_flight[uri] = q
        q.handed_out_s = now
        self.sched.set_state(q, IN_PROCESS)
        return curi

    # ------------------------------------------------------------ finished
    def finished(self, curi: CrawlURI) -> bool:
        """Retry ``curi`` (False) or record its final disposition and call ``on_final`` (True).

        The decision is :meth:`FinishPolicy.settle
        <crawler.frontier.policy.finish_policy.FinishPolicy.settle>`; this applies it."""
        out = self._finish.settle(curi)
        if out.retried:
            if out.failed_try:
                self.retry_watch.noted(curi, out.wait_s, self._clock.time())
            curi.reset_for_retry()
            value = curi.to_bytes()
            with self._cond:
                q = self._owner(curi)
                if out.failed_try:  # a deferral costs nothing
                    q.expend(out.cost)
                skey = q.current_key
                self._release(q, curi, out.backoff_s, out.hold_s, out.wait_s, out.fetched)
                batch = self._log.batch()
                batch.puts.append((q.key, skey, value))
                self.sched.record(batch, q)
                self._store.write(batch)
            self._store.sync()
            return False
        self.retry_watch.done(curi.uri)
        fetch_end = fetch_end_ms(curi)
        kind = out.kind
        with self._cond:
            q = self._owner(curi)
            batch = self._log.batch()
            batch.deletes.append((q.key, q.current_key))
            q.size -= 1
            self._queued -= 1
            if kind == DISREGARDED:
                q.disregarded += 1
                log_kind = rec.KIND_DISREGARDED
            elif kind == SUCCEEDED:
                q.succeeded += 1
                log_kind = rec.KIND_SUCCEEDED
            else:
                q.failed += 1
                q.errors += 1
                log_kind = rec.KIND_FAILED
            if kind != DISREGARDED:
                q.expend(out.cost)
            self.totals[kind] += 1
            journal = self._log.final(q, log_kind, batch)
            self._release(
                q, curi, out.backoff_s, out.hold_s, out.wait_s, out.fetched, out.polite_s, fetch_end
            )
            self.sched.record(batch, q)
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
            self._log.delete_later(journal)
            with self._finishing_lock:
                self._finishing -= 1
                idle = not self._finishing
            if idle and not self._queued:
                with self._cond:
                    self._cond.notify_all()
        return True

    def _retire(self, q: WorkQueue) -> None:
        self._queued -= q.size
        self.sched.retire(q)
        # Made durable by the next sync of any thread; lost in a crash, the queue is simply
        # retired again when it is next handed out over budget.
        self.sched.write_record(q)
        self._logger.info("queue_retired", queue=q.key, queued=q.size, spent=q.total_spent)

    # ------------------------------------------------------------- reports
    def is_empty(self) -> bool:
        """Nothing queued (outside retired queues), nothing in process or being finished."""
        with self._cond:
            return not self._queued and not self._finishing

    def snapshot(self) -> FrontierSnapshot:
        """Counts for progress-statistics.log and reports (congestion: the live queues over the
        busy and snoozed ones)."""
        with self._cond:
            return snapshot_of(self.sched, self._queued, self.totals, self._uniq.count())

    def queue_details(self, limit: int = 2000) -> list[QueueDetail]:
        """Per-queue detail of the ``limit`` longest non-exhausted queues, longest first."""
        with self._cond:
            return queue_details(self.sched, self._config, self._clock.monotonic(), limit)

    def retries_waiting(self, limit: int = 10) -> RetriesWaiting:
        """The URIs waiting for a retry after a failed try (the ``limit`` due soonest listed)."""
        return self.retry_watch.waiting(self._clock.time(), limit)

    def paced_servers(self, limit: int = 20) -> list[tuple[str, float]]:
        """``(server, gap between fetch starts in s)`` of the servers their adaptive pace slows
        most (``frontier.pace``), slowest first."""
        with self._cond:
            return self.gate.paced(limit)

    def lateness_guard(self) -> tuple[float, int, bool]:
        """``(cap on the active queues (inf: none), queues rotated out late, saturated now)``
        of the :class:`~crawler.frontier.policy.lateness_guard.LatenessGuard`."""
        with self._cond:
            guard = self.sched.guard
            return guard.cap, guard.rotated, guard.saturated

    def in_rotation(self) -> int:
        """Queues in rotation now (ready, in process or snoozed), read without the lock: a
        count at most one hand-out old, for the fetcher's idle pool."""
        return self.sched.active()

    def busy_servers(self, limit: int = 20) -> list[tuple[str, int, int]]:
        """``(server, fetches in progress, parked queues)`` of the busiest servers."""
        with self._cond:
            return self.gate.busiest(limit)

    def held_servers(self) -> tuple[int, int]:
        """``(servers, queues)`` the server cap holds now (see :meth:`ServerGate.held`)."""
        with self._cond:
            return self.gate.held()

    @property
    def config(self) -> FrontierConfig:
        """The frontier section of the order this frontier runs with."""
        return self._config
