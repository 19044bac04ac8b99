"""QueueCache: the work queues held in RAM, a bounded cache over their records in the store.

A frontier of 10^7 host queues cannot keep a :class:`~crawler.frontier.workqueue.WorkQueue`
(~400 bytes with its key and dict entry) per queue. As Heritrix keeps its queues in BDB behind a
cache of fixed size, the cache holds:

* every *active* queue (ready, in process, snoozed or parked: the queues in rotation, which other
  structures — the ready heap, the snooze heap, the server gate, the URIs in flight — refer to);
* at most ``capacity`` other queues (inactive, exhausted, retired), the least recently touched
  evicted first.

An evicted queue is its ``q:<key>`` record in the store, which the frontier writes in the batch of
every change it makes to a queue; :meth:`load` reads it back (through the write-behind store,
which is told the record of each queue evicted, so one not yet durable is found too) and caches
the rebuilt WorkQueue. Evictions happen only in
:meth:`trim`, which the frontier calls once the batch of an operation is written, so a queue is
never dropped with a change not yet in a batch.

Not thread-safe: called under the frontier's lock.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from typing import TYPE_CHECKING

from crawler.frontier.store.queue_depths import GROWN_HELD, QueueDepths
from crawler.frontier.workqueue import ACTIVE_STATES, META_PREFIX, WorkQueue

if TYPE_CHECKING:
    from crawler.frontier.store.write_behind_store import WriteBehindStore

DEFAULT_CAPACITY = 1 << 16
"""Queues out of rotation kept in RAM (~30 MB)."""


class QueueCache:
    """Queue key -> WorkQueue for the queues in RAM (see the module docstring)."""

    __slots__ = ("_capacity", "_idle", "_queues", "_store", "depths", "loads")

    def __init__(self, store: WriteBehindStore, capacity: int = DEFAULT_CAPACITY) -> None:
        self._store = store
        self._capacity = max(0, capacity)
        self._queues: dict[str, WorkQueue] = {}
        self._idle: OrderedDict[str, None] = OrderedDict()  # evictable keys, least recent first
        self.loads = 0
        """Queues read back from the store so far."""
        self.depths = QueueDepths(self._queues)
        """The longest queues in RAM (told of each queue added here; the scheduler tells it
        of the queues that grow)."""

    def get(self, key: str) -> WorkQueue | None:
        """The queue if it is in RAM (every queue with a URI out is), else None."""
        return self._queues.get(key)

    def load(self, key: str) -> WorkQueue | None:
        """The queue, read back from the store if it is not in RAM; None if it never existed."""
        q = self._queues.get(key)
        if q is not None:
            if key in self._idle:
                self._idle.move_to_end(key)
            return q
        raw = self._store.read_meta(META_PREFIX + key)
        if raw is None:
            return None
        q = WorkQueue.from_meta(key, raw)
        self.loads += 1
        self.add(q)
        return q

    def add(self, q: WorkQueue) -> None:
        """Hold ``q`` in RAM (a new queue, or one rebuilt from its record)."""
        self._queues[q.key] = q
        depths = self.depths
        q.cache_seq = depths.next_seq()
        grown = depths.grown
        grown.append(q)
        if len(grown) > GROWN_HELD:
            depths.bound()
        self.state_changed(q)

    def state_changed(self, q: WorkQueue) -> None:
        """``q`` (in RAM) changed state: pinned while active, evictable (most recent) if not."""
        if q.state in ACTIVE_STATES:
            self._idle.pop(q.key, None)
        else:
            self._idle[q.key] = None
            self._idle.move_to_end(q.key)

    def trim(self) -> int:
        """Evict the least recently touched queues out of rotation beyond the capacity (each
        one's record is in the store already, or in a batch written); returns how many."""
        idle, queues = self._idle, self._queues
        n = len(idle) - self._capacity
        remember = self._store.remember
        for _ in range(max(0, n)):
            key, _ = idle.popitem(last=False)
            q = queues.pop(key)
            remember(q.meta_name, q.to_meta())
        return max(0, n)

    def values(self) -> Iterator[WorkQueue]:
        """The queues in RAM."""
        return iter(list(self._queues.values()))

    def __len__(self) -> int:
        """Queues in RAM."""
        return len(self._queues)
