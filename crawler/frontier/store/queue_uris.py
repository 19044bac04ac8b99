"""The last URI queued into and handed out of each recently touched queue, for the frontier report.

Kept apart from :class:`~crawler.frontier.workqueue.WorkQueue` so that a frontier with 10^6
queues does not hold two URI strings per queue in RAM (about 160 bytes a queue, a quarter of
its in-memory cost): only the ``capacity`` queues touched most recently keep theirs; the
report shows ``-`` for the others. Not thread-safe: called under the frontier lock.
"""

from __future__ import annotations

DEFAULT_CAPACITY = 10_000


class QueueUris:
    """Bounded ``queue key -> URI`` maps (last enqueued, last peeked), most recent kept."""

    __slots__ = ("_capacity", "_peeked", "_queued")

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, not {capacity}")
        self._capacity = capacity
        self._queued: dict[str, str] = {}
        self._peeked: dict[str, str] = {}

    def _put(self, table: dict[str, str], key: str, uri: str) -> None:
        table.pop(key, None)  # re-inserted last: dicts keep insertion order
        table[key] = uri
        if len(table) > self._capacity:
            del table[next(iter(table))]

    def queued(self, key: str, uri: str) -> None:
        """``uri`` was just queued into queue ``key``."""
        self._put(self._queued, key, uri)

    def peeked(self, key: str, uri: str) -> None:
        """``uri`` was just handed out of queue ``key``."""
        self._put(self._peeked, key, uri)

    def last(self, key: str) -> tuple[str, str]:
        """(last queued, last peeked) URI of queue ``key``; '' where no longer (or never) known."""
        return self._queued.get(key, ""), self._peeked.get(key, "")

    def __len__(self) -> int:
        """Queues with at least one URI remembered."""
        return len(self._queued.keys() | self._peeked.keys())
