"""WorkQueue: the in-memory state of one frontier queue (its URIs live in the QueueStore).

A queue is in exactly one state (Heritrix's glossary):

* ``ready`` — may hand out its head now; waits in the ready FIFO.
* ``in_process`` — its head is out with a ToeThread (one URI at a time per queue).
* ``snoozed`` — politeness, retry or back-off wait until ``wake_s`` (clock monotonic seconds),
  or parked until its server has a free slot (``parked_on`` names the server, ``wake_s`` = inf).
* ``inactive`` — has URIs but waits its turn in the FIFO of its ``precedence``; activated only
  when no queue is ready, lowest precedence first; at or past the floor it is *ineligible*.
* ``retired`` — over its total budget; keeps its URIs, which stop counting as queued.
* ``exhausted`` — empty.

Only the queues in rotation (and a bounded number touched lately) are WorkQueue objects in RAM
(:class:`~crawler.frontier.store.queue_cache.QueueCache`); every other queue is its ``q:<key>``
record in the store, written in the batch of each change, and read back
(:meth:`WorkQueue.from_meta`) when the queue is touched again. An inactive queue's place in its FIFO
is the ``inactive_seq`` of its row in :class:`~crawler.frontier.store.inactive_index.InactiveIndex`.

Heritrix counterpart: ``WorkQueue``/``BdbWorkQueue``. Not thread-safe: guarded by the frontier lock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from crawler.curi import CrawlURI

READY = "ready"
IN_PROCESS = "in_process"
SNOOZED = "snoozed"
INACTIVE = "inactive"
RETIRED = "retired"
EXHAUSTED = "exhausted"
STATES = (READY, IN_PROCESS, SNOOZED, INACTIVE, RETIRED, EXHAUSTED)
ACTIVE_STATES = frozenset({READY, IN_PROCESS, SNOOZED})

META_PREFIX = "q:"
"""Metadata name prefix of queue records: ``q:<queue key>``."""


class WorkQueue:
    """One queue's counters and state; ``size`` counts its URIs in the store, the one out too.

    Times are the frontier clock's monotonic seconds: ``handed_out_s`` when its URI went out;
    ``due_s`` when its last politeness wait, of ``delay_s`` seconds, ended (0 once the next
    fetch was measured against it, or after a retry wait or an activation): how late that
    fetch starts tells the lateness guard whether the crawler keeps up.
    """

    __slots__ = (
        "best_uri_precedence",
        "cache_seq",
        "current",
        "current_key",
        "current_value",
        "delay_s",
        "disregarded",
        "due_s",
        "errors",
        "failed",
        "handed_out_s",
        "inactive_seq",
        "key",
        "last_cost",
        "last_dequeue_s",
        "parked_on",
        "precedence",
        "recorded",
        "server",
        "session_spent",
        "size",
        "state",
        "succeeded",
        "total_enqueues",
        "total_spent",
        "wake_s",
        "woken_by",
    )

    def __init__(self, key: str, precedence: int = 3) -> None:
        self.key = key
        self.state = EXHAUSTED
        self.size = 0
        self.wake_s = 0.0
        self.precedence = precedence
        self.best_uri_precedence = 127
        self.current: CrawlURI | None = None
        self.current_key = 0
        self.current_value = b""
        self.session_spent = 0
        self.total_spent = 0
        self.succeeded = 0
        self.failed = 0
        self.disregarded = 0
        self.errors = 0
        self.total_enqueues = 0
        self.last_cost = 0
        self.last_dequeue_s = 0.0
        self.server: str | None = None
        self.parked_on: str | None = None
        self.woken_by: str | None = None
        self.handed_out_s = 0.0
        self.due_s = 0.0
        self.delay_s = 0.0
        self.inactive_seq = 0
        self.recorded: RecordCounts | None = None
        """What the queue's record, as last written in a batch, adds to the store's tally
        (:data:`RecordCounts`); None while it has none."""
        self.cache_seq = 0
        """Order in which the queue entered the frontier's queue cache (ties of the longest)."""

    @property
    def meta_name(self) -> str:
        """The queue's metadata name in the store."""
        return META_PREFIX + self.key

    def expend(self, cost: int) -> None:
        """Charge ``cost`` to this session's and the total budget (Heritrix's ``expend``)."""
        self.last_cost = cost
        self.total_spent += cost
        self.session_spent += cost

    def to_meta(self) -> bytes:
        """Persistent part of the queue, for the store's metadata (comma-separated, compact)."""
        return (
            f"{self.state},{self.size},{self.session_spent},{self.total_spent},{self.succeeded},"
            f"{self.failed},{self.disregarded},{self.precedence},{self.total_enqueues},"
            f"{self.errors},{self.best_uri_precedence},{self.inactive_seq}"
        ).encode()

    @classmethod
    def from_meta(cls, key: str, raw: bytes) -> WorkQueue:
        """Rebuild a queue saved by :meth:`to_meta` (``ValueError`` if malformed), in the state
        :func:`parse_meta` gives it."""
        q = cls(key)
        q.state, numbers = parse_meta(key, raw)
        (
            q.size,
            q.session_spent,
            q.total_spent,
            q.succeeded,
            q.failed,
            q.disregarded,
            q.precedence,
            q.total_enqueues,
            q.errors,
            q.best_uri_precedence,
            q.inactive_seq,
        ) = numbers
        q.recorded = record_counts(q.state, numbers)
        return q

    def __repr__(self) -> str:
        return f"WorkQueue({self.key!r}, {self.state}, size={self.size})"


RecordCounts = tuple[str, int, int, int, int, int]
"""What one queue record adds to the sums over all records: its state as :func:`parse_meta`
reads it back, URIs queued (0 if retired), succeeded, failed, disregarded, precedence (see
:meth:`RecordTally.record <crawler.frontier.store.record_tally.RecordTally.record>`)."""


# Positions in the numbers of :func:`parse_meta`.
N_SIZE, N_SUCCEEDED, N_FAILED, N_DISREGARDED, N_PRECEDENCE = 0, 3, 4, 5, 6


def record_counts(state: str, numbers: list[int]) -> RecordCounts:
    """What a record read back by :func:`parse_meta` (its ``state`` and ``numbers``) adds to
    the sums over all records."""
    return (
        state,
        0 if state == RETIRED else numbers[N_SIZE],
        numbers[N_SUCCEEDED],
        numbers[N_FAILED],
        numbers[N_DISREGARDED],
        numbers[N_PRECEDENCE],
    )


def parse_meta(key: str, raw: bytes) -> tuple[str, list[int]]:
    """The state and numbers of a record saved by :meth:`WorkQueue.to_meta` (``ValueError`` if
    malformed): size, session spent, total spent, succeeded, failed, disregarded, precedence,
    total enqueues, errors, best URI precedence, inactive sequence.

    Active queues come back ``ready`` (after a restart their URI out, if any, is still at the
    head of the store and is handed out again); empty queues ``exhausted`` (size 0); retired
    stay retired; the rest ``inactive`` (at their inactive sequence in their FIFO).
    """
    state, *fields = raw.decode("ascii", "replace").split(",")
    if state not in STATES or len(fields) != 11:
        raise ValueError(f"malformed queue record {key!r}: {raw[:100]!r}")
    numbers = list(map(int, fields))
    if state == RETIRED:
        return RETIRED, numbers
    if numbers[N_SIZE] <= 0:
        numbers[N_SIZE] = 0
        return EXHAUSTED, numbers
    if state in ACTIVE_STATES:
        return READY, numbers
    return INACTIVE, numbers
