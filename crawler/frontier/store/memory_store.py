"""MemoryQueueStore: the QueueStore protocol in RAM, for tests and small throwaway crawls.

Nothing survives the process. Each queue is a dict of records plus a heap of sort keys with lazy
deletion, so ``head`` is amortized O(log n). Not thread-safe (the frontier serializes calls).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from pathlib import Path

from crawler.frontier.store.queue_store import QueueStoreBase, StoreBatch, check_queue_key
from crawler.params import NoParams


class _MemQueue:
    __slots__ = ("heap", "records")

    def __init__(self) -> None:
        self.records: dict[int, bytes] = {}
        self.heap: list[int] = []


class MemoryQueueStore(QueueStoreBase[NoParams]):
    """Pending records and metadata in dicts; ``open`` ignores the directory."""

    def __init__(self, params: NoParams | None = None) -> None:
        super().__init__(params)
        self._queues: dict[str, _MemQueue] = {}
        self._meta: dict[str, bytes] = {}

    def open(self, state_dir: Path) -> None:
        """Nothing to open: memory stores start empty."""

    def write(self, batch: StoreBatch) -> None:
        for queue_key, key in batch.deletes:
            q = self._queues.get(queue_key)
            if q is not None:
                q.records.pop(key, None)
        for queue_key, key, value in batch.puts:
            check_queue_key(queue_key)
            q = self._queues.get(queue_key)
            if q is None:
                q = self._queues[queue_key] = _MemQueue()
            if key not in q.records:
                heapq.heappush(q.heap, key)
            q.records[key] = value
        for name, meta in batch.meta.items():
            if meta is None:
                self._meta.pop(name, None)
            else:
                self._meta[name] = meta

    def head(self, queue_key: str) -> tuple[int, bytes] | None:
        q = self._queues.get(queue_key)
        if q is None:
            return None
        heap, records = q.heap, q.records
        while heap:
            key = heap[0]
            value = records.get(key)
            if value is not None:
                return key, value
            heapq.heappop(heap)
        return None

    def head_many(self, queue_key: str, limit: int) -> list[tuple[int, bytes]]:
        """Up to ``limit`` pending records of ``queue_key``, lowest sort keys first."""
        q = self._queues.get(queue_key)
        if q is None:
            return []
        return [(k, q.records[k]) for k in heapq.nsmallest(limit, q.records)]

    def get_meta(self, name: str) -> bytes | None:
        return self._meta.get(name)

    def scan_meta(self, prefix: str) -> Iterator[tuple[str, bytes]]:
        for name in sorted(n for n in self._meta if n.startswith(prefix)):
            yield name, self._meta[name]

    def scan_meta_range(self, prefix: str, after: str, limit: int) -> list[tuple[str, bytes]]:
        """Up to ``limit`` metadata entries named ``prefix``... after ``after``, in name order."""
        after_b = after.encode()
        names = sorted(
            (n for n in self._meta if n.startswith(prefix) and n.encode() > after_b),
            key=str.encode,
        )
        return [(n, self._meta[n]) for n in names[:limit]]

    def close(self) -> None:
        """Nothing to release; the contents stay readable until the object is dropped."""
