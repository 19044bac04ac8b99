"""RedisExchange: one thread per worker process that does the frontier's claim/finish traffic.

Each round is one pipelined round trip (per Redis node) carrying, in order: the FINISHes the
worker's threads put since the last round, CLAIMs of due queues read earlier, and, when those
cannot meet the demand, a fresh read of the due queues. A FINISH may also lease its queue's
next URI to this worker at once (``reclaim``) when threads are waiting and the queue may be
fetched now: a finish and the next claim in one script call, with no read of the due queues.
It does not when another worker, hungry in that shard, holds two or more URIs fewer than this
one (``held``): then the queue goes to the ready set for that worker, so workers end up sharing
the queues evenly without passing them back and forth.

One round runs at a time per process. A thread that wants a URI runs the round itself when none
is under way (no hand-off between threads); otherwise it waits for the round's URIs
(``on_leased``). While threads wait and nothing is due, Redis is polled when the next queue is
due, at most every :data:`HUNGRY_POLL_S` (:meth:`RedisExchange.poll_at`): by the one waiting
thread that sleeps until then (the frontier's timer,
:class:`~crawler.frontier.rotation.wait_timer.WaitTimer`), not by every one. The exchange's own
thread runs the rounds nobody else does: FINISHes gathered while every thread is fetching (after
:data:`FINISH_LINGER_S`), a poll made due at once (:meth:`RedisExchange.poke`), the guard's
capacity sent again in time, and a poll no waiting thread sleeps until (``polled``). A leased
URI stays leased in Redis until its FINISH is sent, so a worker killed meanwhile only leaves
leases, which the reaper hands back.

Order and activation follow :mod:`crawler.frontier.policy`: a read's due queues are claimed
lower precedence first, then earlier due; inactive queues are activated only for threads the due
ones cannot serve, and while the worker's
:class:`~crawler.frontier.policy.lateness_guard.LatenessGuard` allows. The read names the
inactive queues first in line in every shard; this worker picks the first across all shards (by
eligible score, then queue id) and its CLAIMs activate them, so a read spread over a Cluster's
nodes, each with its own clock, decides as one server would. While the guard trims the active
set, a queue due after a politeness wait is rotated out by its CLAIM instead of leased, and
logged (``queues_rotated_late``, :mod:`~crawler.frontier.rotation.rotation_log`, as the work-queue
frontier does).
The guard's times are Redis's (ms / 1000), carried forward by the monotonic clock between reads
(:meth:`RedisExchange.redis_now_s`). The cap is one for the crawl, kept in Redis: each worker's
guard learns its own capacity (from its threads and fetch times), sends it with a read when it
changed or half a lease time after it last did (Redis forgets a worker's capacity not sent
again within a lease time, as it reaps the leases of a worker gone), and every read brings each
guard the sum of the capacities the workers sent (:attr:`LatenessGuard.crawl_cap`).

Thread-safety: shares the frontier's lock; ``demand`` and ``on_leased`` are called with it held,
and so is the guard.
"""

from __future__ import annotations

import math
import threading
import time
from typing import TYPE_CHECKING, Any

from crawler.frontier.policy.eligible_order import eligible_key
from crawler.frontier.policy.lateness_guard import LatenessGuard
from crawler.frontier.redis.redis_conn import RedisUnavailableError
from crawler.frontier.redis.redis_leases import (
    CLAIM_DUE,
    CLAIM_INACTIVE,
    CLAIM_OR_ROTATE,
    DueQueue,
    DueRead,
    Lease,
)
from crawler.frontier.rotation.rotation_log import RotationLog

if TYPE_CHECKING:
    from collections.abc import Callable

    from crawler.frontier.redis.redis_store import RedisQueueStore

MAX_BATCH = 512
CANDIDATES_PER_SHARD = 8
CANDIDATES_TTL_S = 0.05
"""How long a read of the due queues serves claims (a stale one only costs failed claims)."""
MAX_IDLE_SLEEP_S = 0.2
HUNGRY_POLL_S = 0.05
"""How often a worker whose threads wait reads the due queues while none is due: a queue
another worker releases (or leaves to it) is found within this."""
YIELD_S = 0.05
"""How long a worker that left a queue to a hungry worker waits before reading the due queues."""
HUNGRY_MS = 500
"""How long a read that found nothing due keeps other workers from reclaiming in its shards."""
FINISH_LINGER_S = 0.003
"""How long FINISHes wait for company while no thread here waits for a URI (the queues stay
leased meanwhile, so this delays other workers' next fetch from them by as much)."""
RECLAIM_ARG = 8
"""Index of the reclaim flag in a FINISH item's args (after qid)."""

