"""QueueDepths: the longest queues in RAM without walking them all.

The frontier's snapshot (status.json every second, progress-statistics.log, reports) shows the
longest queues among those in RAM that are not exhausted or retired, and the longest one's size
(``max_depth``). Walking the :class:`~crawler.frontier.store.queue_cache.QueueCache` for them cost
O(queues in RAM) under the frontier's lock, 65,536 queues and more. Instead a heap holds an entry
``(-size, cache order, key)`` per queue and size change: the cache pushes one when a queue enters
it (:meth:`add`) and the scheduler when a queue's size changes (:meth:`resized`, called with every
queue record written, and a size never changes without one). An entry whose queue has left RAM,
changed size or is exhausted or retired since is *stale*: :meth:`longest` drops those it meets
at the top. Entries per queue in RAM stay bounded: past ``2 x queues + 1024`` the heap is rebuilt
from the cache (amortized O(1) per push).

The answer is the one a walk gives: largest first, equal sizes in the order the queues entered the
cache (as ``heapq.nlargest`` over the cache in its order). Not thread-safe: frontier lock held.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Mapping

from crawler.frontier.workqueue import EXHAUSTED, RETIRED, WorkQueue

_SLACK = 1024


class QueueDepths:
    """Heap of the sizes of the queues in RAM (see the module docstring)."""

    __slots__ = ("_heap", "_queues", "_seq")

    def __init__(self, queues: Mapping[str, WorkQueue]) -> None:
        self._queues = queues  # the cache's key -> queue, in the order queues entered it
        self._heap: list[tuple[int, int, str]] = []
        self._seq = itertools.count(1)

    def add(self, q: WorkQueue) -> None:
        """``q`` enters the cache (new, or read back from its record)."""
        q.cache_seq = next(self._seq)
        self._push(q)

    def resized(self, q: WorkQueue) -> None:
        """``q``'s size changed (while in the cache)."""
        self._push(q)

    def _push(self, q: WorkQueue) -> None:
        heap = self._heap
        heapq.heappush(heap, (-q.size, q.cache_seq, q.key))
        if len(heap) > 2 * len(self._queues) + _SLACK:
            self._rebuild()

    def _rebuild(self) -> None:
        self._heap = [(-q.size, q.cache_seq, q.key) for q in self._queues.values()]
        heapq.heapify(self._heap)

    def longest(self, n: int) -> list[WorkQueue]:
        """The ``n`` longest queues in RAM not exhausted or retired, longest first."""
        heap, queues = self._heap, self._queues
        out: list[WorkQueue] = []
        kept: list[tuple[int, int, str]] = []
        while heap and len(out) < n:
            entry = heapq.heappop(heap)
            neg_size, seq, key = entry
            q = queues.get(key)
            if (
                q is None
                or q.cache_seq != seq
                or q.size != -neg_size
                or q.state == EXHAUSTED
                or q.state == RETIRED
            ):
                continue  # stale: its queue's current size has an entry of its own
            if kept and kept[-1] == entry:
                continue  # the same size pushed twice
            kept.append(entry)
            out.append(q)
        for entry in kept:
            heapq.heappush(heap, entry)
        return out

    def __len__(self) -> int:
        """Entries in the heap (stale ones included)."""
        return len(self._heap)
