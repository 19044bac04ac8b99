"""QueueScheduler: which work queue may hand out a URI next, and when the others may.

Holds the queue states of :mod:`crawler.frontier.workqueue`: the ready FIFO, the snooze heap
(queues and server timers by wake time), state counts and the
:class:`~crawler.frontier.politeness.server_gate.ServerGate` in memory; the queues themselves in a
bounded :class:`~crawler.frontier.store.queue_cache.QueueCache` over their records in the store, and
one inactive FIFO per queue precedence as rows of the store
(:class:`~crawler.frontier.store.inactive_index.InactiveIndex`): RAM grows with the queues in
rotation, not with the queues known. The frontier decides
*why* a queue changes state (budgets, retries, politeness); this class keeps the structures
consistent and answers "which queue now?" (:meth:`candidate`).

Activation (Heritrix's "hold queues"): an inactive queue is activated only when no ready queue
waits for a thread, and while the :class:`~crawler.frontier.policy.lateness_guard.LatenessGuard`
allows (``frontier.lateness_tolerance``): every URI given back tells the guard how long a
thread held it, how long its queue waits and how many threads serve the frontier
(:meth:`served`; ``waiting`` counts the threads blocked in ``next()``), the fetch of a queue that
was due after a politeness wait (``WorkQueue.due_s``) how late it started (:meth:`fetched`);
while fetches start late, the queues beyond the guard's cap are rotated out to the back of
their inactive FIFO instead of served.

Heritrix counterparts: ``WorkQueueFrontier``'s ``readyClassQueues``, ``snoozedClassQueues``,
``inactiveQueuesByPrecedence`` and ``precedenceFloor``. Not thread-safe: the frontier holds its
lock around every call; ``notify`` wakes one thread blocked in ``next()``.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from crawler.frontier.policy.lateness_guard import LatenessGuard
from crawler.frontier.politeness.server_gate import ServerGate
from crawler.frontier.store.inactive_index import InactiveIndex, row_name
from crawler.frontier.store.queue_cache import DEFAULT_CAPACITY, QueueCache
from crawler.frontier.store.queue_depths import GROWN_HELD
from crawler.frontier.store.queue_store import StoreBatch
from crawler.frontier.store.queue_uris import QueueUris
from crawler.frontier.store.record_tally import RecordTally
from crawler.frontier.workqueue import (
    EXHAUSTED,
    IN_PROCESS,
    INACTIVE,
    READY,
    RETIRED,
    SNOOZED,
    STATES,
    WorkQueue,
)
from crawler.urls import server_key

if TYPE_CHECKING:
    from crawler.frontier.store.write_behind_store import WriteBehindStore

_GATED = ("http:", "https:", "ftp:")
"""Schemes whose fetches contact the server (a dns: lookup does not)."""


_SERVER_CACHE: dict[str, str | None] = {}
_SERVER_CACHE_MAX = 100_000


def gated_server(uri: str) -> str | None:
    """``host:port`` of a URI whose fetch contacts a server, else None (cached by origin)."""
    if not uri.startswith(_GATED):
        return None
    end = uri.find("/", uri.find("//") + 2)
    origin = uri if end < 0 else uri[:end]
    server = _SERVER_CACHE.get(origin, "")
    if server == "":
        try:
            server = server_key(origin)
        except ValueError:
            server = None
        if len(_SERVER_CACHE) >= _SERVER_CACHE_MAX:
            _SERVER_CACHE.clear()
        _SERVER_CACHE[origin] = server
    return server


class QueueScheduler:
    """Queue states and the order queues are served in (see the module docstring)."""

    def __init__(
        self,
        gate: ServerGate[WorkQueue],
        queue_precedence: Callable[[WorkQueue], int],
        precedence_floor: int,
        notify: Callable[[], None],
        lateness_tolerance: float = 0.0,
        *,
        store: WriteBehindStore,
        cached_queues: int = DEFAULT_CAPACITY,
    ) -> None:
        self.gate = gate
        self._store = store
        self.queues = QueueCache(store, cached_queues)
        self.index = InactiveIndex(store)
        self.uris = QueueUris()  # last queued/peeked URIs of recently touched queues
        self.counts = dict.fromkeys(STATES, 0)
        self.tally = RecordTally()
        """Sums over the queue records in the store, written with each batch of records."""
        self.precedence_of = queue_precedence
        self._floor = precedence_floor
        self._notify = notify
        # (precedence, sequence, queue): lower precedence first, then in the order made ready
        # (crawler.frontier.policy.eligible_order)
        self._ready: list[tuple[int, int, WorkQueue]] = []
        self._snoozed: list[tuple[float, int, WorkQueue | str]] = []
        self._seq = itertools.count()
        self.inactive_counts: dict[int, int] = {}
        self.guard = LatenessGuard(lateness_tolerance)
        self.waiting = 0
        """Threads blocked in the frontier's ``next()`` (the frontier keeps it)."""

    # ------------------------------------------------------------ states
    def get_or_add(self, key: str) -> WorkQueue:
        """The queue named ``key`` (read back from the store if not in RAM), created exhausted
        if new."""
        q = self._load(key)
        if q is None:
            q = WorkQueue(key, self.precedence_of(WorkQueue(key)))
            self.queues.add(q)
            self.counts[EXHAUSTED] += 1
        return q

    def _load(self, key: str) -> WorkQueue | None:
        """The queue named ``key``, from RAM or its record; None if unknown."""
        cache = self.queues
        loads = cache.loads
        q = cache.load(key)
        if q is not None and cache.loads != loads and q.state == READY:
            # Only queues out of rotation leave RAM, their records saying so; a record that
            # still says "active" (none should) is served rather than left out of every FIFO.
            self._push_ready(q, self.precedence_of(q))
        return q

    def begin_restore(self) -> None:
        """Start rebuilding from the store (before :meth:`restore` of each record)."""
        self.index.restore()

    def restore(self, q: WorkQueue) -> None:
        """Hold a ready queue rebuilt from its record (:func:`parse_meta
        <crawler.frontier.workqueue.parse_meta>`) in RAM and count it."""
        self.counts[q.state] += 1
        self.queues.add(q)
        self._push_ready(q, self.precedence_of(q))

    def restore_record(self, state: str, precedence: int) -> None:
        """Count a queue in ``state`` (not ready) left in its record; an inactive one keeps its
        row in the inactive index."""
        self.counts[state] += 1
        if state == INACTIVE:
            self.inactive_counts[precedence] = self.inactive_counts.get(precedence, 0) + 1
            self.index.stored(precedence)

    def restore_tally(self, tally: RecordTally) -> None:
        """Count the queues out of RAM from the sums over their records (``tally``, as read
        from the store; the ready queues are counted by :meth:`restore`) instead of one
        :meth:`restore_record` per record, and keep the tally up to date from here on."""
        for state, n in tally.counts.items():
            if state != READY:
                self.counts[state] += n
        for prec, n in tally.inactive.items():
            self.inactive_counts[prec] = self.inactive_counts.get(prec, 0) + n
            self.index.stored(prec)
        self.tally = tally

    def record(self, batch: StoreBatch, *queues: WorkQueue) -> None:
        """Put the records of ``queues`` in ``batch``, with the store's tally after them
        (:class:`~crawler.frontier.store.record_tally.RecordTally`); the caller writes
        ``batch`` before recording another. Every queue record goes through here."""
        tally, depths = self.tally, self.queues.depths
        grown = depths.grown
        for q in queues:
            if tally.record(q, batch):
                grown.append(q)
        if len(grown) > GROWN_HELD:
            depths.bound()
        tally.stamp(batch)

    def write_record(self, q: WorkQueue) -> None:
        """Write ``q``'s record in a batch of its own."""
        batch = StoreBatch()
        self.record(batch, q)
        self._store.write(batch)

    def total_queues(self) -> int:
        """Queues known, in RAM or not."""
        return sum(self.counts.values())

    def trim(self) -> None:
        """Evict queues out of rotation beyond the cache's capacity (call once the current
        operation's batch is written)."""
        self.queues.trim()

    def set_state(self, q: WorkQueue, state: str) -> None:
        """Move ``q`` to ``state``, keeping the counts right."""
        counts = self.counts
        if q.state == INACTIVE:
            self.inactive_counts[q.precedence] -= 1
        counts[q.state] -= 1
        counts[state] += 1
        q.state = state
        self.queues.state_changed(q)

    def make_ready(self, q: WorkQueue, precedence: int | None = None) -> None:
        """``q`` may hand out its head now (``precedence``: its queue precedence, if known)."""
        self.set_state(q, READY)
        self._push_ready(q, self.precedence_of(q) if precedence is None else precedence)
        self._notify()

    def _push_ready(self, q: WorkQueue, precedence: int) -> None:
        heapq.heappush(self._ready, (precedence, next(self._seq), q))

    def deactivate(self, q: WorkQueue, batch: StoreBatch | None = None) -> None:
        """Send ``q`` to the back of the inactive FIFO of its (re-evaluated) precedence.

        Its row goes in ``batch``, which the caller writes with ``q``'s record, or, without
        one, in a batch of its own with the record.
        """
        self.set_state(q, INACTIVE)
        q.precedence = prec = self.precedence_of(q)
        if batch is None:
            own = StoreBatch()
            q.inactive_seq = self.index.push(prec, q.key, own)
            self.record(own, q)
            self._store.write(own)
        else:
            q.inactive_seq = self.index.push(prec, q.key, batch)
        self.inactive_counts[prec] = self.inactive_counts.get(prec, 0) + 1
        if prec < self._floor:
            self._notify()

    def snooze(self, q: WorkQueue, until_s: float, now_s: float, delay_s: float = 0.0) -> None:
        """``q`` waits until ``until_s`` (monotonic); at once if that is not in the future.

        ``delay_s`` > 0: the wait is a politeness delay of that length, after which ``q`` is
        due (see the module docstring); 0: a retry or back-off, whose end is not measured."""
        if delay_s > 0:
            q.due_s, q.delay_s = max(until_s, now_s), delay_s
        else:
            q.due_s = 0.0
        if until_s <= now_s:
            self.wake(q)
            return
        q.wake_s = until_s
        self.set_state(q, SNOOZED)
        heapq.heappush(self._snoozed, (until_s, next(self._seq), q))
        # A waiter may be sleeping until a later wake time; let one recompute its wait.
        self._notify()

    def add_timer(self, server: str, at_s: float) -> None:
        """Call the gate back for ``server`` at ``at_s``."""
        heapq.heappush(self._snoozed, (at_s, next(self._seq), server))
        self._notify()

    def park(self, q: WorkQueue, server: str, until_s: float) -> None:
        """``q``'s head must wait for ``server``: snoozed until the gate wakes it."""
        self.set_state(q, SNOOZED)
        q.wake_s = until_s
        q.parked_on = server
        self.gate.park(server, q)

    def wake(self, q: WorkQueue) -> None:
        """A snoozed queue's time has come: ready, or inactive if a more urgent queue waits."""
        if q.size <= 0:
            self.set_state(q, EXHAUSTED)
            return
        prec = self.precedence_of(q)
        if prec >= self._floor or any(n > 0 and p < prec for p, n in self.inactive_counts.items()):
            self.deactivate(q)
        else:
            self.make_ready(q, prec)

    def retire(self, q: WorkQueue) -> None:
        """Over budget: ``q`` keeps its URIs but is never served again."""
        self.set_state(q, RETIRED)

    # ------------------------------------------------------------ servers
    def admit(self, q: WorkQueue, uri: str, now_s: float) -> bool:
        """Whether ``q`` may start fetching its head ``uri`` now (the server cap); if not, ``q``
        is parked on the server until a slot or its time comes."""
        server = gated_server(uri)
        if server is not None and (wait := self.gate.try_start(server, now_s)) is not None:
            self.park(q, server, wait)
            self.service(server, now_s)
            return False
        q.server = server
        return True

    def release_server(
        self,
        q: WorkQueue,
        uri: str,
        now_s: float,
        backoff_s: float,
        hold_s: float,
        answer: tuple[int, float, float] | None = None,
    ) -> None:
        """``q``'s fetch of ``uri`` is over: free its server slot, let the server's pace learn
        from ``answer`` (status, start time, duration in s; None if nothing was fetched), then
        hold the server for a Retry-After back-off (absolute) and bandwidth debt (cumulative)."""
        admitted, q.server = q.server, None
        server = admitted
        if server is None and (backoff_s or hold_s):
            server = gated_server(uri)
        if server is None:
            return
        if admitted is not None:
            self.gate.finish(server, now_s)
            if answer is not None:
                status, started_s, duration_s = answer
                self.gate.observe(server, now_s, started_s, status, duration_s)
        self.gate.hold(server, now_s, backoff_s, hold_s)
        self.service(server, now_s)

    def service(self, server: str, now_s: float) -> None:
        """Wake queues parked on ``server`` that may try now; set a timer if one is needed."""
        woken, timer_s = self.gate.wakeable(server, now_s)
        for q in woken:
            q.parked_on = None
            q.woken_by = server
            if q.size > 0:
                self.make_ready(q)
            else:
                self.set_state(q, EXHAUSTED)
        if timer_s is not None:
            self.add_timer(server, timer_s)

    # ------------------------------------------------------------ serving
    def due(self, now_s: float) -> list[str]:
        """Wake the snoozed queues whose time has come; returns servers whose timer fired."""
        snoozed = self._snoozed
        servers: list[str] = []
        while snoozed and snoozed[0][0] <= now_s:
            wake_s, _, item = heapq.heappop(snoozed)
            if isinstance(item, str):
                if self.gate.timer_fired(item, wake_s):
                    servers.append(item)
            elif item.state == SNOOZED and item.wake_s == wake_s and item.parked_on is None:
                self.wake(item)
        return servers

    def next_wake_s(self) -> float | None:
        """The earliest pending wake time (monotonic), if any."""
        return self._snoozed[0][0] if self._snoozed else None

    def candidate(self, now_s: float) -> WorkQueue | None:
        """The next queue to serve: the first ready one, lower precedence first (a due one is
        rotated out instead while the lateness guard trims the active set), else — if the
        active set is under the guard's cap — activate the most urgent inactive queue below the
        precedence floor ("hold queues": inactive ones wait for an idle thread)."""
        ready = self._ready
        while ready:
            q = heapq.heappop(ready)[2]
            if q.state != READY:
                continue
            if q.due_s and self.guard.take_rotation(self.active(), q.key, now_s):
                q.due_s = 0.0
                self.deactivate(q)
                continue
            return q
        if self.others_waiting() and not self.guard.may_activate(self.active()):
            return None
        for prec in sorted(p for p, n in self.inactive_counts.items() if n > 0):
            if prec >= self._floor:
                break
            if (activated := self._activate(prec)) is not None:
                return activated
        return None

    def _activate(self, prec: int) -> WorkQueue | None:
        """Take the first queue of ``prec``'s inactive FIFO, made ready; None if it has none.
        Stale rows met on the way are deleted."""
        index = self.index
        batch = StoreBatch()
        q = None
        while (row := index.pop(prec)) is not None:
            seq, key = row
            batch.meta[row_name(prec, seq)] = None
            cand = self._load(key)
            if (
                cand is not None
                and cand.state == INACTIVE
                and cand.precedence == prec
                and cand.inactive_seq == seq
            ):
                q = cand
                q.session_spent = 0
                q.due_s = 0.0
                q.inactive_seq = 0
                self.set_state(q, READY)
                self.record(batch, q)
                break
        if batch.meta:
            self._store.write(batch)
        return q

    def fetched(self, q: WorkQueue, started_s: float, now_s: float) -> None:
        """``q``'s URI was fetched from ``started_s``: if ``q`` was due after a politeness
        wait, tell the guard how late the fetch started."""
        if q.due_s:
            self.guard.fetched(q.due_s, q.delay_s, started_s, now_s)
            q.due_s = 0.0

    def served(self, q: WorkQueue, now_s: float, due_s: float) -> None:
        """``q``, handed out at ``q.handed_out_s``, gives its URI back at ``now_s`` and is due
        again at ``due_s``: tell the guard how long a thread held it, how long it waits, and
        how many threads serve the frontier (holding a URI, this one included, or waiting)."""
        self.guard.served(
            now_s - q.handed_out_s,
            max(0.0, due_s - now_s),
            self.counts[IN_PROCESS] + self.waiting,
            self.waiting,
            self.active(),
            now_s,
        )

    def active(self) -> int:
        """Queues ready, in process or snoozed (parked included)."""
        counts = self.counts
        return counts[READY] + counts[IN_PROCESS] + counts[SNOOZED]

    def has_ready(self) -> bool:
        """Whether another thread could find a queue now."""
        if self._ready:
            return True
        return self.active() < self.guard.cap and self.others_waiting()

    def others_waiting(self) -> bool:
        """Whether some inactive queue below the floor waits for its turn."""
        return any(n > 0 and p < self._floor for p, n in self.inactive_counts.items())

    def ineligible(self) -> int:
        """Inactive queues at or past the precedence floor."""
        return sum(n for p, n in self.inactive_counts.items() if p >= self._floor)

    def in_process(self) -> int:
        """Queues with a URI out."""
        return self.counts[IN_PROCESS]

    def wake_in_s(self, q: WorkQueue, now_s: float) -> float:
        """Seconds until a snoozed queue wakes (inf while parked on a busy server)."""
        if q.state != SNOOZED:
            return 0.0
        return math.inf if q.wake_s == math.inf else max(0.0, q.wake_s - now_s)