FinishItem = tuple[int, str, str, list[Any], str]
"""(shard, queue id, server, FINISH args after the qid, URI for the log)."""
Leased = tuple[int, str, str, Lease]
"""(shard, queue id, server, lease) of a URI leased to this worker."""


class RedisExchange:
    """Batches a worker's FINISH and CLAIM traffic (see the module docstring)."""

    def __init__(
        self,
        store: RedisQueueStore,
        logger: Any,
        lock: threading.Lock,
        *,
        max_conn: int,
        interval_ms: int,
        demand: Callable[[], int],
        on_leased: Callable[[list[Leased]], None],
        held: Callable[[], int] = lambda: 0,
        guard: LatenessGuard | None = None,
        polled: Callable[[float], bool] = lambda _poll_s: False,
    ) -> None:
        self._store = store
        self._leases = store.leases
        self.guard = guard if guard is not None else LatenessGuard(0.0)
        """The worker's lateness guard (under the lock)."""
        self.active = 0
        """Active queues crawl-wide at the last read of the due queues."""
        self._offset_s = 0.0  # Redis's time minus the monotonic clock, at the last read
        self._sent_capacity = math.nan  # the guard's capacity as last sent to Redis
        self._sent_at = -math.inf
        self._resend_s = store.lease_ms / 2000.0
        self._logger = logger
        self._rotation_log = RotationLog(logger)
        self._cond = threading.Condition(lock)
        self._max_conn = max_conn
        self._interval_ms = interval_ms
        self._demand = demand
        self._on_leased = on_leased
        self._held = held
        self._polled = polled  # whether a waiting thread wakes by itself for a poll at this time
        self._finishes: list[FinishItem] = []
        self._sending = 0
        self._cands: list[DueQueue] = []
        self._cands_at = -CANDIDATES_TTL_S
        self._poll_at = 0.0
        self._first_put = 0.0
        self._busy = False
        self._closed = False
        self.lost_leases = 0
        self.rounds = 0
        self.reads_started = 0
        self.last_empty_read = 0
        """Number of the last read of the due queues that found none (reads are numbered from 1
        as they start): a thread that asked after read n started knows nothing is due once this
        is past n."""
        self._thread = threading.Thread(target=self._run, name="frontier-exchange", daemon=True)

    def start(self) -> None:
        self._thread.start()

    # ------------------------------------------------------------ called with the lock held
    def put(self, item: FinishItem) -> None:
        """Queue a FINISH for the next round.

        Wakes the exchange thread only when this FINISH is the first one waiting and no round
        is under way: with FINISHes already waiting the thread is lingering for them (or a
        waiting thread runs the round itself, see :meth:`ready`), and a round under way wakes
        it when done. Waking it at every FINISH cost a worker ~9% of its CPU."""
        finishes = self._finishes
        finishes.append(item)
        if len(finishes) == 1:
            self._first_put = time.monotonic()
            if not self._busy:
                self._cond.notify_all()

    def poke(self, fresh: bool = False) -> None:
        """The demand grew (or, ``fresh``, new queues may be due): run a round now."""
        if fresh:
            self._poll_at = 0.0
            self._cands_at = -CANDIDATES_TTL_S
        if not self._busy:  # else the round under way wakes the exchange thread when done
            self._cond.notify_all()

    def pending(self) -> int:
        """FINISHes not yet acknowledged by Redis."""
        return len(self._finishes) + self._sending

    # ------------------------------------------------------------ any thread
    def wait_idle(self, timeout_s: float) -> bool:
        """Wait until every FINISH put so far was sent; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._finishes and not self._sending, timeout_s)

    def close(self) -> None:
        """Send the FINISHes put so far, stop the thread. Idempotent."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout=30)
        with self._cond:
            rest, self._finishes = self._finishes, []
        if rest:
            self._send(rest, [], 0)

    def send_now(self, batch: list[FinishItem]) -> None:
        """Send ``batch`` from the calling thread (after :meth:`close`)."""
        if batch:
            self._send(batch, [], 0)

    def redis_now_s(self) -> float:
        """Redis's time now (s), as of the last read carried forward by the monotonic clock."""
        return time.monotonic() + self._offset_s

    def ready(self, now: float) -> bool:
        """Whether a thread that wants URIs should run a round now (lock held): none is under
        way and FINISHes wait or the due queues may have changed."""
        return not self._busy and (bool(self._finishes) or now >= self._poll_at)

    @property
    def busy(self) -> bool:
        """Whether a round is under way."""
        return self._busy

    def poll_at(self) -> float:
        """When (``time.monotonic()``) a round is worth running for a waiting thread (lock
        held): inf while one is under way (its end wakes the threads it leased URIs for)."""
        return math.inf if self._busy else self._poll_at

    # ------------------------------------------------------------ rounds
    def _run(self) -> None:
        """The background thread: rounds nobody else runs (FINISHes while every thread is busy
        fetching, a poll due now, a poll no waiting thread wakes for, the guard's capacity
        sent again in time)."""
        cond = self._cond
        with cond:
            while True:
                while True:
                    now = time.monotonic()
                    if self._busy:
                        cond.wait()
                        continue
                    if self._closed:
                        break
                    want = self._demand()
                    refresh_s = self._refresh_in(now)
                    if (want > 0 and (self._finishes or now >= self._poll_at)) or refresh_s <= 0:
                        break
                    if self._finishes:
                        # No thread waits: let FINISHes gather a moment, one round trip for many.
                        linger_s = self._first_put + FINISH_LINGER_S - now
                        if linger_s <= 0:
                            break
                        cond.wait(min(linger_s, refresh_s))
                        continue
                    # A waiting thread that sleeps until the poll runs it: no second wake-up.
                    polls = want > 0 and not self._polled(self._poll_at)
                    wait_s = min(self._poll_at - now if polls else math.inf, refresh_s)
                    cond.wait(None if math.isinf(wait_s) else wait_s)
                if self._closed and not self._finishes:
                    return
                self.round()

    def _refresh_in(self, now: float) -> float:
        """Seconds until the guard's capacity must be sent again, so that Redis keeps counting
        it while no thread here needs a read (inf: the guard is off)."""
        if not self.guard.enabled:
            return math.inf
        return self._sent_at + self._resend_s - now

    def round(self) -> None:
        """One round trip for the current demand (lock held on entry and exit; released during
        the I/O). Callers check :meth:`ready` first; one round runs at a time."""
        cond = self._cond
        want = 0 if self._closed else self._demand()
        self._busy = True
        batch = self._finishes[:MAX_BATCH]
        del self._finishes[:MAX_BATCH]
        self._first_put = time.monotonic()
        self._sending = len(batch)
        reclaims = 0
        for item in batch:
            if reclaims >= want:
                break
            item[3][RECLAIM_ARG] = 1
            reclaims += 1
        rest = want - reclaims
        fresh = time.monotonic() - self._cands_at < CANDIDATES_TTL_S
        picked = self._cands[:rest] if fresh and rest > 0 else []
        del self._cands[: len(picked)]
        guard = self.guard
        claims = [(c.shard, c.qid, self._claim_how(c)) for c in picked]
        hungry = rest > len(claims)
        need_due = hungry or self._refresh_in(time.monotonic()) <= 0
        activate, cap = 0, -2
        if need_due:
            self.reads_started += 1
            activate = rest - len(claims)
            # The guard notes whether the cap holds threads back (as the last read's count
            # says); DUE holds the active queues under it with the count as it is now.
            guard.may_activate(self.active, activate)
            mono = time.monotonic()
            offered = guard.offered
            if offered != self._sent_capacity or mono - self._sent_at >= self._resend_s:
                cap = -1 if not guard.enabled or math.isinf(offered) else int(offered)
                self._sent_capacity, self._sent_at = offered, mono
        cond.release()
        try:
            ok, leased, due, yielded = self._send(
                batch, claims, CANDIDATES_PER_SHARD if need_due else 0, activate, cap, hungry
            )
        finally:
            cond.acquire()
            self._busy = False
            self._sending = 0
        self.rounds += 1
        now = time.monotonic()
        if not ok:
            self._poll_at = now + MAX_IDLE_SLEEP_S
            self._sent_capacity = math.nan  # send it again with the next read
        elif yielded:
            self._poll_at = now + YIELD_S  # give the hungry worker a head start
        elif due is not None:
            found, wait_ms = due.queues, due.wait_ms
            self.active = due.active
            self._offset_s = due.now_ms / 1000.0 - now
            # One cap for the crawl: the sum of the capacities the workers sent.
            guard.crawl_cap = math.inf if due.cap < 0 else float(due.cap)
            found.sort(key=lambda c: (*eligible_key(c.precedence, c.due_ms), c.qid))
            # Hold queues: an inactive queue is activated only for a thread no due queue can
            # serve, and while the active queues stay under the cap.
            want = activate - len(found)
            if not math.isinf(guard.cap):
                want = min(want, int(guard.cap) - due.active)
            if want > 0:
                found += due.inactive[:want]
            self._cands, self._cands_at = found, now
            if leased or found:
                self._poll_at = 0.0
            else:
                self.last_empty_read = self.reads_started
                wait_s = HUNGRY_POLL_S if wait_ms < 0 else wait_ms / 1000.0
                self._poll_at = now + min(HUNGRY_POLL_S, max(0.002, wait_s))
        elif batch:
            self._poll_at = 0.0  # queues were just released: they may be due
        if self._rotation_log.due(guard, (redis_now := self.redis_now_s())):
            self._rotation_log.log(guard, self.active, redis_now, time.time())
        self._on_leased(leased)
        cond.notify_all()

    def _claim_how(self, c: DueQueue) -> int:
        """How to claim candidate ``c`` (lock held): activate it if inactive; rotate it out if
        the guard trims the active set and it was due after a politeness wait."""
        if c.inactive:
            return CLAIM_INACTIVE
        if c.delay_ms > 0 and self.guard.take_rotation(
            self.active, c.qid.rpartition("\t")[0], self.redis_now_s()
        ):
            return CLAIM_OR_ROTATE
        return CLAIM_DUE

    def _send(
        self,
        batch: list[FinishItem],
        claims: list[tuple[int, str, int]],
        due_per_shard: int,
        inactive: int = 0,
        cap: int = -2,
        hungry: bool = True,
    ) -> tuple[bool, list[Leased], DueRead | None, bool]:
        """One round trip: whether it went through, the URIs leased to this worker, the due
        queues read (naming ``inactive`` inactive queues per shard) or None, whether a queue
        was left to a hungry worker. ``hungry``: a read that finds nothing due records this
        worker as hungry (not when only the guard's capacity is sent again)."""
        citems = [(shard, qid, qid.rpartition("\t")[2], how) for shard, qid, how in claims]
        try:
            done, got, due = self._leases.exchange(
                [(s, q, srv, args) for s, q, srv, args, _ in batch],
                citems,
                self._max_conn,
                self._interval_ms,
                due_per_shard,
                HUNGRY_MS if hungry else 0,
                self._held(),
                inactive,
                cap,
            )
        except RedisUnavailableError as exc:
            # Past the outage timeout: the leases expire and the URIs are crawled again.
            self._logger.error("frontier_exchange_failed", uris=len(batch), error=str(exc))
            return False, [], None, False
        except Exception:
            self._logger.exception("frontier_exchange_failed", uris=len(batch))
            return False, [], None, False
        leased: list[Leased] = []
        yielded = False
        for (state, lease), (shard, qid, server, _, uri) in zip(done, batch, strict=True):
            if not state:
                self.lost_leases += 1
                self._logger.warning("lease_lost", uri=uri, queue=qid)
            elif lease is not None:
                leased.append((shard, qid, server, lease))
            elif state == 3:
                self._logger.info("queue_retired", queue=qid.rpartition("\t")[0], server=server)
            yielded = yielded or state == 2
        for lease, (shard, qid, server, _) in zip(got, citems, strict=True):
            if lease is not None:
                leased.append((shard, qid, server, lease))
        return True, leased, due, yielded
