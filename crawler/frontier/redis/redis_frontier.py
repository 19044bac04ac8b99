"""RedisFrontier: the Frontier protocol over a :class:`RedisQueueStore`, shared by many workers.

The per-URI policy is the work-queue frontier's (same canonicalization, uniq filter, URI
precedence, queue assignment, sort key, retries of -1/-2/-3/-50 up to ``max_retries`` after
``retry_delay_s`` and of HTTP 408/429/5xx up to ``http_max_tries`` (:class:`~crawler.frontier.
retry_policy.RetryPolicy`), politeness delay, Retry-After back-off, bandwidth hold, and the
adaptive pace per server (:mod:`~crawler.frontier.politeness.server_pace`), kept in the server's
Redis hash and updated by FINISH, so every worker's answers from a server pace all of them). The
queue states are in Redis (see :mod:`crawler.frontier.redis.redis_scripts`); the parts, in their own
modules:

* ``schedule_many`` (a page's outlinks) takes two round trips whatever its link count, three
  on a Cluster (:mod:`~crawler.frontier.redis.redis_scheduler`). ``schedule`` is
  ``schedule_many`` of one.
* ``next``: a round of this process's :class:`~crawler.frontier.redis.redis_exchange.RedisExchange`
  (run by the asking thread itself when none is under way, else awaited) leases due queues for
  all waiting threads at once, most urgent first (DUE reads them and names the inactive ones
  first in line; CLAIM activates those the worker picked, re-checks due time and the server
  cap and leases the head for ``lease_s``, :mod:`~crawler.frontier.redis.redis_leases`), one
  round trip per batch; Redis is polled only while a thread waits. Of the waiting threads one,
  the timer (:class:`~crawler.frontier.rotation.wait_timer.WaitTimer`, the work-queue
  frontier's rule), sleeps until the next poll or local prerequisite's due time; the others
  until a round leases URIs for them (one woken per URI) or their own deadline.
* ``finished``: FINISH (sent by the exchange with the next round) removes (or, for a retry,
  rewrites) the URI, frees the server slot, snoozes the queue for what is left of the
  politeness delay counted from the end of the fetch (the worker takes off the time since, so
  Redis's clock and the worker's need not agree; at once if none is left), wakes
  queues parked on the server and, when threads here wait and the queue may be fetched now,
  leases its next URI to this worker in the same call.
* ``claim`` (a browser page's sub-resource, fetched inline) records the URI in the shared
  already-seen set without queueing it; ``inline_gate``
  (:mod:`~crawler.frontier.redis.redis_inline_gate`) makes such fetches take a slot of the
  server's crawl-wide cap and follow its pace.
* a prerequisite (``P`` hop) of a URI in flight here stays in this worker and its via's queue
  stays leased meanwhile (:mod:`~crawler.frontier.redis.redis_prerequisites`); a background
  thread renews this worker's leases and reaps expired ones
  (:mod:`~crawler.frontier.redis.redis_lease_keeper`).

The decisions are the work-queue frontier's, from :mod:`crawler.frontier.policy`: a finished
URI's outcome, cost and delays (:class:`~crawler.frontier.policy.finish_policy.FinishPolicy`)
go to FINISH as arguments; FINISH charges the cost to the queue in Redis, retires a queue
whose spent reaches ``queue_total_budget`` (its URIs stay in Redis, stop counting as queued and
are not handed out), and with ``success_counts`` sets the queue's precedence at each success. A
new queue is *inactive* (the inactive set, by precedence then FIFO) until a read of the due
queues finds fewer than this worker's waiting threads and the worker activates the most urgent
ones, across every shard, for the rest (Heritrix's hold queues); due queues are claimed lower
precedence first, then earlier due; a queue that spent ``balance_replenish_amount`` this
session while others wait inactive goes back to the inactive set; one whose precedence is at
or past ``precedence_floor`` waits, ineligible. The
:class:`~crawler.frontier.policy.lateness_guard.LatenessGuard` (the same code as the work-queue
frontier's, one per worker) learns how late this worker's fetches start after their queue's
politeness wait, caps the active queues crawl-wide that the worker may activate, and
while it trims, has CLAIM rotate a due queue back to the inactive set.
``tests/contracts/test_policy_parity.py`` runs both frontiers through the same traces.
Deviations from :class:`~crawler.frontier.WorkQueueFrontier`: ``success_counts`` precedence
is updated by FINISH at each success (not when the queue next waits its turn); a hash-policy
queue spanning servers is split per server (its budget too); the cap on active queues is
checked against the count at the last read (workers reading at once may both activate up to
it). ``queue_details`` reads Redis
(:mod:`~crawler.frontier.redis.redis_queue_report`); ``is_empty`` and ``snapshot`` are crawl-wide
(:mod:`~crawler.frontier.redis.redis_snapshot`).

Reads/writes on the CrawlURI as WorkQueueFrontier does. Thread-safe: per-call Redis scripts are
atomic; local state (in-flight map, claimed URIs, ordinals, prerequisites, the exchange's
batches) is under one lock.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import structlog

from crawler.clock import Clock, SystemClock
from crawler.curi import CrawlURI, FetchStatus
from crawler.frontier.assignment import QueueAssignmentPolicy
from crawler.frontier.frontier import FrontierSnapshot, FrontierStateError
from crawler.frontier.frontier_report import QueueDetail
from crawler.frontier.intake.preparer import FrontierPreparer
from crawler.frontier.intake.recently_seen import RecentlySeen
from crawler.frontier.policy.finish_policy import FinishPolicy
from crawler.frontier.policy.lateness_guard import LatenessGuard
from crawler.frontier.policy.pace_rule import NOTHING, pace_arguments, pace_inputs
from crawler.frontier.policy.queue_precedence import SUCCESS_COUNTS, precedence_mode
from crawler.frontier.redis.redis_conn import RedisUnavailableError
from crawler.frontier.redis.redis_exchange import Leased, RedisExchange
from crawler.frontier.redis.redis_inline_gate import RedisInlineGate
from crawler.frontier.redis.redis_lease_keeper import InFlight, LeaseKeeper
from crawler.frontier.redis.redis_leases import Lease, finish_args
from crawler.frontier.redis.redis_metrics_view import RedisMetricsView, WorkerLeases
from crawler.frontier.redis.redis_prerequisites import LocalPrerequisites
from crawler.frontier.redis.redis_queue_report import redis_queue_details
from crawler.frontier.redis.redis_ride import Ride
from crawler.frontier.redis.redis_scheduler import RedisScheduler
from crawler.frontier.redis.redis_snapshot import redis_snapshot, shared_frontier_empty
from crawler.frontier.redis.redis_store import RedisQueueStore
from crawler.frontier.retry.retry_watch import RetriesWaiting, RetryWatch
from crawler.frontier.rotation.queue_release import fetch_answer, fetch_end_ms
from crawler.frontier.rotation.wait_timer import WaitTimer
from crawler.order.schema import FrontierConfig
from crawler.uniq.redis_uniq import RedisUriUniqFilter
from crawler.uniq.uniq_filter import UniqStateError, UriUniqFilter

PREFETCH = 0
"""URIs leased ahead while threads wait, so the next round trip overlaps their work."""
MAX_READ_WAIT_S = 5.0


class RedisFrontier:
    """A worker's view of the shared frontier. Build with the parts unopened, then :meth:`open`."""

    shared: ClassVar[bool] = True

    def __init__(
        self,
        store: RedisQueueStore,
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
        self._uniq = uniq
        self._config = config
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._on_final = on_final
        self._logger: Any = logger if logger is not None else structlog.get_logger("frontier")
        self._prep = prep = FrontierPreparer(config, policy)
        self._recently_seen = RecentlySeen(prep, uniq)
        self._finish = FinishPolicy(config, prep.cost)
        retry = self._finish.retry
        self.retry_watch = RetryWatch()
        """The URIs waiting for a retry after a failed try of this worker (status, report)."""
        pace = config.pace
        self._signals = frozenset(pace.signal_statuses) if pace.enabled else frozenset()
        store.pace_args = pace_arguments(pace)
        self._paced = pace.enabled
        mode = precedence_mode(config.queue_precedence_policy)
        base, floor = config.base_queue_precedence, config.precedence_floor
        store.precedence_args = [floor, base, mode]
        self._budgets = (
            config.queue_total_budget,
            config.balance_replenish_amount,
            floor,
            base if mode == SUCCESS_COUNTS else -1,
        )
        self.guard = LatenessGuard(config.lateness_tolerance)
        """This worker's lateness guard (:mod:`~crawler.frontier.policy.lateness_guard`), the
        same as the work-queue frontier's: fed the lateness of this worker's fetch starts, it
        caps the activation of inactive queues and rotates due ones out (under the lock)."""
        pol = config.politeness
        self._min_delay_ms = pol.min_delay_ms
        self._max_conn = pol.host_max_connections
        self._interval_ms = pol.host_min_interval_ms
        self._lock = lock = threading.Lock()
        self._in_flight: dict[str, InFlight] = {}
        in_flight, logger, max_conn = self._in_flight, self._logger, self._max_conn
        self._claimed: deque[CrawlURI] = deque()
        self._waiters = 0
        self._wake = threading.Condition(lock)
        self._answer = threading.Condition(lock)
        """Where threads past their deadline wait for the answer of a read begun after their
        call (see :meth:`next`): a read that finds nothing wakes them, and only them."""
        self._answering = 0  # threads waiting on self._answer
        self.timer = WaitTimer()
        """Which thread blocked in :meth:`next` sleeps until the next poll of Redis or local
        prerequisite's due time (:class:`~crawler.frontier.rotation.wait_timer.WaitTimer`);
        its ``wakeups`` count every wake-up of a waiting thread."""
        self._runner_waits = False  # the round under way was run by a thread in next()
        self._wakes = 0  # bumped by wake_waiters(): a next() that sees it change returns None
        self._exchange = exchange = RedisExchange(
            store,
            logger,
            lock,
            max_conn=max_conn,
            interval_ms=self._interval_ms,
            demand=self._demand,
            on_leased=self._leased,
            held=in_flight.__len__,
            guard=self.guard,
            polled=self._polled,
        )
        self._prerequisites = prereqs = LocalPrerequisites(
            self._wake,
            in_flight,
            self._local_due,
            logger,
            retry=retry,
            on_final=on_final,
            min_delay_s=self._min_delay_ms / 1000.0,
            watch=self.retry_watch,
        )
        self._scheduler = RedisScheduler(
            store, uniq, prep, lock, exchange, in_flight, prereqs, uri_error
        )
        self._finishing = 0
        self._closed = threading.Event()
        self._keeper = LeaseKeeper(
            store, exchange, lock, in_flight, self._closed, logger, max_conn=max_conn
        )
        self.inline_gate = RedisInlineGate(
            store, lock, in_flight, self._clock, pol, self._inline_pace_args
        )
        """The server gate for fetches made outside the frontier (browser sub-resources)."""

    # ------------------------------------------------------------ lifecycle
    def open(self, state_dir: Path) -> None:
        """Connect the store and the uniq filter; start the exchange and lease keeper threads."""
        self._store.open(state_dir)
        try:
            self._uniq.open(state_dir)
        except (UniqStateError, RedisUnavailableError) as exc:
            self._store.close()
            raise FrontierStateError(f"cannot open the already-seen filter: {exc}") from exc
        if isinstance(self._uniq, RedisUriUniqFilter):
            # links seen long ago are asked about ahead of the scope only where the schedule
            # can take that answer instead of asking again (one script records and queues)
            self._uniq.ask_ahead = self._scheduler.records_here()
        self._exchange.start()
        self._keeper.start()

    def close(self) -> None:
        """Stop the threads and disconnect. URIs still leased return after their lease."""
        if self._closed.is_set():
            return
        self._closed.set()
        self.inline_gate.close()
        with self._lock:
            self._wake.notify_all()
            self._answer.notify_all()
        self._exchange.close()
        with self._lock:
            unused = list(self._claimed)
            self._claimed.clear()
        self._exchange.send_now(self._keeper.release(unused))  # leased ahead, never handed out
        self._keeper.join(timeout_s=5)
        self._store.close()
        self._uniq.close()

    # ------------------------------------------------------------ schedule
    def schedule(self, curi: CrawlURI) -> bool:
        """Queue ``curi`` unless already seen crawl-wide. True if queued."""
        if self._closed.is_set():
            return False
        return self._scheduler.schedule_many((curi,))[0]

    def schedule_many(self, curis: Sequence[CrawlURI]) -> list[bool]:
        """Queue each of ``curis`` unless already seen crawl-wide (or earlier in ``curis``); one
        flag per URI, True if queued. A few round trips whatever the count (module doc)."""
        if self._closed.is_set():
            return [False] * len(curis)
        return self._scheduler.schedule_many(curis)

    def claim(self, curi: CrawlURI) -> bool:
        """Mark ``curi`` (fetched outside the frontier: a browser page's sub-resource) as seen
        crawl-wide without queueing it; True if it was new. A worker that queues the same URI
        after this takes it back (:mod:`~crawler.frontier.redis.redis_scheduler`): every
        worker's HTTP path leaves it alone."""
        if self._closed.is_set():
            return False
        try:
            curi.canonical = self._prep.canonical(curi.uri)
        except ValueError:
            return False
        return bool(self._uniq.add(curi.canonical))

    def carry_before_queueing(self, source: Callable[[], Ride | None]) -> None:
        """Before queueing URIs, apply ``source()``'s writes (the digest index's waiting
        entries), riding in the already-seen check's or the SCHEDULE's round trip
        (:mod:`~crawler.frontier.redis.redis_scheduler`). Call before the crawl starts."""
        self._scheduler.before_queueing = source

    def seen_recently(self, uris: Sequence[str]) -> list[bool]:
        """True for each URI recorded crawl-wide as far as the uniq filter can tell (its cache;
        in a crawl larger than the cache, one round trip for a page's links it does not know,
        :meth:`~crawler.uniq.redis_uniq.RedisUriUniqFilter.recorded`): a True is final, a False
        only means "not known here". Lets the candidates step skip the scope for a page's links
        seen already, as in one process
        (:class:`~crawler.frontier.intake.recently_seen.RecentlySeen`)."""
        return self._recently_seen.seen(uris)

    # ---------------------------------------------------------------- next
    def next(self, timeout_s: float) -> CrawlURI | None:
        """A leased URI whose queue and server may be fetched now, or None after ``timeout_s``.

        Runs a round of the exchange itself when one is due and none is under way; otherwise
        waits: one waiting thread (the timer) until the next poll or local due time, the others
        until a round leases URIs for them or their own deadline."""
        deadline = time.monotonic() + max(0.0, timeout_s)
        with self._lock:
            self._waiters += 1
            try:
                exchange = self._exchange
                prerequisites = self._prerequisites
                # Even with no time left, wait for one read of Redis begun after this call
                # (bounded), so ``next(0)`` answers for the shared frontier as it is now.
                read_by = -1
                wakes = self._wakes
                while not self._closed.is_set() and self._wakes == wakes:
                    curi, local_due_s = prerequisites.take()
                    if curi is not None:
                        return curi
                    if self._claimed:
                        return self._claimed.popleft()
                    if read_by < 0:
                        read_by = exchange.reads_started + 1
                    now = time.monotonic()
                    if exchange.ready(now):
                        self._runner_waits = True  # this thread does the round trip: no hand-off
                        try:
                            exchange.round()
                        finally:
                            self._runner_waits = False
                        continue
                    remaining = deadline - now
                    event_s = min(local_due_s, exchange.poll_at())
                    if remaining > 0:
                        self.timer.wait(self._wake, remaining, event_s, now)
                        continue
                    if exchange.last_empty_read >= read_by or now > deadline + MAX_READ_WAIT_S:
                        return None
                    self._answering += 1
                    try:
                        self.timer.wait(self._answer, MAX_READ_WAIT_S, event_s, now)
                    finally:
                        self._answering -= 1
                return None
            finally:
                self._waiters -= 1
                if self.timer.hand_on(self._pending()):
                    self._notify(1)

    def wake_waiters(self) -> None:
        """Make every ``next()`` blocked now return None at once (the toe pool pausing or
        stopping)."""
        with self._lock:
            self._wakes += 1
            self._wake.notify_all()
            self._answer.notify_all()

    def _pending(self) -> bool:
        """Whether a waiting thread has a timed event to sleep until (lock held): a poll (no
        round under way; its end wakes threads) or a local due time, and no leased URI is left
        for the threads already woken to take (the last of them hands the timer on)."""
        if self._claimed:
            return False
        return not self._exchange.busy or self._prerequisites.next_due_s() < math.inf

    def _notify(self, n: int) -> None:
        """Wake ``n`` waiting threads (lock held): those waiting for URIs first, then those past
        their deadline waiting for a read's answer."""
        on_wake = self.timer.waiting - self._answering
        if on_wake > 0:
            self._wake.notify(min(n, on_wake))
        if n > on_wake and self._answering:
            self._answer.notify(n - max(on_wake, 0))

    def _polled(self, poll_s: float) -> bool:
        """Whether a waiting thread wakes by itself for a poll at ``poll_s`` (lock held): the
        exchange thread then leaves the poll to it. A waiter woken to become the timer counts."""
        return self.timer.timer_s <= poll_s or self.timer.handing

    def _local_due(self, due_s: float) -> None:
        """A local prerequisite (or held via) became due at ``due_s`` (lock held): wake one
        waiting thread if the timer sleeps longer (or none is the timer)."""
        if self.timer.earlier(due_s):
            self._notify(1)

    def _demand(self) -> int:
        """URIs the exchange should lease now (called with the lock held)."""
        if not self._waiters:
            return 0
        return self._waiters + PREFETCH - len(self._claimed)

    def _leased(self, leased: list[Leased]) -> None:
        """Take URIs the exchange leased, if any, after a round (called with the lock held), and
        wake as many waiting threads as there are URIs (the thread that ran the round, if it
        waits for one, takes one itself). A read that found nothing wakes the threads waiting
        for its answer only; the next poll's time goes to the timer (the thread that ran the
        round, if one in :meth:`next`; else one waiter)."""
        now = self._clock.monotonic()
        wall = self._clock.time()
        for shard, qid, server, lease in leased:
            member = lease.member
            curi = CrawlURI.from_bytes(member[8:])
            curi.queue_key = qid.rpartition("\t")[0]
            self._in_flight[curi.uri] = InFlight(shard, qid, server, member, now, lease, wall)
            self._claimed.append(curi)
        runner_waits = self._runner_waits
        if leased:
            n = len(leased) - (1 if runner_waits else 0)
            if n > 0:
                self._notify(n)
            return
        if self._answering:  # a read found nothing: threads waiting for its answer may return
            self._answer.notify_all()
        if not runner_waits and self.timer.earlier(self._exchange.poll_at()):
            self._notify(1)

    # ------------------------------------------------------------ finished
    def finished(self, curi: CrawlURI) -> bool:
        """Retry ``curi`` (False) or record its final disposition and call ``on_final`` (True)."""
        status = curi.status
        prereqs = self._prerequisites
        with self._lock:
            via_uri = prereqs.handed_out.pop(id(curi), None)
            if via_uri is not None:
                entry = None
            elif status == FetchStatus.DEFERRED and prereqs.defer(curi):
                return False  # its queue stays leased until this worker has the prerequisite
            else:
                entry = self._in_flight.pop(curi.uri, None)
        if via_uri is not None:
            return prereqs.finish(curi, via_uri)
        if entry is None:
            raise ValueError(f"{curi!r} was not handed out by this frontier or is already finished")
        out = self._finish.settle(curi)
        max_conn = self._max_conn
        interval_ms = self._interval_ms if entry.server else 0
        pace = self._pace_args(out.fetched, entry.server)
        backoff_ms, hold_ms = int(out.backoff_s * 1000), int(out.hold_s * 1000)
        if out.fetched is not None and entry.lease is not None and entry.lease.delay_ms > 0:
            self._fetched_late(entry, entry.lease, out.fetched[1])
        if out.retried:
            if out.failed_try:
                self.retry_watch.noted(curi, out.wait_s, self._clock.time())
            curi.reset_for_retry()
            member = entry.member[:8] + curi.to_bytes()
            args = finish_args(
                entry.member,
                "r",
                new_member=member,
                delay_ms=int(out.wait_s * 1000),
                backoff_ms=backoff_ms,
                hold_ms=hold_ms,
                max_conn=max_conn,
                interval_ms=interval_ms,
                pace=pace,
                cost=out.cost,
                budgets=self._budgets,
            )
            item = (entry.shard, entry.qid, entry.server, args, curi.uri)
            with self._lock:
                self._served(entry, int(out.wait_s * 1000))
                self._exchange.put(item)
            return False
        self.retry_watch.done(curi.uri)
        polite_ms = int(out.polite_s * 1000)
        # FINISH counts the delay from its own time: take off what passed since the fetch ended.
        delay_ms = max(polite_ms - self._since_fetch_end_ms(curi, entry), backoff_ms, 0)
        args = finish_args(
            entry.member,
            out.kind,
            delay_ms=delay_ms,
            backoff_ms=backoff_ms,
            hold_ms=hold_ms,
            max_conn=max_conn,
            interval_ms=interval_ms,
            pace=pace,
            cost=out.cost,
            budgets=self._budgets,
            polite_ms=polite_ms,
        )
        with self._lock:
            self._finishing += 1
            self._served(entry, delay_ms)
        try:
            # Log first: a worker killed between the two leaves a URI crawled (and logged) twice
            # rather than one crawled and never logged.
            if self._on_final is not None:
                self._on_final(curi)
        except Exception:
            self._logger.exception("frontier_on_final_failed", uri=curi.uri)
        with self._lock:
            self._exchange.put((entry.shard, entry.qid, entry.server, args, curi.uri))
            self._finishing -= 1
        return True

    def _fetched_late(self, entry: InFlight, lease: Lease, start_ms: int) -> None:
        """Tell the lateness guard how late this fetch started after its queue's politeness
        wait: the lease's lateness in Redis's time, plus the time from the lease to the fetch
        start here."""
        after_lease_s = max(0.0, start_ms / 1000.0 - entry.leased_wall_s)
        started_s = lease.now_ms / 1000.0 + after_lease_s
        with self._lock:
            now_s = self._exchange.redis_now_s()
            started_s = min(started_s, now_s)
            self.guard.fetched(lease.due_ms / 1000.0, lease.delay_ms / 1000.0, started_s, now_s)

    def _served(self, entry: InFlight, wait_ms: int) -> None:
        """Tell the lateness guard that a thread held ``entry``'s URI from its lease until now
        and that its queue waits ``wait_ms`` before it is due again; the threads serving this
        worker are those waiting in ``next()`` and those holding a URI (this one included); the
        waiting ones are idle only if the last read of the due queues found none. Called with
        the lock held."""
        threads = self._waiters + len(self._in_flight) - len(self._claimed) + 1
        exchange = self._exchange
        # Idle: waiting while the last read of the due queues found none (not for a round trip).
        idle = self._waiters if exchange.last_empty_read >= exchange.reads_started else 0
        self.guard.served(
            self._clock.monotonic() - entry.leased_s,
            wait_ms / 1000.0,
            threads,
            idle,
            self._exchange.active,
            self._exchange.redis_now_s(),
        )

    def _since_fetch_end_ms(self, curi: CrawlURI, entry: InFlight) -> int:
        """Milliseconds since ``curi``'s fetch ended (0 if it was not fetched): its wall-clock
        age, kept between 0 and the time since the lease (so a wall clock that jumps cannot
        make it longer than the URI was out)."""
        end_ms = fetch_end_ms(curi)
        if not end_ms:
            return 0
        clock = self._clock
        age_ms = clock.time() * 1000.0 - end_ms  # then the monotonic clock: see QueueRelease
        out_ms = (clock.monotonic() - entry.leased_s) * 1000.0
        return int(max(0.0, min(age_ms, out_ms)))

    def _pace_args(self, fetched: tuple[int, int, int] | None, server: str) -> tuple[int, int, int]:
        """FINISH's pace arguments for a fetch's answer (:func:`~crawler.frontier.policy.
        pace_rule.pace_inputs`); nothing when the pace is off or no server was contacted."""
        if not self._paced or not server:
            return NOTHING
        return pace_inputs(fetched, self._signals, int(self._clock.time() * 1000))

    def _inline_pace_args(self, curi: CrawlURI, server: str) -> tuple[int, int, int]:
        """INLINE_LEAVE's pace arguments for ``curi``, fetched outside the frontier."""
        return self._pace_args(fetch_answer(curi), server)

    def flush(self, timeout_s: float = 30.0) -> bool:
        """Wait until every ``finished`` so far reached Redis; False on timeout."""
        return self._exchange.wait_idle(timeout_s)

    @property
    def lost_leases(self) -> int:
        """URIs this worker finished after its lease had expired (another worker had them)."""
        return self._exchange.lost_leases

    # ------------------------------------------------------------- reports
    def is_empty(self) -> bool:
        """Nothing queued crawl-wide and nothing being finished here (see the module doc)."""
        with self._lock:
            if self._finishing or self._in_flight or self._prerequisites.busy():
                return False
        with self._lock:
            if self._exchange.pending():
                return False
        return shared_frontier_empty(self._store)

    def snapshot(self) -> FrontierSnapshot:
        """Crawl-wide counts (all workers), from every shard's counters."""
        return redis_snapshot(self._store, self._uniq)

    def retries_waiting(self, limit: int = 10) -> RetriesWaiting:
        """The URIs waiting for a retry after a failed try of this worker (the ``limit`` due
        soonest listed): each worker knows the retries of its own fetches."""
        return self.retry_watch.waiting(self._clock.time(), limit)

    def lateness_guard(self) -> tuple[float, int, bool]:
        """``(cap on the active queues (inf: none), queues rotated out late, saturated now)``
        of this worker's :class:`~crawler.frontier.policy.lateness_guard.LatenessGuard`."""
        with self._lock:
            guard = self.guard
            return guard.cap, guard.rotated, guard.saturated

    def in_rotation(self) -> int:
        """Queues active crawl-wide as the last read of the due queues said (no round trip):
        a host's URIs go to any worker, so each worker's idle pool is sized from them all."""
        return self._exchange.active

    def paced_servers(self, limit: int = 20) -> list[tuple[str, float]]:
        """``(server, gap between fetch starts in s)`` of the servers the crawl-wide adaptive
        pace slows most, slowest first (read from Redis)."""
        return self._store.paced_servers(limit)

    def held_servers(self) -> tuple[int, int] | None:
        """``(servers, queues)`` the server cap holds crawl-wide (read from Redis, also on a
        Cluster): see :class:`~crawler.frontier.redis.redis_metrics_view.RedisMetricsView`."""
        return RedisMetricsView(self._store).held_servers()

    def worker_leases(self) -> dict[str, WorkerLeases]:
        """Per worker: the leases it holds and the age of its stalest (read from Redis)."""
        return RedisMetricsView(self._store).worker_leases()

    def queue_details(self, limit: int = 2000) -> list[QueueDetail]:
        """Per-queue detail of the ``limit`` longest non-exhausted queues crawl-wide, longest
        first (:mod:`~crawler.frontier.redis.redis_queue_report`); [] if Redis is unreachable."""
        try:
            details: list[QueueDetail] = self._store.call(
                "queue_details", lambda: redis_queue_details(self._store, self._config, limit)
            )
        except RedisUnavailableError:
            return []
        return details

    @property
    def config(self) -> FrontierConfig:
        """The frontier section of the order this frontier runs with."""
        return self._config
