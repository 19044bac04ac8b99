"""QueueDepths: the longest queues in RAM without walking them all.

The frontier's snapshot (status.json every second, progress-statistics.log, reports) shows the
longest queues among those in RAM that are not exhausted or retired, and the longest one's size
(``max_depth``). Walking the :class:`~crawler.frontier.store.queue_cache.QueueCache` for them cost
O(queues in RAM) under the frontier's lock, 65,536 queues and more. Instead a heap holds entries
``(-size, cache order, key)``: one when a queue enters the cache (:meth:`next_seq`) and one each
time its size grows (the scheduler appends the queue to :attr:`grown` with every queue record
written that grows it — a size never changes without one — and :meth:`longest` pushes them; past
:data:`GROWN_HELD` of them it rebuilds the heap from the cache instead). Every queue in RAM thus
has an entry at least its size. At the top, :meth:`longest` checks each entry against its queue:
gone from RAM (another ``cache order``), exhausted or retired: dropped (it comes back by
growing); shrunk since: pushed again at its size; grown since: dropped (a later entry holds its
size). Entries per queue in RAM stay bounded: past ``2 x queues + 1024`` the heap is rebuilt from
the cache (amortized O(1) per entry).

The answer is the one a walk gives: largest first, equal sizes in the order the queues entered the
cache (as ``heapq.nlargest`` over the cache in its order). Not thread-safe: frontier lock held.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Mapping

from crawler.frontier.workqueue import EXHAUSTED, RETIRED, WorkQueue

_SLACK = 1024
GROWN_HELD = 4096
"""Queues that grew held until the next snapshot, at most (then the heap is rebuilt)."""


class QueueDepths:
    """Heap of the sizes of the queues in RAM (see the module docstring)."""

    __slots__ = ("_heap", "_queues", "_rebuild", "_seq", "grown")

    def __init__(self, queues: Mapping[str, WorkQueue]) -> None:
        self._queues = queues  # the cache's key -> queue, in the order queues entered it
        self._heap: list[tuple[int, int, str]] = []
        self._rebuild = False
        self._seq = itertools.count(1)
        self.grown: list[WorkQueue] = []
        """Queues that entered the cache or grew since the last :meth:`longest` (the cache and
        the scheduler append each one, then call :meth:`bound` past :data:`GROWN_HELD`)."""

    def next_seq(self) -> int:
        """The cache order of a queue entering the cache, which then appends it to
        :attr:`grown` (new, or read back from its record)."""
        return next(self._seq)

    def bound(self) -> None:
        """Forget the queues that grew (past :data:`GROWN_HELD` of them): the next
        :meth:`longest` rebuilds the heap from the cache (what pushing them would have cost)."""
        self.grown.clear()
        self._rebuild = True

    def _take_grown(self) -> None:
        heap, queues = self._heap, self._queues
        if self._rebuild or len(heap) + len(self.grown) > 2 * len(queues) + _SLACK:
            self._heap = heap = [(-q.size, q.cache_seq, q.key) for q in queues.values()]
            heapq.heapify(heap)
            self._rebuild = False
        else:
            push = heapq.heappush
            for q in self.grown:
                if queues.get(q.key) is q:
                    push(heap, (-q.size, q.cache_seq, q.key))
        self.grown.clear()

    def longest(self, n: int) -> list[WorkQueue]:
        """The ``n`` longest queues in RAM not exhausted or retired, longest first."""
        self._take_grown()
        heap, queues = self._heap, self._queues
        out: list[WorkQueue] = []
        kept: list[tuple[int, int, str]] = []
        taken: set[int] = set()
        while heap and len(out) < n:
            entry = heapq.heappop(heap)
            neg_size, seq, key = entry
            q = queues.get(key)
            if q is None or q.cache_seq != seq or q.state == EXHAUSTED or q.state == RETIRED:
                continue  # left RAM, or out of the count until it grows again
            if seq in taken:
                continue  # another entry of a queue already listed
            size = q.size
            if size < -neg_size:  # shrank since: its entry moves down to its size
                heapq.heappush(heap, (-size, seq, key))
                continue
            if size > -neg_size:
                continue  # grew since: a later entry holds its size
            taken.add(seq)
            kept.append(entry)
            out.append(q)
        for entry in kept:
            heapq.heappush(heap, entry)
        return out

    def __len__(self) -> int:
        """Entries in the heap (stale ones included)."""
        return len(self._heap)
