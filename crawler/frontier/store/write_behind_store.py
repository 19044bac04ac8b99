"""WriteBehindStore: the frontier's view of its QueueStore, with no I/O under the frontier's lock.

Every store call releases the interpreter lock (LevelDB does its work outside it). Made while the
frontier's lock is held, each one let another ToeThread run into that lock and sleep, and the
holder then waited for the interpreter again before it could let go: a convoy that cost most of
a crawl's thread switches. This wrapper splits each write in two:

* :meth:`write` (called with the frontier's lock held) only updates an in-memory cache of each
  queue's first records and appends the batch to an ordered pending list;
* :meth:`sync` (called after the frontier's lock is released) writes everything pending, in the
  order it was appended, as one atomic store write (group commit: one thread writes for all
  that are waiting), and returns once the caller's own batches are durable.

So the frontier's methods keep their promise — when ``schedule``/``finished`` return, their
changes survive a ``kill -9`` — while the store's I/O happens outside its lock.

:meth:`head` answers from the cache: per queue the ``head_records`` records with the lowest sort
keys (``complete`` when they are all the queue holds). A put below the cached tail joins the
cache (the tail record, still in the store, drops out); a delete leaves it. Only when a queue's
cached records run out while more are in the store does :meth:`head` go to the store — after
writing what is pending — and read the next ``head_records``. At most ``max_cached_queues``
queues are cached (least recently read dropped first; a dropped queue is simply re-read).

Reads other than heads (``get_meta``, ``scan_meta``, ``scan_meta_range``) write what is pending
first, except :meth:`read_meta`, which writes nothing under the frontier's lock: it answers from
the values given to :meth:`remember` (the record of a queue the frontier drops from RAM, as written
in the last batch so far) until the batches written by then are durable, else from the store.

Thread-safety: :meth:`write`, :meth:`head`, :meth:`get_meta` and :meth:`scan_meta` must be
called with the frontier's lock held; :meth:`sync` without it (it takes only this object's own
flush lock, which also serializes every call into the inner store).
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections import OrderedDict, deque
from collections.abc import Iterator
from pathlib import Path

from crawler.frontier.store.queue_store import (
    QueueStore,
    ReadsHeads,
    ScansMetaRange,
    StoreBatch,
    WritesMany,
)


class _CachedHeads:
    __slots__ = ("complete", "keys", "values")

    def __init__(self, rows: list[tuple[int, bytes]], complete: bool) -> None:
        self.keys = [k for k, _ in rows]
        self.values = [v for _, v in rows]
        self.complete = complete


class WriteBehindStore:
    """Wraps a :class:`~crawler.frontier.store.queue_store.QueueStore` (see the module
    docstring)."""

    def __init__(
        self, inner: QueueStore, head_records: int = 16, max_cached_queues: int = 4096
    ) -> None:
        self.inner = inner
        # The store's optional abilities, tested once (QueueStore's module docstring).
        self._write_many = inner.write_many if isinstance(inner, WritesMany) else None
        self._head_many = inner.head_many if isinstance(inner, ReadsHeads) else None
        self._scan_range = inner.scan_meta_range if isinstance(inner, ScansMetaRange) else None
        # remembered metadata: name -> (batches written by then, value); see read_meta
        self._unflushed_meta: dict[str, tuple[int, bytes | None]] = {}
        self._meta_lock = threading.Lock()
        self._head_records = max(1, head_records)
        self._max_cached = max(1, max_cached_queues)
        self._heads: OrderedDict[str, _CachedHeads] = OrderedDict()
        self._pending: deque[tuple[int, StoreBatch]] = deque()
        self._appended = 0
        self._durable = 0
        self._flush_lock = threading.Lock()

    # ------------------------------------------------------------ lifecycle
    def open(self, state_dir: Path) -> None:
        """Open the inner store."""
        self.inner.open(state_dir)

    def close(self) -> None:
        """Write what is pending, then close the inner store."""
        self.sync()
        with self._flush_lock:
            self.inner.close()
        self._heads.clear()

    # ---------------------------------------------------------------- writes
    def write(self, batch: StoreBatch) -> None:
        """Apply ``batch`` to the cache and queue it for :meth:`sync` (frontier lock held)."""
        heads = self._heads
        for queue_key, key in batch.deletes:
            cached = heads.get(queue_key)
            if cached is not None:
                i = bisect_left(cached.keys, key)
                if i < len(cached.keys) and cached.keys[i] == key:
                    del cached.keys[i]
                    del cached.values[i]
        for queue_key, key, value in batch.puts:
            cached = heads.get(queue_key)
            if cached is not None:
                self._put_cached(cached, key, value)
        self._appended += 1
        self._pending.append((self._appended, batch))

    def remember(self, name: str, value: bytes | None) -> None:
        """``value`` is what the batches written so far leave in metadata ``name``: let
        :meth:`read_meta` answer it until they are durable (frontier lock held)."""
        with self._meta_lock:
            self._unflushed_meta[name] = (self._appended, value)

    def _put_cached(self, cached: _CachedHeads, key: int, value: bytes) -> None:
        keys = cached.keys
        i = bisect_left(keys, key)
        if i < len(keys) and keys[i] == key:
            cached.values[i] = value
            return
        if i == len(keys) and not cached.complete:
            return  # beyond the cached records: it waits in the store
        keys.insert(i, key)
        cached.values.insert(i, value)
        if len(keys) > self._head_records:
            keys.pop()
            cached.values.pop()
            cached.complete = False

    def sync(self) -> None:
        """Make every batch written so far durable (frontier lock NOT held)."""
        target = self._appended
        if self._durable >= target:
            return
        with self._flush_lock:
            self._flush_locked(target)

    def _flush_locked(self, target: int) -> None:
        if self._durable >= target:
            return
        pending = self._pending
        batches: list[StoreBatch] = []
        last = self._durable
        while pending:
            last, batch = pending.popleft()
            batches.append(batch)
        if not batches:
            return
        if self._write_many is not None:
            self._write_many(batches)
        else:
            for batch in batches:
                self.inner.write(batch)
        self._durable = last
        unflushed = self._unflushed_meta
        if unflushed:
            with self._meta_lock:
                for name in [n for n, (upto, _) in unflushed.items() if upto <= last]:
                    del unflushed[name]

    # ----------------------------------------------------------------- reads
    def head(self, queue_key: str) -> tuple[int, bytes] | None:
        """The lowest pending record of ``queue_key`` (frontier lock held)."""
        heads = self._heads
        cached = heads.get(queue_key)
        if cached is not None:
            heads.move_to_end(queue_key)
            if cached.keys:
                return cached.keys[0], cached.values[0]
            if cached.complete:
                return None
        rows, complete = self._read_heads(queue_key)
        heads[queue_key] = _CachedHeads(rows, complete)
        while len(heads) > self._max_cached:
            heads.popitem(last=False)
        return rows[0] if rows else None

    def _read_heads(self, queue_key: str) -> tuple[list[tuple[int, bytes]], bool]:
        """The queue's first records from the store, and whether they are all it holds."""
        with self._flush_lock:
            self._flush_locked(self._appended)
            if self._head_many is not None:
                rows = self._head_many(queue_key, self._head_records)
                return rows, len(rows) < self._head_records
            one = self.inner.head(queue_key)
        # A store reading one record at a time: more may follow unless it is empty.
        return ([], True) if one is None else ([one], False)

    def get_meta(self, name: str) -> bytes | None:
        """A metadata value, after writing what is pending (frontier lock held)."""
        with self._flush_lock:
            self._flush_locked(self._appended)
            return self.inner.get_meta(name)

    def read_meta(self, name: str) -> bytes | None:
        """A metadata value: as given to :meth:`remember` if the batches written by then are not
        all durable yet, else as the store holds it; writes nothing (frontier lock held). Exact
        for a name whose every pending write was remembered after it."""
        entry = self._unflushed_meta.get(name)
        if entry is not None:
            return entry[1]
        with self._flush_lock:
            # Dropped only once durable; remembered only under the frontier's lock.
            entry = self._unflushed_meta.get(name)
            if entry is not None:
                return entry[1]
            return self.inner.get_meta(name)

    def scan_meta_range(self, prefix: str, after: str, limit: int) -> list[tuple[str, bytes]]:
        """Up to ``limit`` metadata entries named ``prefix``... after ``after``, in name order,
        after writing what is pending (frontier lock held)."""
        with self._flush_lock:
            self._flush_locked(self._appended)
            if self._scan_range is not None:
                return self._scan_range(prefix, after, limit)
            after_b = after.encode()
            rows: list[tuple[str, bytes]] = []
            for name, value in self.inner.scan_meta(prefix):
                if name.encode() > after_b:
                    rows.append((name, value))
                    if len(rows) >= limit:
                        break
            return rows

    def iter_meta(self, prefix: str, chunk: int = 10_000) -> Iterator[tuple[str, bytes]]:
        """Every metadata entry named ``prefix``..., read ``chunk`` at a time (RAM bounded by
        the chunk whatever the count); the caller holds the frontier lock throughout."""
        after = ""
        while True:
            rows = self.scan_meta_range(prefix, after, chunk)
            yield from rows
            if len(rows) < chunk:
                return
            after = rows[-1][0]

    def scan_meta(self, prefix: str) -> Iterator[tuple[str, bytes]]:
        """Metadata entries by prefix, after writing what is pending (frontier lock held)."""
        with self._flush_lock:
            self._flush_locked(self._appended)
            rows = list(self.inner.scan_meta(prefix))
        return iter(rows)
